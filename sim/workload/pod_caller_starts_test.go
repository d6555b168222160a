package workload_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

// newCallerPod returns a pod of the given app containers whose caller
// starts the runs, and the log its OnEvent keeps: one line per event,
// "at kind container/run".
func newCallerPod(app ...v1.Container) (*workload.Pod, *[]string) {
	pod := &v1.Pod{}
	pod.Name, pod.Namespace, pod.UID = "p", "ns", "u"
	pod.Spec.Containers = app
	p := workload.NewPod(pod)
	p.CallerStarts = true
	var log []string
	p.OnEvent = func(e workload.PodEvent) {
		s := fmt.Sprintf("%v %s %s/%s", e.At.Sub(t0), e.Kind, e.Container.Name, e.Run.ID)
		switch e.Kind {
		case workload.RunExited:
			s += fmt.Sprintf(" exit %d", e.Run.ExitCode())
		case workload.ProbeChanged:
			s += fmt.Sprintf(" %s ok=%v", e.Probe.Kind, e.Probe.Succeeded)
		case workload.RunKilling:
			s += fmt.Sprintf(" grace %v", e.Grace)
		case workload.HookRan:
			s += fmt.Sprintf(" %s %s from %v until %v failed=%v", e.HookKind, e.Hook.Action, e.From.Sub(t0), e.Until.Sub(t0), e.Hook.Failed)
			if e.HookKind == workload.HookPreStop {
				s += fmt.Sprintf(" grace %v", e.Grace)
			}
		}
		log = append(log, s)
	}
	return p, &log
}

// A pod whose caller starts the runs starts nothing by itself; a run it
// is handed is created until its StartsAt, ends as its scripted exit says,
// with the restart count and ID the caller gives, and each of its events
// reaches OnEvent at its own instant.
func TestPodCallerStartsRuns(t *testing.T) {
	app := shc("app", "sleep infinity")
	p, log := newCallerPod(app)
	p.Reconcile(t0)
	p.Advance(sec(100))
	if c := p.Container("app"); c.Current != nil || c.Waiting != nil {
		t.Fatalf("CallerStarts: the pod started app by itself: %+v", c.Current)
	}
	if next, ok := p.Next(); ok {
		t.Fatalf("CallerStarts: Next %v, want nothing planned", next.Sub(t0))
	}
	seven := 7
	r := p.StartRun(&app, false, sec(1), workload.RunOptions{ID: "one", Restarts: &seven, StartsAt: sec(3), Exit: &workload.RunExit{After: 2 * time.Second, Code: 4}})
	p.Advance(sec(2))
	if r.State() != workload.InstanceCreated || r.Restarts != 7 {
		t.Errorf("at 2s: run %s restarts %d, want Created (it starts at 3s), 7", r.State(), r.Restarts)
	}
	p.Advance(sec(10))
	r2 := p.StartRun(&app, false, sec(10), workload.RunOptions{ID: "two"})
	p.Advance(sec(10))
	c := p.Container("app")
	if c.Current != r2 || c.Previous != r || r2.Restarts != 8 || !r2.Running() {
		t.Errorf("second run: current %v previous %v restarts %d running %v; want two, one, 8, true", c.Current.ID, c.Previous.ID, r2.Restarts, r2.Running())
	}
	want := "3s RunStarted app/one\n5s RunExited app/one exit 4\n10s RunStarted app/two"
	if got := strings.Join(*log, "\n"); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}

// A run started beside a live one (a sync that acted on a stale status)
// does not end the live one: the pod plays it on, as the previous run,
// until it exits, with its probes.
func TestPodCallerStartsBesideLiveRun(t *testing.T) {
	app := shc("app", "sleep 10")
	app.ReadinessProbe = execProbe("true", 0, 1, 1, 1)
	p, log := newCallerPod(app)
	p.StartRun(&app, false, t0, workload.RunOptions{ID: "one"})
	p.Advance(sec(4))
	p.StartRun(&app, false, sec(4), workload.RunOptions{ID: "two"})
	p.Advance(sec(11))
	want := "0s RunStarted app/one\n0s ProbeChanged app/one readiness ok=true\n4s RunStarted app/two\n4s ProbeChanged app/two readiness ok=true\n10s RunExited app/one exit 0"
	if got := strings.Join(*log, "\n"); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}

// A failed liveness probe of a run the caller started is killed by the
// caller's Kill, with the probe's grace period, once it is due; the pod's
// own kill runs without one.
func TestPodCallerStartsKill(t *testing.T) {
	app := shc("app", "sleep infinity")
	app.LivenessProbe = execProbe("false", 2, 1, 1, 1)
	app.LivenessProbe.TerminationGracePeriodSeconds = ptr(int64(3))
	for _, own := range []bool{true, false} {
		p, log := newCallerPod(app)
		if own {
			p.Kill = func(c *workload.PodContainer, r *workload.Run, at time.Time, grace time.Duration) {
				*log = append(*log, fmt.Sprintf("%v Kill %s/%s grace %v", at.Sub(t0), c.Name, r.ID, grace))
				r.SIGKILL(at, at.Add(time.Second))
			}
		}
		p.StartRun(&app, false, t0, workload.RunOptions{ID: "one"})
		p.Advance(sec(10))
		want := "0s RunStarted app/one\n2s ProbeChanged app/one liveness ok=false\n2s Kill app/one grace 3s\n3s RunExited app/one exit 137"
		if !own {
			want = "0s RunStarted app/one\n2s ProbeChanged app/one liveness ok=false\n2s RunExited app/one exit 143"
		}
		if got := strings.Join(*log, "\n"); got != want {
			t.Errorf("own Kill %v: events:\n%s\nwant:\n%s", own, got, want)
		}
	}
}

// The caller runs the postStart hook of a run it started (PostStart), with
// the hooks HookFunc says; a failed one has the pod kill the run at its
// end, with its preStop hook and at least MinimumGracePeriod after it.
func TestPodCallerStartsHooks(t *testing.T) {
	app := shc("app", "trap '' TERM; sleep infinity")
	for _, floor := range []time.Duration{0, 2 * time.Second} {
		p, log := newCallerPod(app)
		p.GracePeriod, p.MinimumGracePeriod = 2*time.Second, floor
		p.HookFunc = func(c *workload.PodContainer, r *workload.Run, kind workload.HookKind, at time.Time) (workload.Hook, bool) {
			if kind == workload.HookPostStart {
				return workload.Hook{Action: "scripted", Takes: 2 * time.Second, Failed: true, Detail: "boom"}, true
			}
			return workload.Hook{Action: "scripted", Takes: time.Second}, true
		}
		r := p.StartRun(&app, false, sec(1), workload.RunOptions{ID: "one"})
		p.Advance(sec(1))
		if end := p.PostStart(p.Container("app"), r, sec(1)); !end.Equal(sec(3)) {
			t.Errorf("floor %v: PostStart returned %v, want the hook's end at 3s", floor, end.Sub(t0))
		}
		p.Advance(sec(20))
		killed := "5s RunExited app/one exit 137" // 1s of grace left after the preStop hook
		if floor > 0 {
			killed = "6s RunExited app/one exit 137" // the floor's 2s
		}
		want := "1s RunStarted app/one\n1s HookRan app/one postStart scripted from 1s until 3s failed=true\n" +
			"3s HookRan app/one preStop scripted from 3s until 4s failed=false grace 2s\n" + killed
		if got := strings.Join(*log, "\n"); got != want {
			t.Errorf("floor %v: events:\n%s\nwant:\n%s", floor, got, want)
		}
		if r.HookError != workload.ErrPostStartHook || !strings.Contains(r.HookMessage, "boom") {
			t.Errorf("floor %v: HookError %v %q, want ErrPostStartHook with the hook's detail", floor, r.HookError, r.HookMessage)
		}
	}
}

// A pod that starts its own runs reports their events too, its spec's
// hooks among them (DefaultHook).
func TestPodOwnRunsEvents(t *testing.T) {
	app := shc("app", "sleep 3")
	app.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "sleep 1"}}}}
	p, log := newCallerPod(app)
	p.CallerStarts = false
	p.RestartPolicy = v1.RestartPolicyNever
	p.NewID = func() string { return "own" }
	p.Reconcile(t0)
	p.Advance(sec(10))
	want := "0s RunStarted app/own\n0s HookRan app/own postStart exec from 0s until 1s failed=false\n3s RunExited app/own exit 0"
	if got := strings.Join(*log, "\n"); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}

// StopRuns stops the picked runs at once, the sidecars last, the last in
// spec order first: a sidecar gets SIGTERM once the runs stopped before it
// will have exited as their signals say, with what is left of grace, at
// least MinimumGracePeriod; it returns when the last will have exited.
// ExitRun ends a run at once.
func TestPodCallerStartsStopRuns(t *testing.T) {
	app := shc("app", "trap '' TERM; sleep infinity")
	plain := sidecarOf(shc("plain", "sleep infinity"))
	side := sidecarOf(shc("side", "trap '' TERM; sleep infinity"))
	other := shc("other", "sleep infinity")
	for _, floor := range []time.Duration{0, 2 * time.Second} {
		p, log := newCallerPod()
		p.MinimumGracePeriod = floor
		p.StartRun(&plain, true, t0, workload.RunOptions{ID: "p"})
		p.StartRun(&side, true, t0, workload.RunOptions{ID: "s"})
		p.StartRun(&app, false, t0, workload.RunOptions{ID: "a"})
		o := p.StartRun(&other, false, t0, workload.RunOptions{ID: "o"})
		p.Advance(sec(1))
		*log = nil
		deadline := p.StopRuns(sec(1), 4*time.Second, func(c *workload.PodContainer, r *workload.Run) bool { return c.Name != "other" })
		p.ExitRun(p.Container("other"), o, sec(2), 137)
		p.Advance(sec(20))
		// side's turn comes when app is killed at 5s, with no grace left
		// (at the same instant, init containers come first); plain's when
		// its own grace period ends, at 5s too.
		ends := "5s RunExited plain/p exit 143\n5s RunExited side/s exit 137\n5s RunExited app/a exit 137"
		if floor > 0 {
			ends = "5s RunExited plain/p exit 143\n5s RunExited app/a exit 137\n7s RunExited side/s exit 137"
		}
		want := "1s RunKilling app/a grace 4s\n1s RunKilling side/s grace 4s\n1s RunKilling plain/p grace 4s\n2s RunExited other/o exit 137\n" + ends
		if got := strings.Join(*log, "\n"); got != want {
			t.Errorf("floor %v: events:\n%s\nwant:\n%s", floor, got, want)
		}
		wantDeadline := sec(5).Add(floor)
		if !deadline.Equal(wantDeadline) {
			t.Errorf("floor %v: StopRuns returned %v, want %v", floor, deadline.Sub(t0), wantDeadline.Sub(t0))
		}
	}
}

// A start the caller's runtime could not carry out (StartFailed) becomes
// the container's current run, exited at once with the caller's code and
// message, without events or probes; the run before it becomes the
// previous one and the next start counts it; Data is the caller's.
func TestPodCallerStartFailed(t *testing.T) {
	app := shc("app", "sleep infinity")
	app.LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 1}
	p, log := newCallerPod(app)
	first := p.StartRun(&app, false, t0, workload.RunOptions{ID: "one", Exit: &workload.RunExit{After: time.Second, Code: 1}})
	p.Advance(sec(2))
	n := len(*log)
	failed := p.StartFailed(&app, false, sec(3), workload.RunOptions{ID: "two", Data: "mine", StartsAt: sec(9)}, 128, "no such file")
	p.Advance(sec(20))
	c := p.Container("app")
	switch {
	case c.Current != failed || c.Previous != first:
		t.Fatalf("current %v previous %v, want the failed run and the first", c.Current.ID, c.Previous.ID)
	case failed.State() != workload.InstanceExited || failed.ExitCode() != 128 || !failed.FinishedAt().Equal(sec(3)) || !failed.StartedAt().IsZero():
		t.Fatalf("failed run: %v exit %d at %v, started %v; want exited 128 at 3s, never started", failed.State(), failed.ExitCode(), failed.FinishedAt().Sub(t0), failed.StartedAt())
	case !failed.StartFailed || failed.StartMessage != "no such file" || failed.Prober != nil || failed.Restarts != 1 || failed.Data != "mine":
		t.Fatalf("failed run: StartFailed %v message %q prober %v restarts %d data %v", failed.StartFailed, failed.StartMessage, failed.Prober, failed.Restarts, failed.Data)
	case len(*log) != n:
		t.Fatalf("events after the failed start: %q", (*log)[n:])
	}
	if next := p.StartRun(&app, false, sec(21), workload.RunOptions{ID: "three"}); next.Restarts != 2 || next.StartFailed {
		t.Fatalf("next run: restarts %d StartFailed %v, want 2 false", next.Restarts, next.StartFailed)
	}
}

// Run.PostStartFailure says, from PostStart on, that the run's postStart
// hook failed, when it ends and what failed; a run whose hook succeeded
// has none.
func TestRunPostStartFailure(t *testing.T) {
	app := shc("app", "sleep infinity")
	p, _ := newCallerPod(app)
	fail := true
	p.HookFunc = func(c *workload.PodContainer, r *workload.Run, kind workload.HookKind, at time.Time) (workload.Hook, bool) {
		return workload.Hook{Action: "scripted", Takes: 2 * time.Second, Failed: fail, Detail: "boom"}, kind == workload.HookPostStart
	}
	r := p.StartRun(&app, false, sec(1), workload.RunOptions{ID: "one"})
	p.Advance(sec(1))
	if _, _, ok := r.PostStartFailure(); ok {
		t.Fatal("PostStartFailure before PostStart: ok")
	}
	p.PostStart(p.Container("app"), r, sec(1))
	if end, message, ok := r.PostStartFailure(); !ok || !end.Equal(sec(3)) || !strings.Contains(message, "boom") {
		t.Fatalf("PostStartFailure after a failed hook: %v %q %v, want 3s, the hook's detail, true", end.Sub(t0), message, ok)
	}
	p.Advance(sec(20))
	if _, _, ok := r.PostStartFailure(); !ok {
		t.Fatal("PostStartFailure once the pod killed the run: not ok")
	}
	fail = false
	r2 := p.StartRun(&app, false, sec(21), workload.RunOptions{ID: "two"})
	p.Advance(sec(21))
	p.PostStart(p.Container("app"), r2, sec(21))
	if _, _, ok := r2.PostStartFailure(); ok {
		t.Fatal("PostStartFailure after a hook that succeeded: ok")
	}
}
