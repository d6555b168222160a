package conformance_test

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// A mutant is the fake with one contract violation, made with the fake's
// interceptors around its real behaviour. The suite must fail exactly the
// specs in want: fewer means a spec is too weak to see the violation, more
// means a spec fails for reasons that are not its own.
type mutant struct {
	name string
	// violation says which contract the mutant breaks.
	violation string
	// want is every spec the mutant fails, all of them here: first the
	// specs of its group it was written for, then, each under a comment
	// saying why, the specs of other groups that stand on what it breaks.
	// A spec it fails only because of timing (a wait its violation
	// stretches past a timeout) is under a comment that starts "Timing";
	// one that a loaded machine decides is in underLoad, not here.
	want []string
	// pod or node builds the interceptors of one fresh provider (state
	// kept by a mutant lives in the closure; pod may script the fake it
	// decorates). The mutant is run with only that provider configured.
	pod  func(*fake.PodProvider) interceptor.PodFuncs
	node func() interceptor.NodeFuncs
	// timeouts, when set, replace the scaled default timeouts.
	timeouts *conformance.Timeouts
	// withoutCaps are capabilities the mutant's run does not declare.
	withoutCaps []conformance.Capability
	// check, when set, makes further assertions on the run.
	check func(t *testing.T, r *helperRun)
	// cost ranks the slow mutants, to start them first.
	cost int
	// host, when set, builds the mutant on the hostprocess example
	// instead of the fake, for specs of capabilities the fake does not
	// simulate (selftest_hostprocess_test.go); pod and node are then unused.
	host func() interceptor.PodFuncs
	// notify, when set, replaces the calls of HandlePodSyncByUID the fake
	// makes (selftest_notify_test.go).
	notify notifyWrap
	// podLater is pod for interceptors that delay what the fake does and
	// ask for a sync once the delay is over (laterCalls).
	podLater func(*fake.PodProvider, *laterCalls) interceptor.PodFuncs
	// underLoad are specs a host mutant may fail too, with why: its
	// violation takes away what keeps a real process's slowness from
	// failing them (a startup probe that holds off a liveness probe until
	// a server listens), so a loaded machine decides. They are neither
	// wanted nor counted as extra; they prove nothing.
	underLoad map[string]string
}

// mutantScale shrinks the default timeouts for the mutants: 6s to reach a
// state, 20ms polls, 200ms stable windows, and 6s per call (config doubles
// the scaled 3s). The grace period stays
// one second (whole seconds), so a KillPod that honours it still returns well
// within the call timeout on a loaded machine.
const mutantScale = 0.1

func (m *mutant) config() conformance.Config {
	if m.host != nil {
		return m.hostConfig()
	}
	var podHook func(*fake.PodProvider)
	var nodeHook func(*fake.NodeProvider)
	if m.pod != nil {
		podHook = func(p *fake.PodProvider) { p.SetInterceptors(m.pod(p)) }
	}
	if m.node != nil {
		nodeHook = func(n *fake.NodeProvider) { n.SetInterceptors(m.node()) }
	}
	cfg := withNotifyWrap(fakeConfig(podHook, nodeHook), m.notify)
	if m.podLater != nil {
		cfg = withLaterCalls(fakeConfig(nil, nodeHook), m.podLater)
	}
	if m.pod != nil || m.notify != nil || m.podLater != nil {
		cfg.NewNodeProvider = nil
	} else {
		cfg.NewPodProvider = nil
	}
	// Calls keep 6s: a KillPod that honours a one-second grace period was
	// seen to take over 3s when make test ran the mutants beside the other
	// packages on two cores.
	cfg.Timeouts = conformance.Timeouts{Call: 2 * conformance.DefaultTimeouts().Call}
	cfg.TimeoutScale = mutantScale
	if m.timeouts != nil {
		cfg.Timeouts, cfg.TimeoutScale = *m.timeouts, 1
	}
	cfg.Capabilities = slices.DeleteFunc(slices.Clone(cfg.Capabilities), func(c conformance.Capability) bool {
		return slices.Contains(m.withoutCaps, c)
	})
	return cfg
}

func mutantNamed(name string) *mutant {
	for _, m := range mutants() {
		if m.name == name {
			return m
		}
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// TestMutantsAreCaught runs the suite against every mutant of the fake, each
// in its own process in virtual time, and checks that exactly the expected
// specs fail and that the verdict is "not conformant" when a MUST spec
// fails. The mutants of hostprocess, on real processes, are
// TestHostMutantsAreCaught's (the second tier, make test-real).
func TestMutantsAreCaught(t *testing.T) {
	zoo := slices.DeleteFunc(mutants(), func(m *mutant) bool { return m.host != nil })
	if len(zoo) < 15 {
		t.Fatalf("the zoo has %d mutants of the fake, want at least 15", len(zoo))
	}
	checkMutants(t, zoo)
}

// TestHostMutantsAreCaught is TestMutantsAreCaught for the mutants of the
// hostprocess example (named host-...), on real processes and the real
// clock. Each runs only the specs that can see its bug: those of the spec
// groups of the specs it is written for (hostFocus), not the whole suite.
func TestHostMutantsAreCaught(t *testing.T) {
	zoo := slices.DeleteFunc(mutants(), func(m *mutant) bool { return m.host == nil })
	if len(zoo) == 0 {
		t.Fatal("no host mutant: the pod-spec specs the fake cannot show have no mutant on real processes")
	}
	checkMutants(t, zoo)
}

// checkMutants runs the suite against every mutant of zoo, each in its own
// process (a host mutant's run focused on its groups), and checks that
// exactly the expected specs fail and that the verdict is "not conformant"
// when a MUST spec fails.
func checkMutants(t *testing.T, zoo []*mutant) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("helper process")
	}
	if testing.Short() {
		t.Skip("runs the suite once per mutant")
	}
	t.Parallel() // shares the helper slots with TestBenignVariantsPass
	musts := map[string]bool{}
	for _, s := range conformance.Catalogue() {
		musts[s.ID] = s.Level == conformance.Must
	}

	// The slow mutants (those that hang a call in many specs) first, so
	// that their runs start first and the others run alongside them.
	slices.SortStableFunc(zoo, func(a, b *mutant) int { return b.cost - a.cost })
	logSubtestsTook(t)
	for _, m := range zoo {
		t.Run(m.name, func(t *testing.T) {
			var flags []string
			focus := ""
			if m.host != nil {
				focus = hostFocus(m.want)
				flags = append(flags, "-ginkgo.label-filter="+focus)
			}
			r := runHelperSubtest(t, helperMutant+m.name, flags...)
			t.Logf("%s: %s", m.name, r.took.Round(100*time.Millisecond))
			if r.report == nil {
				t.Fatalf("mutant %s (%s): no Ginkgo report; output:\n%s", m.name, m.violation, tail(r.output))
			}
			got, want := r.failedIDs(), sortIDs(slices.Clone(m.want))
			got = slices.DeleteFunc(got, func(id string) bool {
				why, ok := m.underLoad[id]
				if ok && !slices.Contains(want, id) {
					t.Logf("mutant %s also failed %s, which a loaded machine decides for it: %s", m.name, id, why)
				}
				return ok && !slices.Contains(want, id)
			})
			if !slices.Equal(got, want) {
				t.Errorf("mutant %s (%s):\nfailed specs %v\nwant exactly %v\nmissed (spec too weak?): %v\nextra (failing for another reason?): %v",
					m.name, m.violation, got, want, minus(want, got), minus(got, want))
				for _, id := range minus(got, want) {
					t.Logf("%s: %s", id, r.why(id))
				}
			}
			if r.err == nil {
				t.Errorf("mutant %s: the suite passed", m.name)
			}
			mustFailed := slices.ContainsFunc(want, func(id string) bool { return musts[id] })
			switch {
			case focus != "":
				// A filtered run is never conformant (its other MUST specs
				// did not run): the verdict says nothing of the mutant.
				// Every host mutant's run must still see its specs fail.
			case mustFailed && !strings.Contains(r.summary, "verdict: not conformant"):
				t.Errorf("mutant %s fails a MUST spec but the summary does not say \"not conformant\":\n%s", m.name, r.summary)
			case !mustFailed && !strings.Contains(r.summary, "verdict: conformant"):
				t.Errorf("mutant %s fails only SHOULD specs but the summary does not say \"conformant\":\n%s", m.name, r.summary)
			}
			if m.check != nil {
				m.check(t, r)
			}
		})
	}
}

// TestEverySpecHasAMutant checks that the zoo proves every spec that is not
// a measurement: some mutant must be expected to fail it.
func TestEverySpecHasAMutant(t *testing.T) {
	skipInHelper(t)
	caught, onFake := sets.New[string](), sets.New[string]()
	for _, m := range mutants() {
		caught.Insert(m.want...)
		if m.host == nil {
			onFake.Insert(m.want...)
		}
	}
	specs, hostOnly := 0, 0
	for _, s := range conformance.Catalogue() {
		if s.Benchmark {
			continue
		}
		specs++
		if !caught.Has(s.ID) {
			t.Errorf("no mutant is expected to fail %s (%s): add one to mutants()", s.ID, s.Requirement)
		} else if !onFake.Has(s.ID) {
			hostOnly++
		}
	}
	// The tiers' share of the proof (README, "The kit's own checks").
	t.Logf("%d specs: %d failed by a mutant of the fake (make test), %d only by a host mutant (make test-real)", specs, specs-hostOnly, hostOnly)
}

// minus returns the elements of a not in b.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
