package conformance_test

import (
	"flag"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/kri-kit/testkit/internal/httpd"
)

// TestMain fails the package when a test leaves a goroutine behind: the
// suite stops every provider it starts, and the tests kill every helper
// process they start. Helper processes are exempt: a mutant that hangs makes
// the suite abandon the hung call on purpose.
func TestMain(m *testing.M) {
	// The hostprocess runs' containers find the workload vocabulary's
	// httpd on their PATH: this binary, as the kit's stand-in
	// (hostPath).
	httpd.RunIfInvoked()
	if os.Getenv(helperEnv) != "" {
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(removingHelperBinary{m},
		// RunSpecs never stops the interrupt handler it starts.
		goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func1"),
		goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func2"),
	)
}

// removingHelperBinary runs the tests, then removes the helper binary they
// built (helperBinary).
type removingHelperBinary struct{ m *testing.M }

func (r removingHelperBinary) Run() int {
	defer removeHelperBinary()
	flag.Parse() // for testing.Short
	if raceEnabled && !testing.Short() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			helperBin.once.Do(buildHelperBinary)
		}()
		defer func() { <-done }()
	}
	return r.m.Run()
}
