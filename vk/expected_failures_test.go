package vk

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// runChild runs TestSuiteAgainstTheReferenceProvider through Run in a child
// process with env added and the test flags args; it answers the summary it
// wrote and whether the run failed.
func runChild(t *testing.T, env []string, args ...string) (summary string, failed bool) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "summary.txt")
	args = append([]string{"-test.run=^TestSuiteAgainstTheReferenceProvider$", "-vk.summary=" + file, "-ginkgo.no-color"}, args...)
	cmd := exec.CommandContext(t.Context(), childBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running the child: %v\n%s", err, out)
	}
	text, rerr := os.ReadFile(file)
	if rerr != nil {
		t.Fatalf("the child wrote no summary (%v):\n%s", rerr, out)
	}
	return string(text), err != nil
}

// TestExpectedFailures runs the suite through Run with Config.ExpectedFailures
// against mutants: an expected failure of a MUST spec is reported as one and
// still fails the run; -vk.skip-expected-failures reports it not run; a
// SHOULD spec listed passes a strict run; a listed spec that passes fails the
// run asking to be removed.
func TestExpectedFailures(t *testing.T) {
	if os.Getenv(variantEnv) != "" || os.Getenv(xfailEnv) != "" {
		t.Skip("in the child process")
	}
	for _, tc := range []struct {
		name    string
		env     []string
		args    []string
		fails   bool
		summary []string
	}{
		{"an expected MUST failure still fails the run",
			[]string{variantEnv + "=deletepod-of-an-unknown-pod-answers-a-plain-error", xfailEnv + "=KVK-POD-006=known bug"}, nil, true,
			[]string{"KVK-POD-006   MUST    expected-failure  known bug: [KVK-POD-006 MUST] ", "verdict: not conformant\n  1 expected failure(s): KVK-POD-006\n",
				"KVK-POD-006 MUST expected-failure: "}},
		{"-vk.skip-expected-failures does not run it",
			[]string{variantEnv + "=deletepod-of-an-unknown-pod-answers-a-plain-error", xfailEnv + "=KVK-POD-006=known bug"}, []string{"-vk.skip-expected-failures"}, true,
			[]string{"KVK-POD-006   MUST    expected-failure  not run: known bug\n", "1 expected failure(s): KVK-POD-006"}},
		{"an expected SHOULD failure passes a strict run",
			[]string{variantEnv + "=getpod-drops-annotations", xfailEnv + "=KVK-POD-009=drops them"}, []string{"-vk.strict"}, false,
			[]string{"KVK-POD-009   SHOULD  expected-failure  drops them: ", "failed as Config.ExpectedFailures expects: KVK-POD-009",
				"gate: pass (every applicable MUST and SHOULD spec passed)"}},
		{"a listed spec that passes fails the run",
			[]string{xfailEnv + "=KVK-POD-001=thought broken"}, nil, true,
			[]string{"KVK-POD-001   MUST    failed", `KVK-POD-001 passed but Config.ExpectedFailures lists it ("thought broken"): remove it from the list`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			summary, failed := runChild(t, tc.env, tc.args...)
			if failed != tc.fails {
				t.Errorf("the run failed: %v, want %v\n%s", failed, tc.fails, summary)
			}
			for _, want := range tc.summary {
				if !strings.Contains(summary, want) {
					t.Errorf("the summary lacks %q:\n%s", want, summary)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	pods := references[0].config().NewPodProvider
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "neither NewPodProvider nor NewNodeProvider"},
		{Config{NewPodProvider: pods, ExpectedFailures: map[string]string{"KVK-POD-999": "x"}}, `unknown spec "KVK-POD-999"`},
		{Config{NewPodProvider: pods, ExpectedFailures: map[string]string{"KVK-POD-001": " "}}, `ExpectedFailures["KVK-POD-001"] gives no reason`},
		{Config{NewPodProvider: pods, TimeoutScale: -1}, "TimeoutScale -1 is not a positive number"},
		{Config{NewPodProvider: pods, Capabilities: []Capability{CapBackendFailures}}, "needs MakeBackendUnhealthy"},
		{Config{NewPodProvider: pods, Capabilities: []Capability{CapNodeStatusUpdates}}, "needs TriggerNodeStatusUpdate"},
		{Config{NewPodProvider: pods, VirtualTime: true, APIServer: &rest.Config{Host: "https://127.0.0.1:1"}}, "VirtualTime and APIServer exclude each other"},
	} {
		if _, err := resolve(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("resolve(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}
