package conformance

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kri-kit/testkit/kri"
)

func TestSpecIDOf(t *testing.T) {
	for text, want := range map[string]string{
		"[KRI-POD-001] SyncPod of a new pod": "KRI-POD-001",
		"[KRI-NODE-010] x":                   "KRI-NODE-010",
		"[KRI-BENCH-002] x":                  "KRI-BENCH-002",
		"KRI-POD-001 without brackets":       "",
		"[KRI-POD-1] short":                  "",
	} {
		if got := specIDOf(text); got != want {
			t.Errorf("specIDOf(%q) = %q, want %q", text, got, want)
		}
	}
}

// report builds a Ginkgo report with the given state per spec ID; entries
// adds one report entry (name, value) to a spec.
func report(states map[string]types.SpecState, entries map[string][2]string) types.Report {
	var r types.Report
	for _, s := range allSpecs() {
		st, ok := states[s.id]
		if !ok {
			continue
		}
		sr := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: s.title(), State: st}
		if st == types.SpecStateSkipped {
			sr.Failure.Message = "skipped for a reason"
		}
		if st.Is(types.SpecStateFailureStates) {
			sr.Failure.Message = "it broke\nsecond line"
		}
		if e, ok := entries[s.id]; ok {
			sr.ReportEntries = types.ReportEntries{{Name: e[0], Value: types.WrapEntryValue(e[1])}}
		}
		r.SpecReports = append(r.SpecReports, sr)
	}
	return r
}

func TestVerdictAndGate(t *testing.T) {
	podOnly := Config{
		NewPodProvider: func(context.Context) (kri.PodProvider, error) { return nil, nil },
		Capabilities:   []Capability{CapRestartPolicies},
	}
	strict := podOnly
	strict.Strict = true
	// allPassed: every applicable spec (MUST and SHOULD) passed.
	allPassed := func(cfg Config) map[string]types.SpecState {
		st, err := resolve(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]types.SpecState{}
		for _, s := range podSpecsOnly() {
			if applicable(s, st) {
				m[s.id] = types.SpecStatePassed
			}
		}
		return m
	}
	with := func(m map[string]types.SpecState, id string, s types.SpecState) map[string]types.SpecState {
		out := map[string]types.SpecState{}
		for k, v := range m {
			out[k] = v
		}
		if s == 0 {
			delete(out, id)
		} else {
			out[id] = s
		}
		return out
	}
	base := allPassed(podOnly)
	const should = "KRI-POD-031" // a SHOULD spec without capabilities
	if specByID(should).level != Should || len(specByID(should).caps) > 0 {
		t.Fatalf("%s is no longer a SHOULD spec without capabilities: pick another", should)
	}
	warned := map[string][2]string{should: {entryWarning, "the second Stop panicked\nat here"}}
	xfailed := func(id string) map[string][2]string {
		return map[string][2]string{id: {entryExpectedFailure, "known bug: it broke"}}
	}
	cases := []struct {
		name       string
		cfg        Config
		report     types.Report
		conformant bool
		pass       bool
		reason     string // in the verdict's reasons, the warnings or the notes
		failure    string // in the gate's failures
	}{
		{"every applicable spec passed", podOnly, report(base, nil), true, true, "", ""},
		{"a MUST failed", podOnly, report(with(base, "KRI-POD-001", types.SpecStateFailed), nil), false, false,
			"MUST spec(s) failed: KRI-POD-001", "the verdict is not conformant"},
		{"a MUST panicked", podOnly, report(with(base, "KRI-POD-003", types.SpecStatePanicked), nil), false, false, "failed: KRI-POD-003", "not conformant"},
		{"a MUST skipped is not a pass", podOnly, report(with(base, "KRI-POD-002", types.SpecStateSkipped), nil), false, false,
			"MUST spec(s) skipped: KRI-POD-002", "not conformant"},
		{"a MUST missing from the report", podOnly, report(with(base, "KRI-POD-002", 0), nil), false, false, "a filtered run is never conformant): KRI-POD-002", "not conformant"},
		{"an expected failure of a MUST is never conformant", podOnly, report(with(base, "KRI-POD-005", types.SpecStateSkipped), xfailed("KRI-POD-005")), false, false,
			"expected failure(s): KRI-POD-005", "not conformant"},
		{"a SHOULD failure is a warning", podOnly, report(with(base, should, types.SpecStateSkipped), warned), true, true,
			"warning: 1 SHOULD spec(s) failed: " + should, ""},
		{"a SHOULD failure in strict mode fails the run", strict, report(with(allPassed(strict), should, types.SpecStateFailed), nil), true, false,
			"warning: 1 SHOULD spec(s) failed: " + should, "strict mode: 1 applicable SHOULD spec(s) failed: " + should},
		{"a SHOULD skipped in strict mode fails the run", strict, report(with(allPassed(strict), should, types.SpecStateSkipped), nil), true, false,
			"", "strict mode: 1 applicable SHOULD spec(s) skipped or not run: " + should},
		{"a SHOULD not run in strict mode fails the run", strict, report(with(allPassed(strict), should, 0), nil), true, false,
			"", "skipped or not run: " + should},
		{"a SHOULD skipped without strict mode is nothing", podOnly, report(with(base, should, types.SpecStateSkipped), nil), true, true, "", ""},
		{"a SHOULD that Ginkgo failed (a panic) fails the run", podOnly, report(with(base, should, types.SpecStatePanicked), nil), true, false,
			"warning: 1 SHOULD spec(s) failed", "outside the suite's assertions"},
		{"an expected failure of a SHOULD is unnecessary without strict mode", podOnly, report(with(base, should, types.SpecStateSkipped), xfailed(should)), true, true,
			"unnecessary without strict mode", ""},
		{"an expected failure of a SHOULD passes in strict mode", strict, report(with(allPassed(strict), should, types.SpecStateSkipped), xfailed(should)), true, true,
			"failed as Config.ExpectedFailures expects: " + should, ""},
		{"a spec needing an undeclared capability does not count", podOnly, report(with(base, "KRI-POD-010", types.SpecStateSkipped), nil), true, true, "", ""},
		{"a failed suite node fails the run", podOnly, func() types.Report {
			r := report(base, nil)
			r.SpecReports = append(r.SpecReports, types.SpecReport{LeafNodeType: types.NodeTypeReportAfterSuite, LeafNodeText: "Autogenerated ReportAfterSuite for --junit-report",
				State: types.SpecStateFailed, Failure: types.Failure{Message: "Failed to generate JUnit report"}})
			return r
		}(), true, false, "", "1 other node(s) of the suite failed: [ReportAfterSuite] Autogenerated ReportAfterSuite for --junit-report: Failed to generate JUnit report"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := &registration{cfg: tc.cfg, kinds: []string{kindPod}}
			outs := outcomes(tc.report, []*registration{reg})
			j := judge(outs, tc.report)
			if j.conformant != tc.conformant || j.pass != tc.pass {
				t.Errorf("conformant %v, gate pass %v (reasons %q, failures %q), want conformant %v, pass %v",
					j.conformant, j.pass, j.reasons, j.failures, tc.conformant, tc.pass)
			}
			said := strings.Join(slices.Concat(j.reasons, j.warnings, j.notes), "; ")
			if tc.reason != "" && !strings.Contains(said, tc.reason) {
				t.Errorf("reasons, warnings and notes %q, want one containing %q", said, tc.reason)
			}
			if tc.failure != "" && !strings.Contains(strings.Join(j.failures, "; "), tc.failure) {
				t.Errorf("gate failures %q, want one containing %q", j.failures, tc.failure)
			}
			text := renderSummary(outs, []*registration{reg}, j)
			wantLines := []string{"verdict: not conformant", "gate: FAIL ("}
			if tc.conformant {
				wantLines[0] = "verdict: conformant"
			}
			if tc.pass {
				wantLines[1] = "gate: pass ("
			}
			for _, l := range wantLines {
				if !strings.Contains(text, "\n"+l) {
					t.Errorf("summary lacks %q:\n%s", l, text)
				}
			}
			if strings.Contains(text, "KRI-NODE-") {
				t.Errorf("the summary lists node specs, which were not registered:\n%s", text)
			}
		})
	}
}

func TestDryRunHasNoVerdict(t *testing.T) {
	reg := &registration{cfg: Config{NewPodProvider: func(context.Context) (kri.PodProvider, error) { return nil, nil }}, kinds: []string{kindPod}}
	states := map[string]types.SpecState{}
	for _, s := range podSpecsOnly() {
		states[s.id] = types.SpecStatePassed // what Ginkgo reports in a dry run
	}
	r := report(states, nil)
	r.SuiteConfig.DryRun = true
	outs := outcomes(r, []*registration{reg})
	j := judge(outs, r)
	text := renderSummary(outs, []*registration{reg}, j)
	if !j.pass || j.conformant || !strings.Contains(text, "verdict: none (dry run") {
		t.Errorf("a dry run: pass %v, conformant %v, want a pass without a verdict:\n%s", j.pass, j.conformant, text)
	}
}

// TestSummaryListsFailures checks the failures section: per failed spec its
// level, the catalogue requirement, the last step and the first failure line.
func TestSummaryListsFailures(t *testing.T) {
	reg := &registration{cfg: Config{NewPodProvider: func(context.Context) (kri.PodProvider, error) { return nil, nil },
		ExpectedFailures: map[string]string{"KRI-POD-005": "known bug"}}, kinds: []string{kindPod}}
	r := report(map[string]types.SpecState{"KRI-POD-001": types.SpecStateFailed, "KRI-POD-005": types.SpecStateSkipped},
		map[string][2]string{"KRI-POD-005": {entryExpectedFailure, "known bug: pod x: not reached within 6s; last seen: y"}})
	r.SpecReports[0].SpecEvents = types.SpecEvents{
		{SpecEventType: types.SpecEventByStart, Message: "sync the new pod", TimelineLocation: types.TimelineLocation{Order: 1}},
		{SpecEventType: types.SpecEventByStart, Message: "kill it", TimelineLocation: types.TimelineLocation{Order: 2}},
		{SpecEventType: types.SpecEventByStart, Message: "after the failure", TimelineLocation: types.TimelineLocation{Order: 9}},
	}
	r.SpecReports[0].Failure.TimelineLocation.Order = 5
	outs := outcomes(r, []*registration{reg})
	text := renderSummary(outs, []*registration{reg}, judge(outs, r))
	s1, s5 := specByID("KRI-POD-001"), specByID("KRI-POD-005")
	for _, want := range []string{
		"failures:\n  KRI-POD-001 MUST failed: " + s1.text + "\n    step: kill it\n    it broke\n",
		"  KRI-POD-005 MUST expected-failure: " + s5.text + "\n    pod x: not reached within 6s; last seen: y\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the summary lacks\n%s\nin:\n%s", want, text)
		}
	}
}

func TestNoApplicableSpecIsNotConformant(t *testing.T) {
	reg := &registration{cfg: Config{NewNodeProvider: nil, NewPodProvider: func(context.Context) (kri.PodProvider, error) { return nil, nil }}, kinds: []string{kindNode}}
	ok, reasons := verdict(outcomes(types.Report{}, []*registration{reg}))
	if ok {
		t.Errorf("verdict conformant with no applicable spec (%v)", reasons)
	}
}

func TestValidate(t *testing.T) {
	pod := func(context.Context) (kri.PodProvider, error) { return nil, nil }
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "neither NewPodProvider nor NewNodeProvider"},
		{Config{NewPodProvider: pod, Capabilities: []Capability{"teleport"}}, `unknown capability "teleport"`},
		{Config{NewPodProvider: pod, Capabilities: []Capability{CapNodeStatusUpdates}}, "needs TriggerNodeStatusUpdate"},
		{Config{NewPodProvider: pod, Capabilities: []Capability{CapBackendFailures}}, "needs MakeBackendUnhealthy"},
		{Config{NewPodProvider: pod, ExpectedFailures: map[string]string{"KRI-POD-999": "x"}}, `unknown spec "KRI-POD-999"`},
		{Config{NewPodProvider: pod, ExpectedFailures: map[string]string{"KRI-POD-001": " "}}, "gives no reason"},
		{Config{NewPodProvider: pod, TimeoutScale: -1}, "TimeoutScale"},
	} {
		err := validate(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("validate(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
	short := Config{NewPodProvider: pod, Timeouts: Timeouts{Call: 500 * time.Millisecond}}
	if _, err := resolve(short); err != nil {
		t.Errorf("a call timeout below the grace period without %s: %v, want no error", CapGracePeriod, err)
	}
	short.Capabilities = []Capability{CapGracePeriod}
	if _, err := resolve(short); err == nil || !strings.Contains(err.Error(), "must exceed the grace period") {
		t.Errorf("a call timeout below the grace period with %s: %v, want an error", CapGracePeriod, err)
	}
}

func TestResolveScales(t *testing.T) {
	st, err := resolve(Config{NewPodProvider: func(context.Context) (kri.PodProvider, error) { return nil, nil }, TimeoutScale: 2})
	if err != nil {
		t.Fatal(err)
	}
	d := DefaultTimeouts()
	if st.t.Call != 2*d.Call || st.t.State != 2*d.State || st.t.Poll != 2*d.Poll || st.t.Stable != 2*d.Stable {
		t.Errorf("TimeoutScale 2 gave %+v, want twice %+v", st.t, d)
	}
	if st.graceSecs != 2 {
		t.Errorf("grace period %ds, want 2s", st.graceSecs)
	}
	st, err = resolve(Config{NewPodProvider: func(context.Context) (kri.PodProvider, error) { return nil, nil }, TimeoutScale: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if st.graceSecs != 1 {
		t.Errorf("grace period %ds, want it rounded up to 1s", st.graceSecs)
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 10; i++ {
		ds = append(ds, time.Duration(i))
	}
	for p, want := range map[int]time.Duration{50: 5, 90: 9, 100: 10} {
		if got := percentile(ds, p); got != want {
			t.Errorf("p%d = %d, want %d", p, got, want)
		}
	}
	if got := percentile(nil, 90); got != 0 {
		t.Errorf("p90 of nothing = %d, want 0", got)
	}
}

// podSpecsOnly returns the pod specs that are not benchmarks.
func podSpecsOnly() []*specDef {
	var out []*specDef
	for _, s := range allSpecs() {
		if s.kind == kindPod && !s.benchmark {
			out = append(out, s)
		}
	}
	return out
}
