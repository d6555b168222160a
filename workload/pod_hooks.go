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

// postStart runs the postStart hook of c, whose current run has just
// started at t: no container of the pod starts before it ends, and when it
// fails the run is killed then (postStartFailed).
func (p *Pod) postStart(c *PodContainer, t time.Time) {
	r := c.Current
	lc := r.Spec.Lifecycle
	if !r.Running() || lc == nil || lc.PostStart == nil {
		return
	}
	run := RunHook(r.Spec, lc.PostStart, r.Instance, t)
	if run.Forever {
		run.Takes = 0
	}
	end := t.Add(run.Takes)
	p.busyUntil = maxTime(p.busyUntil, end)
	r.RecordHook(run, t, end)
	if run.Failed {
		r.postStartFail, r.postStartEnd = true, end
		r.postStartMessage = run.PostStartFailure(c.Name)
	}
}

// postStartFailed kills running container c at at, when its postStart
// hook has failed, with the pod's grace period; no container of the pod
// starts before it has exited.
func (p *Pod) postStartFailed(c *PodContainer, at time.Time) {
	r := c.Current
	r.postStartFail = false
	r.HookError = ErrPostStartHook
	r.HookMessage = r.postStartMessage
	p.busyUntil = maxTime(p.busyUntil, p.kill(c, c.Current, at, p.GracePeriod))
}

// preStop runs the preStop hook of run r of container c when the pod kills
// it at now with grace (Instance.PreStop), and returns when SIGTERM comes
// and what is left of grace then.
func (p *Pod) preStop(c *PodContainer, r *Run, now time.Time, grace time.Duration) (time.Time, time.Duration) {
	at, left, _ := r.PreStop(now, grace, func() (Hook, bool) {
		lc := r.Spec.Lifecycle
		if lc == nil || lc.PreStop == nil {
			return Hook{}, false
		}
		return RunHook(r.Spec, lc.PreStop, r.Instance, now), true
	})
	return at, left
}
