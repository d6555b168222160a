package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kri-kit/testkit/conformance"
)

// TestParallelProcesses runs the suite against the fake with
// Config.Parallel as a user would: the Ginkgo CLI of the module, built
// here, runs this test binary (precompiled) in two processes. It checks
// that the specs were spread over both, that the specs that call
// CleanupPods and the benchmarks ran alone, and that process 1 wrote one
// summary with the verdict a serial run gives.
func TestParallelProcesses(t *testing.T) {
	skipInHelper(t)
	if testing.Short() {
		t.Skip("builds the Ginkgo CLI (-short)")
	}
	dir := t.TempDir()
	ginkgoCLI := filepath.Join(dir, "ginkgo")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", ginkgoCLI, "github.com/onsi/ginkgo/v2/ginkgo")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the Ginkgo CLI: %v\n%s", err, out)
	}

	reportFile := filepath.Join(dir, "report.json")
	summaryFile := filepath.Join(dir, "summary.txt")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ginkgoCLI, "--procs=2", "--no-color", "--json-report="+reportFile,
		os.Args[0], "--", "-test.run=^TestHelper$", "-kri.summary="+summaryFile)
	cmd.Env = append(os.Environ(), helperEnv+"="+helperParallel)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("ginkgo --procs=2 on the fake failed: %v\n%s", err, tail(out.String()))
	}

	data, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatalf("the run wrote no JSON report: %v\n%s", err, tail(out.String()))
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil || len(reports) != 1 {
		t.Fatalf("reading the JSON report: %v (%d reports)", err, len(reports))
	}
	alone := map[string]bool{}
	applicable := 0 // the fake passes every spec but the benchmarks
	for _, s := range conformance.Catalogue() {
		alone[s.ID] = s.Benchmark
		if !s.Benchmark {
			applicable++
		}
	}
	for _, id := range []string{"KRI-POD-021", "KRI-POD-022", "KRI-POD-023", "KRI-POD-027", "KRI-POD-028", "KRI-POD-045"} {
		alone[id] = true
	}
	procs := map[int]int{}
	passed := 0
	for _, sr := range reports[0].SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		id := specID(sr.LeafNodeText)
		serial := sr.IsSerial
		if serial != alone[id] {
			t.Errorf("%s: Serial = %v under Config.Parallel, want %v (only the specs that call CleanupPods and the benchmarks run alone)", id, serial, alone[id])
		}
		if sr.State == types.SpecStatePassed {
			passed++
			procs[sr.ParallelProcess]++
		}
	}
	if len(procs) != 2 {
		t.Errorf("the passed specs ran in processes %v, want both 1 and 2", procs)
	}
	summary, err := os.ReadFile(summaryFile)
	if err != nil {
		t.Fatalf("no summary: %v", err)
	}
	if want := "verdict: conformant"; !strings.Contains(string(summary), want) {
		t.Errorf("the summary does not say %q:\n%s", want, summary)
	}
	if n := strings.Count(string(summary), "KRI conformance summary"); n != 1 {
		t.Errorf("the summary holds %d summaries, want 1 (process 1 writes it for the whole run)", n)
	}
	if passed != applicable {
		t.Errorf("%d specs passed, want the %d a serial run against the fake passes", passed, applicable)
	}
}
