package workload

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// BackOff is the crash-loop back-off of a Pod: the first restart of a
// container waits Initial after its exit (or failed start), every further
// one twice as long as the one before, at most Max; a container that has
// not been backed off for 2×Max starts again from Initial, as the
// kubelet's flowcontrol.Backoff does.
type BackOff struct {
	Initial time.Duration
	Max     time.Duration
}

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
// Like Instance it has no goroutine and no timer: the caller asks Next when
// the pod's next event is due, and calls Advance (and Reconcile) once its
// clock has come that far. A Pod is not safe for concurrent use: a
// simulator guards it with its own lock. Make one with NewPod and set its
// options before the first Reconcile. Containers with a restart policy of
// their own (sidecars, restart rules) run as app containers do.
type Pod struct {
	UID       types.UID
	Namespace string
	Name      string
	// RestartPolicy is the pod's (Always when empty).
	RestartPolicy v1.RestartPolicy
	// BackOff is the crash-loop back-off; a zero Initial restarts at once.
	BackOff BackOff
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
}

// PodContainer is one container of a Pod.
type PodContainer struct {
	Name string
	// IsInit is true for an init container.
	IsInit bool
	// Spec is the container as the pod was made with; Pod never modifies
	// it.
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

	// pending: a start is due at startAt.
	pending bool
	startAt time.Time
	// backOff is the delay of the latest back-off, set at backOffAt.
	backOff   time.Duration
	backOffAt time.Time
	// replace: the running run is stopped because the image changed; the
	// next run starts once it has exited, whatever the restart policy.
	replace bool
}

// Run is one run of a container: an Instance, with what a runtime reports
// of it.
type Run struct {
	*Instance
	// ID is the run's ID (Pod.NewID).
	ID string
	// Image is the container's image when the run started.
	Image string
	// Restarts is the number of runs of the container before this one.
	Restarts int
}

// Waiting is why a container is not running although a start is planned.
type Waiting struct {
	// Err is the reason: pkgcontainer.ErrCrashLoopBackOff for a back-off
	// after an exit, else the error CheckStart returned. Message says more.
	Err     error
	Message string
	// Since is when the container began to wait, Until when it is started
	// (or tried) again.
	Since, Until time.Time
}

// NewPod returns the simulation of pod's containers, none started yet:
// Reconcile starts them.
func NewPod(pod *v1.Pod) *Pod {
	p := &Pod{UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, RestartPolicy: pod.Spec.RestartPolicy}
	for i := range pod.Spec.InitContainers {
		p.Init = append(p.Init, newPodContainer(&pod.Spec.InitContainers[i], true))
	}
	for i := range pod.Spec.Containers {
		p.App = append(p.App, newPodContainer(&pod.Spec.Containers[i], false))
	}
	return p
}

func newPodContainer(c *v1.Container, isInit bool) *PodContainer {
	return &PodContainer{Name: c.Name, IsInit: isInit, Spec: c, Image: c.Image, Behaviour: OfEnv(c)}
}

// Containers returns the init containers, then the app containers.
func (p *Pod) Containers() []*PodContainer { return slices.Concat(p.Init, p.App) }

// Container returns the container named name, nil if the pod has none.
func (p *Pod) Container(name string) *PodContainer {
	for _, c := range p.Containers() {
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

// StartError is the default Pod.CheckStart: a container whose image is
// missing (ImageMissing) fails with ErrImageNeverPull under the pull policy
// Never, else with ErrImagePull; one whose executable is missing with
// pkgcontainer.ErrRunContainer.
func StartError(c *PodContainer) (string, error) {
	switch {
	case ImageMissing(c.Image) && c.Spec.ImagePullPolicy == v1.PullNever:
		return fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image), ErrImageNeverPull
	case ImageMissing(c.Image):
		return fmt.Sprintf("Failed to pull image %q: the registry %s does not resolve", c.Image, MissingImageDomain), ErrImagePull
	case c.Behaviour.FailsToStart():
		exe := c.Behaviour.MissingExecutable
		return fmt.Sprintf("exec: %q: stat %s: no such file or directory", exe, exe), pkgcontainer.ErrRunContainer
	}
	return "", nil
}

// SetImage changes the image of container c at now (the one change of a
// container the API server allows). The change starts a new back-off (the
// kubelet's back-off key includes the container's hash); a running
// container gets SIGTERM with grace and is started again with the new
// image once it has exited, whatever the restart policy, as the kubelet
// restarts a container whose spec changed; one waiting to be started again
// is started at once. The caller has advanced the pod to now, and calls
// Reconcile after its changes.
func (p *Pod) SetImage(c *PodContainer, image string, now time.Time, grace time.Duration) {
	if c.Image == image {
		return
	}
	c.Image, c.backOff = image, 0
	switch {
	case c.Running():
		c.replace = true
		p.signal(c, now, grace)
	case c.pending:
		c.startAt, c.Waiting = now, nil
	}
}

// Stop stops the pod at now: every running container gets SIGTERM with
// grace (a later, shorter grace period shortens it), and nothing starts
// again until the caller clears Stopped.
func (p *Pod) Stop(now time.Time, grace time.Duration) {
	p.Stopped = true
	for _, c := range p.Containers() {
		c.pending, c.Waiting, c.replace = false, nil, false
		if c.Running() {
			p.signal(c, now, grace)
		}
	}
}

// signal sends SIGTERM to the running container c at now with grace.
func (p *Pod) signal(c *PodContainer, now time.Time, grace time.Duration) {
	c.Current.SIGTERM(now, now, grace)
}

// Next returns when the pod's next event is due (an exit, a kill, a
// start), false when none is planned.
func (p *Pod) Next() (time.Time, bool) {
	c, at := p.due()
	return at, c != nil
}

// due returns the pod's earliest event: the container and when; c is nil
// when nothing is planned. Exits come before starts of the same instant,
// and containers in spec order.
func (p *Pod) due() (c *PodContainer, at time.Time) {
	consider := func(cc *PodContainer, t time.Time) {
		if c == nil || t.Before(at) {
			c, at = cc, t
		}
	}
	for _, cc := range p.Containers() {
		if cc.Running() {
			if t, ok := cc.Current.Next(); ok {
				consider(cc, t)
			}
		}
	}
	for _, cc := range p.Containers() {
		if cc.pending {
			consider(cc, cc.startAt)
		}
	}
	return c, at
}

// Advance carries out every event of the pod due by now, in order, each at
// its own instant, and the starts each makes necessary (Reconcile).
func (p *Pod) Advance(now time.Time) {
	for {
		c, at := p.due()
		if c == nil || at.After(now) {
			return
		}
		if c.Running() {
			c.Current.Advance(at)
		} else {
			p.start(c, at)
		}
		p.Reconcile(at)
	}
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
	r := &Run{Instance: NewInstance(c.Behaviour, t, opts), ID: newID(), Image: c.Image}
	r.Advance(t)
	if c.Current != nil {
		r.Restarts = c.Current.Restarts + 1
		c.Previous = c.Current
	}
	c.Current = r
}

// nextBackOff moves the back-off of c on for an event at t and returns the
// delay: Initial at first and after 2×Max without back-off, then twice the
// previous delay, at most Max (flowcontrol.Backoff.Next).
func (c *PodContainer) nextBackOff(t time.Time, b BackOff) time.Duration {
	if c.backOff == 0 || t.Sub(c.backOffAt) > 2*b.Max {
		c.backOff = b.Initial
	} else {
		c.backOff = min(2*c.backOff, b.Max)
	}
	c.backOffAt = t
	return c.backOff
}

// Reconcile plans the starts the pod needs at now: the first init
// container that has not completed; once all have, every app container;
// restarts as the restart policy says, after a back-off. A stopped pod
// starts nothing. Advance reconciles after each event; a caller reconciles
// after it made or resumed the pod.
func (p *Pod) Reconcile(now time.Time) {
	if p.Stopped {
		return
	}
	for _, c := range p.Init {
		if c.Current != nil && c.Current.State() == InstanceExited && c.Current.ExitCode() == 0 {
			continue
		}
		p.ensureStart(c, now)
		return
	}
	for _, c := range p.App {
		p.ensureStart(c, now)
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
	case !p.restarts(c):
		return
	}
	finished := c.Current.FinishedAt()
	d := c.nextBackOff(finished, p.BackOff)
	c.pending, c.startAt = true, finished.Add(d)
	if c.startAt.Before(now) {
		c.startAt = now // resumed after a stop that outlasted the back-off
	}
	c.Waiting = &Waiting{
		Err:     pkgcontainer.ErrCrashLoopBackOff,
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", d, c.Name, p.Name, p.Namespace, p.UID),
		Since:   now, Until: c.startAt,
	}
}

// restarts reports whether the restart policy restarts c, which has exited:
// an init container only when it failed, unless the policy is Never; an app
// container always under Always (or no policy), on failure under OnFailure,
// never under Never.
func (p *Pod) restarts(c *PodContainer) bool {
	failed := c.Current.ExitCode() != 0
	if c.IsInit {
		return failed && p.RestartPolicy != v1.RestartPolicyNever
	}
	switch p.RestartPolicy {
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
