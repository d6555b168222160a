package workload

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pod simulates the containers of one pod on a clock the caller keeps, the
// way a node agent (a kubelet, a remote container service) runs them on its
// own: the init containers one at a time in spec order, each to success
// before the next, then every app container; exited containers restarted
// as the pod's restart policy says, after a crash-loop back-off; a failed
// start retried after a back-off; a stop that sends SIGTERM with a grace
// period and starts nothing again. Each container runs as an Instance of
// its command (package vocabulary), and everything happens at the instant
// the commands, the back-offs and the signals say.
//
// It runs what the pod spec asks of a node agent as the kubelet does:
// the probes of each running container (pod_probes.go: a Prober per run,
// Started and Ready, a liveness or startup failure kills the run), its
// lifecycle hooks (pod_hooks.go: postStart after the start, the next
// container waiting for it; preStop before SIGTERM, within the grace
// period) and its restartable init containers (pod_sidecars.go: sidecars
// started in order beside the app containers, restarted whatever the
// policy, stopped after the app containers, the last first).
//
// Like Instance it has no goroutine and no timer: the caller asks Next when
// the pod's next event is due (an exit, a start, a probe, the end of a
// hook, a sidecar's turn to stop), and calls Advance (and Reconcile) once
// its clock has come that far. A Pod is not safe for concurrent use: a
// simulator guards it with its own lock. Make one with NewPod and set its
// options before the first Reconcile. App containers with a restart policy
// of their own (container restart rules), and init containers with one
// other than Always, follow the pod's policy.
type Pod struct {
	UID       types.UID
	Namespace string
	Name      string
	// RestartPolicy is the pod's (Always when empty).
	RestartPolicy v1.RestartPolicy
	// BackOff is the crash-loop back-off; a zero Initial restarts at once.
	BackOff BackOff
	// GracePeriod is the grace period of the kills the pod decides on its
	// own: a failed liveness or startup probe (unless the probe has a
	// terminationGracePeriodSeconds of its own), a failed postStart hook,
	// the sidecars once the app containers are done. NewPod sets
	// GracePeriod(pod, nil): the pod's deletionGracePeriodSeconds, else
	// its terminationGracePeriodSeconds, else 30s.
	GracePeriod time.Duration
	// Init and App are the pod's init and app containers, in spec order.
	Init, App []*PodContainer
	// Stopped is set by Stop: nothing starts any more. A caller that
	// resumes the pod clears it and calls Reconcile.
	Stopped bool

	// CheckStart decides whether a start attempt of c fails, as the
	// caller's runtime would: a non-nil err is the reason (the container
	// waits and is tried again after a back-off), message its text. Nil:
	// StartError.
	CheckStart func(c *PodContainer) (message string, err error)
	// Shutdown is what SIGTERM does to an instance of a container whose
	// command behaves as b. Nil: b.Shutdown(false), as a host process.
	Shutdown func(b Behaviour) Shutdown
	// NewID returns the ID of a new run. Nil: 32 random hex digits.
	NewID func() string
	// ProbeFunc returns the ProbeFunc that decides the probes of run r of
	// container c, called once per run that has probes. Nil:
	// DefaultProbeFunc.
	ProbeFunc func(c *PodContainer, r *Run) ProbeFunc
	// OnEvent, when set, hears of each event of a run as Advance carries
	// it out (PodEvent): a simulator publishes them, or mirrors the runs'
	// state in its own.
	OnEvent func(PodEvent)
	// Kill, when set, kills run r of c at at with grace when the pod
	// decides so on its own (a failed liveness or startup probe), instead
	// of the pod's kill (its preStop hook, then SIGTERM with what is left
	// of grace): a simulator that stops containers its own way. It sends
	// the run a signal (Instance.SIGTERM, SIGKILL) or ends it (Exit).
	Kill func(c *PodContainer, r *Run, at time.Time, grace time.Duration)
	// HookFunc, when set, returns what the lifecycle hook of kind of run r
	// of c does when it runs at at, false when there is none (a
	// simulator's scripted hooks). Nil: DefaultHook, the spec's handler.
	HookFunc func(c *PodContainer, r *Run, kind HookKind, at time.Time) (Hook, bool)
	// MinimumGracePeriod is the least a run gets between SIGTERM and
	// SIGKILL in a kill, whatever is left of the grace period after its
	// preStop hook and its turn (a grace period of 0 runs neither), as
	// the kubelet's killContainer gives it minimumGracePeriodInSeconds
	// (2s); zero by default: what is left of the grace period.
	MinimumGracePeriod time.Duration
	// CallerStarts: the caller starts the runs (StartRun), as a node
	// agent's sync asks a runtime for each start; Reconcile plans no start
	// and stops no sidecar (pod_caller_starts.go).
	CallerStarts bool

	// spec holds the containers NewPod made the pod with (copies: their
	// Specs point into it), the order Reconcile starts them in; nil for a
	// Pod not made by NewPod (Reconcile then reads Init and App).
	spec *v1.PodSpec

	// busyUntil: no container starts before it (a postStart hook runs, or
	// a run its failed hook killed is still stopping), as the kubelet's
	// SyncPod starts one container after another (pod_hooks.go).
	busyUntil time.Time
}

// PodContainer is one container of a Pod.
type PodContainer struct {
	Name string
	// IsInit is true for an init container.
	IsInit bool
	// Restartable is true for a restartable init container, a sidecar
	// (restartPolicy Always; pod_sidecars.go).
	Restartable bool
	// Spec is the container as the pod was made with (as the current run
	// was started, for a run the caller started: StartRun); Pod never
	// modifies it.
	Spec *v1.Container
	// Image is the container's image, as SetImage last changed it.
	Image string
	// Behaviour is what its command does (OfEnv of Spec).
	Behaviour Behaviour
	// Current is the newest run, nil before the first successful start; an
	// exited run stays current until the next one starts. Previous is the
	// run before it.
	Current, Previous *Run
	// Waiting says why the container is not running although a start is
	// planned: a crash-loop back-off or a failed start, until the next
	// attempt. Nil otherwise.
	Waiting *Waiting

	// startAt: a start is due then, when pending.
	startAt time.Time
	// backOff is the container's crash-loop back-off, stamped with the
	// times of the events it was moved on for.
	backOff BackOffState
	// pending: a start is due at startAt. replace: the running run is
	// stopped because the image changed; the next run starts once it has
	// exited, whatever the restart policy. (Together, not beside what they
	// are about: a PodContainer of 256 bytes, not 264, fits a smaller
	// allocation.)
	pending, replace bool
}

// Run is one run of a container: an Instance, with what a runtime reports
// of it.
type Run struct {
	*Instance
	// ID is the run's ID (Pod.NewID).
	ID string
	// Spec is the container as the run was started (the container's Spec
	// then); its probes and hooks are the run's.
	Spec *v1.Container
	// Image is the container's image when the run started.
	Image string
	// Restarts is the number of runs of the container before this one.
	Restarts int
	// Prober runs the probes of the run while it runs; nil for a
	// container without probes (and for an init container that is not
	// restartable, which cannot have any).
	Prober *Prober
	// HookError is ErrPostStartHook once the run's postStart hook has
	// failed and the pod killed the run for it, nil otherwise;
	// HookMessage says what failed.
	HookError   error
	HookMessage string
	// StartFailed is set on a run the caller's runtime created but could
	// not start (Pod.StartFailed): it exited at its creation without
	// running; StartMessage is the runtime's message.
	StartFailed  bool
	StartMessage string
	// Data is the caller's own record of the run, what its runtime keeps
	// beside what the Pod plays (a sandbox, a hash, the resources it runs
	// with): set with RunOptions.Data; the Pod never reads it.
	Data any

	// stopping: the run has had SIGTERM from the pod, or will have it once
	// its preStop hook ends (its liveness and startup probes stop).
	stopping bool
	// postStartFail: its postStart hook fails at postStartEnd, when the
	// run is killed.
	postStartFail    bool
	postStartEnd     time.Time
	postStartMessage string
	// turn is set while a stopped sidecar waits for its turn to get
	// SIGTERM (pod_sidecars.go).
	turn *stopTurn
}

// Waiting is why a container is not running although a start is planned.
type Waiting struct {
	// Err is the reason: ErrCrashLoopBackOff for a back-off
	// after an exit, else the error CheckStart returned. Message says more.
	Err     error
	Message string
	// Since is when the container began to wait, Until when it is started
	// (or tried) again.
	Since, Until time.Time
}

// NewPod returns the simulation of pod's containers, none started yet:
// Reconcile starts them. It keeps a copy of the containers' specs: the
// caller may change pod afterwards.
func NewPod(pod *v1.Pod) *Pod {
	p := &Pod{UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, RestartPolicy: pod.Spec.RestartPolicy,
		GracePeriod: GracePeriod(pod, nil)}
	spec := pod.Spec.DeepCopy()
	p.spec = &v1.PodSpec{InitContainers: spec.InitContainers, Containers: spec.Containers}
	for i := range p.spec.InitContainers {
		p.Init = append(p.Init, newPodContainer(&p.spec.InitContainers[i], true))
	}
	for i := range p.spec.Containers {
		p.App = append(p.App, newPodContainer(&p.spec.Containers[i], false))
	}
	return p
}

func newPodContainer(c *v1.Container, isInit bool) *PodContainer {
	return &PodContainer{Name: c.Name, IsInit: isInit, Restartable: isInit && IsSidecar(c), Spec: c, Image: c.Image, Behaviour: OfEnv(c)}
}

// Containers returns the init containers, then the app containers.
func (p *Pod) Containers() []*PodContainer { return slices.Concat(p.Init, p.App) }

// Container returns the container named name, nil if the pod has none.
func (p *Pod) Container(name string) *PodContainer {
	// Two plain loops: a start order asks this for every container at
	// every sync.
	for _, c := range p.Init {
		if c.Name == name {
			return c
		}
	}
	for _, c := range p.App {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Running reports whether the container's current run runs.
func (c *PodContainer) Running() bool { return c.Current != nil && c.Current.Running() }

// AnyRunning reports whether a container of the pod runs.
func (p *Pod) AnyRunning() bool {
	return slices.ContainsFunc(p.Containers(), (*PodContainer).Running)
}

// StartError is the default Pod.CheckStart: StartFailure of c's image,
// pull policy and command.
func StartError(c *PodContainer) (string, error) {
	return StartFailure(c.Image, c.Spec.ImagePullPolicy, c.Behaviour)
}

// StartFailure returns why a runtime fails to start a container of image,
// with pull policy pull, whose command behaves as b, and what it says;
// "", nil when the start succeeds. A missing image (ImageMissing) fails
// with ErrImageNeverPull and the kubelet image manager's message under the
// pull policy Never, else with ErrImagePull and containerd's message for a
// registry that does not resolve; a missing executable with
// ErrRunContainer.
func StartFailure(image string, pull v1.PullPolicy, b Behaviour) (message string, err error) {
	switch {
	case ImageMissing(image) && pull == v1.PullNever:
		return fmt.Sprintf("Container image %q is not present with pull policy of Never", image), ErrImageNeverPull
	case ImageMissing(image):
		return fmt.Sprintf("failed to pull image %q: dial tcp: lookup %s: no such host", image, MissingImageDomain), ErrImagePull
	case b.FailsToStart():
		exe := b.MissingExecutable
		return fmt.Sprintf("exec: %q: stat %s: no such file or directory", exe, exe), ErrRunContainer
	}
	return "", nil
}

// SetImage changes the image of container c at now (the one change of a
// container the API server allows). The change starts a new back-off (the
// kubelet's back-off key includes the container's hash); a running
// container gets SIGTERM with grace and is started again with the new
// image once it has exited, whatever the restart policy, as the kubelet
// restarts a container whose spec changed; one waiting to be started again
// is started at once. The kill runs the container's preStop hook first, as
// the kubelet's killContainer does. The caller has advanced the pod to now,
// and calls Reconcile after its changes.
func (p *Pod) SetImage(c *PodContainer, image string, now time.Time, grace time.Duration) {
	if c.Image == image {
		return
	}
	c.Image, c.backOff = image, BackOffState{}
	switch {
	case c.Running():
		c.replace = true
		p.kill(c, c.Current, now, grace)
	case c.pending:
		c.startAt, c.Waiting = now, nil
	}
}

// Stop stops the pod at now, as the kubelet's runtime kills a pod
// (killContainersWithSyncResult): every running container runs its preStop
// hook, then gets SIGTERM with what is left of grace (a later, shorter
// grace period shortens it); the sidecars get it only once the app
// containers and the later sidecars have exited, and at the latest when
// grace is over (pod_sidecars.go). Nothing starts again until the caller
// clears Stopped.
func (p *Pod) Stop(now time.Time, grace time.Duration) {
	p.Stopped = true
	for _, c := range p.Containers() {
		c.pending, c.Waiting, c.replace = false, nil, false
		if c.Running() && !c.Restartable {
			p.kill(c, c.Current, now, grace)
		}
	}
	p.stopSidecars(now, grace, true)
}

// kill stops run r of container c at now with grace, as the kubelet's
// killContainer (kuberuntime_container.go) does: its preStop hook first
// (pod_hooks.go), SIGTERM when it ends with what is left of grace. It
// returns when the run will have exited, as far as the signal decides it.
func (p *Pod) kill(c *PodContainer, r *Run, now time.Time, grace time.Duration) time.Time {
	at, left := p.preStop(c, r, now, grace)
	r.stopping, r.turn = true, nil
	return p.sigterm(c, r, now, at, left)
}

// eventKind is the kind of a pod's event; at the same instant they happen
// in this order.
type eventKind int

const (
	eventInstance  eventKind = iota // a run starts, exits or is killed
	eventPostStart                  // a failed postStart hook ends: kill
	eventTurn                       // a stopped sidecar's turn for SIGTERM
	eventProbe                      // a probe runs
	eventStart                      // a start (or a start attempt)
)

// event is one event of the pod: its kind, its container and when.
type event struct {
	kind eventKind
	c    *PodContainer
	r    *Run
	at   time.Time
}

// Next returns when the pod's next event is due (an exit, a kill, a start,
// a probe, the end of a failing postStart hook, a sidecar's turn to
// stop), false when none is planned.
func (p *Pod) Next() (time.Time, bool) {
	e := p.due()
	return e.at, e.c != nil
}

// due returns the pod's earliest event; its c is nil when nothing is
// planned. At the same instant, events come in the order of eventKind
// (exits before starts), and containers in spec order (Init, then App;
// a container's previous run before its current one). One pass over the
// containers; the runs' states are read, not asked for, as this runs at
// every Next and after every event.
func (p *Pod) due() (e event) {
	consider := func(kind eventKind, c *PodContainer, r *Run, t time.Time) {
		if e.c == nil || t.Before(e.at) || t.Equal(e.at) && kind < e.kind {
			e = event{kind: kind, c: c, r: r, at: t}
		}
	}
	run := func(c *PodContainer, r *Run) {
		if r == nil || r.state == InstanceExited { // c.live(), read here
			return
		}
		if t, ok := r.Next(); ok {
			consider(eventInstance, c, r, t)
		}
		if r.postStartFail {
			consider(eventPostStart, c, r, r.postStartEnd)
		}
		if r.state == InstanceRunning && r.Prober != nil {
			if t, ok := r.Prober.Next(); ok {
				consider(eventProbe, c, r, t)
			}
		}
	}
	// p.Containers(), without a copy, and plain loops: this runs at
	// every Next and Advance.
	for i, c := range p.Init {
		run(c, c.Previous)
		run(c, c.Current)
		if c.Current != nil && c.Current.state == InstanceRunning && c.Current.turn != nil {
			consider(eventTurn, c, c.Current, p.turnAt(i))
		}
		if c.pending {
			consider(eventStart, c, nil, maxTime(c.startAt, p.busyUntil))
		}
	}
	for _, c := range p.App {
		run(c, c.Previous)
		run(c, c.Current)
		if c.pending {
			consider(eventStart, c, nil, maxTime(c.startAt, p.busyUntil))
		}
	}
	return e
}

// live returns the runs of c that have not exited, nil in the place of
// others: the previous run, when a caller started the current one beside
// it (CallerStarts), and the current run.
func (c *PodContainer) live() [2]*Run {
	rs := [2]*Run{c.Previous, c.Current}
	for i, r := range rs {
		if r != nil && r.state == InstanceExited {
			rs[i] = nil
		}
	}
	return rs
}

// Advance carries out every event of the pod due by now, in order, each at
// its own instant, and the starts each makes necessary (Reconcile). It
// returns what Next then returns: when the pod's next event is due, false
// when none is planned.
func (p *Pod) Advance(now time.Time) (next time.Time, ok bool) {
	for {
		e := p.due()
		if e.c == nil || e.at.After(now) {
			return e.at, e.c != nil
		}
		switch e.kind {
		case eventInstance:
			started, exited := e.r.Advance(e.at)
			p.emitAdvance(e.c, e.r, started, exited)
		case eventPostStart:
			p.postStartFailed(e.c, e.r, e.at)
		case eventTurn:
			p.takeTurn(e.c, e.at)
		case eventProbe:
			p.runProbe(e.c, e.r, e.at)
		case eventStart:
			p.start(e.c, e.at)
		}
		p.Reconcile(e.at)
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// start attempts the start of c at t: a new run, or a failure tried again
// after a back-off.
func (p *Pod) start(c *PodContainer, t time.Time) {
	c.pending = false
	check := p.CheckStart
	if check == nil {
		check = StartError
	}
	if msg, err := check(c); err != nil {
		d := c.nextBackOff(t, p.BackOff)
		c.pending, c.startAt = true, t.Add(d)
		c.Waiting = &Waiting{Err: err, Message: msg, Since: t, Until: c.startAt}
		return
	}
	c.Waiting, c.replace = nil, false
	opts := InstanceOptions{}
	if p.Shutdown != nil {
		sh := p.Shutdown(c.Behaviour)
		opts.Shutdown = &sh
	}
	newID := p.NewID
	if newID == nil {
		newID = randomID
	}
	r := &Run{Instance: NewInstance(c.Behaviour, t, opts), ID: newID(), Image: c.Image, Spec: c.Spec}
	started, exited := r.Advance(t)
	if c.Current != nil {
		r.Restarts = c.Current.Restarts + 1
		c.Previous = c.Current
	}
	c.Current = r
	r.Prober = p.newProber(c, r) // pod_probes.go
	p.emitAdvance(c, r, started, exited)
	if r.Running() {
		p.postStart(c, r, t) // pod_hooks.go
	}
}

// emitAdvance emits the events of an Advance of run r of c that reported
// started and exited.
func (p *Pod) emitAdvance(c *PodContainer, r *Run, started, exited bool) {
	if started {
		p.emit(PodEvent{Kind: RunStarted, Container: c, Run: r, At: r.startedAt})
	}
	if exited {
		p.emit(PodEvent{Kind: RunExited, Container: c, Run: r, At: r.finishedAt})
	}
}

// nextBackOff moves the back-off of c on for an event at t (an exit, a
// failed start) and returns the delay (BackOffState.Next, stamped at t).
func (c *PodContainer) nextBackOff(t time.Time, b BackOff) time.Duration {
	return c.backOff.Next(b, t, t)
}

// Reconcile plans the starts the pod needs at now, in the kubelet's start
// order (StartInTurn): a container that never ran, or whose image changed,
// at once; one that exited and that the restart policy restarts, after a
// back-off. Once the app containers are done for good, the sidecars are
// stopped. A stopped pod starts nothing, nor does one whose caller starts
// the runs (CallerStarts). Advance reconciles after each event; a caller
// reconciles after it made or resumed the pod.
func (p *Pod) Reconcile(now time.Time) {
	if p.Stopped || p.CallerStarts {
		return
	}
	spec := p.spec
	if spec == nil {
		spec = &v1.PodSpec{}
		for _, c := range p.Init {
			spec.InitContainers = append(spec.InitContainers, *c.Spec)
		}
		for _, c := range p.App {
			spec.Containers = append(spec.Containers, *c.Spec)
		}
	}
	done := p.StartInTurn(spec, func(c *v1.Container, _ bool) { p.ensureStart(p.Container(c.Name), now) })
	if done {
		p.stopSidecars(now, p.GracePeriod, false)
	}
}

// ensureStart plans a start of c unless it runs or one is planned: at once
// for a container that never ran or whose image changed, after the back-off
// for one that exited and that the restart policy restarts.
func (p *Pod) ensureStart(c *PodContainer, now time.Time) {
	switch {
	case c.pending || c.Running():
		return
	case c.Current == nil || c.replace:
		c.pending, c.startAt = true, now
		return
	}
	finished := c.Current.FinishedAt()
	d := c.nextBackOff(finished, p.BackOff)
	c.pending, c.startAt = true, finished.Add(d)
	if c.startAt.Before(now) {
		c.startAt = now // resumed after a stop that outlasted the back-off
	}
	c.Waiting = &Waiting{
		Err:     ErrCrashLoopBackOff,
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", d, c.Name, p.Name, p.Namespace, p.UID),
		Since:   now, Until: c.startAt,
	}
	if r := c.Current; r.HookError != nil {
		// Killed for its postStart hook: the start failed with it.
		c.Waiting.Err, c.Waiting.Message = r.HookError, r.HookMessage
	}
}

// restarts reports whether the restart policy restarts c, which has
// exited (Restarts).
func (p *Pod) restarts(c *PodContainer) bool {
	return Restarts(p.RestartPolicy, c.IsInit, c.Restartable, c.Current.ExitCode())
}

// Restarts reports whether a container that exited with exitCode is
// started again under the pod's restart policy, as the kubelet's runtime
// decides it (kuberuntime_container.go computeInitContainerActions,
// pkgcontainer.ShouldContainerBeRestarted): a restartable init container
// (sidecar) always; a plain init container only when it failed, unless
// the policy is Never; an app container always under Always (or no
// policy), on failure under OnFailure, never under Never.
func Restarts(policy v1.RestartPolicy, isInit, restartable bool, exitCode int) bool {
	failed := exitCode != 0
	switch {
	case restartable:
		return true
	case isInit:
		return failed && policy != v1.RestartPolicyNever
	}
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return failed
	default:
		return true
	}
}

// randomID returns a random run ID, 32 hex digits.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
