package crisim_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: the
// servers of the containers and their timers end with the runtime's Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
