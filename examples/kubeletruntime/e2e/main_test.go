package e2e_test

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	"k8s.io/klog/v2"
)

// TestMain fails the package when a test leaves a goroutine behind: every
// CRI connection the suite's providers open is closed when their spec ends.
// The runtime manager and the CRI client log through klog; the log is
// dropped unless KUBELETRUNTIME_LOG is set.
func TestMain(m *testing.M) {
	if os.Getenv("KUBELETRUNTIME_LOG") == "" {
		klog.SetLogger(logr.Discard())
	}
	goleak.VerifyTestMain(m,
		// RunSpecs never stops the interrupt handler it starts.
		goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func1"),
		goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func2"),
	)
}
