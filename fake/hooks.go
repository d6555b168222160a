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
//     fails, the container gets SIGTERM at its end (SIGKILL after the pod's
//     grace period if it ignores SIGTERM) and the start is reported to the
//     ReasonCache as workload.ErrPostStartHook: by the SyncPod that started
//     it when the hook fails at once, else by the first SyncPod after its end.
//   - preStop runs when KillPod (or CleanupPods) stops a running container
//     with a grace period above 0, for as long as its command says but at
//     most the grace period; SIGTERM comes when it ends, and the container
//     gets what is left of the grace period (at least 2s under
//     WithMinimumGracePeriod).
//
// An HTTP GET action is answered by the server the container's command runs
// (httpd -f -p PORT: workload.HTTPHookAt): it succeeds at once when
// something listens on its port, whatever the status, and fails otherwise,
// as the kubelet's hook runner counts it. TCP actions and exec commands
// outside the vocabulary succeed at once; a command that runs until killed takes the whole grace period as a
// preStop hook and, as a postStart hook, succeeds at once (the kubelet would
// block for ever). What a hook writes goes to the instance's files, at the
// times it writes it (workload.Instance.RecordWrite).

// hookRun is what one run of a hook does.
type hookRun struct {
	d       time.Duration
	code    int
	forever bool
	writes  []workload.Write
	how     string // for events
}

// scriptedHook is a hook a ContainerScript imposes.
type scriptedHook struct {
	d    time.Duration
	code int
}

// hookOf returns the run of the postStart (post) or preStop hook of c, as
// script imposes it or its spec says, run at at in instance in, and whether
// there is one.
func hookOf(script *containerScript, c *v1.Container, post bool, in *instance, at time.Time) (hookRun, bool) {
	if script != nil {
		if sh := script.postStart; post && sh != nil {
			return hookRun{d: sh.d, code: sh.code, how: "scripted"}, true
		}
		if sh := script.preStop; !post && sh != nil {
			return hookRun{d: sh.d, how: "scripted"}, true
		}
	}
	if c == nil || c.Lifecycle == nil {
		return hookRun{}, false
	}
	h := c.Lifecycle.PreStop
	if post {
		h = c.Lifecycle.PostStart
	}
	switch {
	case h == nil:
		return hookRun{}, false
	case h.Sleep != nil:
		return hookRun{d: time.Duration(max(h.Sleep.Seconds, 0)) * time.Second, how: "sleep"}, true
	case h.Exec != nil:
		b, ok := workload.OfHandler(c, h)
		if !ok || b.Unknown {
			return hookRun{how: "exec (not simulated)"}, true
		}
		if b.RunsUntilKilled {
			return hookRun{forever: true, writes: b.Writes, how: "exec"}, true
		}
		return hookRun{d: b.RunFor, code: b.ExitCode, writes: b.Writes, how: "exec"}, true
	case h.HTTPGet != nil:
		g, answered, _, err := workload.HTTPHookAt(c, h, in.sim.Behaviour(), at.Sub(in.runningAt))
		how := fmt.Sprintf("http GET :%d%s", g.Port, g.Path)
		if err != nil || !answered {
			return hookRun{code: 1, how: how + " (nothing listens)"}, true
		}
		in.serve(g, at)
		return hookRun{how: how}, true
	}
	return hookRun{how: "tcp (not simulated)"}, true
}

// recordWrites writes what a hook run from start until end writes into the
// instance's files.
func (in *instance) recordWrites(run hookRun, start, end time.Time) {
	for _, w := range run.writes {
		if at := start.Add(w.At); !at.After(end) {
			in.sim.RecordWrite(at, w)
		}
	}
}

// postStart simulates the postStart hook of c, whose instance in has just
// been created, and reports whether the start still counts as a success.
// The caller holds p.mu.
func (s *syncer) postStart(c *v1.Container, in *instance, script *containerScript, res *pkgcontainer.SyncResult) bool {
	run, ok := hookOf(script, c, true, in, in.runningAt)
	if !ok {
		return true
	}
	if run.forever {
		run.d, run.code = 0, 0
	}
	end := in.runningAt.Add(run.d)
	s.cursor = maxTime(s.cursor, end)
	in.recordWrites(run, in.runningAt, end)
	s.p.publish(Event{At: s.now, Type: EventPostStartHook, Pod: s.ps.ref, Container: c.Name, ContainerID: in.id, ExitCode: run.code,
		Message: fmt.Sprintf("%s hook runs %s from %s, exits %d", run.how, run.d, in.runningAt.Format(time.RFC3339Nano), run.code)})
	if run.code == 0 {
		return true
	}
	// killContainer with the pod's grace period (setTerminationGracePeriod).
	grace := s.p.gracePeriod(nil, s.ps.pod, nil)
	in.termAt = end
	in.sim.SIGTERMAt(end, grace)
	s.p.schedule(in, end)
	s.p.schedule(in, end.Add(grace))
	if d := in.sim.Shutdown().Delay; d > 0 && d < grace {
		s.p.schedule(in, end.Add(d)) // a handler that takes a while
	}
	in.hookFailure = fmt.Sprintf("PostStartHook %s failed with exit code %d", run.how, run.code)
	if end.After(s.now) {
		in.hookFailPending = true
		s.p.notifyAt(s.ps, end, s.now) // podsync.go: the next sync reports it
		return true
	}
	res.Fail(workload.ErrPostStartHook, in.hookFailure)
	s.p.advanceInstance(s.ps, in, s.now)
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
// it SIGTERM at at with grace before SIGKILL, and returns when SIGTERM
// comes instead (once the hook has ended, at most grace later) and what is
// left of grace then (at least 2s under WithMinimumGracePeriod). A hook
// runs once per instance: a later kill keeps its SIGTERM after the hook's
// end. The caller holds p.mu.
func (p *PodProvider) preStop(ps *podState, in *instance, now, at time.Time, grace time.Duration) (time.Time, time.Duration) {
	if grace <= 0 {
		return at, grace
	}
	if in.preStopRan {
		if in.preStopEnd.After(at) {
			grace = max(grace-in.preStopEnd.Sub(at), 0)
			at = in.preStopEnd
		}
		return at, grace
	}
	script := p.scripts.containers[containerKey{pod: ps.key, name: in.name}]
	run, ok := hookOf(script, specOf(ps.pod, in.name), false, in, at)
	if !ok {
		return at, grace
	}
	d := run.d
	if run.forever {
		d = grace
	}
	d = min(d, grace)
	left := grace - d
	if p.minimumGracePeriod {
		left = max(left, minimumGracePeriod)
	}
	in.preStopRan, in.preStopEnd = true, at.Add(d)
	in.recordWrites(run, at, in.preStopEnd)
	p.publish(Event{At: now, Type: EventPreStopHook, Pod: ps.ref, Container: in.name, ContainerID: in.id,
		Message: fmt.Sprintf("%s hook runs %s of the grace period %s from %s", run.how, d, grace, at.Format(time.RFC3339Nano))})
	return in.preStopEnd, left
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

// kubeletAddr is the address the fake's HTTP probes and hooks come from, as
// a server's request log shows it.
const kubeletAddr = "127.0.0.1:40000"

// serve has the server of instance in answer the GET g sent at at, and
// logs the request as that server does (httpd -vv) in the instance's
// output. It returns the status code, and whether the connection was
// accepted.
func (in *instance) serve(g workload.HTTPGet, at time.Time) (code int, connected bool) {
	b, d := in.sim.Behaviour(), at.Sub(in.runningAt)
	code, connected = g.At(b, d, in.sim.FilesAt(at))
	if s, ok := b.ServerAt(g.Port, d); ok && connected {
		in.sim.Log(at, s.RequestLog(kubeletAddr, g.Path, code))
	}
	return code, connected
}
