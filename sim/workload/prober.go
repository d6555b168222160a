package workload

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
)

// ProbeKind names one of a container's probes.
type ProbeKind string

// The probes of a container.
const (
	StartupProbe   ProbeKind = "startup"
	LivenessProbe  ProbeKind = "liveness"
	ReadinessProbe ProbeKind = "readiness"
)

// ProbeKinds are the kinds of probes in the order a Prober runs probes due
// at the same moment.
var ProbeKinds = []ProbeKind{StartupProbe, LivenessProbe, ReadinessProbe}

// ProbeOf returns the probe of kind in c, nil if c has none (or c is nil).
func ProbeOf(c *v1.Container, kind ProbeKind) *v1.Probe {
	if c == nil {
		return nil
	}
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

// ParseProbeKind reads the name of a probe kind: startup, liveness or
// readiness.
func ParseProbeKind(s string) (ProbeKind, error) {
	for _, k := range ProbeKinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown probe %q (want startup, liveness or readiness)", s)
}

// ProbeFunc decides the raw result of one run of a container's probe of
// kind at the moment at: true for a success. It is how a simulator plugs in
// what its probes can reach — the container's files for an exec probe
// (ExecProbes), a simulated listener for an HTTP or TCP probe, a test's
// script. A Prober calls it with the probe it runs, never nil.
type ProbeFunc func(kind ProbeKind, probe *v1.Probe, at time.Time) bool

// ExecProbes returns the ProbeFunc of the exec probes of container c: the
// probe's command run at that moment against the container's files then
// (files(at); nil: none), in the vocabulary of this package (OfProbe,
// Succeeds within ProbeTimeout). A probe without an exec action (HTTP, TCP,
// gRPC) is decided by other; a nil other makes such probes succeed.
//
//	in := workload.NewInstance(b, start, workload.InstanceOptions{})
//	result := workload.ExecProbes(c, in.FilesAt, nil)
func ExecProbes(c *v1.Container, files func(at time.Time) Files, other ProbeFunc) ProbeFunc {
	return func(kind ProbeKind, probe *v1.Probe, at time.Time) bool {
		var f Files
		if files != nil {
			f = files(at)
		}
		b, exec := OfProbe(c, probe, f)
		switch {
		case exec:
			return b.Succeeds(ProbeTimeout(probe))
		case other != nil:
			return other(kind, probe, at)
		}
		return true
	}
}

// Prober runs the startup, liveness and readiness probes of one container
// instance on a clock the caller keeps, as the kubelet's prober workers do
// (one per probe): the first run initialDelaySeconds after the instance
// started, then one every periodSeconds (at least 1s); a result flips after
// successThreshold successes or failureThreshold failures in a row (each at
// least 1). Liveness and readiness are held off until the startup probe has
// succeeded, and the startup probe stops then. A liveness or startup
// failure means the container is to be killed (ProbeRun.Kill); the prober
// stops for good then, as it does on Stop.
//
// Like Instance it has no goroutine and no timer: Next says when the next
// probe runs, RunNext runs it (the caller has brought the instance to that
// moment first, and runs no probe once the instance has exited). The
// result of each run comes from the ProbeFunc the caller supplies.
//
// A nil *Prober is the prober of a container without probes: Next reports
// none, Started and Ready are true. A Prober is not safe for concurrent
// use: a simulator guards it with its own lock.
type Prober struct {
	result  ProbeFunc
	workers []*probeWorker
	// hasStartup and hasReadiness say which probes decide Started and
	// Ready; started is true once the startup probe has succeeded, ready
	// is the readiness probe's result.
	hasStartup, hasReadiness bool
	started, ready           bool
}

// probeWorker is one probe of an instance.
type probeWorker struct {
	kind  ProbeKind
	probe *v1.Probe
	next  time.Time
	// run counts the latest consecutive raw results equal to last;
	// result is the current result (0 none yet, 1 success, -1 failure).
	run    int32
	last   bool
	result int
	off    bool // the worker has stopped
}

// NewProber returns the prober of an instance of container c that started
// running at startedAt, whose probes' raw results result decides (nil:
// ExecProbes(c, nil, nil), the exec probes against no files). It returns
// nil when c has no probes. The prober keeps the probes of c as they are:
// the caller hands in a container it does not modify afterwards.
func NewProber(c *v1.Container, startedAt time.Time, result ProbeFunc) *Prober {
	if c == nil || c.StartupProbe == nil && c.LivenessProbe == nil && c.ReadinessProbe == nil {
		return nil
	}
	if result == nil {
		result = ExecProbes(c, nil, nil)
	}
	p := &Prober{result: result, hasStartup: c.StartupProbe != nil, hasReadiness: c.ReadinessProbe != nil}
	for _, kind := range ProbeKinds {
		if probe := ProbeOf(c, kind); probe != nil {
			delay := time.Duration(max(probe.InitialDelaySeconds, 0)) * time.Second
			p.workers = append(p.workers, &probeWorker{kind: kind, probe: probe, next: startedAt.Add(delay)})
		}
	}
	return p
}

// Started reports whether the container has started, as the kubelet's
// prober manager sets it: a container without a startup probe has, one with
// it once it has succeeded.
func (p *Prober) Started() bool {
	return p == nil || !p.hasStartup || p.started
}

// Ready reports whether the container is ready: it has started and its
// readiness probe succeeds (from its first success on); a container without
// a readiness probe is ready once started.
func (p *Prober) Ready() bool {
	return p == nil || p.Started() && (!p.hasReadiness || p.ready)
}

// Result returns the current result of the probe of kind: ok is its
// result, known is false while it has none yet (and for a kind the
// container does not have).
func (p *Prober) Result(kind ProbeKind) (ok, known bool) {
	if p == nil {
		return false, false
	}
	for _, w := range p.workers {
		if w.kind == kind {
			return w.result > 0, w.result != 0
		}
	}
	return false, false
}

// Next returns when the next probe runs, false when none will.
func (p *Prober) Next() (time.Time, bool) {
	w := p.due()
	if w == nil {
		return time.Time{}, false
	}
	return w.next, true
}

// due returns the worker whose run comes first (the first in ProbeKinds
// order at the same moment), nil when none will run.
func (p *Prober) due() *probeWorker {
	if p == nil {
		return nil
	}
	var first *probeWorker
	for _, w := range p.workers {
		if !w.off && (first == nil || w.next.Before(first.next)) {
			first = w
		}
	}
	return first
}

// Stop stops every probe for good (the instance has exited, or is killed).
func (p *Prober) Stop() {
	if p == nil {
		return
	}
	for _, w := range p.workers {
		w.off = true
	}
}

// ProbeRun is what one run of a probe did.
type ProbeRun struct {
	// Kind and Probe are the probe that was due, At its moment.
	Kind  ProbeKind
	Probe *v1.Probe
	At    time.Time
	// Ran is false when the probe was due but did not run: a liveness or
	// readiness probe held off by the startup probe, a liveness or startup
	// probe of a container being stopped, the startup probe once it has
	// done its work.
	Ran bool
	// Changed is true when the run flipped the probe's result, to
	// Succeeded.
	Changed   bool
	Succeeded bool
	// Kill is true when a liveness or startup probe has failed: the
	// container is to be killed (with Probe.TerminationGracePeriodSeconds
	// when set, else the pod's grace period) and started again as the
	// restart policy says. The prober has stopped.
	Kill bool
}

// RunNext runs the probe that is due first, at its own moment (Next), and
// returns what it did; false when no probe will run. stopping says whether
// the container is being stopped at that moment (it has had SIGTERM): its
// liveness and startup probes then no longer run, its readiness probe does.
func (p *Prober) RunNext(stopping bool) (ProbeRun, bool) {
	w := p.due()
	if w == nil {
		return ProbeRun{}, false
	}
	at := w.next
	w.next = at.Add(time.Duration(max(w.probe.PeriodSeconds, 1)) * time.Second)
	r := ProbeRun{Kind: w.kind, Probe: w.probe, At: at}
	switch {
	case w.kind == StartupProbe && p.started:
		w.off = true // the startup probe has done its work
		return r, true
	case w.kind != StartupProbe && p.hasStartup && !p.started:
		return r, true // held off until the startup probe succeeds
	case w.kind != ReadinessProbe && stopping:
		return r, true
	}
	r.Ran = true
	ok := p.result(w.kind, w.probe, at)
	if w.run > 0 && ok == w.last {
		w.run++
	} else {
		w.last, w.run = ok, 1
	}
	result := w.result
	switch {
	case ok && w.run >= max(w.probe.SuccessThreshold, 1):
		result = 1
	case !ok && w.run >= max(w.probe.FailureThreshold, 1):
		result = -1
	}
	if result == w.result {
		return r, true
	}
	w.result = result
	r.Changed, r.Succeeded = true, result > 0
	switch {
	case w.kind == ReadinessProbe:
		p.ready = result > 0
	case w.kind == StartupProbe && result > 0:
		p.started = true
	case result < 0: // liveness or startup: the container is killed
		r.Kill = true
		p.Stop()
	}
	return r, true
}
