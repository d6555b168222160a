package kubebackend

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/workload"
)

// simPod is the simulated kubelet's record of one backend pod. Every field
// is guarded by Kubelet.mu.
type simPod struct {
	uid       types.UID
	name      string
	ip        string
	policy    v1.RestartPolicy
	init, app []*simContainer
	// stopping: the pod has a deletionTimestamp; its containers are being
	// stopped and none starts again.
	stopping bool
	// object is the latest version of the pod the Kubelet has seen (its
	// spec and the status last written).
	object *v1.Pod
	// written is the status last written (as the API keeps it); deleting
	// is set once the final delete has been sent.
	written  *v1.PodStatus
	deleting bool
	// retryAt: an API call failed; the Kubelet repeats it then.
	retryAt time.Time
}

// simContainer is one container of a simPod.
type simContainer struct {
	name      string
	isInit    bool
	image     string
	spec      *v1.Container // as in the pod the Kubelet read, never modified
	behaviour workload.Behaviour
	current   *simRun
	previous  *simRun
	// pending: a start is due at startAt; waiting says why it has not
	// happened yet (nil when it is due at once).
	pending bool
	startAt time.Time
	waiting *simWaiting
	// backOff is the delay of the latest back-off, set at backOffAt.
	backOff   time.Duration
	backOffAt time.Time
	// replace: the running run is stopped because the image changed; the
	// next run starts once it has exited, whatever the restart policy.
	replace bool
}

// simWaiting is why a container waits to be started: a crash-loop
// back-off, or the failure of its latest start, until the next attempt.
type simWaiting struct {
	err     error
	message string
	// pull: an image pull failed at since; the Waiting reason turns from
	// ErrImagePull into ImagePullBackOff half-way to the next attempt,
	// the way the kubelet shows a pull it backs off.
	pull  bool
	since time.Time
	until time.Time
}

// simRun is one run (container instance).
type simRun struct {
	id         string
	image      string
	restarts   int
	running    bool
	startedAt  time.Time
	finishedAt time.Time
	exitCode   int
	reason     string
	message    string // the termination message, once exited
	// ignoresSIGTERM, and what is still to happen: exitAt (zero: runs
	// until killed) with exitWith, killAt (zero: not being killed).
	ignoresSIGTERM bool
	exitAt         time.Time
	exitWith       int
	killAt         time.Time
}

func newSimPod(pod *v1.Pod, ip string) *simPod {
	p := &simPod{uid: pod.UID, name: pod.Name, ip: ip, policy: pod.Spec.RestartPolicy, object: pod}
	for i := range pod.Spec.InitContainers {
		p.init = append(p.init, newSimContainer(&pod.Spec.InitContainers[i], true))
	}
	for i := range pod.Spec.Containers {
		p.app = append(p.app, newSimContainer(&pod.Spec.Containers[i], false))
	}
	return p
}

func newSimContainer(c *v1.Container, isInit bool) *simContainer {
	return &simContainer{name: c.Name, isInit: isInit, image: c.Image, spec: c, behaviour: workload.OfEnv(c)}
}

func (p *simPod) containers() []*simContainer { return slices.Concat(p.init, p.app) }

func (c *simContainer) running() bool { return c.current != nil && c.current.running }

// observe applies a new version of the pod object: a changed image (the one
// change of a container the API server allows) and the start of a graceful
// deletion.
func (p *simPod) observe(pod *v1.Pod, now time.Time) {
	p.object = pod
	for _, spec := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		for _, c := range p.containers() {
			if c.name != spec.Name || c.image == spec.Image {
				continue
			}
			// A changed spec starts a new back-off, as the kubelet's
			// back-off key includes the container's hash.
			c.image, c.backOff = spec.Image, 0
			switch {
			case c.running():
				// Restarted whatever the restart policy, as the
				// kubelet restarts a container whose spec changed
				// (computePodActions).
				c.replace = true
				p.signal(c, now, gracePeriod(pod, nil))
			case c.pending:
				c.startAt, c.waiting = now, nil
			}
		}
	}
	if pod.DeletionTimestamp != nil {
		p.stop(now, gracePeriod(pod, pod.DeletionGracePeriodSeconds))
	}
}

// gracePeriod is the grace period of pod's deletion: deletion, else the
// pod's TerminationGracePeriodSeconds, else the API server's default.
func gracePeriod(pod *v1.Pod, deletion *int64) time.Duration {
	switch {
	case deletion != nil:
		return time.Duration(max(*deletion, 0)) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(max(*pod.Spec.TerminationGracePeriodSeconds, 0)) * time.Second
	}
	return v1.DefaultTerminationGracePeriodSeconds * time.Second
}

// stop stops every container at now with grace (a later, shorter grace
// period shortens it), and starts none again.
func (p *simPod) stop(now time.Time, grace time.Duration) {
	p.stopping = true
	for _, c := range p.containers() {
		c.pending, c.waiting, c.replace = false, nil, false
		if c.running() {
			p.signal(c, now, grace)
		}
	}
}

// signal sends SIGTERM to the running container c at now: it exits at once
// with 143 unless it ignores SIGTERM, in which case it is killed with 137
// when grace is over.
func (p *simPod) signal(c *simContainer, now time.Time, grace time.Duration) {
	r := c.current
	if !r.ignoresSIGTERM {
		c.exit(now, workload.ExitCodeSIGTERM)
		return
	}
	if k := now.Add(grace); r.killAt.IsZero() || k.Before(r.killAt) {
		r.killAt = k
	}
}

// The kinds of events of a pod.
type eventKind int

const (
	evExit eventKind = iota
	evKill
	evStart
)

// due returns the pod's earliest event: the container, when and what; c is
// nil when nothing is scheduled. Exits come before starts of the same
// instant, and containers in spec order.
func (p *simPod) due() (c *simContainer, at time.Time, kind eventKind) {
	consider := func(cc *simContainer, t time.Time, k eventKind) {
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

// nextChange returns when the pod's status changes next on its own, after
// now: its earliest event, or a Waiting reason turning into
// ImagePullBackOff (once that has happened it is no longer a change to
// come: the kubelet's loop would otherwise wake at once, again and again,
// until the next pull).
func (p *simPod) nextChange(now time.Time) (time.Time, bool) {
	c, at, _ := p.due()
	ok := c != nil
	for _, cc := range p.containers() {
		if w := cc.waiting; w != nil && w.pull {
			if t := w.backOffShownAt(); t.After(now) && (!ok || t.Before(at)) {
				at, ok = t, true
			}
		}
	}
	return at, ok
}

func (w *simWaiting) backOffShownAt() time.Time { return w.since.Add(w.until.Sub(w.since) / 2) }

// advance carries out every event due by now, in order, each at its own
// instant.
func (p *simPod) advance(now time.Time, b BackOff) {
	for {
		c, at, kind := p.due()
		if c == nil || at.After(now) {
			return
		}
		switch kind {
		case evExit:
			c.exit(at, c.current.exitWith)
		case evKill:
			c.exit(at, workload.ExitCodeSIGKILL)
		case evStart:
			p.start(c, at, b)
		}
		p.reconcile(at, b)
	}
}

// exit ends the current run of c at t with code, with the termination
// message its command left.
func (c *simContainer) exit(t time.Time, code int) {
	r := c.current
	r.running, r.finishedAt, r.exitCode, r.reason = false, t, code, workload.ExitReason(code)
	r.message = c.behaviour.TerminationMessage(c.spec, t.Sub(r.startedAt), code)
	r.exitAt, r.killAt = time.Time{}, time.Time{}
}

// start attempts the start of c at t: a new run, or a failure retried after
// a back-off.
func (p *simPod) start(c *simContainer, t time.Time, b BackOff) {
	c.pending = false
	var fail error
	msg, pull := "", false
	switch {
	case workload.ImageMissing(c.image) && c.spec.ImagePullPolicy == v1.PullNever:
		fail, msg = workload.ErrImageNeverPull, fmt.Sprintf("Container image %q is not present with pull policy of Never", c.image)
	case workload.ImageMissing(c.image):
		fail, pull = workload.ErrImagePull, true
		msg = fmt.Sprintf("Failed to pull image %q: the registry %s does not resolve", c.image, workload.MissingImageDomain)
	case c.behaviour.FailsToStart():
		exe := c.behaviour.MissingExecutable
		fail, msg = pkgcontainer.ErrRunContainer, fmt.Sprintf("exec: %q: stat %s: no such file or directory", exe, exe)
	}
	if fail != nil {
		d := c.nextBackOff(t, b)
		c.pending, c.startAt = true, t.Add(d)
		c.waiting = &simWaiting{err: fail, message: msg, pull: pull, since: t, until: c.startAt}
		return
	}
	c.waiting, c.replace = nil, false
	r := &simRun{id: newRunID(), image: c.image, running: true, startedAt: t, ignoresSIGTERM: c.behaviour.IgnoresSIGTERM}
	if c.current != nil {
		r.restarts = c.current.restarts + 1
		c.previous = c.current
	}
	if !c.behaviour.RunsUntilKilled {
		r.exitAt, r.exitWith = t.Add(c.behaviour.RunFor), c.behaviour.ExitCode
	}
	c.current = r
}

// nextBackOff moves the back-off of c on for an event at t and returns the
// delay: Initial at first and after 2×Max without back-off, then twice the
// previous delay, at most Max (flowcontrol.Backoff.Next).
func (c *simContainer) nextBackOff(t time.Time, b BackOff) time.Duration {
	if c.backOff == 0 || t.Sub(c.backOffAt) > 2*b.Max {
		c.backOff = b.Initial
	} else {
		c.backOff = min(2*c.backOff, b.Max)
	}
	c.backOffAt = t
	return c.backOff
}

// reconcile schedules the starts the pod needs at now: the first init
// container that has not completed; once all have, every app container;
// restarts as the restart policy says, after a back-off. A stopping pod
// starts nothing.
func (p *simPod) reconcile(now time.Time, b BackOff) {
	if p.stopping {
		return
	}
	for _, c := range p.init {
		if c.current != nil && !c.current.running && c.current.exitCode == 0 {
			continue
		}
		p.ensureStart(c, now, b)
		return
	}
	for _, c := range p.app {
		p.ensureStart(c, now, b)
	}
}

// ensureStart schedules a start of c unless it runs or one is scheduled:
// at once for a container that never ran or whose image changed, after the
// back-off for one that exited and that the restart policy restarts.
func (p *simPod) ensureStart(c *simContainer, now time.Time, b BackOff) {
	switch {
	case c.pending || c.running():
		return
	case c.current == nil || c.replace:
		c.pending, c.startAt = true, now
		return
	case !p.restarts(c):
		return
	}
	d := c.nextBackOff(c.current.finishedAt, b)
	c.pending, c.startAt = true, c.current.finishedAt.Add(d)
	if c.startAt.Before(now) {
		c.startAt = now
	}
	c.waiting = &simWaiting{
		err:     pkgcontainer.ErrCrashLoopBackOff,
		message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", d, c.name, p.name, p.object.Namespace, p.uid),
		since:   now, until: c.startAt,
	}
}

// restarts reports whether the restart policy restarts c, which has exited:
// an init container only when it failed, unless the policy is Never; an app
// container always under Always, on failure under OnFailure, never under
// Never.
func (p *simPod) restarts(c *simContainer) bool {
	failed := c.current.exitCode != 0
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

// anyRunning reports whether a container of the pod runs.
func (p *simPod) anyRunning() bool {
	return slices.ContainsFunc(p.containers(), (*simContainer).running)
}

// runtimeStatus is what the simulated runtime knows of the pod at now, as a
// kubelet's runtime reports it: the current and the previous run of each
// container (exact times), and the ReasonCache of its latest starts.
func (p *simPod) runtimeStatus(now time.Time) (*pkgcontainer.PodStatus, *kri.ReasonCache) {
	st := &pkgcontainer.PodStatus{ID: p.uid, Name: p.name, Namespace: p.object.Namespace, IPs: []string{p.ip}}
	reasons := kri.NewReasonCacheWithSize(len(p.containers()) + 1)
	for _, c := range p.containers() {
		for _, r := range []*simRun{c.previous, c.current} {
			if r != nil {
				st.ContainerStatuses = append(st.ContainerStatuses, r.status(c.name))
			}
		}
		if w := c.waiting; w != nil {
			err := w.err
			if w.pull && !now.Before(w.backOffShownAt()) {
				err = ErrImagePullBackOff
			}
			r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.name)
			r.Fail(err, w.message)
			reasons.Update(p.uid, pkgcontainer.PodSyncResult{SyncResults: []*pkgcontainer.SyncResult{r}})
		}
	}
	return st, reasons
}

func (r *simRun) status(name string) *pkgcontainer.Status {
	st := &pkgcontainer.Status{
		ID:   pkgcontainer.ContainerID{Type: RuntimeType, ID: r.id},
		Name: name, Image: r.image, ImageRef: imageRef(r.image), RestartCount: r.restarts,
		CreatedAt: r.startedAt, StartedAt: r.startedAt, State: pkgcontainer.ContainerStateRunning,
	}
	if !r.running {
		st.State, st.FinishedAt, st.ExitCode, st.Reason, st.Message = pkgcontainer.ContainerStateExited, r.finishedAt, r.exitCode, r.reason, r.message
	}
	return st
}

// imageRef is a made-up digest reference of image, stable per image.
func imageRef(image string) string {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(image); i++ {
		h = (h ^ uint64(image[i])) * 1099511628211
	}
	return fmt.Sprintf("sha256:%016x", h)
}

// newRunID returns a random run ID, 32 hex digits.
func newRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
