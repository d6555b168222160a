package vk

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// TestMain removes what childBinary built once every test has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if childBin.dir != "" {
		os.RemoveAll(childBin.dir)
	}
	os.Exit(code)
}

// childBin is the test binary the tests that judge a whole run of the
// suite (its exit status, summary and JUnit report: TestExpectedFailures,
// TestRunVerdictIsTheExitStatus) run it in.
var childBin struct {
	once sync.Once
	dir  string // removed by TestMain
	path string
	err  error
}

// childBinary returns the test binary for a child run of the whole suite:
// this one, or, when it was built with -race, the package's test binary
// built once without it. The children judge verdicts, summaries and exit
// statuses, not data races, and under the race detector each of their
// seven whole-suite runs took three times the CPU (TestExpectedFailures
// 163 s, TestRunVerdictIsTheExitStatus 91 s at load 11); the suite itself
// runs under -race in TestReferenceProviderPassesEverySpec and
// TestSuiteAgainstTheReferenceProvider.
func childBinary(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		return os.Args[0]
	}
	childBin.once.Do(func() {
		childBin.dir, childBin.err = os.MkdirTemp("", "vk-child-")
		if childBin.err != nil {
			return
		}
		bin := filepath.Join(childBin.dir, "vk.test")
		if out, err := exec.Command("go", "test", "-c", "-o", bin, ".").CombinedOutput(); err != nil {
			childBin.err = fmt.Errorf("go test -c without -race: %v\n%s", err, out)
			return
		}
		childBin.path = bin
	})
	if childBin.err != nil {
		t.Fatalf("building the child test binary: %v", childBin.err)
	}
	return childBin.path
}
