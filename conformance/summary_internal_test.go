package conformance

import (
	"context"
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

// report builds a Ginkgo report with the given state per spec ID.
func report(states map[string]types.SpecState, entries map[string]string) types.Report {
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
		if v, ok := entries[s.id]; ok {
			sr.ReportEntries = types.ReportEntries{{Name: entryExpectedFailure, Value: types.WrapEntryValue(v)}}
		}
		r.SpecReports = append(r.SpecReports, sr)
	}
	return r
}

func TestVerdict(t *testing.T) {
	podOnly := Config{
		NewPodProvider: func(context.Context) (kri.PodProvider, error) { return nil, nil },
		Capabilities:   []Capability{CapRestartPolicies},
	}
	applicableMust := func(cfg Config) []string {
		st, err := resolve(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range podSpecs {
			if s.level == Must && applicable(s, st) {
				ids = append(ids, s.id)
			}
		}
		return ids
	}
	allPassed := func(cfg Config) map[string]types.SpecState {
		m := map[string]types.SpecState{}
		for _, id := range applicableMust(cfg) {
			m[id] = types.SpecStatePassed
		}
		return m
	}
	with := func(m map[string]types.SpecState, id string, s types.SpecState) map[string]types.SpecState {
		out := map[string]types.SpecState{}
		for k, v := range m {
			out[k] = v
		}
		out[id] = s
		return out
	}
	base := allPassed(podOnly)
	cases := []struct {
		name    string
		cfg     Config
		states  map[string]types.SpecState
		entries map[string]string
		want    bool
		reason  string
	}{
		{"every applicable MUST passed", podOnly, base, nil, true, ""},
		{"a MUST failed", podOnly, with(base, "KRI-POD-001", types.SpecStateFailed), nil, false, "MUST spec(s) failed: KRI-POD-001"},
		{"a MUST panicked", podOnly, with(base, "KRI-POD-003", types.SpecStatePanicked), nil, false, "failed: KRI-POD-003"},
		{"a MUST skipped is not a pass", podOnly, with(base, "KRI-POD-002", types.SpecStateSkipped), nil, false, "skipped or not run: KRI-POD-002"},
		{"a MUST missing from the report", podOnly, func() map[string]types.SpecState {
			m := with(base, "KRI-POD-002", types.SpecStatePassed)
			delete(m, "KRI-POD-002")
			return m
		}(), nil, false, "skipped or not run: KRI-POD-002"},
		{"an expected failure is never conformant", podOnly, with(base, "KRI-POD-005", types.SpecStateSkipped),
			map[string]string{"KRI-POD-005": "known bug: it broke"}, false, "expected failure(s): KRI-POD-005"},
		{"a SHOULD failure is a warning", podOnly, with(base, "KRI-POD-031", types.SpecStateFailed), nil, true, "SHOULD spec(s) failed: KRI-POD-031"},
		{"a spec needing an undeclared capability does not count", podOnly, with(base, "KRI-POD-010", types.SpecStateSkipped), nil, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := &registration{cfg: tc.cfg, kinds: []string{kindPod}}
			outs := outcomes(report(tc.states, tc.entries), []*registration{reg})
			got, reasons := verdict(outs)
			if got != tc.want {
				t.Errorf("verdict = %v (%v), want %v", got, reasons, tc.want)
			}
			if tc.reason != "" && !strings.Contains(strings.Join(reasons, "; "), tc.reason) {
				t.Errorf("reasons %q, want one containing %q", reasons, tc.reason)
			}
			text := renderSummary(outs, []*registration{reg})
			wantLine := "verdict: not conformant"
			if tc.want {
				wantLine = "verdict: conformant"
			}
			if !strings.Contains(text, wantLine) {
				t.Errorf("summary lacks %q:\n%s", wantLine, text)
			}
			if strings.Contains(text, "KRI-NODE-") {
				t.Errorf("the summary lists node specs, which were not registered:\n%s", text)
			}
		})
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
