package conformance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// Helper modes of the tests below.
const (
	helperExpectedFailures = "expected-failures"
	helperNotSupported     = "not-supported"
)

func init() {
	extraHelpers[helperExpectedFailures] = func() conformance.Config {
		m := mutantNamed("deletepod-forgets-nothing")
		cfg := m.config()
		cfg.ExpectedFailures = map[string]string{
			"KRI-POD-020": "DeletePod is being rewritten",
			"KRI-POD-015": "was flaky once",
		}
		return cfg
	}
	extraHelpers[helperNotSupported] = func() conformance.Config {
		cfg := fakeConfig(func(p *fake.PodProvider) {
			p.SetInterceptors(interceptor.PodFuncs{DeletePod: func(context.Context, kri.PodProvider, *v1.Pod) error {
				return fmt.Errorf("deleting pods: %w", conformance.ErrNotSupported)
			}})
		}, nil)
		cfg.NewNodeProvider = nil
		return cfg
	}
}

// summaryLine returns the line of spec id in a summary.
func summaryLine(summary, id string) string {
	for _, l := range strings.Split(summary, "\n") {
		if strings.HasPrefix(l, id+" ") {
			return l
		}
	}
	return ""
}

func TestExpectedFailures(t *testing.T) {
	skipInHelper(t)
	r := runHelper(t, helperExpectedFailures, time.Minute, `-ginkgo.focus=\[KRI-POD-0(15|20)\]`)
	if r.report == nil {
		t.Fatalf("no report; output:\n%s", tail(r.output))
	}
	// KRI-POD-020 fails for the mutant: reported as an expected failure.
	sr, _ := r.specReport("KRI-POD-020")
	if sr.State != types.SpecStateSkipped || !strings.Contains(sr.Failure.Message, "expected failure") || !strings.Contains(sr.Failure.Message, "DeletePod is being rewritten") {
		t.Errorf("KRI-POD-020: %s %q, want skipped as an expected failure with its reason", sr.State, sr.Failure.Message)
	}
	if l := summaryLine(r.summary, "KRI-POD-020"); !strings.Contains(l, "expected-failure") {
		t.Errorf("summary line of KRI-POD-020 is %q, want an expected-failure", l)
	}
	// KRI-POD-015 (a MUST spec) passes although listed: it fails, asking to be removed.
	sr, _ = r.specReport("KRI-POD-015")
	if sr.State != types.SpecStateFailed || !strings.Contains(sr.Failure.Message, "remove it from the list") {
		t.Errorf("KRI-POD-015: %s %q, want a failure asking to remove it from ExpectedFailures", sr.State, sr.Failure.Message)
	}
	if !strings.Contains(r.summary, "verdict: not conformant") || !strings.Contains(r.summary, "expected failure(s): KRI-POD-020") {
		t.Errorf("the summary does not say not conformant because of the expected failure:\n%s", r.summary)
	}
}

func TestErrNotSupportedSkips(t *testing.T) {
	skipInHelper(t)
	r := runHelper(t, helperNotSupported, time.Minute, `-ginkgo.focus=\[KRI-POD-019\]`)
	if r.report == nil {
		t.Fatalf("no report; output:\n%s", tail(r.output))
	}
	if got := r.failedIDs(); len(got) > 0 {
		t.Errorf("specs %v failed; a not-supported operation must only skip; output:\n%s", got, tail(r.output))
	}
	// The skipped MUST spec makes the verdict "not conformant", which fails
	// the run (the gate, see TestGateCombinations).
	if r.err == nil {
		t.Errorf("the run passed although a MUST spec was skipped; summary:\n%s", r.summary)
	}
	sr, _ := r.specReport("KRI-POD-019")
	if sr.State != types.SpecStateSkipped || !strings.Contains(sr.Failure.Message, "DeletePod is not supported") {
		t.Errorf("KRI-POD-019: %s %q, want skipped naming DeletePod", sr.State, sr.Failure.Message)
	}
	if l := summaryLine(r.summary, "KRI-POD-019"); !strings.Contains(l, "skipped") {
		t.Errorf("summary line of KRI-POD-019 is %q, want skipped", l)
	}
	if !strings.Contains(r.summary, "verdict: not conformant") {
		t.Errorf("a skipped MUST spec counted as passed:\n%s", r.summary)
	}
}

func TestRunTwiceFailsClearly(t *testing.T) {
	skipInHelper(t)
	r := runHelper(t, helperRunTwice, time.Minute, `-ginkgo.focus=\[KRI-NODE-001\]`)
	if r.err == nil {
		t.Fatalf("calling Run twice did not fail the test; output:\n%s", tail(r.output))
	}
	if !strings.Contains(r.output, "conformance.Run was called a second time in this test binary") {
		t.Errorf("the failure does not name the cause; output:\n%s", tail(r.output))
	}
	if strings.Contains(r.output, "Rerunning Suite") || strings.Contains(r.output, "panic:") {
		t.Errorf("the second Run reached Ginkgo; output:\n%s", tail(r.output))
	}
	if r.report == nil || len(r.failedIDs()) != 0 {
		t.Errorf("the first Run should have run KRI-NODE-001 and passed; output:\n%s", tail(r.output))
	}
}

func TestDescribeRegistersInAnExistingSuite(t *testing.T) {
	skipInHelper(t)
	r := runHelper(t, helperDescribe, time.Minute, `-ginkgo.focus=\[KRI-(POD-001|NODE-001|BENCH-003)\]`)
	if r.report == nil {
		t.Fatalf("no report; output:\n%s", tail(r.output))
	}
	for id, want := range map[string]types.SpecState{
		"KRI-POD-001":   types.SpecStatePassed,
		"KRI-NODE-001":  types.SpecStatePassed,
		"KRI-BENCH-003": types.SpecStateSkipped, // no label filter asks for benchmarks
	} {
		if sr, ok := r.specReport(id); !ok || sr.State != want {
			t.Errorf("%s: %v (%q), want %v", id, sr.State, sr.Failure.Message, want)
		}
	}
	if sr, _ := r.specReport("KRI-BENCH-003"); !strings.Contains(sr.Failure.Message, "label-filter=benchmark") {
		t.Errorf("the benchmark skip does not say how to run it: %q", sr.Failure.Message)
	}
	if !strings.Contains(r.summary, "KRI-POD-001") || !strings.Contains(r.summary, "KRI-NODE-001") {
		t.Errorf("the summary does not cover both registrations:\n%s", r.summary)
	}
	if !strings.Contains(r.output, "DescribePodProvider or DescribeNodeProvider already registered") {
		t.Errorf("Run after Describe did not say why it refused; output:\n%s", tail(r.output))
	}
}

func TestTimeoutScaleFlag(t *testing.T) {
	skipInHelper(t)
	r := runHelper(t, helperPreview, time.Minute, "-ginkgo.dry-run", "-kri.timeout-scale=3")
	// fakeTimeouts: call 5s, state 10s, poll 10ms, stable 100ms.
	if want := "timeouts: call 15s, state 30s, poll 30ms, stable 300ms, grace period 3s (scale 3)"; !strings.Contains(r.summary, want) {
		t.Errorf("-kri.timeout-scale=3: the summary does not say %q:\n%s", want, r.summary)
	}
}
