//go:build !linux

package conformance

// holdPort cannot hold a port on this platform: see port_hold_linux.go.
func holdPort(int) (release func()) { return nil }
