// Package simprovider is the kit's reference virtual-kubelet provider: an
// in-memory simulation of a backend that runs pods, offered as
// node.PodLifecycleHandler (New, a sync provider: VK polls GetPodStatus) or
// as node.PodLifecycleHandler and node.PodNotifier (NewAsync: it reports
// every change through NotifyPods), and a node.NodeProvider (NewNode).
//
// It is a facade over the kit's one runtime model, package workload
// (github.com/kri-kit/testkit/sim/workload): each pod's containers run on
// a workload.Pod, which reads their commands (the vocabulary of workload's
// package doc: sleep, exit, trap, echo, rm, test, httpd, ...), starts the
// init containers one at a time and the sidecars beside the app
// containers, restarts exited containers as the pod's restartPolicy (and a
// container's own) says after the kubelet's crash-loop back-off
// (workload.KubeletBackOff, reset after twice its maximum), runs the
// startup, liveness and readiness probes (exec, HTTP, TCP, with their
// thresholds and timeouts) and the lifecycle hooks (exec, HTTP, sleep),
// fails the pull of an image under kri.invalid/ and the start of a missing
// executable, stops a pod with preStop hooks, SIGTERM and a grace period,
// and writes termination messages. A change to any of these is made there.
//
// Beside the model this package keeps only what VK's interfaces need:
//
//   - the pods by namespace/name, GetPod, GetPods and GetPodStatus, each
//     answer a copy the provider never changes afterwards;
//   - the clock: one timer per pod, set (time.AfterFunc) for the model's
//     next event (workload.Pod.Next), which advances the model to it; the
//     time package's clock, so inside a testing/synctest bubble it runs on
//     the bubble's; WithContext and Close stop the timers;
//   - the status VK reads, assembled from the model's containers: their
//     states (a run's ID is sim://UID/NAME/RESTARTS, its image ID
//     sim://IMAGE), the phase and the conditions;
//   - NotifyPods: each change of a pod's status delivered, in order, to
//     VK's callback (async variant);
//   - DeletePod: the pod forgotten at once (GetPod answers NotFound), its
//     model stopped with the pod's deletionGracePeriodSeconds, else its
//     terminationGracePeriodSeconds, else 30s, and each change until
//     every container has ended notified (async variant); an app container
//     that was not running ends at once (137, ContainerStatusUnknown);
//   - the environment: VK hands the provider the env resolved, so a
//     container's $(VAR) references are expanded with it once and its
//     process sees it (workload.ParseEnv);
//   - what its backend does on SIGTERM, which the model leaves to the
//     runtime: a container exits as its trap says (trap 'exit N' TERM,
//     trap 'sleep S; exit N' TERM, trap "" TERM), and without a trap
//     exits 0 at once, as the pause image does; one a failed liveness or
//     startup probe kills exits with its trap's code if that is other than
//     0 and immediate, else is killed at once (137);
//   - the node half: Node, whose backend reports conditions of the node
//     (Node.ReportCondition), each pushed through the NotifyNodeStatus
//     callback with the node's whole status.
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
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

// Provider is the sync variant: it does not implement node.PodNotifier, so
// VK's PodController polls its GetPodStatus (node/sync.go,
// syncProviderWrapper).
type Provider struct {
	mu     sync.Mutex
	pods   map[string]*simPod   // by namespace/name
	notify func(*corev1.Pod)    // nil for the sync variant
	live   map[*simPod]struct{} // the pods with a timer set, for Close
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
// CreatePod or UpdatePod got it and the status the provider last reported,
// assembled from the model, run, which plays its containers.
type simPod struct {
	pod      *corev1.Pod
	run      *workload.Pod
	stopping bool // DeletePod was called
	// lost are the app containers that were not running when DeletePod
	// came (waiting to start or to restart): they end at once as
	// ContainerStatusUnknown, as the kubelet reports one it cannot find.
	lost map[string]bool
	// timer fires when the model's next event is due; gen tells the
	// current timer from one stopped too late.
	timer  *time.Timer
	gen    int
	lostAt metav1.Time // when DeletePod came
}

// newModel returns the model of pod's containers, as the kubelet runs them
// (workload.Pod), with what this provider sets beside the kubelet's rules:
// the environment VK resolved, the IDs of its runs, its reading of SIGTERM
// and of a probe's kill.
func newModel(pod *corev1.Pod) *workload.Pod {
	m := workload.NewPod(pod)
	m.BackOff = workload.KubeletBackOff
	for _, c := range m.Containers() {
		c.Behaviour = behaviourOf(c.Spec)
	}
	m.Shutdown = shutdown
	m.Kill = probeKill
	m.NewID = func() string { return "" } // containerID names a run
	return m
}

// behaviourOf is what container c's command does: VK hands the provider the
// env resolved ($(VAR) references in values expanded, node/pod.go
// createOrUpdatePod) but the command as written, so the command and args
// have their $(VAR) references expanded with that env, as the kubelet
// does, and the process sees it (its sh's $NAME).
func behaviourOf(c *corev1.Container) workload.Behaviour {
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	expand := func(in []string) []string {
		out := make([]string, 0, len(in))
		for _, a := range in {
			out = append(out, workload.ExpandVars(a, env))
		}
		return out
	}
	return workload.ParseEnv(expand(c.Command), expand(c.Args), env)
}

// shutdown is what SIGTERM does to a container whose command behaves as b:
// as its trap says (trap 'exit N' TERM, trap 'sleep S; exit N' TERM, trap
// "" TERM), and without a trap exit 0 at once (as the pause image and
// servers that handle SIGTERM do).
func shutdown(b workload.Behaviour) workload.Shutdown {
	if b.IgnoresSIGTERM || b.TrapsSIGTERM {
		return b.Shutdown(false)
	}
	return workload.Shutdown{}
}

// probeKill kills run r for a failed liveness or startup probe at at: its
// SIGTERM handler's exit code when it exits at once with one other than
// 0, else SIGKILL (137) at once (sh as PID 1 without a handler ignores
// SIGTERM and is killed).
func probeKill(_ *workload.PodContainer, r *workload.Run, at time.Time, grace time.Duration) {
	if sh := r.Shutdown(); !sh.Ignores && sh.Delay == 0 && sh.ExitCode != 0 {
		r.SIGTERM(at, at, grace)
		return
	}
	r.SIGKILL(at, at)
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
	now := time.Now()
	start := metav1.NewTime(now)
	run.Status = corev1.PodStatus{
		Phase:     corev1.PodPending,
		StartTime: &start,
		HostIP:    "10.0.0.1",
		PodIP:     "10.1.0.1",
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: start},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: start},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: start},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start},
		},
	}
	sp := &simPod{pod: run, run: newModel(pod)}
	sp.run.Reconcile(now)
	sp.run.Advance(now)
	sp.statusLocked(now)
	p.pods[k] = sp
	p.scheduleLocked(sp)
	notify := p.notifyLocked(run)
	p.mu.Unlock()
	notify()
	return nil
}

// scheduleLocked sets sp's timer for the model's next event, if any.
func (p *Provider) scheduleLocked(sp *simPod) {
	if sp.timer != nil {
		sp.timer.Stop()
		sp.timer = nil
	}
	next, ok := sp.run.Next()
	if !ok || p.closed {
		delete(p.live, sp)
		return
	}
	p.live[sp] = struct{}{}
	sp.gen++
	gen := sp.gen
	sp.timer = time.AfterFunc(max(time.Until(next), 0), func() {
		p.mu.Lock()
		if p.closed || sp.gen != gen {
			p.mu.Unlock()
			return
		}
		now := time.Now()
		sp.run.Advance(now)
		notify := func() {}
		if sp.statusLocked(now) {
			notify = p.notifyLocked(sp.pod)
		}
		p.scheduleLocked(sp)
		p.mu.Unlock()
		notify()
	})
}

// containerID is the ID of run r of container name of the pod.
func (sp *simPod) containerID(name string, r *workload.Run) string {
	return fmt.Sprintf("sim://%s/%s/%d", sp.pod.UID, name, r.Restarts)
}

// terminated is the terminated state of run r of container c, which has
// exited: its exit code, times and termination message (read from c's
// terminationMessagePath, the API's default when c has none).
func (sp *simPod) terminated(c *workload.PodContainer, r *workload.Run) *corev1.ContainerStateTerminated {
	spec := *r.Spec
	if spec.TerminationMessagePath == "" {
		spec.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	return &corev1.ContainerStateTerminated{
		ExitCode: int32(r.ExitCode()), Reason: workload.ExitReason(r.ExitCode()), Message: r.TerminationMessage(&spec),
		StartedAt: metav1.NewTime(r.StartedAt()), FinishedAt: metav1.NewTime(r.FinishedAt()), ContainerID: sp.containerID(c.Name, r),
	}
}

// containerStatus assembles the status of container c from the model.
func (sp *simPod) containerStatus(c *workload.PodContainer) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "sim://" + c.Image,
		Started: new(c.Started()), Ready: c.Ready()}
	r := c.Current
	if r != nil {
		cs.RestartCount = int32(r.Restarts)
		cs.ContainerID = sp.containerID(c.Name, r)
	}
	if sp.lost[c.Name] {
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: workload.ExitCodeSIGKILL,
			Reason: "ContainerStatusUnknown", Message: "The container could not be located when the pod was terminated",
			FinishedAt: sp.lostAt}}
		cs.Ready, cs.Started = false, new(false)
		return cs
	}
	switch {
	case c.Running():
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(r.StartedAt())}}
		if c.Previous != nil && c.Previous.State() == workload.InstanceExited {
			cs.LastTerminationState = corev1.ContainerState{Terminated: sp.terminated(c, c.Previous)}
		}
	case c.Waiting != nil:
		w := &corev1.ContainerStateWaiting{Reason: c.Waiting.Err.Error(), Message: c.Waiting.Message}
		if r == nil || !errors.Is(c.Waiting.Err, workload.ErrCrashLoopBackOff) && !errors.Is(c.Waiting.Err, workload.ErrPostStartHook) {
			kind := "container"
			if c.IsInit {
				kind = "init container"
			}
			w.Message = fmt.Sprintf("failed to start %s %q: %s", kind, c.Name, c.Waiting.Message)
		}
		cs.State = corev1.ContainerState{Waiting: w}
		if r != nil && r.State() == workload.InstanceExited {
			cs.LastTerminationState = corev1.ContainerState{Terminated: sp.terminated(c, r)}
		}
	case r != nil && r.State() == workload.InstanceExited:
		cs.State = corev1.ContainerState{Terminated: sp.terminated(c, r)}
		if c.Previous != nil && c.Previous.State() == workload.InstanceExited {
			cs.LastTerminationState = corev1.ContainerState{Terminated: sp.terminated(c, c.Previous)}
		}
	default:
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
	}
	return cs
}

// statusLocked assembles sp's status from the model at now: the
// containers' states, the phase (Pending while an init container has not
// completed or a container could not start; Succeeded or Failed once every
// app container has terminated for good, or an init container failed under
// restartPolicy Never; Running otherwise) and the conditions. It reports
// whether the status changed.
func (sp *simPod) statusLocked(now time.Time) bool {
	st := &sp.pod.Status
	old := st.DeepCopy()
	st.InitContainerStatuses, st.ContainerStatuses = nil, nil
	initialized, initFailed := true, false
	for _, c := range sp.run.Init {
		cs := sp.containerStatus(c)
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
		t := cs.State.Terminated
		switch {
		case c.Restartable:
			initialized = initialized && c.Current != nil
		case t != nil && t.ExitCode == 0:
		default:
			initialized = false
			initFailed = initFailed || t != nil && sp.pod.Spec.RestartPolicy == corev1.RestartPolicyNever
		}
	}
	allDone, allZero, ready, startFailed := true, true, true, false
	for _, c := range sp.run.App {
		cs := sp.containerStatus(c)
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
		t := cs.State.Terminated
		allDone = allDone && t != nil
		allZero = allZero && t != nil && t.ExitCode == 0
		ready = ready && cs.State.Running != nil && cs.Ready
		startFailed = startFailed || c.Waiting != nil && c.Current == nil
	}
	switch {
	case initFailed:
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
	at := metav1.NewTime(now)
	set := func(t corev1.PodConditionType, ok bool) {
		want := corev1.ConditionFalse
		if ok {
			want = corev1.ConditionTrue
		}
		for i := range st.Conditions {
			if c := &st.Conditions[i]; c.Type == t && c.Status != want {
				c.Status, c.LastTransitionTime = want, at
			}
		}
	}
	set(corev1.PodReady, ready && initialized)
	set(corev1.ContainersReady, ready && initialized)
	set(corev1.PodInitialized, initialized)
	return !equality.Semantic.DeepEqual(old, st)
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

// DeletePod forgets the pod (GetPod and GetPodStatus answer NotFound from
// then on) and stops it as the kubelet does (workload.Pod.Stop): each
// running container runs its preStop hook, then gets SIGTERM with what is
// left of the grace period (the pod's deletionGracePeriodSeconds, else its
// terminationGracePeriodSeconds, else 30s) and ends as its trap says, or
// is killed (137) when the grace period ends first; an app container that
// was not running ends at once (137, ContainerStatusUnknown, as the
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
	now := time.Now()
	sp.run.Advance(now)
	sp.stopping, sp.lost, sp.lostAt = true, map[string]bool{}, metav1.NewTime(now)
	for _, c := range sp.run.App {
		if !c.Running() && (c.Waiting != nil || c.Current == nil) {
			sp.lost[c.Name] = true
		}
	}
	sp.run.Stop(now, workload.GracePeriod(pod, nil))
	sp.run.Advance(now)
	sp.statusLocked(now)
	p.scheduleLocked(sp)
	notify := p.notifyLocked(sp.pod)
	p.mu.Unlock()
	notify()
	return nil
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
	p := &Provider{pods: map[string]*simPod{}, live: map[*simPod]struct{}{}, delivering: make(chan struct{}, 1)}
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
	for sp := range p.live {
		sp.timer.Stop()
		sp.gen++
	}
	clear(p.live)
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
