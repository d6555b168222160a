package workload

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
)

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
// An exec action is a command of the vocabulary (OfHandler), run in the
// container's environment: it takes the time of its sleeps and fails with
// a non-zero exit code; one outside the vocabulary succeeds at once. What
// it writes goes to the run's files (Instance.RecordWrite), at the times it
// writes it, so that exec probes and the termination message see it. A
// command that runs until killed takes the whole grace period as a preStop
// hook and, as a postStart hook, succeeds at once (the kubelet would wait
// for it as long as the container runs). An HTTP GET action succeeds at
// once when something listens on its port, whatever the answer, and fails
// otherwise (HTTPHookAt); a sleep action takes its seconds; any other
// action (tcpSocket) fails at once, as the kubelet's hook runner
// (pkg/kubelet/lifecycle/handlers.go) runs no other.

// hookRun is what one run of a lifecycle hook does: it takes d (forever:
// as long as the container runs), fails when failed (detail says how),
// and writes writes, At counted from its start.
type hookRun struct {
	d       time.Duration
	forever bool
	failed  bool
	detail  string
	writes  []Write
}

// hookOf returns what handler h of container c does when it runs at at in
// c's run r.
func hookOf(c *PodContainer, r *Run, h *v1.LifecycleHandler, at time.Time) hookRun {
	switch {
	case h.Exec != nil:
		b, _ := OfHandler(c.Spec, h)
		switch {
		case b.FailsToStart():
			return hookRun{failed: true, detail: fmt.Sprintf("exec %q: executable %s not found", h.Exec.Command, b.MissingExecutable)}
		case b.Unknown:
			return hookRun{} // outside the vocabulary: succeeds at once
		case b.RunsUntilKilled:
			return hookRun{forever: true, writes: b.Writes}
		}
		run := hookRun{d: b.RunFor, writes: b.Writes}
		if b.ExitCode != 0 {
			run.failed, run.detail = true, fmt.Sprintf("exec %q exited with code %d", h.Exec.Command, b.ExitCode)
		}
		return run
	case h.HTTPGet != nil:
		g, listens, _, err := HTTPHookAt(c.Spec, h, r.Behaviour(), at.Sub(r.StartsAt()))
		switch {
		case err != nil:
			return hookRun{failed: true, detail: fmt.Sprintf("httpGet: %v", err)}
		case !listens:
			return hookRun{failed: true, detail: fmt.Sprintf("httpGet :%d%s: nothing listens on port %d", g.Port, g.Path, g.Port)}
		}
		return hookRun{}
	case h.Sleep != nil:
		return hookRun{d: time.Duration(max(h.Sleep.Seconds, 0)) * time.Second}
	}
	return hookRun{failed: true, detail: "the handler has no exec, httpGet or sleep action"}
}

// recordHook writes what hook run wrote, from its start until end, into
// the files of r.
func (r *Run) recordHook(run hookRun, start, end time.Time) {
	for _, w := range run.writes {
		if at := start.Add(w.At); !at.After(end) {
			r.RecordWrite(at, w)
		}
	}
}

// postStart runs the postStart hook of c, whose current run has just
// started at t: no container of the pod starts before it ends, and when it
// fails the run is killed then (postStartFailed).
func (p *Pod) postStart(c *PodContainer, t time.Time) {
	r := c.Current
	lc := c.Spec.Lifecycle
	if !r.Running() || lc == nil || lc.PostStart == nil {
		return
	}
	run := hookOf(c, r, lc.PostStart, t)
	if run.forever {
		run.d = 0
	}
	end := t.Add(run.d)
	p.busyUntil = maxTime(p.busyUntil, end)
	r.recordHook(run, t, end)
	if run.failed {
		r.postStartFail, r.postStartEnd = true, end
		r.postStartDetail = run.detail
	}
}

// postStartFailed kills running container c at at, when its postStart
// hook has failed, with the pod's grace period; no container of the pod
// starts before it has exited.
func (p *Pod) postStartFailed(c *PodContainer, at time.Time) {
	r := c.Current
	r.postStartFail = false
	r.HookError = ErrPostStartHook
	r.HookMessage = fmt.Sprintf("postStart hook of container %q failed: %s", c.Name, r.postStartDetail)
	p.busyUntil = maxTime(p.busyUntil, p.kill(c, at, p.GracePeriod))
}

// preStop runs the preStop hook of running container c when the pod kills
// it at now with grace, and returns when SIGTERM comes (once the hook has
// ended, at most grace later) and what is left of grace then. A grace of
// 0 runs no hook, and a hook runs once per run: a later kill sends SIGTERM
// once the hook has ended.
func (p *Pod) preStop(c *PodContainer, now time.Time, grace time.Duration) (time.Time, time.Duration) {
	r := c.Current
	lc := c.Spec.Lifecycle
	switch {
	case grace <= 0:
		return now, grace
	case r.preStopRan:
		if r.preStopEnd.After(now) {
			return r.preStopEnd, max(grace-r.preStopEnd.Sub(now), 0)
		}
		return now, grace
	case lc == nil || lc.PreStop == nil:
		return now, grace
	}
	run := hookOf(c, r, lc.PreStop, now)
	d := run.d
	if run.forever {
		d = grace
	}
	d = min(d, grace)
	r.preStopRan, r.preStopEnd = true, now.Add(d)
	r.recordHook(run, now, r.preStopEnd)
	return r.preStopEnd, grace - d
}
