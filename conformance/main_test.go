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
// built (helperBinary). A whole-package run under -race starts building it
// at once, beside the tests that need none; a run that selects its tests
// (-run, as make conformance does for the fake's gate) builds it only when
// a selected test first asks for it, so that a gate that runs no helper
// neither builds nor waits for one; a run that selects subtests
// (-run 'TestMutantsAreCaught/NAME') never builds it: its few helpers run
// this binary.
type removingHelperBinary struct{ m *testing.M }

func (r removingHelperBinary) Run() int {
	defer removeHelperBinary()
	flag.Parse() // for testing.Short and -test.run
	if raceEnabled && !testing.Short() && flag.Lookup("test.run").Value.String() == "" {
		done := make(chan struct{})
		go func() {
			defer close(done)
			helperBin.once.Do(buildHelperBinary)
		}()
		defer func() { <-done }()
	}
	return r.m.Run()
}
