package remotebackend

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kri-kit/testkit/workload"
)

// podState is the Service's record of one pod. Every field is guarded by
// Service.mu.
type podState struct {
	uid         types.UID
	namespace   string
	name        string
	submittedAt time.Time
	policy      v1.RestartPolicy
	grace       time.Duration
	init, app   []*containerState
	stopped     bool
	// generation grows whenever a stopped pod is submitted again, so that
	// Stop notices that it was resumed while it waited.
	generation int
}

// containerState is the Service's record of one container.
type containerState struct {
	name      string
	isInit    bool
	image     string // as submitted
	behaviour workload.Behaviour
	current   *runState
	last      *Termination
	restarts  int
	// pending: the Service (re)starts the container at startAt, and
	// waiting says why it is not running meanwhile (nil for a start that
	// is due at once).
	pending bool
	startAt time.Time
	waiting *Waiting
	// backOff is the delay of the latest back-off, set at backOffAt.
	backOff   time.Duration
	backOffAt time.Time
	// replace: the running run is being stopped because the image
	// changed; the next run starts as soon as it has exited, whatever
	// the restart policy.
	replace bool
}

// runState is one run and what is still to happen to it.
type runState struct {
	Run
	ignoresSIGTERM bool
	// exitAt is when the run exits on its own with exitCode (zero: it
	// runs until killed); killAt is when it is killed (zero: not yet
	// asked to stop, or it exits on SIGTERM).
	exitAt   time.Time
	exitCode int
	killAt   time.Time
}

func (r *runState) termination() *Termination {
	return &Termination{RunID: r.ID, ExitCode: r.ExitCode, Reason: r.Reason, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
}

func validatePod(pod *v1.Pod) error {
	if pod == nil {
		return fmt.Errorf("remotebackend: %w: nil pod", ErrInvalidPod)
	}
	if pod.UID == "" {
		return fmt.Errorf("remotebackend: %w: pod %s/%s has no UID", ErrInvalidPod, pod.Namespace, pod.Name)
	}
	seen := map[string]bool{}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if c.Name == "" {
			return fmt.Errorf("remotebackend: %w: pod %s/%s has a container without name", ErrInvalidPod, pod.Namespace, pod.Name)
		}
		if c.RestartPolicy != nil {
			return fmt.Errorf("remotebackend: %w: pod %s/%s: container %q has its own restart policy (a sidecar or restart rules), which the Service does not support", ErrInvalidPod, pod.Namespace, pod.Name, c.Name)
		}
		if seen[c.Name] {
			return fmt.Errorf("remotebackend: %w: pod %s/%s has two containers named %q", ErrInvalidPod, pod.Namespace, pod.Name, c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

func newPodState(pod *v1.Pod, now time.Time) *podState {
	p := &podState{
		uid: pod.UID, namespace: pod.Namespace, name: pod.Name,
		submittedAt: now, policy: pod.Spec.RestartPolicy, grace: DefaultGracePeriod,
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		p.grace = time.Duration(max(*g, 0)) * time.Second
	}
	for i := range pod.Spec.InitContainers {
		p.init = append(p.init, newContainerState(&pod.Spec.InitContainers[i], true))
	}
	for i := range pod.Spec.Containers {
		p.app = append(p.app, newContainerState(&pod.Spec.Containers[i], false))
	}
	return p
}

func newContainerState(c *v1.Container, isInit bool) *containerState {
	return &containerState{name: c.Name, isInit: isInit, image: c.Image, behaviour: workload.OfEnv(c)}
}

func (p *podState) containers() []*containerState { return slices.Concat(p.init, p.app) }

func (c *containerState) running() bool { return c.current != nil && c.current.State == RunRunning }

// update applies a resubmission of the pod: image changes, and the end of a
// stop.
func (p *podState) update(pod *v1.Pod, now time.Time) error {
	if !sameNames(p.init, pod.Spec.InitContainers) || !sameNames(p.app, pod.Spec.Containers) {
		return fmt.Errorf("remotebackend: %w: pod %s/%s was submitted with other containers than before; only their images may change", ErrInvalidPod, p.namespace, p.name)
	}
	if p.stopped {
		p.stopped = false
		p.generation++
	}
	byName := map[string]*containerState{}
	for _, c := range p.containers() {
		byName[c.name] = c
	}
	for _, spec := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		c := byName[spec.Name]
		if spec.Image == c.image {
			continue
		}
		// A changed spec starts a new back-off (the kubelet's back-off
		// key includes the container's hash).
		c.image, c.backOff = spec.Image, 0
		switch {
		case c.running():
			// Restarted whatever the restart policy, as the kubelet
			// restarts a container whose definition changed
			// (computePodActions).
			c.replace = true
			p.signal(c, now, p.grace)
		case c.pending:
			c.startAt = now
		}
	}
	return nil
}

func sameNames(have []*containerState, want []v1.Container) bool {
	if len(have) != len(want) {
		return false
	}
	names := map[string]bool{}
	for _, c := range have {
		names[c.name] = true
	}
	for _, c := range want {
		if !names[c.Name] {
			return false
		}
	}
	return true
}

// signal sends SIGTERM to the running container c at now: it exits at once
// unless it ignores SIGTERM, in which case it is killed after grace (or
// earlier, if an earlier signal said so).
func (p *podState) signal(c *containerState, now time.Time, grace time.Duration) {
	r := c.current
	if !r.ignoresSIGTERM {
		p.exit(c, now, workload.ExitCodeSIGTERM)
		return
	}
	if k := now.Add(grace); r.killAt.IsZero() || k.Before(r.killAt) {
		r.killAt = k
	}
}

// stop stops the pod at now with the grace period grace.
func (p *podState) stop(now time.Time, grace time.Duration) {
	p.stopped = true
	for _, c := range p.containers() {
		c.pending, c.waiting, c.replace = false, nil, false
		if c.running() {
			p.signal(c, now, grace)
		}
	}
}

// The kinds of events of a pod.
type eventKind int

const (
	evExit eventKind = iota
	evKill
	evStart
)

// due returns the pod's earliest event: the container and when and what
// happens to it; c is nil when nothing is scheduled. Exits come before
// starts of the same instant, and containers in spec order.
func (p *podState) due() (c *containerState, at time.Time, kind eventKind) {
	consider := func(cc *containerState, t time.Time, k eventKind) {
		if c == nil || t.Before(at) {
			c, at, kind = cc, t, k
		}
	}
	for _, cc := range p.containers() {
		if !cc.running() {
			continue
		}
		r := cc.current
		switch {
		case !r.exitAt.IsZero() && (r.killAt.IsZero() || !r.killAt.Before(r.exitAt)):
			consider(cc, r.exitAt, evExit)
		case !r.killAt.IsZero():
			consider(cc, r.killAt, evKill)
		}
	}
	for _, cc := range p.containers() {
		if cc.pending {
			consider(cc, cc.startAt, evStart)
		}
	}
	return c, at, kind
}

// nextEvent returns when the pod's earliest event is due, if any.
func (p *podState) nextEvent() (time.Time, bool) {
	c, at, _ := p.due()
	return at, c != nil
}

// nextExit reports whether a container of the pod runs, and the earliest
// instant one of them exits or is killed (zero when none will).
func (p *podState) nextExit() (at time.Time, running bool) {
	for _, c := range p.containers() {
		if !c.running() {
			continue
		}
		running = true
		for _, t := range []time.Time{c.current.exitAt, c.current.killAt} {
			if !t.IsZero() && (at.IsZero() || t.Before(at)) {
				at = t
			}
		}
	}
	return at, running
}

// advance carries out every event of p due by now, in order, each at its
// own instant.
func (s *Service) advance(p *podState, now time.Time) {
	for {
		c, at, kind := p.due()
		if c == nil || at.After(now) {
			return
		}
		switch kind {
		case evExit:
			p.exit(c, at, c.current.exitCode)
		case evKill:
			p.exit(c, at, workload.ExitCodeSIGKILL)
		case evStart:
			p.start(c, at, s.backOff)
		}
		p.reconcile(at, s.backOff)
	}
}

// exit ends the current run of c at t with code.
func (p *podState) exit(c *containerState, t time.Time, code int) {
	r := c.current
	r.State, r.FinishedAt, r.ExitCode, r.Reason = RunExited, t, code, workload.ExitReason(code)
	r.exitAt, r.killAt = time.Time{}, time.Time{}
}

// start attempts the start of c at t: a new run, or a failure the Service
// retries after a back-off.
func (p *podState) start(c *containerState, t time.Time, b BackOff) {
	c.pending = false
	image, err := normalizeImage(c.image)
	reason, msg := "", ""
	switch {
	case err != nil:
		reason, msg = ReasonInvalidImageName, fmt.Sprintf("Failed to apply default image tag %q: %v", c.image, err)
	case workload.ImageMissing(c.image):
		reason, msg = ReasonErrImagePull, fmt.Sprintf("Failed to pull image %q: the registry %s does not resolve", c.image, workload.MissingImageDomain)
	case c.behaviour.FailsToStart():
		exe := c.behaviour.MissingExecutable
		reason, msg = ReasonRunContainerError, fmt.Sprintf("exec: %q: stat %s: no such file or directory", exe, exe)
	}
	if reason != "" {
		d := c.nextBackOff(t, b)
		c.pending, c.startAt = true, t.Add(d)
		c.waiting = &Waiting{Reason: reason, Message: msg, Until: c.startAt}
		return
	}
	c.waiting, c.replace = nil, false
	if c.current != nil {
		c.last = c.current.termination()
		c.restarts++
	}
	r := &runState{Run: Run{ID: newRunID(), State: RunRunning, Image: image, StartedAt: t}, ignoresSIGTERM: c.behaviour.IgnoresSIGTERM}
	if !c.behaviour.RunsUntilKilled {
		r.exitAt, r.exitCode = t.Add(c.behaviour.RunFor), c.behaviour.ExitCode
	}
	c.current = r
}

// nextBackOff moves the back-off of c on for an event at t and returns the
// delay: Initial at first and after 2×Max without back-off, then twice the
// previous delay, at most Max (flowcontrol.Backoff.Next).
func (c *containerState) nextBackOff(t time.Time, b BackOff) time.Duration {
	if c.backOff == 0 || t.Sub(c.backOffAt) > 2*b.Max {
		c.backOff = b.Initial
	} else {
		c.backOff = min(2*c.backOff, b.Max)
	}
	c.backOffAt = t
	return c.backOff
}

// reconcile schedules the starts the pod needs at now: the first init
// container that has not completed, once every init container has
// completed each app container, restarts as the restart policy says. A
// stopped pod starts nothing.
func (p *podState) reconcile(now time.Time, b BackOff) {
	if p.stopped {
		return
	}
	for _, c := range p.init {
		if c.current != nil && c.current.State == RunExited && c.current.ExitCode == 0 {
			continue
		}
		p.ensureStart(c, now, b)
		return
	}
	for _, c := range p.app {
		p.ensureStart(c, now, b)
	}
}

// ensureStart schedules a start of c unless it runs or one is scheduled: at
// once for a container that never ran or whose image changed, after the
// back-off for one that exited and that the restart policy restarts.
func (p *podState) ensureStart(c *containerState, now time.Time, b BackOff) {
	switch {
	case c.pending || c.running():
		return
	case c.current == nil || c.replace:
		c.pending, c.startAt = true, now
		return
	case !p.restarts(c):
		return
	}
	d := c.nextBackOff(c.current.FinishedAt, b)
	c.pending, c.startAt = true, c.current.FinishedAt.Add(d)
	if c.startAt.Before(now) {
		c.startAt = now // resumed after a stop that outlasted the back-off
	}
	c.waiting = &Waiting{
		Reason:  ReasonCrashLoopBackOff,
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", d, c.name, p.name, p.namespace, p.uid),
		Until:   c.startAt,
	}
}

// restarts reports whether the restart policy restarts c, which has exited:
// an init container only when it failed, unless the policy is Never; an app
// container always under Always (or no policy), on failure under
// OnFailure, never under Never.
func (p *podState) restarts(c *containerState) bool {
	failed := c.current.ExitCode != 0
	if c.isInit {
		return failed && p.policy != v1.RestartPolicyNever
	}
	switch p.policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return failed
	default:
		return true
	}
}

// view returns a copy of what the Service reports of p.
func (p *podState) view() PodView {
	v := PodView{
		UID: p.uid, Namespace: p.namespace, Name: p.name,
		SubmittedAt: p.submittedAt, GracePeriod: p.grace, Stopped: p.stopped,
	}
	for _, c := range p.init {
		v.InitContainers = append(v.InitContainers, c.view())
	}
	for _, c := range p.app {
		v.Containers = append(v.Containers, c.view())
	}
	return v
}

func (c *containerState) view() ContainerView {
	v := ContainerView{Name: c.name, Image: c.image, RestartCount: c.restarts}
	if image, err := normalizeImage(c.image); err == nil {
		v.Image = image
	}
	if c.current != nil {
		r := c.current.Run
		v.Current = &r
	}
	if c.last != nil {
		t := *c.last
		v.LastTermination = &t
	}
	if c.waiting != nil {
		w := *c.waiting
		v.Waiting = &w
	}
	return v
}

// newRunID returns a random run ID, 32 hex digits.
func newRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
