package kubeletequiv

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/sim/workload"
)

// A backOffOp is one step of a back-off sequence: the clock moves on by
// step, then op happens to key k with an event ago before the clock's now:
// "restart" (a restart attempt of a container that exited then, as the
// kubelet's doBackOff checks and moves the back-off on), "next" (the
// back-off moved on for that event, as a Pod plans a restart), "delete"
// (the pod forgotten), "" (nothing); and for the image-pull back-off, with
// k an image of a pod: "pull" (a pull attempt that fails unless refused,
// as the kubelet's image manager checks and moves its back-off on),
// "pulled" (a pull that succeeds unless refused).
type backOffOp struct {
	step time.Duration
	op   string
	k    int
	ago  time.Duration
}

// backOffPair runs one sequence on the kubelet's back-off (client-go's
// flowcontrol.Backoff on a fake clock, as the kubelet's doBackOff drives
// it) and on the kit's (a workload.BackOffState per key, as the fake's
// inBackOff drives them).
type backOffPair struct {
	b     workload.BackOff
	clock *clocktesting.FakeClock
	kube  *flowcontrol.Backoff
	kit   map[string]workload.BackOffState
}

func newBackOffPair(b workload.BackOff) *backOffPair {
	c := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return &backOffPair{b: b, clock: c, kube: flowcontrol.NewFakeBackOff(b.Initial, b.Max, c), kit: map[string]workload.BackOffState{}}
}

func backOffKey(k int) string { return fmt.Sprintf("uid/app%d/image", k) }

// do runs o on both and returns what each reports for it: whether the
// restart was refused, and the delay.
func (p *backOffPair) do(o backOffOp) (kube, kit string) {
	p.clock.Step(o.step)
	now := p.clock.Now()
	key, t := backOffKey(o.k), now.Add(-o.ago)
	switch o.op {
	case "restart":
		// The kubelet's doBackOff: refused while in back-off since the exit,
		// else the back-off moves on.
		kubeIn := p.kube.IsInBackOffSince(key, t)
		if !kubeIn {
			p.kube.Next(key, t)
		}
		st := p.kit[key]
		kitIn := st.InBackOffSince(p.b, t, now)
		if !kitIn {
			st.Next(p.b, t, now)
			p.kit[key] = st
		}
		return fmt.Sprintf("refused %v, delay %s", kubeIn, p.kube.Get(key)), fmt.Sprintf("refused %v, delay %s", kitIn, st.Delay())
	case "next":
		p.kube.Next(key, t)
		st := p.kit[key]
		d := st.Next(p.b, t, now)
		p.kit[key] = st
		return "delay " + p.kube.Get(key).String(), "delay " + d.String()
	case "pull", "pulled":
		// The image manager's pullImage: refused while in back-off since
		// the latest failed pull, else the pull; a failed one moves the
		// back-off on. (One that succeeds also calls GC, which drops the
		// entries more than 2×Max past their update: entries that
		// IsInBackOffSinceUpdate and Next already treat as absent, so
		// nothing pullImage reads changes; the kit has no GC, and Get
		// would tell them apart.)
		st := p.kit[key]
		kubeIn := p.kube.IsInBackOffSinceUpdate(key, now)
		kitIn := st.InBackOffSinceUpdate(p.b, now)
		if !kubeIn && o.op == "pull" {
			p.kube.Next(key, now)
		}
		if !kitIn && o.op == "pull" {
			st.Next(p.b, now, now)
			p.kit[key] = st
		}
		return fmt.Sprintf("refused %v, delay %s", kubeIn, p.kube.Get(key)), fmt.Sprintf("refused %v, delay %s", kitIn, st.Delay())
	case "delete":
		p.kube.DeleteEntry(key)
		delete(p.kit, key)
	}
	return "", ""
}

// state describes what both hold for every key, as doBackOff would read
// it for exits at several times before now, and as the image manager
// reads it at now: in back-off, and the delay.
func (p *backOffPair) state(keys int) (kube, kit string) {
	now := p.clock.Now()
	var kb, ks strings.Builder
	for k := range keys {
		key := backOffKey(k)
		st := p.kit[key]
		fmt.Fprintf(&kb, "%s: %s", key, p.kube.Get(key))
		fmt.Fprintf(&ks, "%s: %s", key, st.Delay())
		for _, ago := range []time.Duration{0, 1, max(p.b.Initial-1, 0), p.b.Initial, p.b.Max, 2*p.b.Max - 1, 2 * p.b.Max, 2*p.b.Max + 1, 5 * p.b.Max} {
			t := now.Add(-ago)
			fmt.Fprintf(&kb, " %v", p.kube.IsInBackOffSince(key, t))
			fmt.Fprintf(&ks, " %v", st.InBackOffSince(p.b, t, now))
		}
		fmt.Fprintf(&kb, ", since update %v; ", p.kube.IsInBackOffSinceUpdate(key, now))
		fmt.Fprintf(&ks, ", since update %v; ", st.InBackOffSinceUpdate(p.b, now))
	}
	return kb.String(), ks.String()
}

// backOffFigures are the back-offs the sequences run with: the kubelet's,
// small ones, Max equal to and below Initial, and none. (Max 0 with a
// positive Initial is the one pair on which BackOffState documents a
// difference.)
var backOffFigures = []workload.BackOff{
	workload.KubeletBackOff,
	workload.KubeletImageBackOff,
	{Initial: time.Second, Max: 4 * time.Second},
	{Initial: time.Second, Max: time.Second},
	{Initial: 10 * time.Second, Max: 4 * time.Second},
	{},
}

// backOffSequences are crash loops as the fake and a Pod see them, in units
// of the figures (i: Initial, m: Max) so that each fits every figure.
func backOffSequences(b workload.BackOff) map[string][]backOffOp {
	i, m := b.Initial, b.Max
	crashLoop := []backOffOp{{op: "restart"}}
	for range 12 {
		crashLoop = append(crashLoop, backOffOp{step: i / 2, op: "restart"}, backOffOp{step: i, op: "restart"}, backOffOp{step: m, op: "restart"})
	}
	return map[string][]backOffOp{
		"crash loop, a sync every Initial/2, Initial, Max": crashLoop,
		"exits at once, syncs at the end of each back-off": {
			{op: "restart"}, {step: i, op: "restart"}, {step: 2 * i, op: "restart"}, {step: 4 * i, op: "restart"},
			{step: 8 * i, op: "restart"}, {step: m, op: "restart"}, {step: m, op: "restart"}, {step: m - 1, op: "restart"}, {step: 1, op: "restart"},
		},
		"a run of exactly 2×Max since the last restart keeps the back-off": {
			{op: "restart"}, {step: i, op: "restart"}, {step: 2 * m, op: "restart"}, {step: 1, op: "restart"},
		},
		"a run of 2×Max+1ns since the last restart starts it over": {
			{op: "restart"}, {step: i, op: "restart"}, {step: 2*m + 1, op: "restart"}, {step: 1, op: "restart"},
		},
		"the exit came long before the sync": {
			{op: "restart"}, {step: 3 * m, op: "restart", ago: 3 * m}, {step: m, op: "restart", ago: i / 2}, {step: 5 * m, op: "restart", ago: 2*m + 1},
			{step: 1, op: "restart", ago: 2 * m},
		},
		"forgotten pods and other containers": {
			{op: "restart"}, {op: "restart", k: 1}, {step: i, op: "restart"}, {op: "delete"}, {op: "restart"},
			{step: 1, op: "restart"}, {step: 1, op: "restart", k: 1}, {op: "delete", k: 2}, {step: i, op: "restart", k: 2},
		},
		"a Pod planning its restarts at its exits": {
			{op: "next"}, {step: i, op: "next"}, {step: 2 * i, op: "next"}, {step: 2*m + 1, op: "next"}, {step: 2 * m, op: "next"},
			{step: 3 * i, op: "restart"}, {step: m, op: "next", ago: m},
		},
	}
}

func runBackOffSequence(t *testing.T, name string, b workload.BackOff, seq []backOffOp, keys int) {
	t.Helper()
	p := newBackOffPair(b)
	for n, o := range seq {
		kube, kit := p.do(o)
		if kube != kit {
			t.Fatalf("%v %s, op #%d %+v: workload.BackOffState: %s; flowcontrol.Backoff (the kubelet's): %s", b, name, n, o, kit, kube)
		}
		if kube, kit := p.state(keys); kube != kit {
			t.Fatalf("%v %s, after op #%d %+v:\nworkload.BackOffState: %s\nflowcontrol.Backoff:   %s", b, name, n, o, kit, kube)
		}
	}
}

// The kit's crash-loop back-off (workload.BackOffState, which a Pod and the
// fake use) moves on, refuses restarts and reports delays as the kubelet's
// (client-go's flowcontrol.Backoff, driven as doBackOff in
// pkg/kubelet/kuberuntime/kuberuntime_manager.go drives it) on the same
// events at the same times.
func TestBackOffStateIsTheKubeletsBackOff(t *testing.T) {
	for _, b := range backOffFigures {
		for name, seq := range backOffSequences(b) {
			runBackOffSequence(t, name, b, seq, 3)
		}
	}
}

// The same on long random walks: clock steps around the figures' edges,
// restarts of three containers with exits up to 3×Max before, moves on
// and forgotten pods.
func TestBackOffStateAgreesOnRandomWalks(t *testing.T) {
	for _, b := range backOffFigures {
		randomWalks(t, b, func(r *rand.Rand, steps []time.Duration, o *backOffOp) {
			switch n := r.Intn(20); {
			case n < 14:
				o.op = "restart"
			case n < 17:
				o.op = "next"
			case n < 18:
				o.op = "delete"
			}
			if o.op != "delete" && r.Intn(3) == 0 {
				o.ago = steps[r.Intn(len(steps))] // no exit is in the future
			}
		})
	}
}

// imagePullSequences are failing pulls of images as the fake's
// WithImagePullBackOff and the kubelet's image manager see them, in units
// of the figures.
func imagePullSequences(b workload.BackOff) map[string][]backOffOp {
	i, m := b.Initial, b.Max
	retries := []backOffOp{{op: "pull"}}
	for range 12 {
		retries = append(retries, backOffOp{step: i / 2, op: "pull"}, backOffOp{step: i, op: "pull"}, backOffOp{step: m, op: "pull"})
	}
	return map[string][]backOffOp{
		"a failing pull retried every Initial/2, Initial, Max": retries,
		"retries at the end of each back-off": {
			{op: "pull"}, {step: i, op: "pull"}, {step: max(2*i-1, 0), op: "pull"}, {step: 1, op: "pull"}, {step: 4 * i, op: "pull"},
			{step: m, op: "pull"}, {step: m, op: "pull"}, {step: max(m-1, 0), op: "pull"}, {step: 1, op: "pull"},
		},
		"a pull 2×Max after the latest failure starts over": {
			{op: "pull"}, {step: i, op: "pull"}, {step: 2 * m, op: "pull"}, {step: i, op: "pull"}, {step: 2*m + 1, op: "pull"},
		},
		"a pull that succeeds, then fails again": {
			{op: "pull"}, {step: i, op: "pull"}, {step: 2 * i, op: "pulled"}, {step: 1, op: "pull"}, {step: 2*m + 1, op: "pulled"},
			{step: 1, op: "pull"},
		},
		"forgotten pods and other images": {
			{op: "pull"}, {op: "pull", k: 1}, {step: i, op: "pull"}, {op: "delete"}, {op: "pull"},
			{step: 1, op: "pull"}, {step: 1, op: "pull", k: 1}, {op: "delete", k: 2}, {step: i, op: "pull", k: 2},
		},
	}
}

// The kit's image-pull back-off (workload.BackOffState read with
// InBackOffSinceUpdate, as the fake's WithImagePullBackOff reads it)
// refuses pulls and reports delays as the kubelet's image manager
// (client-go's flowcontrol.Backoff, driven as pullImage in
// pkg/kubelet/images/image_manager.go drives it) on the same pulls at the
// same times, on set sequences and on long random walks.
func TestBackOffStateIsTheImageManagersBackOff(t *testing.T) {
	for _, b := range backOffFigures {
		for name, seq := range imagePullSequences(b) {
			runBackOffSequence(t, name, b, seq, 3)
		}
		randomWalks(t, b, func(r *rand.Rand, _ []time.Duration, o *backOffOp) {
			switch n := r.Intn(20); {
			case n < 15:
				o.op = "pull"
			case n < 18:
				o.op = "pulled"
			case n < 19:
				o.op = "delete"
			}
		})
	}
}

// randomWalks runs 20 walks of 300 ops with figures b, each a clock step
// around the figures' edges (the clock never goes back) on one of three
// keys, its op set by pick, the same walks on every run.
func randomWalks(t *testing.T, b workload.BackOff, pick func(r *rand.Rand, steps []time.Duration, o *backOffOp)) {
	t.Helper()
	var steps []time.Duration
	for _, d := range []time.Duration{0, 1, b.Initial / 2, b.Initial - 1, b.Initial, b.Initial + 1, b.Max - 1, b.Max, 2*b.Max - 1, 2 * b.Max, 2*b.Max + 1} {
		steps = append(steps, max(d, 0))
	}
	r := rand.New(rand.NewSource(1))
	for walk := range 20 {
		var seq []backOffOp
		for range 300 {
			o := backOffOp{step: steps[r.Intn(len(steps))], k: r.Intn(3)}
			pick(r, steps, &o)
			seq = append(seq, o)
		}
		runBackOffSequence(t, fmt.Sprintf("random walk %d", walk), b, seq, 3)
	}
}
