// Package httpdtest has the test helpers of package httpd, apart so that
// the simulators that import httpd do not import package testing.
package httpdtest

import (
	"testing"

	"github.com/kri-kit/testkit/internal/httpd"
)

// Port returns a TCP port that nothing listens on now (httpd.FreePort), for
// a test's server; it fails tb when the kernel has none to give.
func Port(tb testing.TB) int {
	tb.Helper()
	port, err := httpd.FreePort()
	if err != nil {
		tb.Fatal(err)
	}
	return port
}
