package kubebackend_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: Stop
// ends the provider's informer, and the simulated kubelet ends with its
// context.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// RunSpecs never stops the interrupt handler it starts.
		goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func1"),
		goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func2"),
	)
}
