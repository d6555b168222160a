package workload

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// A Pod whose caller starts the runs (Pod.CallerStarts), as a node agent's
// sync asks a runtime for each start and the runtime answers it: the
// caller decides when a container starts (its sync, its back-off, its
// faults) and hands the run's particulars in (StartRun's RunOptions: ID,
// restart count, start latency, a scripted exit, and Data, its own record
// of the run, which the Pod keeps on the run for it: what a runtime keeps
// beside a container, its sandbox, hash or resources); a start the
// caller's runtime created but could not run is a run too (StartFailed),
// so that the current and previous runs of each container are all the
// caller needs to report its containers; the Pod plays every run
// it was handed on the caller's clock as it plays its own (Advance: starts,
// exits, signals' ends, probes) and tells the caller of each event
// (OnEvent). This is how package fake runs its pods: what a run does is
// written once, in this package, for the fake, the examples' backends and
// users' simulators.
//
// Design, as far as it has come: the runs, their signals, their probes,
// their hooks and the order of a kill are the Pod's in both modes; in
// CallerStarts mode the caller keeps the decisions a sync makes (which
// container starts, restart policy, back-off, faults, which runs a kill
// stops), runs the postStart hook of each start it makes (PostStart), and
// stops runs with StopRuns (a kill: preStop hooks, SIGTERM, the sidecars
// last) or ExitRun (a sandbox's end); it may replace the kill a failed
// probe makes (Pod.Kill); the pod kills a run whose postStart hook failed
// itself. A run started beside a live one (a sync that acted on a stale
// status) becomes the current run and the live one the previous, which
// the Pod plays on until it exits.

// PodEventKind is the kind of a PodEvent.
type PodEventKind int

// The kinds of a PodEvent.
const (
	// RunStarted: the run runs from At on (it was created until then).
	RunStarted PodEventKind = iota
	// RunExited: the run exited at At (on its own, or as a signal ended
	// it).
	RunExited
	// ProbeChanged: a probe of the run changed its result (PodEvent.Probe).
	ProbeChanged
	// RunKilling: the run is being stopped at At with PodEvent.Grace
	// (StopRuns), before its preStop hook and SIGTERM.
	RunKilling
	// HookRan: the pod ran a lifecycle hook of the run at At
	// (PodEvent.HookKind, Hook): from From until Until (for a preStop
	// hook, when SIGTERM comes, within PodEvent.Grace).
	HookRan
)

func (k PodEventKind) String() string {
	switch k {
	case RunStarted:
		return "RunStarted"
	case RunExited:
		return "RunExited"
	case ProbeChanged:
		return "ProbeChanged"
	case RunKilling:
		return "RunKilling"
	case HookRan:
		return "HookRan"
	}
	return "PodEventKind(?)"
}

// PodEvent is an event of a run of a Pod, as Pod.OnEvent hears of it: at
// At, Run of Container had an event of Kind; Probe is the probe's run for a
// ProbeChanged; HookKind, Hook, From, Until and Grace say what hook ran
// for a HookRan; Grace is the kill's for a RunKilling.
type PodEvent struct {
	Kind        PodEventKind
	Container   *PodContainer
	Run         *Run
	At          time.Time
	Probe       ProbeRun
	HookKind    HookKind
	Hook        Hook
	From, Until time.Time
	Grace       time.Duration
}

// emit hands e to OnEvent, if set.
func (p *Pod) emit(e PodEvent) {
	if p.OnEvent != nil {
		p.OnEvent(e)
	}
}

// sigterm sends SIGTERM to run r of c at at (Instance.SIGTERM), as a kill
// does once the run's preStop hook and its turn are over, with grace but at
// least MinimumGracePeriod, and emits RunExited when the run exits at once.
// It is the one place the floor is applied, as the kubelet's killContainer
// applies minimumGracePeriodInSeconds once, to what is left of the grace
// period after the hook and the wait (kuberuntime_container.go).
func (p *Pod) sigterm(c *PodContainer, r *Run, now, at time.Time, grace time.Duration) time.Time {
	grace = max(grace, p.MinimumGracePeriod)
	alive := r.state != InstanceExited
	end := r.SIGTERM(now, at, grace)
	if alive && r.state == InstanceExited {
		p.emit(PodEvent{Kind: RunExited, Container: c, Run: r, At: r.finishedAt})
	}
	return end
}

// RunOptions are the particulars of a run a caller starts (StartRun).
type RunOptions struct {
	// ID is the run's ID; empty: Pod.NewID's.
	ID string
	// Restarts is the run's restart count; nil: one more than the current
	// run's (0 for the first).
	Restarts *int
	// StartsAt is when the run starts running (a runtime's start latency,
	// the postStart hooks of the containers started before it): it is
	// created until then. Zero, or before now: at once.
	StartsAt time.Time
	// Exit, when set, is how the run ends on its own whatever its command
	// says (Instance.ExitAfter): after Exit.After with Exit.Code.
	Exit *RunExit
	// IgnoreSIGTERM makes the run ignore SIGTERM (Instance.IgnoreSIGTERM).
	IgnoreSIGTERM bool
	// Data is the run's Data: the caller's own record of it.
	Data any
}

// RunExit is a scripted end of a run: it exits with Code once it has run
// for After.
type RunExit struct {
	After time.Duration
	Code  int
}

// StartRun starts a run of the container spec names at now, as the
// caller's runtime has started it, and returns it: the container is the
// pod's init (isInit) or app container of that name, added (at the end of
// Init or App) when the pod has none, and spec becomes its Spec and the
// run's (the container as this run is started: a changed image, say).
// StartRun keeps spec as it is: the caller does not modify it afterwards
// (a simulator keeps a private copy of the pod's spec, and replaces it
// when the spec changes). The run becomes the container's current run,
// the one before it the previous run (which plays on while it has not
// exited); its probes start with it (counted from the moment it runs).
// The run is created when StartRun returns: the caller's next Advance (to
// now, for a run that starts at once) runs it, with its RunStarted event.
// What fails a start (StartFailure) is the caller's to decide before:
// StartRun always starts. Its postStart hook is the caller's to run:
// PostStart, once it has advanced the pod to now; the pod runs the preStop
// hook of the kills it makes itself (a failed postStart hook; a failed
// probe unless Pod.Kill is set), the caller the others' (PreStop).
// StartRun works in either mode, but a Pod that starts its own runs
// (CallerStarts false) does not plan around runs it did not start.
func (p *Pod) StartRun(spec *v1.Container, isInit bool, now time.Time, opts RunOptions) *Run {
	c := p.Container(spec.Name)
	switch {
	case c == nil:
		c = &PodContainer{Name: spec.Name, IsInit: isInit, Restartable: isInit && IsSidecar(spec), Spec: spec, Image: spec.Image, Behaviour: OfEnv(spec)}
		if isInit {
			p.Init = append(p.Init, c)
		} else {
			p.App = append(p.App, c)
		}
	case c.Spec != spec:
		c.Spec, c.Image, c.Behaviour = spec, spec.Image, OfEnv(spec)
	}
	io := InstanceOptions{StartsAt: opts.StartsAt}
	if p.Shutdown != nil {
		sh := p.Shutdown(c.Behaviour)
		io.Shutdown = &sh
	}
	id := opts.ID
	if id == "" {
		newID := p.NewID
		if newID == nil {
			newID = randomID
		}
		id = newID()
	}
	r := &Run{Instance: NewInstance(c.Behaviour, now, io), ID: id, Image: spec.Image, Spec: spec, Data: opts.Data}
	if opts.Exit != nil {
		r.ExitAfter(opts.Exit.After, opts.Exit.Code)
	}
	if opts.IgnoreSIGTERM {
		r.IgnoreSIGTERM()
	}
	switch {
	case opts.Restarts != nil:
		r.Restarts = *opts.Restarts
	case c.Current != nil:
		r.Restarts = c.Current.Restarts + 1
	}
	if c.Current != nil {
		c.Previous = c.Current
	}
	c.Current, c.Waiting, c.pending = r, nil, false
	r.Prober = p.newProber(c, r) // pod_probes.go
	return r
}

// StartFailed records a start of the container spec names at now that
// the caller's runtime created but could not run (containerd's
// StartError: a missing executable, say), and returns its run: the
// container's current run from now on, as StartRun makes it (the one
// before it the previous run), exited at now with code without having
// run, StartFailed set and message its StartMessage. It has no probes and
// no events; opts.StartsAt, Exit and IgnoreSIGTERM do not apply.
func (p *Pod) StartFailed(spec *v1.Container, isInit bool, now time.Time, opts RunOptions, code int, message string) *Run {
	opts.StartsAt, opts.Exit, opts.IgnoreSIGTERM = time.Time{}, nil, false
	r := p.StartRun(spec, isInit, now, opts)
	r.Prober = nil
	r.Exit(now, code)
	r.StartFailed, r.StartMessage = true, message
	return r
}

// StopRuns stops the live runs of the pod that pick selects (every one
// when pick is nil) at now with grace before SIGKILL, as a caller's kill of
// the pod asks its runtime (the kubelet's killContainersWithSyncResult),
// and returns when the last of them will have exited, as far as the
// signals decide it (now when none is left). Each gets a RunKilling event;
// a running one runs its preStop hook first, its time taken from grace
// (PreStop); then SIGTERM, which ends it as its Shutdown says. The runs of
// the restartable init containers (sidecars) come last, the last in spec
// order first, each waiting for its turn: once the runs stopped before it
// will have exited as their signals say, not before its preStop hook's
// end, and at the latest when its grace period ends; it then gets what is
// left of grace. Every run gets at least MinimumGracePeriod after SIGTERM
// (a grace of 0 runs no preStop hook and no wait). Unlike Stop, which sends a
// sidecar SIGTERM once the others have exited, StopRuns plans every signal
// at now, so that the caller knows how long its kill takes; the pod is not
// stopped (its caller decides what starts next).
func (p *Pod) StopRuns(now time.Time, grace time.Duration, pick func(*PodContainer, *Run) bool) time.Time {
	deadline := now
	for _, c := range p.Containers() {
		if c.Restartable {
			continue
		}
		for _, r := range c.live() {
			if r != nil && (pick == nil || pick(c, r)) {
				deadline = maxTime(deadline, p.stopRun(c, r, now, grace, nil))
			}
		}
	}
	for i := len(p.Init) - 1; i >= 0; i-- {
		c := p.Init[i]
		if !c.Restartable {
			continue
		}
		for _, r := range c.live() {
			if r == nil || pick != nil && !pick(c, r) {
				continue
			}
			waited := deadline
			turn := func(hookEnd time.Time, left time.Duration) (time.Time, time.Duration) {
				end := hookEnd.Add(left)
				at := minTime(maxTime(hookEnd, waited), end)
				return at, end.Sub(at)
			}
			deadline = maxTime(deadline, p.stopRun(c, r, now, grace, turn))
		}
	}
	return deadline
}

// stopRun stops live run r of c at now with grace (StopRuns): RunKilling,
// its preStop hook when it runs, its turn when turn is set (a sidecar:
// turn returns when SIGTERM comes and what is left of grace then), then
// SIGTERM. It returns when r will have exited.
func (p *Pod) stopRun(c *PodContainer, r *Run, now time.Time, grace time.Duration, turn func(time.Time, time.Duration) (time.Time, time.Duration)) time.Time {
	p.emit(PodEvent{Kind: RunKilling, Container: c, Run: r, At: now, Grace: grace})
	at := now
	if r.Running() {
		at, grace = p.preStop(c, r, now, grace)
	}
	if turn != nil {
		at, grace = turn(at, grace)
	}
	return p.sigterm(c, r, now, at, grace)
}

// ExitRun ends live run r of c at at with code, at once, whatever it was
// doing (a runtime that kills it with its sandbox: no hook, no grace), with
// its RunExited event.
func (p *Pod) ExitRun(c *PodContainer, r *Run, at time.Time, code int) {
	if r.State() == InstanceExited {
		return
	}
	r.Exit(at, code)
	p.emit(PodEvent{Kind: RunExited, Container: c, Run: r, At: r.FinishedAt()})
}
