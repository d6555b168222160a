package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/kri-kit/testkit/conformance"
)

// Ginkgo runs one suite per process, so every test that needs a suite run of
// its own (a mutant, a preview of the specs, Run called twice) re-executes
// this test binary with -test.run=^TestHelper$ and helperEnv saying what to
// do. The parent reads the JSON report and the summary the child writes.

const (
	helperMutant   = "mutant:"
	helperRunTwice = "run-twice"
	helperPreview  = "preview"
	helperDescribe = "describe"
	helperParallel = "parallel"
)

// extraHelpers are further helper modes, by name, each a Config to run.
var extraHelpers = map[string]func() conformance.Config{}

// skipInHelper skips a test that must not run in a helper process.
func skipInHelper(t *testing.T) {
	t.Helper()
	if os.Getenv(helperEnv) != "" {
		t.Skip("helper process")
	}
}

// TestHelper is the entry point of the re-executed test binary; it does
// nothing in a normal run.
func TestHelper(t *testing.T) {
	mode := os.Getenv(helperEnv)
	switch {
	case mode == "":
		t.Skip("runs only in a helper process")
	case strings.HasPrefix(mode, helperMutant):
		m := mutantNamed(strings.TrimPrefix(mode, helperMutant))
		if m == nil {
			t.Fatalf("unknown mutant %q", mode)
		}
		// Strict mode: a mutant that breaks only a SHOULD spec fails the
		// run too, so that every mutant is seen to fail it (without it a
		// SHOULD failure is a warning; TestGateCombinations checks that).
		cfg := m.config()
		cfg.Strict = true
		conformance.Run(t, cfg)
	case mode == helperRunTwice:
		cfg := fakeConfig(nil, nil)
		conformance.Run(t, cfg)
		conformance.Run(t, cfg)
	case mode == helperDescribe:
		// The registration form: specs registered before RunSpecs, which
		// the test calls itself; then Run, which must refuse.
		cfg := fakeConfig(nil, nil)
		cfg.VirtualTime = false // needs Run's *testing.T
		conformance.DescribePodProvider(cfg)
		conformance.DescribeNodeProvider(cfg)
		gomega.RegisterFailHandler(ginkgo.Fail)
		ginkgo.RunSpecs(t, "describe")
		conformance.Run(t, fakeConfig(nil, nil))
	case mode == helperPreview:
		conformance.Run(t, fakeConfig(nil, nil))
	case mode == helperParallel:
		// For 'KRI_CONFORMANCE_HELPER=parallel ginkgo -p ./conformance':
		// the suite with parallel specs against the fake.
		cfg := fakeConfig(nil, nil)
		cfg.Parallel = true
		conformance.Run(t, cfg)
	case extraHelpers[mode] != nil:
		conformance.Run(t, extraHelpers[mode]())
	default:
		t.Fatalf("unknown %s %q", helperEnv, mode)
	}
}

// helperRun is what a helper process left behind.
type helperRun struct {
	output  string // stdout and stderr
	err     error  // of the process (non-nil when the suite failed)
	report  *types.Report
	summary string
	took    time.Duration
}

// failedIDs returns the spec IDs the report shows failed (any failure
// state), sorted as in the catalogue.
func (r *helperRun) failedIDs() []string {
	return r.idsIn(types.SpecStateFailureStates)
}

func (r *helperRun) idsIn(states types.SpecState) []string {
	var out []string
	if r.report == nil {
		return nil
	}
	for _, sr := range r.report.SpecReports {
		if sr.LeafNodeType == types.NodeTypeIt && sr.State.Is(states) {
			out = append(out, specID(sr.LeafNodeText))
		}
	}
	return sortIDs(out)
}

// specReport returns the report of spec id.
func (r *helperRun) specReport(id string) (types.SpecReport, bool) {
	if r.report != nil {
		for _, sr := range r.report.SpecReports {
			if sr.LeafNodeType == types.NodeTypeIt && specID(sr.LeafNodeText) == id {
				return sr, true
			}
		}
	}
	return types.SpecReport{}, false
}

// why says how spec id ended in the run and with which message: its
// failure, or the warning a SHOULD spec reports instead (a skip carrying
// the kri:warning report entry).
func (r *helperRun) why(id string) string {
	sr, ok := r.specReport(id)
	if !ok {
		return "not in the report"
	}
	for _, e := range sr.ReportEntries {
		if e.Name == "kri:warning" {
			return fmt.Sprintf("%s with a warning: %s", sr.State, e.StringRepresentation())
		}
	}
	return fmt.Sprintf("%s: %s", sr.State, sr.Failure.Message)
}

// runHelper re-executes the test binary in mode, with extra flags, bounded
// by timeout and by t's context; it never outlives t.
func runHelper(t *testing.T, mode string, timeout time.Duration, flags ...string) *helperRun {
	t.Helper()
	return prepareHelper(t, mode, timeout, flags...)()
}

// prepareHelper does what a helper run needs of t's goroutine (its
// directory, the binary: a t.Fatal) and returns the run, which any
// goroutine may call while t runs. Its timeout counts from that call: the
// binary's build (once per package run, minutes on a loaded machine) and
// a wait for a slot are no part of it.
func prepareHelper(t *testing.T, mode string, timeout time.Duration, flags ...string) func() *helperRun {
	t.Helper()
	dir := t.TempDir()
	bin := helperBinary(t)
	return func() *helperRun {
		reportFile := filepath.Join(dir, "report.json")
		summaryFile := filepath.Join(dir, "summary.txt")
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		args := append([]string{
			"-test.run=^TestHelper$",
			"-test.count=1",
			"-test.timeout=" + (timeout + 30*time.Second).String(),
			"-ginkgo.no-color",
			"-ginkgo.json-report=" + reportFile,
			"-kri.summary=" + summaryFile,
		}, flags...)
		cmd := exec.CommandContext(ctx, bin, args...)
		// A -race binary sleeps a second before it exits (GORACE
		// atexit_sleep_ms, default 1000): a second per run, times ~150 runs.
		cmd.Env = append(os.Environ(), helperEnv+"="+mode, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"),
			fmt.Sprintf("%s=%d", helperPortsEnv, nextPortBlock()))
		cmd.Dir = dir
		cmd.WaitDelay = 5 * time.Second
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		began := time.Now()
		run := &helperRun{err: cmd.Run()}
		run.took = time.Since(began)
		run.output = out.String()
		if ctx.Err() != nil {
			t.Errorf("helper %s did not finish within %s; output:\n%s", mode, timeout, tail(run.output))
		}
		if data, err := os.ReadFile(reportFile); err == nil {
			var reports []types.Report
			if err := json.Unmarshal(data, &reports); err != nil {
				t.Errorf("helper %s: reading the Ginkgo JSON report: %v", mode, err)
			} else if len(reports) == 1 {
				run.report = &reports[0]
			}
		}
		if data, err := os.ReadFile(summaryFile); err == nil {
			run.summary = string(data)
		}
		return run
	}
}

// helperBin is the test binary the helper processes run.
var helperBin struct {
	once sync.Once
	dir  string // removed by TestMain
	path string
	err  error
}

// helperBinary returns the test binary for helper processes: this one, or,
// when it was built with -race, the package's test binary built once
// without it. The ~200 suite runs of the mutants, the benign variants and
// the gate combinations judge the suite's verdicts, not data races, and a
// -race binary takes three times the CPU for each (the package's time
// under -race was CPU-bound); the suite itself runs under -race in
// TestFakeIsConformant and TestParallelProcesses, and so does every
// package it uses in its own tests. A run that selects subtests
// (-run 'TestMutantsAreCaught/NAME') runs its few helpers in this binary,
// -race included: the build would take longer than they do.
func helperBinary(t *testing.T) string {
	t.Helper()
	if !raceEnabled || selectsSubtests() {
		return os.Args[0]
	}
	helperBin.once.Do(buildHelperBinary)
	if helperBin.err != nil {
		t.Fatalf("building the helper binary: %v", helperBin.err)
	}
	return helperBin.path
}

// selectsSubtests reports whether -test.run names subtests: a pattern with
// a slash, whose part after it picks a parent's subtests.
func selectsSubtests() bool {
	f := flag.Lookup("test.run")
	return f != nil && strings.Contains(f.Value.String(), "/")
}

// buildHelperBinary builds the package's test binary without -race, once
// (TestMain starts it at once, so that it overlaps the tests that run
// first).
func buildHelperBinary() {
	helperBin.dir, helperBin.err = os.MkdirTemp("", "kri-conformance-helper-")
	if helperBin.err != nil {
		return
	}
	bin := filepath.Join(helperBin.dir, "conformance.test")
	out, err := exec.Command("go", "test", "-c", "-o", bin, ".").CombinedOutput()
	if err != nil {
		helperBin.err = fmt.Errorf("go test -c without -race: %v\n%s", err, out)
		return
	}
	helperBin.path = bin
}

// removeHelperBinary removes what helperBinary built.
func removeHelperBinary() {
	if helperBin.dir != "" {
		os.RemoveAll(helperBin.dir)
	}
}

// passedState is the Ginkgo state of a passed spec.
const passedState = types.SpecStatePassed

// The slots bound the helper processes running at once, across the tests
// that run the suite many times. The suite runs against the fake in virtual
// time (Config.VirtualTime): a run is CPU work, a second or two under
// -race, so a few per CPU keep both busy without thrashing (24 at a time
// took longer). The runs against hostprocess's real processes wait on the
// real clock (40s each, 30s of them probe periods, for about a second of
// CPU): all 36 of them run at once, in one wave.
var (
	helperSlots   = make(chan struct{}, 2*runtime.NumCPU())
	realTimeSlots = make(chan struct{}, min(48, 24*runtime.NumCPU()))
)

// slotsFor returns the slots of a helper run: the host ones run real
// processes on the real clock.
func slotsFor(mode string) chan struct{} {
	if strings.HasPrefix(mode, helperHostBenign) {
		return realTimeSlots
	}
	if m := mutantNamed(strings.TrimPrefix(mode, helperMutant)); strings.HasPrefix(mode, helperMutant) && m != nil && m.host != nil {
		return realTimeSlots
	}
	return helperSlots
}

// runHelperSubtest runs the helper process of mode for subtest t, which it
// makes parallel: the run starts at once, in the background, as soon as
// helperSlots (realTimeSlots for a run on the real clock) has room, and t
// waits for it once its parent has started every subtest. So a parent that
// runs one subtest per mutant or variant starts every run at once, the
// first subtests first, and 'go test -run Parent/NAME' starts only NAME's.
// flags are the run's extra flags (runHelper).
func runHelperSubtest(t *testing.T, mode string, flags ...string) *helperRun {
	t.Helper()
	slots, timeout := slotsFor(mode), 3*time.Minute
	if slots == realTimeSlots {
		// Real processes on the real clock, all at once: a loaded machine
		// stretched a host run past 3m (load 15, make loaded).
		timeout = 8 * time.Minute
	}
	run := prepareHelper(t, mode, timeout, flags...)
	done := make(chan *helperRun, 1)
	go func() {
		slots <- struct{}{}
		defer func() { <-slots }()
		done <- run()
	}()
	t.Parallel()
	return <-done
}

// logSubtestsTook makes parent t, whose subtests run helpers in parallel
// (runHelperSubtest), log how long they took together: Go reports the
// parent's own time only, which ends once it has started them.
func logSubtestsTook(t *testing.T) {
	start := time.Now()
	t.Cleanup(func() {
		t.Logf("the subtests' suite runs took %s (%d at a time in virtual time, %d on the real clock)", time.Since(start).Round(100*time.Millisecond), cap(helperSlots), cap(realTimeSlots))
	})
}

// tail returns the end of a long output.
func tail(s string) string {
	const max = 6000
	if len(s) > max {
		return "...\n" + s[len(s)-max:]
	}
	return s
}

// helperPortsEnv names the first of the ports a helper run's host
// providers serve on (hostPorts): the parent hands each run a block of
// its own. Up to 48 runs of hostprocess share the host's network at once,
// and a free port the kernel picks for one (freePort closes its listener
// at once) could be picked for another before the first serves on it:
// an httpd then failed to bind ("address already in use"), or a port a
// spec needs closed was served on.
const helperPortsEnv = "KRI_CONFORMANCE_HELPER_PORTS"

// Port blocks: portBlocks blocks of portBlockSize ports from portBase, below
// Linux's default ephemeral range (32768-60999), from which the kernel
// picks the ports of other listeners.
const (
	portBase      = 20000
	portBlockSize = 40
	portBlocks    = 300
)

var portBlockN atomic.Int64

// nextPortBlock returns the first port of the next run's block, in turn.
func nextPortBlock() int {
	return portBase + int(portBlockN.Add(1)%portBlocks)*portBlockSize
}

// hostPorts returns the Workloads.Port of a helper run's host providers:
// the ports of the block its parent handed it, in turn, or, outside a
// helper run, the suite's default (nil).
func hostPorts() func() int {
	first, err := strconv.Atoi(os.Getenv(helperPortsEnv))
	if err != nil {
		return nil
	}
	var n atomic.Int64
	return func() int { return first + int(n.Add(1)%portBlockSize) }
}
