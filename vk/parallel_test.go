package vk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// TestParallelProcesses runs the suite against the reference provider with
// Config.Parallel as a provider's author would: the Ginkgo CLI of the
// module, built here, runs this test binary in two processes. The specs
// must be spread over both, none Serial, and process 1 must write one
// summary of the whole run with the verdict a serial run gives.
func TestParallelProcesses(t *testing.T) {
	if os.Getenv(variantEnv) != "" || os.Getenv(parallelEnv) != "" {
		t.Skip("in the child process")
	}
	if testing.Short() {
		t.Skip("builds the Ginkgo CLI (-short)")
	}
	dir := t.TempDir()
	ginkgoCLI := filepath.Join(dir, "ginkgo")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", ginkgoCLI, "github.com/onsi/ginkgo/v2/ginkgo")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the Ginkgo CLI: %v\n%s", err, out)
	}
	reportFile, summaryFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "summary.txt")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ginkgoCLI, "--procs=2", "--no-color", "--json-report="+reportFile,
		os.Args[0], "--", "-test.run=^TestSuiteAgainstTheReferenceProvider$", "-vk.summary="+summaryFile)
	cmd.Env = append(os.Environ(), parallelEnv+"=1")
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("ginkgo --procs=2 against the reference provider failed: %v\n%s", err, out.String())
	}

	data, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatalf("the run wrote no JSON report: %v\n%s", err, out.String())
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil || len(reports) != 1 {
		t.Fatalf("reading the JSON report: %v (%d reports)", err, len(reports))
	}
	procs := map[int]int{}
	passed := 0
	for _, sr := range reports[0].SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		if sr.IsSerial {
			t.Errorf("%s is Serial under Config.Parallel", sr.LeafNodeText)
		}
		if sr.State == types.SpecStatePassed {
			passed++
			procs[sr.ParallelProcess]++
		}
	}
	if len(procs) != 2 {
		t.Errorf("the passed specs ran in processes %v, want both 1 and 2", procs)
	}
	if passed != len(Catalogue()) {
		t.Errorf("%d specs passed, want the %d of the catalogue", passed, len(Catalogue()))
	}
	summary, err := os.ReadFile(summaryFile)
	if err != nil {
		t.Fatalf("no summary: %v", err)
	}
	for _, want := range []string{"verdict: conformant", fmt.Sprintf("%d specs: %d passed", len(Catalogue()), len(Catalogue()))} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("the summary does not say %q:\n%s", want, summary)
		}
	}
	if n := strings.Count(string(summary), vkSuite.Name+" summary"); n != 1 {
		t.Errorf("the summary holds %d summaries, want 1 (process 1 writes it for the whole run)", n)
	}
}
