package fake

import (
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/utils/clock"

	"github.com/kri-kit/testkit/workload"
)

// ProbeKind names one of a container's probes, for scripts
// (ContainerScript.FailProbe) and events.
type ProbeKind string

// The probes of a container (those of package workload).
const (
	StartupProbe   = ProbeKind(workload.StartupProbe)
	LivenessProbe  = ProbeKind(workload.LivenessProbe)
	ReadinessProbe = ProbeKind(workload.ReadinessProbe)
)

// probeKinds are the kinds in the order the fake runs probes due at the
// same moment (workload.ProbeKinds).
var probeKinds = []ProbeKind{StartupProbe, LivenessProbe, ReadinessProbe}

// The events of probe results: a probe's result changed (the kubelet's
// results managers publish changes only), Message names the probe kind.
const (
	EventProbeSucceeded EventType = "ProbeSucceeded"
	EventProbeFailed    EventType = "ProbeFailed"
)

// probeState is the prober of one instance: the kubelet's prober workers
// (k8s.io/kubernetes/pkg/kubelet/prober/worker.go), one per probe, run on
// the provider's clock by workload.Prober. Probes run lazily: whenever the
// instance is brought up to date, every probe due since is run at its own
// moment, in order, so the outcome does not depend on when the fake is
// read. Guarded by p.mu.
type probeState struct {
	*workload.Prober
	// timer wakes the fake at the next probe, so that WaitFor and
	// Subscribe see probe results without polling.
	timer   clock.Timer
	timerAt time.Time
}

// newProbeState returns the prober of instance in of c, of pod ps, which
// runs from in.runningAt on; nil when c has no probes. The result of a
// probe is the script's, if the container's probe of that kind is
// scripted, else workload.InstanceProbes's: an exec command run against
// the container's files at that moment, an HTTP or TCP probe answered by
// the server the container's command runs, as if the fake had the pod's
// network, a gRPC probe a success. The caller holds p.mu.
func (p *PodProvider) newProbeState(ps *podState, in *instance, c *v1.Container) *probeState {
	if c.StartupProbe == nil && c.LivenessProbe == nil && c.ReadinessProbe == nil {
		return nil
	}
	spec := c.DeepCopy()
	exec := workload.InstanceProbes(spec, in.sim)
	result := func(kind workload.ProbeKind, probe *v1.Probe, at time.Time) bool {
		if script := p.scripts.containers[containerKey{pod: ps.key, name: in.name}]; script != nil {
			if ok, scripted := script.probes[ProbeKind(kind)]; scripted {
				return ok
			}
		}
		return exec(kind, probe, at)
	}
	return &probeState{Prober: workload.NewProber(spec, in.runningAt, result)}
}

// probeStarted and probeReady are the Started and Ready of a running
// instance: as the kubelet's prober manager sets them (UpdatePodStatus), a
// container without a startup probe has started, one without a readiness
// probe is ready once started.
func (in *instance) probeStarted() bool {
	return in.probes == nil || in.probes.Started()
}

func (in *instance) probeReady() bool {
	return in.probes == nil || in.probes.Ready()
}

// advanceProbes runs every probe of in that is due at or before now, each
// at its own moment, with the instance brought to that moment first, then
// sets the timer of the next probe. A liveness or startup failure kills the
// instance as KillPod would, with the probe's
// terminationGracePeriodSeconds, else the pod's grace period; the next
// SyncPod restarts it as the restart policy (and back-off) allow, as the
// kubelet's computePodActions does. The caller holds p.mu.
func (p *PodProvider) advanceProbes(ps *podState, in *instance, now time.Time) {
	pr := in.probes
	if pr == nil {
		return
	}
	for {
		if in.state == pkgcontainer.ContainerStateCreated && !in.runningAt.After(now) {
			p.stepInstance(ps, in, in.runningAt)
		}
		if in.state != pkgcontainer.ContainerStateRunning {
			break
		}
		at, due := pr.Next()
		if !due || at.After(now) {
			break
		}
		p.stepInstance(ps, in, at)
		if in.state != pkgcontainer.ContainerStateRunning {
			break
		}
		p.runProbe(ps, in)
	}
	p.scheduleProbe(in, now)
}

// scheduleProbe sets the timer of the next probe of in (none once it no
// longer runs).
func (p *PodProvider) scheduleProbe(in *instance, now time.Time) {
	pr := in.probes
	var next time.Time
	if in.state == pkgcontainer.ContainerStateRunning {
		next, _ = pr.Next()
	} else if in.state == pkgcontainer.ContainerStateCreated {
		next = in.runningAt
	}
	if next.Equal(pr.timerAt) {
		return
	}
	if pr.timer != nil {
		pr.timer.Stop()
		pr.timer = nil
	}
	pr.timerAt = next
	if next.IsZero() {
		return
	}
	pr.timer = p.clock.AfterFunc(max(next.Sub(now), 0), p.wake)
}

// stopProbeTimer stops the timer of the next probe, if any: the instance
// has exited or is forgotten.
func (in *instance) stopProbeTimer() {
	if pr := in.probes; pr != nil && pr.timer != nil {
		pr.timer.Stop()
		pr.timer, pr.timerAt = nil, time.Time{}
	}
}

// runProbe runs the probe of the running instance in that is due first,
// publishes a change of its result, and kills the instance when its
// liveness or startup probe has failed.
func (p *PodProvider) runProbe(ps *podState, in *instance) {
	run, _ := in.probes.RunNext(in.terminating())
	if !run.Changed {
		return
	}
	typ := EventProbeSucceeded
	if !run.Succeeded {
		typ = EventProbeFailed
	}
	p.publish(Event{At: run.At, Type: typ, Pod: ps.ref, Container: in.name, ContainerID: in.id, Message: string(run.Kind)})
	if run.Kill { // liveness or startup: kill, to be started again
		in.stopProbeTimer()
		p.terminate(ps, run.At, p.gracePeriod(nil, ps.pod, run.Probe.TerminationGracePeriodSeconds), func(x *instance) bool { return x == in })
	}
}

// FailProbe makes the container's probe of kind fail from now on, whatever
// its command says, until PassProbe or ResetProbe: "readiness of container
// web fails from now on". Probes due before now keep the results they had.
// A container without such a probe is not affected.
func (s *ContainerScript) FailProbe(kind ProbeKind) *ContainerScript {
	return s.setProbe(kind, false, true)
}

// PassProbe makes the container's probe of kind succeed from now on,
// whatever its command says, until FailProbe or ResetProbe.
func (s *ContainerScript) PassProbe(kind ProbeKind) *ContainerScript {
	return s.setProbe(kind, true, true)
}

// ResetProbe makes the container's probe of kind follow its command again
// from now on.
func (s *ContainerScript) ResetProbe(kind ProbeKind) *ContainerScript {
	return s.setProbe(kind, false, false)
}

func (s *ContainerScript) setProbe(kind ProbeKind, ok, set bool) *ContainerScript {
	s.p.mu.Lock()
	defer s.p.unlock()
	// The probes due so far run with the script as it was.
	if ps := s.p.pods[s.p.byKey[s.key.pod]]; ps != nil {
		s.p.advancePod(ps, s.p.clock.Now())
	}
	cs := s.p.scripts.container(s.key)
	if !set {
		delete(cs.probes, kind)
		return s
	}
	if cs.probes == nil {
		cs.probes = map[ProbeKind]bool{}
	}
	cs.probes[kind] = ok
	return s
}

// parseProbeKind reads a probe kind's name.
func parseProbeKind(s string) (ProbeKind, error) {
	kind, err := workload.ParseProbeKind(s)
	return ProbeKind(kind), err
}
