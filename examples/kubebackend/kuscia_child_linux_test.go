package kubebackend_test

import (
	"os/exec"
	"runtime"
	"syscall"
)

// runDying runs cmd with SIGKILL as its parent-death signal, so that the
// child does not outlive this process, should go test kill it. Linux sends
// the signal when the thread that started the child ends: the goroutine
// keeps its thread locked until the child has been waited for.
func runDying(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd.Run()
}
