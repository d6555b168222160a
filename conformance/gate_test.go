package conformance_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/reporters"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// The specs the gate combinations make fail: a MUST and a SHOULD spec that
// each wait, with SyncPod, for their pod to reach a state. A stalled SyncPod
// makes them fail on the state timeout, through base.eventually, and nothing
// else.
const (
	gateMust   = "KRI-POD-001"
	gateShould = "KRI-POD-039"
)

// stalled is the fake whose SyncPod does nothing (and returns nil) for the
// pods of spec id, which the suite labels with it: the spec waits for a state
// that never comes.
func stalled(id string) *mutant {
	return &mutant{
		name:      "stalled-" + id,
		violation: "SyncPod does nothing for the pods of " + id,
		want:      []string{id},
		pod: func(*fake.PodProvider) interceptor.PodFuncs {
			return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
				if pod != nil && pod.Labels[conformance.SpecLabel] == id {
					return nil
				}
				return next.SyncPod(ctx, pod, st, rc)
			}}
		},
	}
}

// unchanged is the fake as it is, with the mutants' timeouts.
var unchanged = &mutant{name: "unchanged", pod: func(*fake.PodProvider) interceptor.PodFuncs { return interceptor.PodFuncs{} }}

const helperGate = "gate:"

func init() {
	withXFail := func(m *mutant, id string) func() conformance.Config {
		return func() conformance.Config {
			cfg := m.config()
			cfg.ExpectedFailures = map[string]string{id: "known bug #7"}
			return cfg
		}
	}
	extraHelpers[helperGate+"all-pass"] = unchanged.config
	extraHelpers[helperGate+"must"] = stalled(gateMust).config
	extraHelpers[helperGate+"should"] = stalled(gateShould).config
	extraHelpers[helperGate+"xfail-must"] = withXFail(stalled(gateMust), gateMust)
	extraHelpers[helperGate+"xfail-should"] = withXFail(stalled(gateShould), gateShould)
	extraHelpers[helperGate+"stale-xfail-should"] = withXFail(unchanged, gateShould)
}

// junitCase is what a combination wants of one testcase of the JUnit report.
type junitCase struct {
	status  string // "passed", "failed", "skipped"
	message string // in the failure or skipped message
	// properties the testcase must have (a report entry each), with a part
	// of their value; "" only asks for the property.
	properties map[string]string
}

// combination is one way a run can end, with everything the documentation
// promises of it.
type combination struct {
	name  string
	mode  string
	flags []string
	// pass: the exit status is 0 (else 1).
	pass bool
	// summary: substrings of the summary; notSummary: must not occur.
	summary, notSummary []string
	// lines: the start of the summary line of a spec ("SHOULD  failed").
	lines map[string]string
	// junit: testcases by spec ID, or "summary" for the summary node.
	junit map[string]junitCase
	// failures is the number of failures the JUnit report counts.
	failures int
}

func gateCombinations() []combination {
	const (
		notConformant = "verdict: not conformant"
		conformant    = "verdict: conformant"
		gatePass      = "\ngate: pass ("
		gateFail      = "\ngate: FAIL ("
	)
	summaryPassed := junitCase{status: "passed", properties: map[string]string{"kri:verdict": "conformant", "kri:gate": "pass"}}
	return []combination{
		{
			name: "every spec passes", mode: "all-pass", pass: true,
			summary:    []string{conformant, gatePass},
			notSummary: []string{"failures:", "warning:"},
			lines:      map[string]string{gateMust: "MUST    passed", gateShould: "SHOULD  passed"},
			junit:      map[string]junitCase{gateMust: {status: "passed"}, gateShould: {status: "passed"}, "summary": summaryPassed},
		},
		{
			name: "a MUST spec fails", mode: "must", pass: false,
			summary: []string{notConformant, "1 MUST spec(s) failed: " + gateMust, gateFail + "the verdict is not conformant)",
				"failures:\n  " + gateMust + " MUST failed: "},
			lines: map[string]string{gateMust: "MUST    failed  failed: pod kri-conformance/kri-pod-001-"},
			junit: map[string]junitCase{
				gateMust:  {status: "failed", message: "not reached within"},
				"summary": {status: "failed", message: "1 MUST spec(s) failed: " + gateMust, properties: map[string]string{"kri:verdict": "not conformant", "kri:gate": "fail"}},
			},
			failures: 2,
		},
		{
			name: "a SHOULD spec fails", mode: "should", pass: true,
			summary: []string{conformant, "warning: 1 SHOULD spec(s) failed: " + gateShould, gatePass + "the verdict is conformant; SHOULD failures are warnings",
				"failures:\n  " + gateShould + " SHOULD failed (warning): "},
			lines: map[string]string{gateShould: "SHOULD  failed  warning: pod kri-conformance/kri-pod-039-"},
			junit: map[string]junitCase{
				gateShould: {status: "skipped", message: gateShould + " is a SHOULD spec: its failure is a warning and does not fail the run",
					properties: map[string]string{"kri:warning": "not reached within"}},
				"summary": summaryPassed,
			},
		},
		{
			name: "a SHOULD spec fails in strict mode", mode: "should", flags: []string{"-kri.strict"}, pass: false,
			summary: []string{conformant, "strict mode: applicable SHOULD specs must pass too", "warning: 1 SHOULD spec(s) failed: " + gateShould,
				gateFail + "strict mode: 1 applicable SHOULD spec(s) failed: " + gateShould + ")"},
			lines: map[string]string{gateShould: "SHOULD  failed  failed: pod kri-conformance/kri-pod-039-"},
			junit: map[string]junitCase{
				gateShould: {status: "failed", message: "not reached within"},
				"summary":  {status: "failed", message: "strict mode: 1 applicable SHOULD spec(s) failed", properties: map[string]string{"kri:verdict": "conformant", "kri:gate": "fail: strict mode"}},
			},
			failures: 2,
		},
		{
			name: "an expected failure of a MUST spec", mode: "xfail-must", pass: false,
			summary: []string{notConformant, "1 expected failure(s): " + gateMust, gateFail + "the verdict is not conformant)",
				"failures:\n  " + gateMust + " MUST expected-failure: "},
			lines: map[string]string{gateMust: "MUST    expected-failure  known bug #7: pod kri-conformance/kri-pod-001-"},
			junit: map[string]junitCase{
				gateMust:  {status: "skipped", message: "expected failure (Config.ExpectedFailures: known bug #7): pod kri-conformance/kri-pod-001-"},
				"summary": {status: "failed", message: "1 expected failure(s): " + gateMust, properties: map[string]string{"kri:verdict": "not conformant"}},
			},
			failures: 1,
		},
		{
			name: "an expected failure of a MUST spec, not run", mode: "xfail-must", flags: []string{"-kri.skip-expected-failures"}, pass: false,
			summary: []string{notConformant, "1 expected failure(s): " + gateMust, gateFail + "the verdict is not conformant)"},
			lines:   map[string]string{gateMust: "MUST    expected-failure  not run: known bug #7"},
			junit: map[string]junitCase{
				gateMust:  {status: "skipped", message: "expected failure, not run (Config.SkipExpectedFailures, -kri.skip-expected-failures): known bug #7"},
				"summary": {status: "failed", message: "1 expected failure(s): " + gateMust},
			},
			failures: 1,
		},
		{
			name: "an expected failure of a SHOULD spec", mode: "xfail-should", pass: true,
			summary: []string{conformant, "warning: 1 SHOULD spec(s) failed as Config.ExpectedFailures expects: " + gateShould,
				"note: Config.ExpectedFailures lists SHOULD spec(s) " + gateShould + ", which is unnecessary without strict mode", gatePass},
			lines: map[string]string{gateShould: "SHOULD  expected-failure  known bug #7: pod kri-conformance/kri-pod-039-"},
			junit: map[string]junitCase{gateShould: {status: "skipped", message: "expected failure (Config.ExpectedFailures: known bug #7)"}, "summary": summaryPassed},
		},
		{
			name: "an expected failure of a SHOULD spec in strict mode", mode: "xfail-should", flags: []string{"-kri.strict"}, pass: true,
			summary:    []string{conformant, "warning: 1 SHOULD spec(s) failed as Config.ExpectedFailures expects: " + gateShould, gatePass + "every applicable MUST and SHOULD spec passed)"},
			notSummary: []string{"unnecessary"},
			lines:      map[string]string{gateShould: "SHOULD  expected-failure  known bug #7: "},
			junit:      map[string]junitCase{gateShould: {status: "skipped", message: "expected failure"}, "summary": summaryPassed},
		},
		{
			name: "a SHOULD spec listed as an expected failure passes", mode: "stale-xfail-should", pass: true,
			summary: []string{conformant, "warning: 1 SHOULD spec(s) failed: " + gateShould, gatePass},
			lines:   map[string]string{gateShould: "SHOULD  failed  warning: " + gateShould + " passed but Config.ExpectedFailures lists it"},
			junit: map[string]junitCase{
				gateShould: {status: "skipped", message: "passed but Config.ExpectedFailures lists it", properties: map[string]string{"kri:warning": "remove it from the list"}},
				"summary":  summaryPassed,
			},
		},
	}
}

// TestGateCombinations runs the suite once per combination, each in its own
// process, and checks the exit status, the summary and the JUnit report each
// gives against what the package documentation promises: the run fails
// exactly when the verdict is "not conformant" or, in strict mode, when an
// applicable SHOULD spec failed.
func TestGateCombinations(t *testing.T) {
	skipInHelper(t)
	if testing.Short() {
		t.Skip("runs the suite once per combination")
	}
	t.Parallel() // shares the helper slots with the mutants and benign variants
	for id, want := range map[string]conformance.Level{gateMust: conformance.Must, gateShould: conformance.Should} {
		if got := levelOf(id); got != want {
			t.Fatalf("%s is a %s spec, the gate combinations need a %s one: pick another", id, got, want)
		}
	}
	for _, c := range gateCombinations() {
		t.Run(c.name, func(t *testing.T) {
			junitFile := filepath.Join(t.TempDir(), "junit.xml")
			r := runHelperSubtest(t, helperGate+c.mode, append([]string{"-ginkgo.junit-report=" + junitFile}, c.flags...)...)
			var junit *reporters.JUnitTestSuites
			if data, err := os.ReadFile(junitFile); err == nil {
				var j reporters.JUnitTestSuites
				if err := xml.Unmarshal(data, &j); err == nil {
					junit = &j
				}
			}
			if r.summary == "" || junit == nil {
				t.Fatalf("no summary or no JUnit report; output:\n%s", tail(r.output))
			}
			var exit *exec.ExitError
			switch {
			case c.pass && r.err != nil:
				t.Errorf("the run failed (%v), want exit status 0; summary:\n%s", r.err, r.summary)
			case !c.pass && (!errors.As(r.err, &exit) || exit.ExitCode() != 1):
				t.Errorf("the run ended with %v, want exit status 1; summary:\n%s", r.err, r.summary)
			}
			for _, s := range c.summary {
				if !strings.Contains(r.summary, s) {
					t.Errorf("the summary lacks %q:\n%s", s, r.summary)
				}
			}
			for _, s := range c.notSummary {
				if strings.Contains(r.summary, s) {
					t.Errorf("the summary has %q:\n%s", s, r.summary)
				}
			}
			for id, want := range c.lines {
				if got := strings.Join(strings.Fields(summaryLine(r.summary, id)), " "); !strings.HasPrefix(got, id+" "+strings.Join(strings.Fields(want), " ")) {
					t.Errorf("summary line of %s is %q, want it to start with %q", id, got, id+" "+want)
				}
			}
			if strings.Contains(r.summary, "Timed out after") {
				t.Errorf("the summary reports a Gomega timeout instead of what was awaited:\n%s", r.summary)
			}
			checkJUnit(t, junit, c)
			if c.name == "a SHOULD spec fails" && !strings.Contains(r.output, "kri:warning") {
				t.Errorf("the console does not show the SHOULD warning; output:\n%s", tail(r.output))
			}
		})
	}
}

// checkJUnit checks the JUnit report of combination c.
func checkJUnit(t *testing.T, j *reporters.JUnitTestSuites, c combination) {
	t.Helper()
	if len(j.TestSuites) != 1 {
		t.Fatalf("the JUnit report has %d test suites, want 1", len(j.TestSuites))
	}
	if j.Failures != c.failures {
		var failed []string
		for _, tc := range j.TestSuites[0].TestCases {
			if tc.Failure != nil {
				failed = append(failed, tc.Name)
			}
		}
		t.Errorf("the JUnit report counts %d failures %q, want %d", j.Failures, failed, c.failures)
	}
	for key, want := range c.junit {
		var tc *reporters.JUnitTestCase
		for i := range j.TestSuites[0].TestCases {
			name := j.TestSuites[0].TestCases[i].Name
			if (key == "summary" && strings.HasPrefix(name, "[ReportAfterSuite] KRI conformance summary")) ||
				strings.Contains(name, "["+key+"]") {
				tc = &j.TestSuites[0].TestCases[i]
			}
		}
		if tc == nil {
			t.Errorf("the JUnit report has no testcase for %s", key)
			continue
		}
		if tc.Status != want.status {
			t.Errorf("JUnit testcase %s has status %q, want %q", key, tc.Status, want.status)
		}
		msg := ""
		switch {
		case tc.Failure != nil:
			msg = tc.Failure.Message
		case tc.Skipped != nil:
			msg = tc.Skipped.Message
		}
		if want.status == "failed" && tc.Failure == nil {
			t.Errorf("JUnit testcase %s has no <failure>", key)
		}
		if want.status == "skipped" && tc.Skipped == nil {
			t.Errorf("JUnit testcase %s has no <skipped>", key)
		}
		if !strings.Contains(msg, want.message) {
			t.Errorf("JUnit testcase %s has message %q, want it to contain %q", key, firstLine(msg), want.message)
		}
		for name, part := range want.properties {
			value, ok := junitProperty(tc, name)
			if !ok || !strings.Contains(value, part) {
				t.Errorf("JUnit testcase %s: property %s = %q (present %v), want it to contain %q", key, name, firstLine(value), ok, part)
			}
		}
	}
}

// junitProperty returns the value of property name of tc (Ginkgo writes a
// report entry's value as JSON).
func junitProperty(tc *reporters.JUnitTestCase, name string) (string, bool) {
	if tc.Properties == nil {
		return "", false
	}
	for _, p := range tc.Properties.Properties {
		if p.Name == name {
			var s string
			if err := json.Unmarshal([]byte(p.Value), &s); err != nil {
				return p.Value, true
			}
			return s, true
		}
	}
	return "", false
}

func levelOf(id string) conformance.Level {
	i := slices.IndexFunc(conformance.Catalogue(), func(s conformance.SpecInfo) bool { return s.ID == id })
	if i < 0 {
		return ""
	}
	return conformance.Catalogue()[i].Level
}
