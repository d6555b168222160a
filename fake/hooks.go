package fake

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/workload"
)

// Lifecycle hooks, run by the pod simulation (workload.Pod: PostStart,
// PreStop, the kill after a failed postStart hook; workload/pod_hooks.go)
// on the provider's clock as the kubelet's runtime manager runs them
// (k8s.io/kubernetes/pkg/kubelet/kuberuntime/kuberuntime_container.go:
// startContainer step 4, killContainer, executePreStopHook), with the
// hooks a ContainerScript imposes (hookFunc). What is the fake's:
//
//   - the containers SyncPod starts after one with a postStart hook run
//     only once it has ended, as the kubelet starts them one after
//     another; when it fails, the pod simulation kills the container at
//     its end with the pod's grace period (its preStop hook first, then
//     SIGTERM), and the start is reported to the ReasonCache as
//     workload.ErrPostStartHook: by the SyncPod that started it when the
//     hook fails at once, else by the first SyncPod after its end;
//   - KillPod and CleanupPods run the preStop hook of a running container
//     they stop with a grace period above 0, for as long as its command
//     says but at most the grace period; SIGTERM comes when it ends, and
//     the container gets what is left of the grace period (at least 2s
//     under WithMinimumGracePeriod);
//   - EventPostStartHook and EventPreStopHook (publishHook).
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

// hookFunc returns what the hook of kind of run r of container c of pod ps
// does, run at at: the scripted hook, if the container's script imposes
// one, else the spec's (workload.DefaultHook). It is the pod
// simulation's HookFunc (lifecycle.go newSim). The caller holds p.mu.
func (p *PodProvider) hookFunc(ps *podState, c *workload.PodContainer, r *workload.Run, kind workload.HookKind, at time.Time) (workload.Hook, bool) {
	if script := p.scripts.containers[containerKey{pod: ps.key, name: c.Name}]; script != nil {
		if sh := script.postStart; kind == workload.HookPostStart && sh != nil {
			return sh.hook(), true
		}
		if sh := script.preStop; kind == workload.HookPreStop && sh != nil {
			return sh.hook(), true
		}
	}
	return workload.DefaultHook(c, r, kind, at)
}

// exitCode is the exit code EventPostStartHook reports of hook h: an exec
// command's, 1 for another hook that failed.
func exitCode(h workload.Hook) int {
	if h.Failed && h.ExitCode == 0 {
		return 1
	}
	return h.ExitCode
}

// publishHook publishes the run of a hook of instance in (a HookRan event
// of the pod simulation): EventPostStartHook, or EventPreStopHook. A
// failed postStart hook is noted on the instance, for its start to be
// reported failed (postStart, reportHookFailure). The caller holds p.mu.
func (p *PodProvider) publishHook(ps *podState, in *instance, e workload.PodEvent) {
	run := e.Hook
	if e.HookKind == workload.HookPreStop {
		p.publish(Event{At: e.At, Type: EventPreStopHook, Pod: ps.ref, Container: in.name, ContainerID: in.id,
			Message: fmt.Sprintf("%s hook runs %s of the grace period %s from %s", run.Action, e.Until.Sub(e.From), e.Grace, e.From.Format(time.RFC3339Nano))})
		return
	}
	p.publish(Event{At: e.At, Type: EventPostStartHook, Pod: ps.ref, Container: in.name, ContainerID: in.id, ExitCode: exitCode(run),
		Message: fmt.Sprintf("%s hook runs %s from %s, exits %d", run.Action, run.Takes, e.From.Format(time.RFC3339Nano), exitCode(run))})
	if run.Failed {
		in.termAt, in.hookFailure = e.Until, run.PostStartFailure(in.name)
	}
}

// postStart runs the postStart hook of c, whose instance in has just been
// started (workload.Pod.PostStart: the pod simulation kills it at the end
// of a hook that fails, with the pod's grace period), has the containers
// started after it in this sync wait for its end (s.cursor), and reports
// whether the start still counts as a success: a hook that fails at once
// fails it; one that fails later is reported by the first SyncPod after
// its end (reportHookFailure). The caller holds p.mu.
func (s *syncer) postStart(c *v1.Container, in *instance, res *pkgcontainer.SyncResult) bool {
	end := s.ps.sim.PostStart(s.ps.sim.Container(c.Name), in.run, s.now)
	s.cursor = maxTime(s.cursor, end)
	if in.hookFailure == "" {
		return true
	}
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
