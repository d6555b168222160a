package workload

import "time"

// The lifecycle hooks of a Pod, as the kubelet's runtime manager runs them
// (k8s.io/kubernetes/pkg/kubelet/kuberuntime/kuberuntime_container.go):
//
//   - postStart runs once the container has started (startContainer, step
//     4) for as long as its action takes; the kubelet starts the next
//     container only once it has ended (SyncPod starts one container after
//     another), so no container of the pod starts meanwhile. When it fails,
//     the container is killed at its end with the pod's grace period
//     (killContainer, which the next start waits for too), the start fails
//     with ErrPostStartHook (Run.HookError), and the container is started
//     again as the restart policy says, after a back-off.
//   - preStop runs when the pod kills a running container with a grace
//     period above 0 (killContainer, executePreStopHook), for as long as
//     its action takes but at most the grace period; SIGTERM comes when it
//     ends, with what is left of the grace period. It runs once per run: a
//     later kill sends SIGTERM once it has ended.
//
// What a hook does is RunHook's (lifecycle_hook.go), what it writes goes
// to the run's files at the times it writes it, so that exec probes and the
// termination message see it. A command that runs until killed takes the
// whole grace period as a preStop hook and, as a postStart hook, succeeds
// at once (the kubelet would wait for it as long as the container runs).

// HookKind names a lifecycle hook of a container.
type HookKind string

// The lifecycle hooks of a container.
const (
	HookPostStart HookKind = "postStart"
	HookPreStop   HookKind = "preStop"
)

// DefaultHook is the hook of kind of run r of container c when Pod.HookFunc
// is nil: the handler of r.Spec, run at at in r (RunHook); false when the
// spec has none.
func DefaultHook(c *PodContainer, r *Run, kind HookKind, at time.Time) (Hook, bool) {
	lc := r.Spec.Lifecycle
	if lc == nil {
		return Hook{}, false
	}
	h := lc.PreStop
	if kind == HookPostStart {
		h = lc.PostStart
	}
	if h == nil {
		return Hook{}, false
	}
	return RunHook(r.Spec, h, r.Instance, at), true
}

// hook returns what the hook of kind of run r of c does, run at at
// (HookFunc, else DefaultHook), and whether it has one.
func (p *Pod) hook(c *PodContainer, r *Run, kind HookKind, at time.Time) (Hook, bool) {
	if p.HookFunc != nil {
		return p.HookFunc(c, r, kind, at)
	}
	return DefaultHook(c, r, kind, at)
}

// PostStart runs the postStart hook of run r of c, which the caller has
// started (StartRun) and advanced to now, as its sync runs it
// (startContainer, step 4): from the moment the run runs, for as long as
// the hook takes (HookRan); when it fails, the pod kills the run at its
// end (with GracePeriod; Run.HookError is set then). It returns when the
// hook ends (the run's start when it has none): the caller's next start
// waits for that.
func (p *Pod) PostStart(c *PodContainer, r *Run, now time.Time) time.Time {
	return p.postStart(c, r, now)
}

// postStart runs the postStart hook of c's run r, which starts at
// r.StartsAt(), at now: no container of the pod starts before it ends, and
// when it fails the run is killed then (postStartFailed). It returns the
// hook's end.
func (p *Pod) postStart(c *PodContainer, r *Run, now time.Time) time.Time {
	from := r.startsAt
	run, ok := p.hook(c, r, HookPostStart, from)
	if !ok {
		return from
	}
	if run.Forever {
		run.Takes = 0
	}
	end := from.Add(run.Takes)
	p.busyUntil = maxTime(p.busyUntil, end)
	r.RecordHook(run, from, end)
	p.emit(PodEvent{Kind: HookRan, Container: c, Run: r, At: now, Hook: run, HookKind: HookPostStart, From: from, Until: end})
	if run.Failed {
		r.postStartFail, r.postStartEnd = true, end
		r.postStartMessage = run.PostStartFailure(c.Name)
	}
	return end
}

// PostStartFailure returns, once the postStart hook of the run has failed
// (PostStart), the hook's end, when the pod kills the run, and what
// failed; ok is false while no postStart hook of the run has failed.
func (r *Run) PostStartFailure() (end time.Time, message string, ok bool) {
	return r.postStartEnd, r.postStartMessage, r.postStartMessage != ""
}

// postStartFailed kills c's run r at at, when its postStart hook has
// failed, with the pod's grace period; no container of the pod starts
// before it has exited.
func (p *Pod) postStartFailed(c *PodContainer, r *Run, at time.Time) {
	r.postStartFail = false
	r.HookError = ErrPostStartHook
	r.HookMessage = r.postStartMessage
	if r.State() == InstanceExited {
		return // it exited on its own meanwhile
	}
	p.busyUntil = maxTime(p.busyUntil, p.kill(c, r, at, p.GracePeriod))
}

// PreStop runs the preStop hook of run r of c when the caller kills it at
// now with grace (Instance.PreStop, with the hook HookFunc says), and
// returns when SIGTERM comes and what is left of grace then (HookRan when
// the hook ran); the kill's SIGTERM gives at least MinimumGracePeriod.
func (p *Pod) PreStop(c *PodContainer, r *Run, now time.Time, grace time.Duration) (time.Time, time.Duration) {
	return p.preStop(c, r, now, grace)
}

// preStop runs the preStop hook of run r of container c when the pod kills
// it at now with grace (PreStop).
func (p *Pod) preStop(c *PodContainer, r *Run, now time.Time, grace time.Duration) (time.Time, time.Duration) {
	var run Hook
	at, left, ran := r.PreStop(now, grace, func() (Hook, bool) {
		var ok bool
		run, ok = p.hook(c, r, HookPreStop, now)
		return run, ok
	})
	if !ran {
		return at, left
	}
	p.emit(PodEvent{Kind: HookRan, Container: c, Run: r, At: now, Hook: run, HookKind: HookPreStop, From: now, Until: at, Grace: grace})
	return at, left
}
