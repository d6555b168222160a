package fake

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/utils/clock"

	"github.com/kri-kit/testkit/workload"
)

// ProbeKind names one of a container's probes, for scripts
// (ContainerScript.FailProbe) and events.
type ProbeKind string

// The probes of a container.
const (
	StartupProbe   ProbeKind = "startup"
	LivenessProbe  ProbeKind = "liveness"
	ReadinessProbe ProbeKind = "readiness"
)

// probeKinds are the kinds in the order the fake runs probes due at the
// same moment.
var probeKinds = []ProbeKind{StartupProbe, LivenessProbe, ReadinessProbe}

// The events of probe results: a probe's result changed (the kubelet's
// results managers publish changes only), Message names the probe kind.
const (
	EventProbeSucceeded EventType = "ProbeSucceeded"
	EventProbeFailed    EventType = "ProbeFailed"
)

// probeOf returns the probe of kind in c, nil if it has none.
func probeOf(c *v1.Container, kind ProbeKind) *v1.Probe {
	switch kind {
	case StartupProbe:
		return c.StartupProbe
	case LivenessProbe:
		return c.LivenessProbe
	case ReadinessProbe:
		return c.ReadinessProbe
	}
	return nil
}

// probeState is the prober of one instance: the kubelet's prober workers
// (k8s.io/kubernetes/pkg/kubelet/prober/worker.go), one per probe, run on
// the provider's clock. Probes run lazily: whenever the instance is brought
// up to date, every probe due since is run at its own moment, in order, so
// the outcome does not depend on when the fake is read. Guarded by p.mu.
type probeState struct {
	spec    *v1.Container      // the container as started: its probes and env
	files   workload.Behaviour // the container's command, whose writes are its files
	workers []*probeWorker
	// hasStartup and hasReadiness say which probes decide Started and
	// Ready; started is true once the startup probe has succeeded, ready
	// is the readiness probe's result.
	hasStartup, hasReadiness bool
	started, ready           bool
	// timer wakes the fake at the next probe, so that WaitFor and
	// Subscribe see probe results without polling.
	timer   clock.Timer
	timerAt time.Time
}

// probeWorker is one probe of an instance.
type probeWorker struct {
	kind  ProbeKind
	probe *v1.Probe
	next  time.Time // the next run; zero until the instance runs
	// run counts the latest consecutive raw results equal to last;
	// result is the current result (0 none yet, 1 success, -1 failure).
	run    int32
	last   bool
	result int
	off    bool // the worker has stopped
}

// newProbeState returns the prober of a new instance of c, nil when c has no
// probes.
func newProbeState(c *v1.Container) *probeState {
	if c.StartupProbe == nil && c.LivenessProbe == nil && c.ReadinessProbe == nil {
		return nil
	}
	spec := c.DeepCopy()
	ps := &probeState{spec: spec, files: workload.OfEnv(spec), hasStartup: spec.StartupProbe != nil, hasReadiness: spec.ReadinessProbe != nil}
	for _, kind := range probeKinds {
		if p := probeOf(spec, kind); p != nil {
			ps.workers = append(ps.workers, &probeWorker{kind: kind, probe: p})
		}
	}
	return ps
}

// probeStarted and probeReady are the Started and Ready of a running
// instance: as the kubelet's prober manager sets them (UpdatePodStatus), a
// container without a startup probe has started, one without a readiness
// probe is ready once started.
func (in *instance) probeStarted() bool {
	return in.probes == nil || !in.probes.hasStartup || in.probes.started
}

func (in *instance) probeReady() bool {
	if in.probes == nil {
		return true
	}
	return in.probeStarted() && (!in.probes.hasReadiness || in.probes.ready)
}

// period, threshold and timeout of a probe, with the API defaults.
func probePeriod(p *v1.Probe) time.Duration {
	return time.Duration(max(p.PeriodSeconds, 1)) * time.Second
}

func probeThreshold(n int32) int32 { return max(n, 1) }

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
		w, at := pr.due(in)
		if w == nil || at.After(now) {
			break
		}
		p.stepInstance(ps, in, at)
		if in.state != pkgcontainer.ContainerStateRunning {
			break
		}
		w.next = at.Add(probePeriod(w.probe))
		p.runProbe(ps, in, w, at)
	}
	p.scheduleProbe(in, now)
}

// due returns the worker whose run comes first, and when; nil when none
// will run. The first run of each is initialDelaySeconds after the start.
func (pr *probeState) due(in *instance) (*probeWorker, time.Time) {
	var first *probeWorker
	var at time.Time
	for _, w := range pr.workers {
		if w.off {
			continue
		}
		if w.next.IsZero() {
			w.next = in.startedAt.Add(time.Duration(max(w.probe.InitialDelaySeconds, 0)) * time.Second)
		}
		if first == nil || w.next.Before(at) {
			first, at = w, w.next
		}
	}
	return first, at
}

// scheduleProbe sets the timer of the next probe of in (none once it no
// longer runs).
func (p *PodProvider) scheduleProbe(in *instance, now time.Time) {
	pr := in.probes
	var next time.Time
	if in.state == pkgcontainer.ContainerStateRunning {
		if w, at := pr.due(in); w != nil {
			next = at
		}
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

// stopProbes stops the probes of in for good.
func (in *instance) stopProbes() {
	if pr := in.probes; pr != nil {
		for _, w := range pr.workers {
			w.off = true
		}
		in.stopProbeTimer()
	}
}

// stopProbeTimer stops the timer of the next probe, if any: the instance
// has exited or is forgotten.
func (in *instance) stopProbeTimer() {
	if pr := in.probes; pr != nil && pr.timer != nil {
		pr.timer.Stop()
		pr.timer, pr.timerAt = nil, time.Time{}
	}
}

// runProbe runs probe w of the running instance in at the moment at.
func (p *PodProvider) runProbe(ps *podState, in *instance, w *probeWorker, at time.Time) {
	pr := in.probes
	switch {
	case w.kind == StartupProbe && pr.started:
		w.off = true // the startup probe has done its work
		return
	case w.kind != StartupProbe && pr.hasStartup && !pr.started:
		return // held off until the startup probe succeeds
	case w.kind != ReadinessProbe && in.terminating:
		return // KillPod stopped the liveness and startup probes
	}
	ok := p.probeSucceeds(ps, in, w, at)
	if w.run > 0 && ok == w.last {
		w.run++
	} else {
		w.last, w.run = ok, 1
	}
	result := w.result
	switch {
	case ok && w.run >= probeThreshold(w.probe.SuccessThreshold):
		result = 1
	case !ok && w.run >= probeThreshold(w.probe.FailureThreshold):
		result = -1
	}
	if result == w.result {
		return
	}
	w.result = result
	typ := EventProbeSucceeded
	if result < 0 {
		typ = EventProbeFailed
	}
	p.publish(Event{At: at, Type: typ, Pod: ps.ref, Container: in.name, ContainerID: in.id, Message: string(w.kind)})
	switch {
	case w.kind == ReadinessProbe:
		pr.ready = result > 0
	case w.kind == StartupProbe && result > 0:
		pr.started = true
	case result < 0: // liveness or startup: kill, to be started again
		var override *int64
		if w.probe.TerminationGracePeriodSeconds != nil {
			override = w.probe.TerminationGracePeriodSeconds
		}
		in.stopProbes()
		p.terminate(ps, at, p.gracePeriod(nil, ps.pod, override), func(x *instance) bool { return x == in })
	}
}

// probeSucceeds is the raw result of one run of probe w: the script's, if
// the container's probe of that kind is scripted, else that of its exec
// command run at that moment against the container's files (the vocabulary
// of package workload). A probe without an exec action (HTTP, TCP, gRPC)
// succeeds: the fake has no network to probe.
func (p *PodProvider) probeSucceeds(ps *podState, in *instance, w *probeWorker, at time.Time) bool {
	if script := p.scripts.containers[containerKey{pod: ps.key, name: in.name}]; script != nil {
		if ok, scripted := script.probes[w.kind]; scripted {
			return ok
		}
	}
	pr := in.probes
	b, exec := workload.OfProbe(pr.spec, w.probe, pr.files.FilesAt(at.Sub(in.startedAt)))
	if !exec {
		return true
	}
	return b.Succeeds(workload.ProbeTimeout(w.probe))
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
	defer s.p.mu.Unlock()
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
	for _, k := range probeKinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown probe %q (want startup, liveness or readiness)", s)
}
