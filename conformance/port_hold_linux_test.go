//go:build linux

package conformance

import (
	"net"
	"strconv"
	"testing"
)

// A held port refuses connections and cannot be listened on until released.
func TestHoldPort(t *testing.T) {
	port := freePort()
	release := holdPort(port)
	if release == nil {
		t.Fatalf("holdPort(%d) = nil, want a release func", port)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("a connection to the held port %d was accepted, want it refused", port)
	}
	for _, host := range []string{"127.0.0.1", "0.0.0.0"} {
		if l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port))); err == nil {
			l.Close()
			t.Errorf("listening on %s:%d succeeded while the port was held", host, port)
		}
	}
	release()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on %s after release: %v", addr, err)
	}
	l.Close()
}
