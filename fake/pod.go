package fake

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/utils/clock"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
	"github.com/kri-kit/testkit/kri/podsync"
	"github.com/kri-kit/testkit/sim/workload"
)

var (
	_ kri.PodProvider     = (*PodProvider)(nil)
	_ kri.PodProvider     = (*core)(nil)
	_ kri.PodSyncNotifier = (*core)(nil)

	_ kri.PodSyncNotifier = (*PodProvider)(nil)
)

// PodProvider is an in-memory kri.PodProvider that simulates a node runtime.
// See the package documentation for what it simulates and how to script it.
// It is safe for concurrent use.
type PodProvider struct {
	clock clock.WithDelayedExecution
	ids   IDSource
	core  *core

	// intercepted is core wrapped with the interceptors
	// (WithInterceptors, SetInterceptors): what the call log wraps.
	icMu        sync.RWMutex
	intercepted kri.PodProvider

	// mu guards the simulated state and the scripts. It may be held while
	// calling the clock, so clock callbacks must never take it. It is
	// released with unlock, which then notifies the agent (podsync.go).
	mu    sync.Mutex
	pods  map[types.UID]*podState
	byKey map[string]types.UID
	// byKeyGen counts the changes of byKey, from 1 (podState.byKeyGen).
	byKeyGen uint64
	scripts  scriptBook
	seq      uint64
	// imageIDs holds imageID of each image an instance was created with,
	// for the instances of an image to share it.
	imageIDs map[string]string
	// simFuncs are the callbacks of the pods' simulations (newSim).
	simFuncs simFuncs
	// Behaviours chosen by options (see options.go).
	statusDriven        bool
	startErrorInstances bool
	backOff             map[string]workload.BackOffState // by backOffKey; nil: no crash-loop back-off
	runningPodKill      bool
	imageBackOff        imagePullBackOffs // nil: no image-pull back-off
	podIPs              *ipPool           // nil: sandboxes have no network
	pid1Signals         bool
	minimumGracePeriod  bool
	kubelet             bool // every behaviour of WithKubeletSemantics is on

	// Notifications to the agent (podsync.go). notifier holds its handler;
	// notifying is set while there is one and Stop has not come, and
	// pending lists the pods to notify once p.mu is released (unlock).
	// Guarded by p.mu but notifier.
	notifier      podsync.Notifier
	notifying     bool
	notifyStopped bool
	pending       []types.UID
	// releases counts the releases of p.mu (unlock): a pod settled by a
	// lock section is up to date until the next one ends (settle).
	releases uint64

	log    callLog
	events *eventHub
	// wakeCh tells the Start loop that a scheduled transition is due.
	wakeCh chan struct{}

	runMu   sync.Mutex
	running bool
	stopped bool
	stopCh  chan struct{}
	done    chan struct{}
}

// NewPodProvider returns a PodProvider with no pods, configured by opts.
func NewPodProvider(opts ...Option) *PodProvider {
	cfg := podConfig{clock: clock.RealClock{}, callLogSize: DefaultCallLogSize}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.ids == nil {
		cfg.ids = SequentialIDs("")
	}
	p := &PodProvider{
		clock:               cfg.clock,
		ids:                 cfg.ids,
		pods:                map[types.UID]*podState{},
		byKey:               map[string]types.UID{},
		byKeyGen:            1,
		statusDriven:        cfg.statusDriven,
		startErrorInstances: cfg.startErrorInstances,
		runningPodKill:      cfg.runningPodKill,
		pid1Signals:         cfg.pid1Signals,
		minimumGracePeriod:  cfg.minimumGracePeriod,
		kubelet:             cfg.kubelet(),
		log:                 callLog{size: cfg.callLogSize},
		events:              newEventHub(),
		wakeCh:              make(chan struct{}, 1),
		stopCh:              make(chan struct{}),
	}
	if cfg.crashLoopBackOff {
		p.backOff = map[string]workload.BackOffState{}
	}
	if cfg.imagePullBackOff {
		p.imageBackOff = imagePullBackOffs{}
	}
	if cfg.podIPs {
		p.podIPs = newIPPool()
	}
	p.core = &core{p: p}
	p.SetInterceptors(cfg.interceptors)
	if cfg.podSyncHandler != nil {
		p.SetPodSyncHandler(cfg.podSyncHandler)
	}
	return p
}

// SetInterceptors replaces the interceptors; it may be called at any time,
// also while pods run and calls are in flight (those finish with the
// interceptors they started with). The zero interceptor.PodFuncs removes
// them all. Each function that is set is called instead of the fake's
// method, inside the call log, with next the fake without interceptors
// (scripted faults included); SetPodSyncHandler's, with next the fake's
// own SetPodSyncHandler.
func (p *PodProvider) SetInterceptors(i interceptor.PodFuncs) {
	w := interceptor.NewPodProvider(p.core, i)
	p.icMu.Lock()
	defer p.icMu.Unlock()
	p.intercepted = w
}

// chain returns the fake as its interceptors wrap it.
func (p *PodProvider) chain() kri.PodProvider {
	p.icMu.RLock()
	defer p.icMu.RUnlock()
	return p.intercepted
}

// begin logs c as begun, before the call has any effect, and returns its
// number for end.
func (p *PodProvider) begin(c *Call) uint64 {
	c.Began = p.clock.Now()
	return p.log.begin(*c)
}

// end completes the logged call seq with the error the caller gets.
func (p *PodProvider) end(seq uint64, c *Call, err error) {
	c.Err, c.At = err, p.clock.Now()
	p.log.end(seq, *c)
}

// SyncPod brings the pod to its desired state, as the package documentation
// describes: it creates the sandbox if the pod has no ready one, runs init
// containers one after the other to success, starts app containers that are
// missing and restarts exited ones as the restart policy allows (subject to
// WithCrashLoopBackOff), never touching a running container. Each start
// attempt is recorded in reasonCache; SyncPod returns an error naming every
// container that failed to start (pkgcontainer.PodSyncResult's error).
//
// By default SyncPod acts on the fake's own state and ignores podStatus,
// beyond recording in the call log whether it was stale (Call.StaleStatus);
// with WithStatusDrivenSync it acts on podStatus as the kubelet's runtime
// does. A nil pod, a pod without UID or with unnamed or duplicate
// containers, a nil reasonCache and a done ctx are errors that change
// nothing. The pod is copied: the fake keeps no memory of it.
func (p *PodProvider) SyncPod(ctx context.Context, pod *v1.Pod, podStatus *pkgcontainer.PodStatus, reasonCache *kri.ReasonCache) error {
	c := Call{Method: MethodSyncPod, Pod: refOf(pod), StaleStatus: p.staleness(pod, podStatus)}
	seq := p.begin(&c)
	err := p.chain().SyncPod(ctx, pod, podStatus, reasonCache)
	p.end(seq, &c, err)
	return err
}

// KillPod stops the containers of the pod named by runningPod.ID (pod's UID
// when that is empty): by default every created or running one, with
// WithRunningPodKill only those runningPod.Containers lists. SIGTERM comes
// first, which ends a container at once with exit code 143 (or its
// handler's code); a container that ignores SIGTERM (see WithPID1Signals)
// gets SIGKILL (137) when the grace period ends: gracePeriodOverride, else
// the pod's DeletionGracePeriodSeconds, else its
// TerminationGracePeriodSeconds (pod as handed in, else as last synced),
// else 30s, as the kubelet's runtime orders them (at least 2s with
// WithMinimumGracePeriod). It stops the pod's sandboxes too (with
// WithRunningPodKill, those runningPod.Sandboxes lists), as the CRI's
// StopPodSandbox does: a container still created or running in a sandbox it
// stops that it did not send SIGTERM (with WithRunningPodKill, one
// runningPod.Containers leaves out) is killed with the sandbox, at once,
// with exit code 137 and reason Error (SIGKILL: no preStop hook, no grace
// period), as containerd kills it. The fake stops the sandboxes when
// KillPod begins, while the containers it sent SIGTERM run out their grace
// period (the kubelet's runtime stops them once those have exited). KillPod
// returns once no container it stopped runs, waiting for that on the
// provider's clock (step a FakeClock past the grace period); a done ctx
// ends the wait with its error. Killing a pod the fake does not know, or
// one with nothing running, returns nil. The pod stays known: SyncPod
// starts it again in a new sandbox. The call log records the IDs runningPod
// lists (Call.RunningContainers, Call.RunningSandboxes).
func (p *PodProvider) KillPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error {
	c := Call{Method: MethodKillPod, Pod: PodRef{UID: runningPod.ID, Namespace: runningPod.Namespace, Name: runningPod.Name}}
	if c.Pod.UID == "" {
		c.Pod = refOf(pod)
	}
	if gracePeriodOverride != nil {
		c.GracePeriodOverride = new(*gracePeriodOverride)
	}
	c.RunningContainers, c.RunningSandboxes = containerIDs(runningPod.Containers), containerIDs(runningPod.Sandboxes)
	seq := p.begin(&c)
	err := p.chain().KillPod(ctx, pod, runningPod, gracePeriodOverride)
	p.end(seq, &c, err)
	return err
}

// DeletePod forgets the pod (by UID) at once: containers still running are
// dropped without SIGTERM or events of their own, and EventPodDeleted is
// published. Deleting a pod the fake does not know returns nil.
func (p *PodProvider) DeletePod(ctx context.Context, pod *v1.Pod) error {
	c := Call{Method: MethodDeletePod, Pod: refOf(pod)}
	seq := p.begin(&c)
	err := p.chain().DeletePod(ctx, pod)
	p.end(seq, &c, err)
	return err
}

// CleanupPods stops every pod the fake knows whose UID none of pods,
// runningPods and possiblyRunningPods names (an orphan), as KillPod would
// with the orphan's own grace period (as last synced, else 30s): SIGTERM
// at once, with its events, SIGKILL when the grace period ends for
// containers that ignore SIGTERM, sandboxes stopped. An orphan is
// forgotten (EventPodDeleted) as soon as none of its containers is active:
// during the call when they all honour SIGTERM, else when the grace period
// ends (published as the clock reaches it while Start runs, else at the
// next call). CleanupPods does not wait for that. A SyncPod of an orphan
// before it is forgotten makes it a desired pod again. Pods named by any
// argument are not touched.
func (p *PodProvider) CleanupPods(ctx context.Context, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error {
	c := Call{Method: MethodCleanupPods}
	seq := p.begin(&c)
	err := p.chain().CleanupPods(ctx, pods, runningPods, possiblyRunningPods)
	p.end(seq, &c, err)
	return err
}

// RefreshPodStatus sets podStatus.InitContainerStatuses and
// ContainerStatuses, one per container of pod's spec, from the fake's
// state of the pod (by UID): Running, Terminated with exit code and reason,
// or Waiting — with the failure of the latest start as reason and message
// when it failed (CrashLoopBackOff included), else ContainerCreating or
// PodInitializing. LastTerminationState is the previous instance's end.
// A running container is Started and Ready as its probes say; an init
// container that completed (exit code 0) is Ready, as the kubelet's prober
// manager reports it. Every other field of podStatus is left alone, and so is all of podStatus
// for a pod the fake does not know or a nil pod.
func (p *PodProvider) RefreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus) {
	c := Call{Method: MethodRefreshPodStatus, Pod: refOf(pod)}
	seq := p.begin(&c)
	p.chain().RefreshPodStatus(pod, podStatus)
	p.end(seq, &c, nil)
}

// GetPodStatus returns the runtime status of the pod (by UID) as of the
// clock's current time: every remembered instance (the current one and the
// one before it, per container), newest first, and the sandboxes, newest
// first. ActiveContainerStatuses lists the instances of the ready sandbox.
// A pod the fake does not know gets a status without containers or
// sandboxes. The status is a new copy at each call.
func (p *PodProvider) GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	c := Call{Method: MethodGetPodStatus, Pod: refOf(pod)}
	seq := p.begin(&c)
	status, err := p.chain().GetPodStatus(ctx, pod)
	p.end(seq, &c, err)
	return status, err
}

// GetPods lists the pods the fake knows, sorted by namespace, name and
// UID, with their running containers and ready sandboxes; with all, every
// remembered instance and sandbox, and pods with nothing running too.
func (p *PodProvider) GetPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error) {
	c := Call{Method: MethodGetPods, All: all}
	seq := p.begin(&c)
	pods, err := p.chain().GetPods(ctx, all)
	p.end(seq, &c, err)
	return pods, err
}

// Start blocks until ctx is done or Stop is called, then returns nil.
// While it runs, transitions that are due because time passed are applied
// and published to subscribers, and notified to the agent's handler
// (SetPodSyncHandler), as soon as the clock reaches them (without Start
// they are applied at the next call). A second Start while one runs,
// or a Start after Stop, returns nil at once.
func (p *PodProvider) Start(ctx context.Context) error {
	c := Call{Method: MethodStart}
	seq := p.begin(&c)
	err := p.chain().Start(ctx)
	p.end(seq, &c, err)
	return err
}

// Stop ends Start and returns once Start has returned, and ends the
// notifications to the agent (SetPodSyncHandler): no call of its handler
// comes after Stop returns but those already under way, and no timer of the
// fake waits to notify. Later calls do nothing, and so does a Stop without
// Start (a later Start then returns at once).
func (p *PodProvider) Stop() {
	c := Call{Method: MethodStop}
	seq := p.begin(&c)
	p.chain().Stop()
	p.end(seq, &c, nil)
}

// core is the fake without interceptors and without the call log: the
// `next` handed to interceptors.
type core struct{ p *PodProvider }

func (c *core) Start(ctx context.Context) error {
	p := c.p
	p.runMu.Lock()
	if p.stopped || p.running {
		p.runMu.Unlock()
		return nil
	}
	p.running = true
	done := make(chan struct{})
	p.done = done
	p.runMu.Unlock()
	defer func() {
		p.runMu.Lock()
		p.running = false
		p.runMu.Unlock()
		close(done)
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.stopCh:
			return nil
		case <-p.wakeCh:
			p.advanceAll()
		}
	}
}

func (c *core) Stop() {
	p := c.p
	p.runMu.Lock()
	if !p.stopped {
		p.stopped = true
		close(p.stopCh)
	}
	done := p.done
	p.runMu.Unlock()
	if done != nil {
		<-done
	}
	p.stopNotifying() // podsync.go
}
