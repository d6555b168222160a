package workload

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// The probes of a Pod, as the kubelet runs them: its prober manager starts
// a worker per probe of every app container and every restartable init
// container (pkg/kubelet/prober/prober_manager.go, AddPod; plain init
// containers cannot have probes) and stops them when the container goes;
// a liveness or startup failure makes the runtime manager kill the
// container (kuberuntime_manager.go computePodActions), with the probe's
// terminationGracePeriodSeconds when set (kuberuntime_container.go
// setTerminationGracePeriod), and start it again as the restart policy
// says; Started and Ready are set as UpdatePodStatus sets them.

// DefaultProbeFunc is the ProbeFunc of the probes of run r of container c
// when Pod.ProbeFunc is nil: InstanceProbes of c's spec and r. A caller
// that overrides some probes wraps it:
//
//	p.ProbeFunc = func(c *workload.PodContainer, r *workload.Run) workload.ProbeFunc {
//		def := workload.DefaultProbeFunc(c, r)
//		return func(kind workload.ProbeKind, probe *v1.Probe, at time.Time) bool {
//			if probe.GRPC != nil {
//				return myGRPCHealth(c.Name, at)
//			}
//			return def(kind, probe, at)
//		}
//	}
func DefaultProbeFunc(c *PodContainer, r *Run) ProbeFunc {
	return InstanceProbes(r.Spec, r.Instance)
}

// InstanceProbes returns the ProbeFunc of the probes of container spec run
// as instance in: an exec probe runs its command against the instance's
// files at that moment (what its command and its hooks wrote: ExecProbes
// of Instance.FilesAt); an HTTP or TCP probe is answered by the server the
// instance's command starts (NetProbeAt: httpd -f -p PORT -h DIR), as if
// the prober reached the pod's IP, and the server logs an HTTP probe's GET
// (Instance.Serve); a gRPC probe, outside the vocabulary, succeeds.
func InstanceProbes(spec *v1.Container, in *Instance) ProbeFunc {
	b := in.Behaviour()
	network := func(_ ProbeKind, probe *v1.Probe, at time.Time) bool {
		ok, known, err := NetProbeAt(spec, probe, b, at.Sub(in.StartsAt()), in.FilesAt(at))
		if !known {
			return true // gRPC: outside the vocabulary, taken to succeed
		}
		if probe.HTTPGet != nil {
			if g, gerr := HTTPGetOf(spec, probe.HTTPGet); gerr == nil {
				in.Serve(g, at) // the server logs the probe's request
			}
		}
		return ok && err == nil
	}
	return ExecProbes(spec, in.FilesAt, network)
}

// newProber returns the prober of run r of c, which has just been
// started, its probes counted from the moment it runs: nil when r.Spec has
// no probes, when r has exited already, and for a plain init container.
func (p *Pod) newProber(c *PodContainer, r *Run) *Prober {
	s := r.Spec
	if r.state == InstanceExited || c.IsInit && !c.Restartable || s.StartupProbe == nil && s.LivenessProbe == nil && s.ReadinessProbe == nil {
		return nil
	}
	newFunc := p.ProbeFunc
	if newFunc == nil {
		newFunc = DefaultProbeFunc
	}
	return NewProber(s, r.startsAt, newFunc(c, r))
}

// runProbe runs the probe of running run r of c that is due at at; a
// change of its result is a ProbeChanged event. A failed liveness or
// startup probe kills the run (Pod.Kill, else the pod's kill), with the
// probe's terminationGracePeriodSeconds, else the pod's GracePeriod;
// Reconcile starts it again as the restart policy says, once it has
// exited. The liveness and startup probes of a run being stopped (a signal
// has set its end, or it waits for its preStop hook or its turn), or of a
// stopped pod, no longer run (the prober worker skips them once the pod is
// being deleted: pkg/kubelet/prober/worker.go doProbe).
func (p *Pod) runProbe(c *PodContainer, r *Run, at time.Time) {
	_, _, ending := r.Stopping()
	run, ok := r.Prober.RunNext(p.Stopped || r.stopping || r.turn != nil || ending)
	if !ok {
		return
	}
	if run.Changed {
		p.emit(PodEvent{Kind: ProbeChanged, Container: c, Run: r, At: run.At, Probe: run})
	}
	if !run.Kill {
		return
	}
	grace := p.GracePeriod
	if s := run.Probe.TerminationGracePeriodSeconds; s != nil {
		grace = time.Duration(max(*s, 0)) * time.Second
	}
	if p.Kill != nil {
		p.Kill(c, r, at, grace)
		return
	}
	p.kill(c, r, at, grace)
}

// Started reports whether the container runs and has started: its current
// run runs and its startup probe, if it has one, has succeeded (the
// kubelet's prober manager, isContainerStarted).
func (c *PodContainer) Started() bool {
	return c.Running() && c.Current.Prober.Started()
}

// Ready reports whether the container is ready, as the kubelet's prober
// manager sets it (UpdatePodStatus): a running app container or sidecar
// once it has started and its readiness probe succeeds (without one, once
// started); a plain init container once it has exited 0.
func (c *PodContainer) Ready() bool {
	if c.IsInit && !c.Restartable {
		r := c.Current
		return r != nil && r.State() == InstanceExited && r.ExitCode() == 0
	}
	return c.Running() && c.Current.Prober.Ready()
}
