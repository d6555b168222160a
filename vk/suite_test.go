package vk

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtual-kubelet/virtual-kubelet/node"

	"github.com/kri-kit/testkit/vk/simprovider"
)

// The environment of TestSuiteAgainstTheReferenceProvider run in a child
// process: variantEnv names the mutant it runs against instead of the
// reference provider, xfailEnv lists its Config.ExpectedFailures
// ("ID=reason,ID=reason"), parallelEnv sets Config.Parallel.
const (
	variantEnv  = "KRI_VK_SELFTEST_VARIANT"
	xfailEnv    = "KRI_VK_SELFTEST_XFAIL"
	parallelEnv = "KRI_VK_SELFTEST_PARALLEL"
)

// TestSuiteAgainstTheReferenceProvider runs the suite as a provider author
// runs it: through Run, with its Ginkgo report, summary and verdict.
func TestSuiteAgainstTheReferenceProvider(t *testing.T) {
	cfg := Config{
		NewPodProvider: func(ctx context.Context) (node.PodLifecycleHandler, error) {
			return simprovider.NewAsync(simprovider.WithContext(ctx)), nil
		},
		NewNodeProvider: func(context.Context) (node.NodeProvider, error) { return simprovider.NewNode(), nil },
		VirtualTime:     true,
		Capabilities:    AllCapabilities(),
		MakeBackendUnhealthy: func(_ context.Context, p node.NodeProvider) error {
			p.(interface{ MakeUnhealthy() }).MakeUnhealthy()
			return nil
		},
		TriggerNodeStatusUpdate: reportMemoryPressure,
	}
	if list := os.Getenv(xfailEnv); list != "" {
		cfg.ExpectedFailures = map[string]string{}
		for _, entry := range strings.Split(list, ",") {
			id, reason, _ := strings.Cut(entry, "=")
			cfg.ExpectedFailures[id] = reason
		}
	}
	cfg.Parallel = os.Getenv(parallelEnv) != ""
	if name := os.Getenv(variantEnv); name != "" {
		for _, v := range mutants {
			if v.name == name {
				c := v.config()
				if c.NewPodProvider != nil {
					cfg.NewPodProvider = c.NewPodProvider
				}
				if c.NewNodeProvider != nil {
					cfg.NewNodeProvider = c.NewNodeProvider
				}
			}
		}
	}
	Run(t, cfg)
}

// TestRunVerdictIsTheExitStatus runs the suite through Run in a child
// process against a mutant that fails a MUST spec, and against one that
// fails only a SHOULD spec: the first exits non-zero, not conformant, the
// second passes, conformant, unless -vk.strict fails its gate; each writes
// the summary and a JUnit report.
func TestRunVerdictIsTheExitStatus(t *testing.T) {
	if os.Getenv(variantEnv) != "" {
		t.Skip("in the child process")
	}
	for _, tc := range []struct {
		variant  string
		strict   bool
		fails    bool
		verdict  string
		gate     string
		reported string
	}{
		{variant: "deletepod-of-an-unknown-pod-answers-a-plain-error", fails: true, verdict: "\nverdict: not conformant\n", gate: "\ngate: FAIL (the verdict is not conformant)", reported: "KVK-POD-006"},
		{variant: "getpod-drops-annotations", fails: false, verdict: "\nverdict: conformant (", gate: "\ngate: pass (", reported: "KVK-POD-009"},
		{variant: "getpod-drops-annotations", strict: true, fails: true, verdict: "\nverdict: conformant (", gate: "\ngate: FAIL (strict mode: 1 applicable SHOULD spec(s) failed: KVK-POD-009)", reported: "KVK-POD-009"},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			dir := t.TempDir()
			summary, junit := filepath.Join(dir, "summary.txt"), filepath.Join(dir, "junit.xml")
			args := []string{"-test.run=^TestSuiteAgainstTheReferenceProvider$", "-vk.summary=" + summary,
				"-ginkgo.junit-report=" + junit, "-ginkgo.no-color"}
			if tc.strict {
				args = append(args, "-vk.strict")
			}
			cmd := exec.CommandContext(t.Context(), childBinary(t), args...)
			cmd.Env = append(os.Environ(), variantEnv+"="+tc.variant)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if failed := errors.As(err, &exit); failed != tc.fails || (err != nil && exit == nil) {
				t.Fatalf("run against %s: error %v, want failed=%t\n%s", tc.variant, err, tc.fails, out)
			}
			text, err := os.ReadFile(summary)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(text), tc.verdict) || !strings.Contains(string(text), tc.gate) || !strings.Contains(string(text), tc.reported) {
				t.Fatalf("summary lacks %q, %q or %s:\n%s", tc.verdict, tc.gate, tc.reported, text)
			}
			report, err := os.ReadFile(junit)
			if err != nil || !strings.Contains(string(report), tc.reported) {
				t.Fatalf("JUnit report (error %v) does not name %s", err, tc.reported)
			}
		})
	}
}
