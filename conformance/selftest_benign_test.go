package conformance_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gtypes "github.com/onsi/ginkgo/v2/types"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// A benign variant is the fake with a change that only uses a freedom the
// contract leaves to providers: the mirror image of a mutant. The suite must
// pass every one of them; a spec that fails one is a bug in the spec (a false
// failure a correct provider would hit).
type benign struct {
	name string
	// freedom says what the contract leaves free that the variant uses.
	freedom string
	// warns are the SHOULD specs the freedom fails, as warnings: specs of
	// intermediate answers no agent path reads, which the variant changes.
	warns []string
	// pod and node build the interceptors of one fresh provider (state lives
	// in the closure); nil leaves that provider as it is. pod may script the
	// fake it decorates.
	pod  func(*fake.PodProvider) interceptor.PodFuncs
	node func() interceptor.NodeFuncs
	// notify, when set, replaces the calls of HandlePodSyncByUID the fake
	// makes (selftest_notify_test.go).
	notify notifyWrap
	// podLater is pod for interceptors that delay what the fake does and
	// so must ask for a sync once the delay is over (laterCalls).
	podLater func(*fake.PodProvider, *laterCalls) interceptor.PodFuncs
}

// config runs the variant with both providers, every capability and the
// fake's own timeouts (unscaled: timing is where false failures hide).
func (b *benign) config() conformance.Config {
	var podHook func(*fake.PodProvider)
	var nodeHook func(*fake.NodeProvider)
	if b.pod != nil {
		podHook = func(p *fake.PodProvider) { p.SetInterceptors(b.pod(p)) }
	}
	if b.node != nil {
		nodeHook = func(n *fake.NodeProvider) { n.SetInterceptors(b.node()) }
	}
	if b.podLater != nil {
		return withLaterCalls(fakeConfig(nil, nodeHook), b.podLater)
	}
	return withNotifyWrap(fakeConfig(podHook, nodeHook), b.notify)
}

const helperBenign = "benign:"

func init() {
	for _, b := range benignVariants() {
		extraHelpers[helperBenign+b.name] = b.config
	}
}

// TestBenignVariantsPass runs the suite against every benign variant, each
// in its own process, and checks that every spec that applies passes.
func TestBenignVariantsPass(t *testing.T) {
	want := benignWant(t, fakeDeclares)
	for _, b := range benignVariants() {
		t.Run(b.name, func(t *testing.T) {
			r := runHelperSubtest(t, helperBenign+b.name)
			checkBenignRun(t, b.name, b.freedom, r, minus(want, b.warns), "non-benchmark spec but its warnings", false)
			checkWarnings(t, b, r)
		})
	}
}

// benignWant readies t to run benign variants alongside the other tests
// that run helpers, each in a subtest (runHelperSubtest), and returns the
// IDs of the non-benchmark specs applies says the variants' provider
// declares: those each run must pass.
func benignWant(t *testing.T, applies func(conformance.SpecInfo) bool) (want []string) {
	t.Helper()
	skipInHelper(t)
	if testing.Short() {
		t.Skip("runs the suite once per variant")
	}
	t.Parallel() // shares the helper slots with TestMutantsAreCaught
	for _, s := range conformance.Catalogue() {
		if !s.Benchmark && applies(s) {
			want = append(want, s.ID)
		}
	}
	logSubtestsTook(t)
	return sortIDs(want)
}

// checkWarnings checks that variant b fails exactly the SHOULD specs it
// names, each as a warning: the freedom it takes is one a SHOULD spec
// reports.
func checkWarnings(t *testing.T, b *benign, r *helperRun) {
	t.Helper()
	for _, id := range b.warns {
		sr, ok := r.specReport(id)
		if !ok || !sr.State.Is(gtypes.SpecStateSkipped) || !strings.Contains(fmt.Sprint(sr.ReportEntries), "kri:warning") {
			t.Errorf("variant %s (%s): SHOULD spec %s did not warn (state %v): the freedom is no longer seen by it", b.name, b.freedom, id, sr.State)
		}
	}
}

// checkBenignRun checks the run of benign variant name (which takes
// freedom): no spec failed, exactly want passed (wantWhat describes them),
// and the verdict is conformant. A filtered run (a label filter: its other
// MUST specs did not run) is never conformant: its verdict and exit status
// say nothing of the variant, and only its specs are checked.
func checkBenignRun(t *testing.T, name, freedom string, r *helperRun, want []string, wantWhat string, filtered bool) {
	t.Helper()
	t.Logf("%s: %s", name, r.took.Round(100*time.Millisecond))
	if r.report == nil {
		t.Fatalf("variant %s (%s): no Ginkgo report; output:\n%s", name, freedom, tail(r.output))
	}
	for _, id := range r.failedIDs() {
		t.Errorf("variant %s (%s) fails %s, a false failure: %s", name, freedom, id, r.why(id))
	}
	if passed := r.idsIn(passedState); !slices.Equal(passed, want) {
		t.Errorf("variant %s: specs passed %v\nwant every %s %v\nnot passed: %v", name, passed, wantWhat, want, minus(want, passed))
		for _, id := range minus(want, passed) {
			t.Errorf("variant %s: %s did not pass: %s", name, id, r.why(id))
		}
	}
	if !filtered && (r.err != nil || !strings.Contains(r.summary, "verdict: conformant")) {
		t.Errorf("variant %s: the run failed (%v) or its summary is not \"verdict: conformant\":\n%s", name, r.err, r.summary)
	}
}
