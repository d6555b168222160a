//go:build !linux

package kubebackend_test

import "os/exec"

// runDying runs cmd; only Linux has a parent-death signal, elsewhere the
// child's own -test.timeout ends it should this process die first.
func runDying(cmd *exec.Cmd) error { return cmd.Run() }
