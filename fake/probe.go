package fake

import (
	"time"

	v1 "k8s.io/api/core/v1"

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

// The probes of a container run on the provider's clock as the pod
// simulation runs them (workload.Pod: a workload.Prober per run, the
// kubelet's prober workers, k8s.io/kubernetes/pkg/kubelet/prober/worker.go):
// every probe due since the pod was last brought up to date runs at its own
// moment, in order, so the outcome does not depend on when the fake is
// read, and the fake's wake-up at the pod's next event (advanceSim) lets
// WaitFor and Subscribe see probe results without polling.

// probeFunc returns the results of the probes of run r of container c of
// pod ps: the script's, if the container's probe of that kind is scripted,
// else workload.InstanceProbes's: an exec command run against the
// container's files at that moment, an HTTP or TCP probe answered by the
// server the container's command runs, as if the fake had the pod's
// network, a gRPC probe a success. The caller holds p.mu.
func (p *PodProvider) probeFunc(ps *podState, c *workload.PodContainer, r *workload.Run) workload.ProbeFunc {
	exec := workload.DefaultProbeFunc(c, r)
	return func(kind workload.ProbeKind, probe *v1.Probe, at time.Time) bool {
		if script := p.scripts.containers[containerKey{pod: ps.key, name: c.Name}]; script != nil {
			if ok, scripted := script.probes[ProbeKind(kind)]; scripted {
				return ok
			}
		}
		return exec(kind, probe, at)
	}
}

// probeStarted and probeReady are the Started and Ready of a running
// instance: as the kubelet's prober manager sets them (UpdatePodStatus), a
// container without a startup probe has started, one without a readiness
// probe is ready once started.
func (in *instance) probeStarted() bool {
	return in.prober().Started()
}

func (in *instance) probeReady() bool {
	return in.prober().Ready()
}

// prober returns the prober of the instance's run, nil without probes.
func (in *instance) prober() *workload.Prober {
	if in.run == nil {
		return nil
	}
	return in.run.Prober
}

// publishProbe publishes the change of a probe's result of instance in.
func (p *PodProvider) publishProbe(ps *podState, in *instance, run workload.ProbeRun) {
	typ := EventProbeSucceeded
	if !run.Succeeded {
		typ = EventProbeFailed
	}
	p.publish(Event{At: run.At, Type: typ, Pod: ps.ref, Container: in.name, ContainerID: in.id, Message: string(run.Kind)})
}

// killForProbe kills run r of container c, whose liveness or startup
// probe failed at at, as KillPod would, with grace (the probe's
// terminationGracePeriodSeconds, else the pod's grace period: the pod
// simulation's GracePeriod, which podFor keeps), at least 2s under
// WithMinimumGracePeriod; the next SyncPod restarts it as the restart
// policy (and back-off) allow, as the kubelet's computePodActions does.
// The caller holds p.mu.
func (p *PodProvider) killForProbe(ps *podState, c *workload.PodContainer, r *workload.Run, at time.Time, grace time.Duration) {
	in := ps.instanceOf(c.Name, r.ID)
	if in == nil {
		return
	}
	if p.minimumGracePeriod {
		grace = max(grace, minimumGracePeriod)
	}
	p.terminate(ps, at, grace, func(x *instance) bool { return x == in })
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
