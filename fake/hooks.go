package fake

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/workload"
)

// Lifecycle hooks, simulated on the provider's clock as the kubelet's
// runtime manager runs them (k8s.io/kubernetes/pkg/kubelet/kuberuntime/
// kuberuntime_container.go: startContainer step 4, killContainer,
// executePreStopHook):
//
//   - postStart runs from the moment the container runs, for as long as its
//     command says (workload.OfHandler; a sleep action for its seconds).
//     The containers SyncPod starts after it in the same call run only once
//     it has ended, as the kubelet starts them one after another. When it
//     fails, the container is killed at its end as KillPod kills it, with
//     the pod's grace period: its preStop hook first, then SIGTERM (SIGKILL
//     when the grace period is over if it ignores SIGTERM); the start is
//     reported to the ReasonCache as workload.ErrPostStartHook: by the
//     SyncPod that started it when the hook fails at once, else by the
//     first SyncPod after its end.
//   - preStop runs when KillPod (or CleanupPods) stops a running container
//     with a grace period above 0, for as long as its command says but at
//     most the grace period; SIGTERM comes when it ends, and the container
//     gets what is left of the grace period (at least 2s under
//     WithMinimumGracePeriod).
//
// What a hook of the spec does is workload.RunHook's: an exec command of
// the vocabulary takes its sleeps and fails with a non-zero exit code or a
// missing executable (one outside the vocabulary succeeds at once); an
// HTTP GET action is answered by the server the container's command runs
// (httpd -f -p PORT: workload.HTTPHookAt), which logs it, and succeeds at
// once when something listens on its port, whatever the status; a sleep
// action takes its seconds; any other (tcpSocket) fails at once. A command
// that runs until killed takes the whole grace period as a preStop hook
// and, as a postStart hook, succeeds at once (the kubelet would block for
// ever). What a hook writes goes to the instance's files, at the times it
// writes it (workload.Instance.RecordHook).

// scriptedHook is a hook a ContainerScript imposes.
type scriptedHook struct {
	d    time.Duration
	code int
}

// hook returns what the scripted hook does.
func (sh *scriptedHook) hook() workload.Hook {
	h := workload.Hook{Action: "scripted", Takes: sh.d, ExitCode: sh.code}
	if sh.code != 0 {
		h.Failed, h.Detail = true, fmt.Sprintf("scripted hook exited with code %d", sh.code)
	}
	return h
}

// hookOf returns what the postStart (post) or preStop hook of c does, as
// script imposes it or its spec says, run at at in instance in, and
// whether there is one.
func hookOf(script *containerScript, c *v1.Container, post bool, in *instance, at time.Time) (workload.Hook, bool) {
	if script != nil {
		if sh := script.postStart; post && sh != nil {
			return sh.hook(), true
		}
		if sh := script.preStop; !post && sh != nil {
			return sh.hook(), true
		}
	}
	if c == nil || c.Lifecycle == nil {
		return workload.Hook{}, false
	}
	h := c.Lifecycle.PreStop
	if post {
		h = c.Lifecycle.PostStart
	}
	if h == nil {
		return workload.Hook{}, false
	}
	return workload.RunHook(c, h, in.sim, at), true
}

// exitCode is the exit code EventPostStartHook reports of hook h: an exec
// command's, 1 for another hook that failed.
func exitCode(h workload.Hook) int {
	if h.Failed && h.ExitCode == 0 {
		return 1
	}
	return h.ExitCode
}

// postStart simulates the postStart hook of c, whose instance in has just
// been created, and reports whether the start still counts as a success.
// The caller holds p.mu.
func (s *syncer) postStart(c *v1.Container, in *instance, script *containerScript, res *pkgcontainer.SyncResult) bool {
	run, ok := hookOf(script, c, true, in, in.runningAt)
	if !ok {
		return true
	}
	if run.Forever {
		run.Takes = 0
	}
	end := in.runningAt.Add(run.Takes)
	s.cursor = maxTime(s.cursor, end)
	in.sim.RecordHook(run, in.runningAt, end)
	s.p.publish(Event{At: s.now, Type: EventPostStartHook, Pod: s.ps.ref, Container: c.Name, ContainerID: in.id, ExitCode: exitCode(run),
		Message: fmt.Sprintf("%s hook runs %s from %s, exits %d", run.Action, run.Takes, in.runningAt.Format(time.RFC3339Nano), exitCode(run))})
	if !run.Failed {
		return true
	}
	// killContainer with the pod's grace period (setTerminationGracePeriod).
	// Its preStop hook runs first, its time taken from grace.
	grace := s.p.gracePeriod(nil, s.ps.pod, nil)
	in.termAt = end
	term, left := s.p.preStop(s.ps, in, s.now, end, grace)
	in.sim.SIGTERMAt(term, left)
	s.p.schedule(in, term)
	s.p.schedule(in, term.Add(left))
	if d := in.sim.Shutdown().Delay; d > 0 && d < left {
		s.p.schedule(in, term.Add(d)) // a handler that takes a while
	}
	in.hookFailure = run.PostStartFailure(c.Name)
	if end.After(s.now) {
		in.hookFailPending = true
		s.p.notifyAt(s.ps, end, s.now) // podsync.go: the next sync reports it
		return true
	}
	res.Fail(workload.ErrPostStartHook, in.hookFailure)
	s.p.advanceSim(s.ps, s.now)
	return false
}

// reportHookFailure reports to the ReasonCache the failed postStart hook of
// container c's current instance, once its end has come, and reports
// whether it did: the container is then not started again in this sync.
// The caller holds p.mu.
func (s *syncer) reportHookFailure(c *v1.Container) bool {
	cur := s.ps.containers[c.Name].current()
	if cur == nil || !cur.hookFailPending || cur.termAt.After(s.now) {
		return false
	}
	cur.hookFailPending = false
	res := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
	res.Fail(workload.ErrPostStartHook, cur.hookFailure)
	s.result.AddSyncResult(res)
	// The start this sync leaves out is due at the next: the agent is
	// asked for it (podsync.go), as for any failed start to be retried.
	s.p.notifyPod(s.ps.ref.UID)
	return true
}

// preStop runs the preStop hook of the running instance in (as the spec
// last synced says: a container's hooks cannot change) when KillPod sends
// it SIGTERM at at with grace before SIGKILL (workload.Instance.PreStop),
// and returns when SIGTERM comes instead (once the hook has ended, at most
// grace later) and what is left of grace then (at least 2s under
// WithMinimumGracePeriod when the hook ran). The caller holds p.mu.
func (p *PodProvider) preStop(ps *podState, in *instance, now, at time.Time, grace time.Duration) (time.Time, time.Duration) {
	var run workload.Hook
	term, left, ran := in.sim.PreStop(at, grace, func() (workload.Hook, bool) {
		var ok bool
		run, ok = hookOf(p.scripts.containers[containerKey{pod: ps.key, name: in.name}], specOf(ps.pod, in.name), false, in, at)
		return run, ok
	})
	if !ran {
		return term, left
	}
	if p.minimumGracePeriod {
		left = max(left, minimumGracePeriod)
	}
	p.publish(Event{At: now, Type: EventPreStopHook, Pod: ps.ref, Container: in.name, ContainerID: in.id,
		Message: fmt.Sprintf("%s hook runs %s of the grace period %s from %s", run.Action, term.Sub(at), grace, at.Format(time.RFC3339Nano))})
	return term, left
}

// specOf returns the container of pod named name, or nil.
func specOf(pod *v1.Pod, name string) *v1.Container {
	if pod == nil {
		return nil
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}
