// Package simprovider is the kit's reference virtual-kubelet provider: an
// in-memory simulation of a backend that runs pods, offered as
// node.PodLifecycleHandler (New, a sync provider: VK polls GetPodStatus) or
// as node.PodLifecycleHandler and node.PodNotifier (NewAsync: it reports
// every change through NotifyPods), and a node.NodeProvider (NewNode).
//
// A pod's containers start when CreatePod returns and play what their
// command says (the vocabulary below) on the provider's clock; DeletePod
// sends them SIGTERM, forgets the pod at once (GetPod answers NotFound) and
// reports, once every container has ended, a terminal status (async
// variant). Every answer is a copy the provider never changes afterwards.
// Its clock is the time package, so inside a testing/synctest bubble it
// runs on the bubble's; WithContext stops its timers when the context is
// done.
//
// # Vocabulary
//
// A container's argv is its Command followed by its Args; a subset of the
// vocabulary of the kit's package workload (github.com/kri-kit/testkit/
// sim/workload), read by a parser of this package's own, and that a real sh
// runs to the same effect. From workload it takes the $(VAR) expansion
// (ExpandVars), the Waiting reasons (ErrRunContainer, ErrCrashLoopBackOff),
// the crash-loop back-off's figures (KubeletBackOff) and the termination
// message (Behaviour.TerminationMessage, with the kubelet's limits):
//
//	(no command), /pause,     runs until stopped
//	sleep infinity
//	sleep N                   runs N seconds (decimals allowed), exits 0
//	sh -c "STATEMENTS"        statements separated by ';' or newlines, in
//	                          order: sleep N, exit N (exits N, after the
//	                          sleeps before it), sleep infinity and
//	                          sleep infinity & wait (runs until stopped),
//	                          and trap 'ACTION' TERM, which says what
//	                          SIGTERM does (below), echo -n WORD > PATH
//	                          (writes WORD to the file PATH) and
//	                          echo LINE (prints LINE to its log); the
//	                          first exit or sleep infinity ends it
//	/nonexistent/...          the executable is missing: every start fails
//	                          (Waiting, reason RunContainerError; the pod
//	                          stays Pending)
//
// SIGTERM (DeletePod) ends a container at once with exit code 0, or as its
// trap says: trap 'exit N' TERM exits N at once, trap 'sleep S; exit N'
// TERM exits N S seconds later, trap ” TERM ignores it. A container still
// running when the grace period ends (the pod's deletionGracePeriodSeconds,
// else its terminationGracePeriodSeconds, else 30s) is killed: exit code
// 137.
//
// A container that exits by itself is restarted as the pod's
// restartPolicy says (Always; OnFailure when the exit code is not 0), after
// the kubelet's back-off (10s, doubled on each restart up to 5 minutes),
// during which it is Waiting with reason CrashLoopBackOff and its
// LastTerminationState is the run that ended; each run has a container ID
// of its own and counts in RestartCount. The pod stays Running while a
// container will restart, and ends Succeeded (every container exited 0) or
// Failed once no container runs or will. A run's terminated state carries
// its termination message: the WORD it wrote to its terminationMessagePath,
// else, under terminationMessagePolicy FallbackToLogsOnError and an exit
// code that is not 0, the lines it printed (each ending in a newline).
//
// Init containers run first, one at a time and in order, the app
// containers Waiting (PodInitializing) and the pod Pending (Initialized,
// ContainersReady and Ready False) meanwhile; each that exits 0 is
// Terminated (Completed) and Ready, and the next starts. One that exits
// otherwise is restarted after the back-off under restartPolicy Always or
// OnFailure, and fails the pod under Never. DeletePod ends a running init
// container at once.
//
// A container's command and args have their $(VAR) references expanded
// with its env first, as the kubelet does, and the words of its echo
// statements their $NAME references, as sh does.
//
// A container's exec lifecycle hooks are read with the same vocabulary:
// postStart runs as the container starts (the files it writes are the
// container's, a sleep before a write delays it), preStop when DeletePod
// stops a running container, before SIGTERM, its sleeps taken from the
// grace period. A postStart hook that fails (exit N other than 0, a
// missing executable) gets the container killed (its SIGTERM handler's
// exit code, else 137) and restarted as the pod's restartPolicy says,
// Waiting with reason PostStartHookError meanwhile.
//
// A container whose liveness probe (an exec probe test -e PATH) fails
// failureThreshold times in a row is killed (exit code 137, or its trap's)
// and restarted as the pod's restartPolicy says.
//
// A container with a startup probe (an exec probe test -e PATH) is Started
// from the first probe run after it wrote PATH, its readiness and liveness
// probes held off until then; failureThreshold failures of it in a row kill
// it (as a liveness probe's do).
//
// A container with a readiness probe is Ready (and the pod Ready) only
// once the probe passes: an exec probe test -e PATH from the first probe
// run after the container wrote PATH (initialDelaySeconds, then every
// periodSeconds), any other probe at its first run; a container without
// one is Ready as soon as it runs.
//
// The node provider's backend reports conditions of the node
// (Node.ReportCondition), each pushed through the NotifyNodeStatus
// callback with the node's whole status.
//
// It passes the vk suite; the suite's self-tests derive its mutants and
// benign variants from it.
package simprovider

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

// Provider is the sync variant: it does not implement node.PodNotifier, so
// VK's PodController polls its GetPodStatus (node/sync.go,
// syncProviderWrapper).
type Provider struct {
	mu     sync.Mutex
	pods   map[string]*simPod // by namespace/name
	notify func(*corev1.Pod)  // nil for the sync variant
	timers []*time.Timer      // every timer started, for Close
	closed bool

	// pending are the pods to notify, in the order their statuses were
	// taken (under mu); delivering (a semaphore: a channel, which a
	// testing/synctest bubble can wait out, where it cannot a mutex) is
	// held by the one goroutine that hands them to VK, oldest first.
	pending    []notification
	delivering chan struct{}
}

// notification is a copy of a pod to hand to a NotifyPods callback.
type notification struct {
	cb  func(*corev1.Pod)
	pod *corev1.Pod
}

// simPod is a pod the provider runs (or stops): pod holds the spec as
// CreatePod or UpdatePod got it and the status the provider reports.
type simPod struct {
	pod      *corev1.Pod
	ctrs     []behaviour
	epoch    []int // per container: bumped on each start, so that a stale timer does nothing
	stopping bool  // DeletePod was called

	inits     []behaviour // the init containers
	initEpoch []int
	// initsDone is how many init containers have completed (exit code 0):
	// the one of that index runs (or waits to restart), and the app
	// containers start once it is len(inits).
	initsDone  int
	initFailed bool // an init container failed under restartPolicy Never: the pod is Failed
}

var _ node.PodLifecycleHandler = (*Provider)(nil)

// Option configures a provider.
type Option func(*Provider)

// WithContext stops the provider's timers (container exits, restarts, the
// ends of grace periods) once ctx is done, as Close does.
func WithContext(ctx context.Context) Option {
	return func(p *Provider) { context.AfterFunc(ctx, p.Close) }
}

// New returns an empty sync provider.
func New(opts ...Option) *Provider {
	p := &Provider{pods: map[string]*simPod{}, delivering: make(chan struct{}, 1)}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Close stops the provider's timers: nothing its pods do changes after it.
func (p *Provider) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, t := range p.timers {
		t.Stop()
	}
	p.timers = nil
}

// AsyncProvider is the async variant: VK registers a callback with
// NotifyPods and never polls GetPodStatus (node/podcontroller.go, Run).
type AsyncProvider struct{ *Provider }

var (
	_ node.PodLifecycleHandler = AsyncProvider{}
	_ node.PodNotifier         = AsyncProvider{}
)

// NewAsync returns an empty async provider.
func NewAsync(opts ...Option) AsyncProvider { return AsyncProvider{New(opts...)} }

// NotifyPods registers cb, which the provider calls with a copy of a pod
// after each change of its status. It does not block.
func (p AsyncProvider) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = cb
}

func key(namespace, name string) string { return namespace + "/" + name }

// notifyLocked queues a copy of pod for VK and returns the call that
// delivers the queue, to be made once p.mu is released (VK's callback may
// wait for its own locks). The statuses reach VK in the order they were
// taken: two changes in a row (a container that exits as soon as
// CreatePod started it) never reach it the other way round, which would
// leave VK with the older one.
func (p *Provider) notifyLocked(pod *corev1.Pod) func() {
	if p.notify == nil {
		return func() {}
	}
	p.pending = append(p.pending, notification{cb: p.notify, pod: pod.DeepCopy()})
	return p.deliver
}

// deliver hands the queued notifications to VK, oldest first.
func (p *Provider) deliver() {
	p.delivering <- struct{}{}
	defer func() { <-p.delivering }()
	for {
		p.mu.Lock()
		if len(p.pending) == 0 {
			p.mu.Unlock()
			return
		}
		n := p.pending[0]
		p.pending = p.pending[1:]
		p.mu.Unlock()
		n.cb(n.pod)
	}
}

// afterLocked runs f with p.mu held, d from now, unless the provider is
// closed by then; f answers what to notify.
func (p *Provider) afterLocked(d time.Duration, f func() func()) {
	if p.closed {
		return
	}
	p.timers = append(p.timers, time.AfterFunc(d, func() {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return
		}
		notify := f()
		p.mu.Unlock()
		notify()
	}))
}

// CreatePod starts the pod's containers. For a pod it runs already (the
// same UID) it does nothing and answers nil: VK calls CreatePod again
// whenever GetPod answered nil before (node/pod.go, createOrUpdatePod).
func (p *Provider) CreatePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	k := key(pod.Namespace, pod.Name)
	if cur, ok := p.pods[k]; ok && cur.pod.UID == pod.UID {
		p.mu.Unlock()
		return nil
	}
	run := pod.DeepCopy()
	now := metav1.NewTime(time.Now())
	run.Status = corev1.PodStatus{
		Phase:     corev1.PodRunning,
		StartTime: &now,
		HostIP:    "10.0.0.1",
		PodIP:     "10.1.0.1",
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
	sp := &simPod{pod: run}
	initializing := func() corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
	}
	for _, c := range pod.Spec.InitContainers {
		sp.inits = append(sp.inits, parseContainer(c))
		sp.initEpoch = append(sp.initEpoch, 0)
		run.Status.InitContainerStatuses = append(run.Status.InitContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "sim://" + c.Image, State: initializing(), Started: new(false),
		})
	}
	for _, c := range pod.Spec.Containers {
		sp.ctrs = append(sp.ctrs, parseContainer(c))
		sp.epoch = append(sp.epoch, 0)
		run.Status.ContainerStatuses = append(run.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "sim://" + c.Image, State: initializing(), Started: new(false),
		})
	}
	if len(sp.inits) > 0 {
		p.startInitLocked(sp, 0)
	} else {
		for i := range sp.ctrs {
			p.startLocked(sp, i)
		}
	}
	sp.settleLocked()
	p.pods[k] = sp
	notify := p.notifyLocked(run)
	p.mu.Unlock()
	notify()
	return nil
}

// startLocked starts container i of sp (again, after a restart).
func (p *Provider) startLocked(sp *simPod, i int) {
	cs := &sp.pod.Status.ContainerStatuses[i]
	b := sp.ctrs[i]
	sp.epoch[i]++
	if b.missing != "" {
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: workload.ErrRunContainer.Error(),
			Message: fmt.Sprintf("failed to start container %q: exec: %q: stat %s: no such file or directory",
				cs.Name, b.missing, b.missing)}}
		cs.Ready, cs.Started = false, new(false)
		return
	}
	now := metav1.NewTime(time.Now())
	cs.ContainerID = fmt.Sprintf("sim://%s/%s/%d", sp.pod.UID, cs.Name, cs.RestartCount)
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	cs.Started = new(true)
	if b.postStartFails {
		// The kubelet kills a container whose postStart hook failed, as
		// DeletePod would (its SIGTERM handler's code, else 137), and
		// restarts it as the restart policy says (kuberuntime_container.go
		// startContainer, killContainer; ErrPostStartHook).
		epoch := sp.epoch[i]
		p.afterLocked(b.postStartTakes, func() func() {
			if sp.stopping || sp.epoch[i] != epoch || sp.pod.Status.ContainerStatuses[i].State.Running == nil {
				return func() {}
			}
			code := int32(137)
			if t := b.term; !t.ignore && t.delay == 0 {
				code = t.code
			}
			p.exitedLocked(sp, i, code)
			if w := sp.pod.Status.ContainerStatuses[i].State.Waiting; w != nil {
				w.Reason = "PostStartHookError"
			}
			sp.settleLocked()
			return p.notifyLocked(sp.pod)
		})
	}
	// A startup probe holds Started, and the readiness and liveness
	// probes, off until it passes; failureThreshold failures in a row
	// kill the container (prober/worker.go doProbe, kuberuntime_manager.go
	// computePodActions).
	startup := sp.pod.Spec.Containers[i].StartupProbe
	startedAfter, everStarted := b.readyAfter(startup)
	cs.Started = new(everStarted && startedAfter == 0)
	if everStarted && startedAfter > 0 {
		epoch := sp.epoch[i]
		p.afterLocked(startedAfter, func() func() {
			cs := &sp.pod.Status.ContainerStatuses[i]
			if sp.stopping || sp.epoch[i] != epoch || cs.State.Running == nil {
				return func() {}
			}
			cs.Started = new(true)
			return p.notifyLocked(sp.pod)
		})
	}
	if kill, ok := b.killedAfter(startup); ok && (!everStarted || kill < startedAfter) && (!b.exits || kill < b.runFor) {
		p.killLocked(sp, i, kill)
	}
	after, ever := b.readyAfter(sp.pod.Spec.Containers[i].ReadinessProbe)
	after, ever = max(after, startedAfter), ever && everStarted
	cs.Ready = ever && after == 0
	if ever && after > 0 {
		epoch := sp.epoch[i]
		p.afterLocked(after, func() func() {
			if sp.stopping || sp.epoch[i] != epoch || cs.State.Running == nil {
				return func() {}
			}
			sp.pod.Status.ContainerStatuses[i].Ready = true
			sp.settleLocked()
			return p.notifyLocked(sp.pod)
		})
	}
	if kill, ok := b.killedAfter(sp.pod.Spec.Containers[i].LivenessProbe); ok && everStarted && (!b.exits || kill < b.runFor) {
		p.killLocked(sp, i, max(kill, startedAfter))
	}
	if b.exits {
		epoch := sp.epoch[i]
		p.afterLocked(b.runFor, func() func() {
			if sp.stopping || sp.epoch[i] != epoch || sp.pod.Status.ContainerStatuses[i].State.Running == nil {
				return func() {}
			}
			p.exitedLocked(sp, i, b.exitCode)
			sp.settleLocked()
			return p.notifyLocked(sp.pod)
		})
	}
}

// killLocked kills container i of sp d from now, for a probe that failed,
// unless it was restarted or stopped by then: its SIGTERM handler's exit
// code if it exits at once, else 137 (sh as PID 1 without a trap ignores
// SIGTERM and is killed).
func (p *Provider) killLocked(sp *simPod, i int, d time.Duration) {
	b, epoch := sp.ctrs[i], sp.epoch[i]
	p.afterLocked(d, func() func() {
		if sp.stopping || sp.epoch[i] != epoch || sp.pod.Status.ContainerStatuses[i].State.Running == nil {
			return func() {}
		}
		code := int32(137)
		if t := b.term; !t.ignore && t.delay == 0 && t.code != 0 {
			code = t.code
		}
		p.exitedLocked(sp, i, code)
		sp.settleLocked()
		return p.notifyLocked(sp.pod)
	})
}

// startInitLocked starts init container i of sp (again, after a
// restart): it runs alone; its exit decides what comes next
// (initExitedLocked).
func (p *Provider) startInitLocked(sp *simPod, i int) {
	cs := &sp.pod.Status.InitContainerStatuses[i]
	b := sp.inits[i]
	sp.initEpoch[i]++
	if b.missing != "" {
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: workload.ErrRunContainer.Error(),
			Message: fmt.Sprintf("failed to start init container %q: exec: %q: no such file or directory", cs.Name, b.missing)}}
		return
	}
	cs.ContainerID = fmt.Sprintf("sim://%s/%s/%d", sp.pod.UID, cs.Name, cs.RestartCount)
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Now())}}
	cs.Started = new(true)
	if !b.exits {
		return // it never completes: the pod stays initializing
	}
	epoch := sp.initEpoch[i]
	p.afterLocked(b.runFor, func() func() {
		if sp.stopping || sp.initEpoch[i] != epoch {
			return func() {}
		}
		p.initExitedLocked(sp, i, b.exitCode)
		sp.settleLocked()
		return p.notifyLocked(sp.pod)
	})
}

// initExitedLocked ends the run of init container i with code: 0 starts
// the next init container, or the app containers after the last; another
// code restarts it after the back-off, or, under restartPolicy Never,
// fails the pod.
func (p *Provider) initExitedLocked(sp *simPod, i int, code int32) {
	cs := &sp.pod.Status.InitContainerStatuses[i]
	c := sp.pod.Spec.InitContainers[i]
	t := endedRun(cs, code)
	t.Message = sp.inits[i].terminationMessage(c, code)
	cs.Started = new(false)
	if code == 0 {
		cs.State, cs.Ready = corev1.ContainerState{Terminated: t}, true
		sp.initsDone = i + 1
		if sp.initsDone < len(sp.inits) {
			p.startInitLocked(sp, sp.initsDone)
			return
		}
		for j := range sp.ctrs {
			p.startLocked(sp, j)
		}
		return
	}
	if sp.pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
		cs.State, sp.initFailed = corev1.ContainerState{Terminated: t}, true
		return
	}
	delay := backOff(cs.RestartCount)
	cs.LastTerminationState = corev1.ContainerState{Terminated: t}
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: workload.ErrCrashLoopBackOff.Error(),
		Message: fmt.Sprintf("back-off %v restarting failed container=%s pod=%s", delay, cs.Name, sp.pod.Name)}}
	epoch := sp.initEpoch[i]
	p.afterLocked(delay, func() func() {
		if sp.stopping || sp.initEpoch[i] != epoch {
			return func() {}
		}
		sp.pod.Status.InitContainerStatuses[i].RestartCount++
		p.startInitLocked(sp, i)
		sp.settleLocked()
		return p.notifyLocked(sp.pod)
	})
}

// backOff is the kubelet's delay before restart n+1 of a container that
// has crash-looped since it first started: workload.KubeletBackOff's
// initial delay, doubled on each restart up to its maximum. (The kubelet,
// and workload.Pod, start again from the initial delay after a run that
// outlasts twice the maximum; simprovider does not.)
func backOff(restarts int32) time.Duration {
	b := workload.KubeletBackOff
	d := b.Initial
	for range restarts {
		if d *= 2; d >= b.Max {
			return b.Max
		}
	}
	return d
}

// exitedLocked ends the run of container i with code, and restarts it
// after the back-off when the pod's restart policy says so.
func (p *Provider) exitedLocked(sp *simPod, i int, code int32) {
	cs := &sp.pod.Status.ContainerStatuses[i]
	c := sp.pod.Spec.Containers[i]
	t := endedRun(cs, code)
	t.Message = sp.ctrs[i].terminationMessage(c, code)
	cs.Ready, cs.Started = false, new(false)
	policy := sp.pod.Spec.RestartPolicy
	if policy == corev1.RestartPolicyNever || (policy == corev1.RestartPolicyOnFailure && code == 0) {
		cs.State = corev1.ContainerState{Terminated: t}
		return
	}
	delay := backOff(cs.RestartCount)
	cs.LastTerminationState = corev1.ContainerState{Terminated: t}
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: workload.ErrCrashLoopBackOff.Error(),
		Message: fmt.Sprintf("back-off %v restarting failed container=%s pod=%s", delay, cs.Name, sp.pod.Name)}}
	epoch := sp.epoch[i]
	p.afterLocked(delay, func() func() {
		if sp.stopping || sp.epoch[i] != epoch {
			return func() {}
		}
		cs := &sp.pod.Status.ContainerStatuses[i]
		cs.RestartCount++
		p.startLocked(sp, i)
		sp.settleLocked()
		return p.notifyLocked(sp.pod)
	})
}

// endedLocked returns the terminated state of the run of app container i
// of sp that ends now with code, with its termination message.
func (sp *simPod) endedLocked(i int, code int32) *corev1.ContainerStateTerminated {
	c := sp.pod.Spec.Containers[i]
	t := endedRun(&sp.pod.Status.ContainerStatuses[i], code)
	t.Message = sp.ctrs[i].terminationMessage(c, code)
	return t
}

// endedRun returns the terminated state of the run of cs that ends now
// with code.
func endedRun(cs *corev1.ContainerStatus, code int32) *corev1.ContainerStateTerminated {
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	t := &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: metav1.NewTime(time.Now()), ContainerID: cs.ContainerID}
	if r := cs.State.Running; r != nil {
		t.StartedAt = r.StartedAt
	}
	return t
}

// settleLocked sets the pod's phase and readiness from its containers:
// Pending while a container could not start, Succeeded or Failed once
// every container has terminated for good, Running otherwise.
func (sp *simPod) settleLocked() {
	st := &sp.pod.Status
	allDone, allZero, ready, startFailed := true, true, true, false
	for _, cs := range st.ContainerStatuses {
		t := cs.State.Terminated
		allDone = allDone && t != nil
		allZero = allZero && t != nil && t.ExitCode == 0
		ready = ready && cs.State.Running != nil && cs.Ready
		startFailed = startFailed || (cs.State.Waiting != nil && cs.State.Waiting.Reason == workload.ErrRunContainer.Error())
	}
	initialized := sp.initsDone == len(sp.inits)
	switch {
	case sp.initFailed:
		st.Phase = corev1.PodFailed
	case !initialized && !sp.stopping:
		st.Phase = corev1.PodPending
	case allDone && allZero:
		st.Phase = corev1.PodSucceeded
	case allDone:
		st.Phase = corev1.PodFailed
	case startFailed:
		st.Phase = corev1.PodPending
	default:
		st.Phase = corev1.PodRunning
	}
	now := metav1.NewTime(time.Now())
	set := func(t corev1.PodConditionType, ok bool) {
		want := corev1.ConditionFalse
		if ok {
			want = corev1.ConditionTrue
		}
		for i := range st.Conditions {
			if c := &st.Conditions[i]; c.Type == t && c.Status != want {
				c.Status, c.LastTransitionTime = want, now
			}
		}
	}
	set(corev1.PodReady, ready && initialized)
	set(corev1.ContainersReady, ready && initialized)
	set(corev1.PodInitialized, initialized)
}

// UpdatePod takes the fields a running pod may change (its containers'
// images, labels, annotations, tolerations, activeDeadlineSeconds).
func (p *Provider) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	sp, ok := p.pods[key(pod.Namespace, pod.Name)]
	if !ok {
		p.mu.Unlock()
		return errdefs.NotFoundf("pod %s/%s is not known", pod.Namespace, pod.Name)
	}
	cur, in := sp.pod, pod.DeepCopy()
	cur.Labels, cur.Annotations = in.Labels, in.Annotations
	cur.Spec.Containers = in.Spec.Containers
	cur.Spec.InitContainers = in.Spec.InitContainers
	cur.Spec.EphemeralContainers = in.Spec.EphemeralContainers
	cur.Spec.Tolerations = in.Spec.Tolerations
	cur.Spec.ActiveDeadlineSeconds = in.Spec.ActiveDeadlineSeconds
	notify := p.notifyLocked(cur)
	p.mu.Unlock()
	notify()
	return nil
}

// gracePeriod is how long DeletePod of pod gives its containers: its
// deletionGracePeriodSeconds, else its terminationGracePeriodSeconds, else
// 30s.
func gracePeriod(pod *corev1.Pod) time.Duration {
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return 30 * time.Second
}

// DeletePod forgets the pod (GetPod and GetPodStatus answer NotFound from
// then on) and sends its containers SIGTERM: each ends as its trap says, or
// is killed (137) when the grace period of pod ends first; a container
// that was not running ends at once (137, ContainerStatusUnknown, as the
// kubelet reports one it cannot find). The async variant notifies each
// change, the last with the terminal status. A pod it does not run answers
// errdefs.NotFound.
func (p *Provider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	k := key(pod.Namespace, pod.Name)
	sp, ok := p.pods[k]
	if !ok {
		p.mu.Unlock()
		return errdefs.NotFoundf("pod %s is not known", k)
	}
	delete(p.pods, k)
	sp.stopping = true
	grace := gracePeriod(pod)
	// An init container still running ends at once, as its SIGTERM
	// handler says (its delay not simulated).
	for i, b := range sp.inits {
		if cs := &sp.pod.Status.InitContainerStatuses[i]; cs.State.Running != nil {
			cs.State, cs.Started = corev1.ContainerState{Terminated: endedRun(cs, b.term.code)}, new(false)
		}
	}
	for i, b := range sp.ctrs {
		cs := &sp.pod.Status.ContainerStatuses[i]
		// A running container's preStop hook runs first, and takes from
		// the grace period (kuberuntime_container.go killContainer,
		// executePreStopHook); SIGTERM follows.
		hook := time.Duration(0)
		if cs.State.Running != nil && b.preStop != nil {
			b = b.preStopped()
			sp.ctrs[i] = b
			hook = min(b.preStop.hookTakes(), grace)
		}
		switch {
		case cs.State.Terminated != nil:
		case cs.State.Running == nil:
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "ContainerStatusUnknown",
				Message: "The container could not be located when the pod was terminated", FinishedAt: metav1.NewTime(time.Now())}}
		case hook == 0 && !b.term.ignore && b.term.delay == 0:
			cs.State = corev1.ContainerState{Terminated: sp.endedLocked(i, b.term.code)}
		default:
			after, code := grace, int32(137)
			if !b.term.ignore && hook+b.term.delay < grace {
				after, code = hook+b.term.delay, b.term.code
			}
			p.afterLocked(after, func() func() {
				cs := &sp.pod.Status.ContainerStatuses[i]
				if cs.State.Running == nil {
					return func() {}
				}
				cs.State = corev1.ContainerState{Terminated: sp.endedLocked(i, code)}
				cs.Ready, cs.Started = false, new(false)
				sp.settleLocked()
				return p.notifyLocked(sp.pod)
			})
			continue
		}
		cs.Ready, cs.Started = false, new(false)
	}
	sp.settleLocked()
	notify := p.notifyLocked(sp.pod)
	p.mu.Unlock()
	notify()
	return nil
}

// Terminate stops every running container of status with exitCode and
// reason, now, and sets the phase it ends in (Succeeded if every container
// exited 0, else Failed).
func Terminate(status *corev1.PodStatus, exitCode int32, reason string) {
	now := metav1.NewTime(time.Now())
	phase := corev1.PodSucceeded
	for i := range status.ContainerStatuses {
		cs := &status.ContainerStatuses[i]
		if r := cs.State.Running; r != nil {
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exitCode, Reason: reason, StartedAt: r.StartedAt, FinishedAt: now, ContainerID: cs.ContainerID,
			}}
		}
		cs.Ready, cs.Started = false, new(false)
		if t := cs.State.Terminated; t == nil || t.ExitCode != 0 {
			phase = corev1.PodFailed
		}
	}
	status.Phase = phase
	for i := range status.Conditions {
		if c := &status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.LastTransitionTime = corev1.ConditionFalse, now
		}
	}
}

// GetPod answers a copy of the pod it runs, or nil and errdefs.NotFound.
func (p *Provider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sp, ok := p.pods[key(namespace, name)]
	if !ok {
		return nil, errdefs.NotFoundf("pod %s is not known", key(namespace, name))
	}
	return sp.pod.DeepCopy(), nil
}

// GetPodStatus answers a copy of the status of the pod it runs, or nil and
// errdefs.NotFound.
func (p *Provider) GetPodStatus(_ context.Context, namespace, name string) (*corev1.PodStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sp, ok := p.pods[key(namespace, name)]
	if !ok {
		return nil, errdefs.NotFoundf("pod %s is not known", key(namespace, name))
	}
	return sp.pod.Status.DeepCopy(), nil
}

// GetPods answers copies of every pod it runs, ordered by namespace/name.
func (p *Provider) GetPods(context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]string, 0, len(p.pods))
	for k := range p.pods {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*corev1.Pod, 0, len(keys))
	for _, k := range keys {
		out = append(out, p.pods[k].pod.DeepCopy())
	}
	return out, nil
}

// Node is the reference node.NodeProvider: Ping answers nil until
// MakeUnhealthy; NotifyNodeStatus keeps the callback and returns, and
// ReportCondition pushes the node's status through it.
type Node struct {
	mu        sync.Mutex
	cb        func(*corev1.Node)
	unhealthy bool
	status    corev1.NodeStatus // what the backend reports of the node
}

// MakeUnhealthy makes the simulated backend unreachable: every Ping from
// then on answers an error.
func (n *Node) MakeUnhealthy() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.unhealthy = true
}

var _ node.NodeProvider = (*Node)(nil)

// NewNode returns a healthy node provider whose node is Ready.
func NewNode() *Node {
	now := metav1.NewTime(time.Now())
	return &Node{status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "the simulated backend is reachable", LastHeartbeatTime: now, LastTransitionTime: now,
	}}}}
}

// Ping answers nil unless ctx is done or the backend was made unhealthy.
func (n *Node) Ping(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.unhealthy {
		return errors.New("simulated backend unreachable")
	}
	return ctx.Err()
}

// NotifyNodeStatus keeps cb and returns at once.
func (n *Node) NotifyNodeStatus(_ context.Context, cb func(*corev1.Node)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cb = cb
}

// Condition answers a copy of the node's condition of type t, nil if it
// has none.
func (n *Node) Condition(t corev1.NodeConditionType) *corev1.NodeCondition {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, c := range n.status.Conditions {
		if c.Type == t {
			return c.DeepCopy()
		}
	}
	return nil
}

// ReportCondition is the simulated backend reporting a condition of the
// node (MemoryPressure, say): it replaces the condition of c's type, or
// adds it, and pushes a copy of the node's whole status through the
// NotifyNodeStatus callback, if one is registered. The copy is VK's to
// keep (VK writes heartbeat times into its conditions, node/node.go
// updateNodeStatusHeartbeat), and the callback is called without the
// provider's lock: VK's blocks while the update before it waits to be
// published.
func (n *Node) ReportCondition(c corev1.NodeCondition) {
	n.mu.Lock()
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = metav1.NewTime(time.Now())
	}
	replaced := false
	for i := range n.status.Conditions {
		if n.status.Conditions[i].Type == c.Type {
			n.status.Conditions[i], replaced = c, true
		}
	}
	if !replaced {
		n.status.Conditions = append(n.status.Conditions, c)
	}
	cb, pushed := n.cb, &corev1.Node{Status: *n.status.DeepCopy()}
	n.mu.Unlock()
	if cb != nil {
		cb(pushed)
	}
}
