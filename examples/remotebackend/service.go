package remotebackend

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// The default crash-loop back-off of a Service: short, so that the
// conformance suite sees several restarts within a second or two. The
// kubelet's runtime uses 10s doubling to 5m (workload.KubeletBackOff).
const (
	DefaultBackOffInitial = 200 * time.Millisecond
	DefaultBackOffMax     = 2 * time.Second
)

// MinBackOffInitial is the shortest first back-off a Service accepts: every
// restart waits at least this long, which bounds the work the Service does
// for a container that exits at once.
const MinBackOffInitial = time.Millisecond

// DefaultGracePeriod is the grace period of a pod submitted without
// TerminationGracePeriodSeconds (the API server's default,
// v1.DefaultTerminationGracePeriodSeconds).
const DefaultGracePeriod = v1.DefaultTerminationGracePeriodSeconds * time.Second

// The reasons a ContainerView is Waiting with. Each is the text of the error
// a node agent knows it by: pkgcontainer.ErrCrashLoopBackOff,
// pkgcontainer.ErrRunContainer, workload.ErrImagePull and the kubelet's
// images.ErrInvalidImageName.
const (
	// ReasonCrashLoopBackOff: the container exited and the Service restarts
	// it once its back-off is over.
	ReasonCrashLoopBackOff = "CrashLoopBackOff"
	// ReasonRunContainerError: the latest start failed because the
	// executable is missing; the Service tries again after a back-off.
	ReasonRunContainerError = "RunContainerError"
	// ReasonErrImagePull: the latest start failed because the image cannot
	// be pulled; the Service tries again after a back-off.
	ReasonErrImagePull = "ErrImagePull"
	// ReasonInvalidImageName: the image is not a valid reference; the
	// Service tries again after a back-off (the pod's image may change).
	ReasonInvalidImageName = "InvalidImageName"
	// ReasonPostStartHookError: the container's postStart hook failed, the
	// Service killed the run and restarts it once its back-off is over
	// (workload.ErrPostStartHook).
	ReasonPostStartHookError = "PostStartHookError"
)

// BackOff is the crash-loop back-off of a Service: the first restart of a
// container waits Initial after its exit, every further one twice as long as
// the one before, at most Max. A container that has not been backed off for
// 2×Max starts again from Initial, as the kubelet's flowcontrol.Backoff
// does.
type BackOff struct {
	// Initial is the first delay (default DefaultBackOffInitial, at least
	// MinBackOffInitial).
	Initial time.Duration
	// Max caps the delay (default DefaultBackOffMax, at least Initial).
	Max time.Duration
}

// ServiceOptions configure a Service. The zero value is valid: the real
// clock and the default back-off.
type ServiceOptions struct {
	// Clock is the Service's time (default clock.RealClock{}). A test hands
	// in a k8s.io/utils/clock/testing.FakeClock and steps it.
	Clock clock.Clock
	// BackOff is the crash-loop back-off; zero fields take the defaults.
	BackOff BackOff
}

// Service is a simulated remote container service, the backend a remote
// provider sits in front of (think Azure Container Instances, AWS Fargate,
// or the Kubernetes cluster behind kuscia's K8sProvider). It accepts pod
// submissions, runs their containers by the workload vocabulary (package
// workload), restarts them itself as their pod's restart policy says, with a
// crash-loop back-off, and reports per container only its current run, its
// last termination and a restart count. It runs what the pod spec asks of
// whoever runs the containers, as the kubelet does (workload.Pod): probes
// (reported as Started and Ready; a failed liveness or startup probe kills
// the run, which restarts as the policy says), postStart and preStop hooks
// and restartable init containers (sidecars).
//
// A Service runs on its Clock and is evaluated lazily: whatever a container
// does (exit, get killed, be restarted) happens at the exact instant its
// behaviour and the back-off say, and every call first brings the Service up
// to the clock's present. Run keeps it up to date between calls, but
// nothing a caller can see depends on it.
//
// A Service is safe for concurrent use.
type Service struct {
	clock   clock.Clock
	backOff BackOff

	mu   sync.Mutex
	pods map[types.UID]*podState
	// changed is closed (and replaced) whenever a call changes the
	// schedule, waking Run and the Stop calls that wait.
	changed chan struct{}
	// watchers are the functions Watch registered, by their number.
	watchers    map[int]func(types.UID)
	nextWatcher int
	// reports are the UIDs of the pods whose view changed since the last
	// flush, for the watchers.
	reports []types.UID
}

// NewService returns an empty Service, or an error naming the option that
// is invalid.
func NewService(opts ServiceOptions) (*Service, error) {
	b := opts.BackOff
	if b.Initial == 0 {
		b.Initial = DefaultBackOffInitial
	}
	if b.Max == 0 {
		b.Max = max(DefaultBackOffMax, b.Initial)
	}
	switch {
	case b.Initial < MinBackOffInitial:
		return nil, fmt.Errorf("remotebackend: BackOff.Initial %s is below the minimum of %s", b.Initial, MinBackOffInitial)
	case b.Max < b.Initial:
		return nil, fmt.Errorf("remotebackend: BackOff.Max %s is below BackOff.Initial %s", b.Max, b.Initial)
	}
	c := opts.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	return &Service{clock: c, backOff: b, pods: map[types.UID]*podState{}, changed: make(chan struct{})}, nil
}

// PodView is what the Service reports of one pod.
type PodView struct {
	UID       types.UID
	Namespace string
	Name      string
	// SubmittedAt is when the pod was first submitted.
	SubmittedAt time.Time
	// GracePeriod is the pod's TerminationGracePeriodSeconds as submitted
	// (DefaultGracePeriod when it had none).
	GracePeriod time.Duration
	// Stopped is true once Stop was called, until the pod is submitted
	// again: nothing of it starts or restarts meanwhile.
	Stopped bool
	// InitContainers and Containers are in the order of the submitted
	// spec.
	InitContainers []ContainerView
	Containers     []ContainerView
}

// ContainerView is what the Service reports of one container: no history
// beyond the run before the current one.
type ContainerView struct {
	Name string
	// Image is the container's image as submitted, normalised
	// (docker.io/library/busybox:1.36 for busybox:1.36), or as submitted
	// when it is not a valid reference.
	Image string
	// Current is the newest run, nil until a start succeeds. An exited
	// run stays current until the next run starts.
	Current *Run
	// LastTermination is the run before Current, nil before the first
	// restart.
	LastTermination *Termination
	// RestartCount is the number of runs before Current.
	RestartCount int
	// Waiting says why the container is not running although the Service
	// means to start it, nil otherwise.
	Waiting *Waiting
	// Started is true while the current run runs and its startup probe,
	// if it has one, has succeeded. Ready is true while it runs, has
	// started and its readiness probe, if any, succeeds; for an init
	// container that is not a sidecar, once it has exited 0.
	Started, Ready bool
}

// RunState is the state of a Run.
type RunState string

// The states of a Run.
const (
	RunRunning RunState = "Running"
	RunExited  RunState = "Exited"
)

// Run is one run of a container.
type Run struct {
	// ID is unique across the Service and never reused.
	ID    string
	State RunState
	// Image is the normalised image the run was started from.
	Image     string
	StartedAt time.Time
	// FinishedAt, ExitCode and Reason are set once the run has exited.
	// Reason is "Completed" for exit code 0 and "Error" otherwise.
	FinishedAt time.Time
	ExitCode   int
	Reason     string
	// HookFailure says how the run's postStart hook failed when the
	// Service killed the run for it, "" otherwise.
	HookFailure string
}

// Termination is how a run ended.
type Termination struct {
	RunID      string
	ExitCode   int
	Reason     string
	StartedAt  time.Time
	FinishedAt time.Time
}

// Waiting says why a container is not running: one of the Reason constants
// and a message.
type Waiting struct {
	Reason  string
	Message string
	// Until is when the Service tries again.
	Until time.Time
}

// ErrInvalidPod is wrapped by the errors Apply returns for a pod it rejects.
var ErrInvalidPod = errors.New("invalid pod")

// Apply submits pod, or updates the pod of the same UID: the Service copies
// it and drives it from then on. Like the API server, it lets an update
// change only the images of the containers; the rest of a resubmission is
// ignored, and one that adds, removes or renames containers is rejected. A
// container whose image changes is restarted with the new image (a running
// one after stopping it with the pod's grace period); one that is waiting
// to be retried is retried at once. Submitting a stopped pod resumes it:
// its containers restart as its restart policy says.
//
// Apply returns the pod's view once the starts it triggered have been
// attempted. A nil pod, one without UID, a container without name, two
// containers of the same name, an app container with a restart policy of
// its own and an init container with one other than Always (container
// restart rules, which the Service does not support) are rejected with an
// error wrapping ErrInvalidPod, and nothing changes; an init container with
// restartPolicy Always is a sidecar. A done ctx returns its error.
func (s *Service) Apply(ctx context.Context, pod *v1.Pod) (PodView, error) {
	if err := ctx.Err(); err != nil {
		return PodView{}, err
	}
	if err := validatePod(pod); err != nil {
		return PodView{}, err
	}
	defer s.flush()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	p := s.pods[pod.UID]
	if p == nil {
		p = newPodState(pod, now, s.backOff)
		s.pods[pod.UID] = p
	} else {
		s.advance(p, now)
		if err := p.update(pod, now); err != nil {
			return PodView{}, err
		}
	}
	p.Reconcile(now)
	s.advance(p, now)
	s.notify()
	return p.view(), nil
}

// Pod returns the view of the pod with the given UID, and whether the
// Service knows it. A done ctx returns its error.
func (s *Service) Pod(ctx context.Context, uid types.UID) (PodView, bool, error) {
	if err := ctx.Err(); err != nil {
		return PodView{}, false, err
	}
	defer s.flush()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pods[uid]
	if p == nil {
		return PodView{}, false, nil
	}
	s.advance(p, s.clock.Now())
	return p.view(), true, nil
}

// List returns the views of every pod the Service knows, in no particular
// order. A done ctx returns its error.
func (s *Service) List(ctx context.Context) ([]PodView, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	defer s.flush()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	out := make([]PodView, 0, len(s.pods))
	for _, p := range s.pods {
		s.advance(p, now)
		out = append(out, p.view())
	}
	return out, nil
}

// Stop stops the pod with the given UID: nothing of it starts or restarts
// any more, and each running container runs its preStop hook, then gets
// SIGTERM with what is left of the grace period; sidecars get it once the
// app containers and the later sidecars have exited, within the grace
// period. A container exits on SIGTERM as its handler says (at once, with
// 143 when it has none: workload.Behaviour.Shutdown, as a host process);
// one that ignores it, or whose handler outlasts the grace period, is
// killed when the grace period is over (exit code 137). grace nil means the
// pod's own (PodView.GracePeriod); a negative one counts as 0. A second
// Stop never lengthens the grace period.
//
// Stop returns nil once no container of the pod runs, and at once for a pod
// the Service does not know. When ctx is done first it returns ctx's error;
// the pod still stops at the end of its grace period. It returns an error
// when the pod is submitted again while it waits.
func (s *Service) Stop(ctx context.Context, uid types.UID, grace *time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	p := s.pods[uid]
	if p == nil {
		s.mu.Unlock()
		return nil
	}
	now := s.clock.Now()
	s.advance(p, now)
	g := p.GracePeriod
	if grace != nil {
		g = max(*grace, 0)
	}
	p.Stop(now, g)
	gen := p.generation
	s.advance(p, now)
	s.notify()
	s.mu.Unlock()
	s.flush()

	for {
		s.mu.Lock()
		now := s.clock.Now()
		p := s.pods[uid]
		if p == nil {
			s.mu.Unlock()
			return nil // deleted meanwhile: nothing runs
		}
		if p.generation != gen {
			s.mu.Unlock()
			return fmt.Errorf("remotebackend: pod %s/%s was submitted again while it was being stopped", p.Namespace, p.Name)
		}
		s.advance(p, now)
		running := p.AnyRunning()
		due, _ := p.Next()
		changed := s.changed
		s.mu.Unlock()
		s.flush()
		if !running {
			return nil
		}
		// Every running container has a deadline once the pod is stopped
		// (its end, or a sidecar's turn), which is the pod's next event or
		// comes after it (a probe, the end of a preStop hook); a later
		// Stop, an update or a Delete may bring it forward.
		t := s.clock.NewTimer(max(due.Sub(now), 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-changed:
			t.Stop()
		case <-t.C():
		}
	}
}

// Delete forgets the pod with the given UID, killing at once whatever of it
// still runs. Deleting a pod the Service does not know returns nil. A done
// ctx returns its error.
func (s *Service) Delete(ctx context.Context, uid types.UID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	defer s.flush()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pods[uid] != nil && len(s.watchers) > 0 {
		s.reports = append(s.reports, uid) // an informer's delete event
	}
	delete(s.pods, uid)
	s.notify()
	return nil
}

// Run keeps the Service up to date with its clock: it carries out every
// exit, kill and restart when it is due rather than at the next call. It
// returns ctx's error once ctx is done. Calls work without it, and several
// Run calls at once do no harm.
func (s *Service) Run(ctx context.Context) error {
	return s.run(ctx, nil)
}

// run is Run that also returns nil once stop is closed.
func (s *Service) run(ctx context.Context, stop <-chan struct{}) error {
	for {
		s.mu.Lock()
		now := s.clock.Now()
		var next time.Time
		for _, p := range s.pods {
			s.advance(p, now)
			if t, ok := p.Next(); ok && (next.IsZero() || t.Before(next)) {
				next = t
			}
		}
		changed := s.changed
		s.mu.Unlock()
		s.flush()
		var timer clock.Timer
		var due <-chan time.Time
		if !next.IsZero() {
			timer = s.clock.NewTimer(next.Sub(now))
			due = timer.C()
		}
		var err error
		done := true
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-stop:
		case <-changed:
			done = false
		case <-due:
			done = false
		}
		if timer != nil {
			timer.Stop()
		}
		if done {
			return err
		}
	}
}

// Watch registers fn to be called with a pod's UID whenever what the
// Service reports of the pod (its PodView) changes, and when the pod is
// deleted, as a backend's informer calls its update and delete handlers
// (kuscia's K8sProvider registers handleBackendPodChanged so,
// k8s_provider.go NewK8sProvider). A change is seen when the Service
// carries it out: at its own instant while Run runs (Run's timers are set
// to the pods' next events, workload.Pod.Next), else at the next call
// that brings the pod up to date; changes carried out together make one
// call, and an event that changes nothing (a probe with the same result)
// makes none. fn is called without the Service's lock held, from the
// goroutine that brought the Service up to date (Run's, or a caller's,
// within Apply, Pod, List, Stop or Delete); it must return quickly and may
// call the Service. The function Watch returns ends the watch.
func (s *Service) Watch(fn func(uid types.UID)) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watchers == nil {
		s.watchers = map[int]func(types.UID){}
	}
	id := s.nextWatcher
	s.nextWatcher++
	s.watchers[id] = fn
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.watchers, id)
	}
}

// advance brings p up to now and notes for the watchers whether its view
// changed. Call with s.mu held, and flush after releasing it.
func (s *Service) advance(p *podState, now time.Time) {
	p.Advance(now)
	if len(s.watchers) == 0 {
		p.reported = nil // unwatched: the first watcher's first look reports
		return
	}
	v := p.view()
	if p.reported != nil && reflect.DeepEqual(*p.reported, v) {
		return
	}
	p.reported = &v
	if !slices.Contains(s.reports, p.UID) {
		s.reports = append(s.reports, p.UID)
	}
}

// flush calls the watchers with the pods whose view changed. Call without
// s.mu held.
func (s *Service) flush() {
	s.mu.Lock()
	uids := s.reports
	s.reports = nil
	fns := make([]func(types.UID), 0, len(s.watchers))
	for _, fn := range s.watchers {
		fns = append(fns, fn)
	}
	s.mu.Unlock()
	for _, uid := range uids {
		for _, fn := range fns {
			fn(uid)
		}
	}
}

// notify wakes Run and the waiting Stop calls. Call with s.mu held.
func (s *Service) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}
