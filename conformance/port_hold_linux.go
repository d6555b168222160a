//go:build linux

package conformance

import "syscall"

// holdPort binds a TCP socket to port on the loopback address and leaves it
// bound but not listening, so that nothing else on this host can listen on
// the port while a spec needs nothing to: a connection to it is refused.
// It returns the func that releases the port, or nil when the port cannot
// be bound (another process has it, or the platform does not allow it).
// The socket does not set SO_REUSEADDR, so no listener, on the loopback or
// the wildcard address, can bind the port beside it.
func holdPort(port int) (release func()) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return nil
	}
	return func() { syscall.Close(fd) }
}
