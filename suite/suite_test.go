package suite

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

var testSuite = Suite{Name: "Test conformance", Prefix: "tc", SpecID: regexp.MustCompile(`^\[(TC-\d{3})\]`)}

func out(id string, level Level, r Result) Outcome {
	return Outcome{Spec: Spec{ID: id, Level: level, Text: "requirement of " + id}, Result: r, Applicable: true}
}

func TestVerdict(t *testing.T) {
	notApplicable := out("TC-009", Must, Failed)
	notApplicable.Applicable = false
	for _, tc := range []struct {
		name       string
		outs       []Outcome
		conformant bool
		reason     string
	}{
		{"every applicable MUST passed", []Outcome{out("TC-001", Must, Passed), out("TC-002", Should, Failed), notApplicable}, true, ""},
		{"a MUST failed", []Outcome{out("TC-001", Must, Failed)}, false, "1 MUST spec(s) failed: TC-001"},
		{"a MUST skipped", []Outcome{out("TC-001", Must, Passed), out("TC-003", Must, Skipped)}, false, "1 applicable MUST spec(s) skipped: TC-003"},
		{"a MUST not run", []Outcome{out("TC-001", Must, NotRun)}, false, "a filtered run is never conformant): TC-001"},
		{"a MUST expected to fail", []Outcome{out("TC-001", Must, ExpectedFailure)}, false, "1 expected failure(s): TC-001"},
		{"no applicable MUST", []Outcome{out("TC-002", Should, Passed), notApplicable}, false, "no applicable MUST spec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reasons := Verdict(tc.outs)
			if ok != tc.conformant || (tc.reason != "" && !strings.Contains(strings.Join(reasons, "; "), tc.reason)) {
				t.Errorf("Verdict = %v %q, want %v with %q", ok, reasons, tc.conformant, tc.reason)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	strictOut := func(o Outcome) Outcome { o.Strict = true; return o }
	ginkgoFailed := out("TC-002", Should, Failed)
	ginkgoFailed.GinkgoFailed = true
	for _, tc := range []struct {
		name    string
		outs    []Outcome
		report  types.Report
		pass    bool
		failure string // in the gate's failures
		said    string // in the warnings or notes
	}{
		{"a SHOULD failure is a warning", []Outcome{out("TC-001", Must, Passed), out("TC-002", Should, Failed)}, types.Report{}, true, "", "warning: 1 SHOULD spec(s) failed: TC-002"},
		{"a SHOULD failure in strict mode fails", []Outcome{out("TC-001", Must, Passed), strictOut(out("TC-002", Should, Failed))}, types.Report{}, false, "strict mode: 1 applicable SHOULD spec(s) failed: TC-002", ""},
		{"a SHOULD skipped in strict mode fails", []Outcome{out("TC-001", Must, Passed), strictOut(out("TC-002", Should, Skipped))}, types.Report{}, false, "skipped or not run: TC-002", ""},
		{"a SHOULD expected to fail in strict mode passes", []Outcome{out("TC-001", Must, Passed), strictOut(out("TC-002", Should, ExpectedFailure))}, types.Report{}, true, "", "failed as Config.ExpectedFailures expects: TC-002"},
		{"a SHOULD expected to fail is unnecessary without strict mode", []Outcome{out("TC-001", Must, Passed), out("TC-002", Should, ExpectedFailure)}, types.Report{}, true, "", "unnecessary without strict mode"},
		{"a SHOULD Ginkgo failed fails", []Outcome{out("TC-001", Must, Passed), ginkgoFailed}, types.Report{}, false, "outside the suite's assertions", ""},
		{"a MUST failure fails", []Outcome{out("TC-001", Must, Failed)}, types.Report{}, false, "the verdict is not conformant", ""},
		{"another node failed", []Outcome{out("TC-001", Must, Passed)}, types.Report{SpecReports: types.SpecReports{
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[TC-001] x", State: types.SpecStateFailed},
			{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "setup broke\nmore"}},
		}}, false, "1 other node(s) of the suite failed: [BeforeSuite] : setup broke", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := testSuite.Judge(tc.outs, tc.report)
			if j.Pass != tc.pass || (tc.failure != "" && !strings.Contains(strings.Join(j.Failures, "; "), tc.failure)) {
				t.Errorf("gate pass %v (failures %q), want %v with %q", j.Pass, j.Failures, tc.pass, tc.failure)
			}
			if said := strings.Join(slices.Concat(j.Warnings, j.Notes), "; "); !strings.Contains(said, tc.said) {
				t.Errorf("warnings and notes %q, want %q", said, tc.said)
			}
		})
	}
	dry := testSuite.Judge([]Outcome{out("TC-001", Must, Failed)}, types.Report{SuiteConfig: types.SuiteConfig{DryRun: true}})
	if !dry.DryRun || !dry.Pass || dry.Conformant {
		t.Errorf("a dry run: %+v, want a pass without a verdict", dry)
	}
}

func TestClassify(t *testing.T) {
	entry := func(name, value string) types.ReportEntries {
		return types.ReportEntries{{Name: name, Value: types.WrapEntryValue(value)}}
	}
	reason := func(string) string { return "known bug" }
	spec := Spec{ID: "TC-001", Level: Must}
	for _, tc := range []struct {
		name         string
		sr           types.SpecReport
		ran          bool
		result       Result
		detail, fail string
		warning      bool
	}{
		{"missing", types.SpecReport{}, false, NotRun, "", "", false},
		{"passed", types.SpecReport{State: types.SpecStatePassed}, true, Passed, "", "", false},
		{"failed", types.SpecReport{State: types.SpecStatePanicked, Failure: types.Failure{Message: "it broke\nmore", ForwardedPanic: "boom"}}, true,
			Failed, "panicked: it broke boom", "it broke boom", false},
		{"warning", types.SpecReport{State: types.SpecStateSkipped, ReportEntries: entry("tc:warning", "slow\nat x")}, true,
			Failed, "warning: slow", "slow", true},
		{"expected failure", types.SpecReport{State: types.SpecStateSkipped, ReportEntries: entry("tc:expected-failure", "known bug: it broke")}, true,
			ExpectedFailure, "known bug: it broke", "it broke", false},
		{"expected failure not run", types.SpecReport{State: types.SpecStateSkipped, ReportEntries: entry("tc:expected-failure", "not run: known bug")}, true,
			ExpectedFailure, "not run: known bug", "", false},
		{"skipped", types.SpecReport{State: types.SpecStateSkipped, Failure: types.Failure{Message: "needs x\nmore"}}, true, Skipped, "needs x", "", false},
		{"filtered out", types.SpecReport{State: types.SpecStateSkipped}, true, NotRun, "filtered out", "", false},
		{"another suite's entry is not ours", types.SpecReport{State: types.SpecStateSkipped, ReportEntries: entry("kri:warning", "x"), Failure: types.Failure{Message: "skip"}}, true,
			Skipped, "skip", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testSuite.Classify(spec, tc.sr, tc.ran, reason)
			if o.Result != tc.result || o.Detail != tc.detail || o.Failure != tc.fail || o.Warning != tc.warning {
				t.Errorf("Classify = %s %q failure %q warning %v, want %s %q failure %q warning %v",
					o.Result, o.Detail, o.Failure, o.Warning, tc.result, tc.detail, tc.fail, tc.warning)
			}
		})
	}
	sr := types.SpecReport{State: types.SpecStateFailed, Failure: types.Failure{Message: "x", TimelineLocation: types.TimelineLocation{Order: 5}},
		SpecEvents: types.SpecEvents{
			{SpecEventType: types.SpecEventByStart, Message: "one", TimelineLocation: types.TimelineLocation{Order: 1}},
			{SpecEventType: types.SpecEventByStart, Message: "two", TimelineLocation: types.TimelineLocation{Order: 3}},
			{SpecEventType: types.SpecEventByStart, Message: "after", TimelineLocation: types.TimelineLocation{Order: 7}},
		}}
	if o := testSuite.Classify(spec, sr, true, reason); o.Step != "two" {
		t.Errorf("step %q, want the last one before the failure, %q", o.Step, "two")
	}
}

func TestSummaryNamesTheSuite(t *testing.T) {
	outs := []Outcome{out("TC-001", Must, Passed), out("TC-002", Should, Failed)}
	text := Summary{Suite: testSuite, Header: []string{"providers: pod"}, Outcomes: outs, Judgement: testSuite.Judge(outs, types.Report{})}.Text()
	for _, want := range []string{"Test conformance summary\nproviders: pod\n", "-tc.strict makes them", "verdict: conformant", "  TC-002 SHOULD failed: requirement of TC-002\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the summary lacks %q:\n%s", want, text)
		}
	}
}

// causer wraps an error as github.com/pkg/errors and virtual-kubelet's
// errdefs do: Cause, no Unwrap.
type causer struct{ err error }

func (c causer) Error() string { return "wrapped: " + c.err.Error() }
func (c causer) Cause() error  { return c.err }

func TestIsNotSupported(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("operation not supported by the provider"), false},
		{ErrNotSupported, true},
		{fmt.Errorf("GetPodStatus: %w", ErrNotSupported), true},
		{errors.Join(errors.New("a"), ErrNotSupported), true},
		{causer{ErrNotSupported}, true},
		{fmt.Errorf("x: %w", causer{fmt.Errorf("y: %w", ErrNotSupported)}), true},
		{causer{errors.New("other")}, false},
	} {
		if got := IsNotSupported(tc.err); got != tc.want {
			t.Errorf("IsNotSupported(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestScaleAndValidation(t *testing.T) {
	f := &Flags{prefix: "tc", TimeoutScale: 3}
	if s, err := f.Scale(0); s != 3 || err != nil {
		t.Errorf("Scale(0) with the flag at 3 = %v, %v; want 3", s, err)
	}
	if s, err := f.Scale(2); s != 6 || err != nil {
		t.Errorf("Scale(2) with the flag at 3 = %v, %v; want 6", s, err)
	}
	f.TimeoutScale = -1
	if _, err := f.Scale(1); err == nil || !strings.Contains(err.Error(), "-tc.timeout-scale=-1") {
		t.Errorf("Scale with the flag at -1: %v, want an error naming the flag", err)
	}
	if err := ValidateTimeoutScale(-2); err == nil {
		t.Error("ValidateTimeoutScale(-2): want an error")
	}
	if err := ValidateTimeoutScale(0); err != nil {
		t.Errorf("ValidateTimeoutScale(0) = %v, want nil (0 means 1)", err)
	}
	errs := ValidateExpectedFailures(map[string]string{"TC-009": "x", "TC-001": " ", "TC-002": "ok"}, func(id string) bool { return id != "TC-009" })
	if len(errs) != 2 || !strings.Contains(errs[0], `"TC-001"] gives no reason`) || !strings.Contains(errs[1], `unknown spec "TC-009"`) {
		t.Errorf("ValidateExpectedFailures = %q, want TC-001 without a reason, then TC-009 unknown", errs)
	}
}

func TestCapabilitySkip(t *testing.T) {
	type capability string
	declared := func(c capability) bool { return c == "restarts" }
	if got := CapabilitySkip([]capability{"restarts"}, declared); got != "" {
		t.Errorf("a declared capability: %q, want no skip", got)
	}
	if got, want := CapabilitySkip([]capability{"restarts", "probes"}, declared), `needs capability "probes", which Config.Capabilities does not declare`; got != want {
		t.Errorf("an undeclared capability: %q, want %q", got, want)
	}
}
