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
)

var (
	_ kri.PodProvider = (*PodProvider)(nil)
	_ kri.PodProvider = (*core)(nil)
)

// PodProvider is an in-memory kri.PodProvider that simulates a node runtime.
// See the package documentation for what it simulates and how to script it.
// It is safe for concurrent use.
type PodProvider struct {
	clock clock.WithDelayedExecution
	ids   IDSource
	core  *core

	icMu         sync.RWMutex
	interceptors Interceptors

	// mu guards the simulated state and the scripts. It may be held while
	// calling the clock, so clock callbacks must never take it.
	mu      sync.Mutex
	pods    map[types.UID]*podState
	byKey   map[string]types.UID
	scripts scriptBook
	seq     uint64

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
		clock:        cfg.clock,
		ids:          cfg.ids,
		interceptors: cfg.interceptors,
		pods:         map[types.UID]*podState{},
		byKey:        map[string]types.UID{},
		log:          callLog{size: cfg.callLogSize},
		events:       newEventHub(),
		wakeCh:       make(chan struct{}, 1),
		stopCh:       make(chan struct{}),
	}
	p.core = &core{p: p}
	return p
}

// SetInterceptors replaces the interceptors; it may be called at any time,
// also while pods run and calls are in flight.
func (p *PodProvider) SetInterceptors(i Interceptors) {
	p.icMu.Lock()
	defer p.icMu.Unlock()
	p.interceptors = i
}

func (p *PodProvider) hooks() Interceptors {
	p.icMu.RLock()
	defer p.icMu.RUnlock()
	return p.interceptors
}

func (p *PodProvider) record(c Call) {
	c.At = p.clock.Now()
	p.log.record(c)
}

// SyncPod implements kri.PodLifecycleHandler.
func (p *PodProvider) SyncPod(ctx context.Context, pod *v1.Pod, podStatus *pkgcontainer.PodStatus, reasonCache *kri.ReasonCache) error {
	var err error
	if h := p.hooks().SyncPod; h != nil {
		err = h(ctx, p.core, pod, podStatus, reasonCache)
	} else {
		err = p.core.SyncPod(ctx, pod, podStatus, reasonCache)
	}
	p.record(Call{Method: MethodSyncPod, Pod: refOf(pod), Err: err})
	return err
}

// KillPod implements kri.PodLifecycleHandler.
func (p *PodProvider) KillPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error {
	var err error
	if h := p.hooks().KillPod; h != nil {
		err = h(ctx, p.core, pod, runningPod, gracePeriodOverride)
	} else {
		err = p.core.KillPod(ctx, pod, runningPod, gracePeriodOverride)
	}
	c := Call{Method: MethodKillPod, Pod: PodRef{UID: runningPod.ID, Namespace: runningPod.Namespace, Name: runningPod.Name}, Err: err}
	if c.Pod.UID == "" {
		c.Pod = refOf(pod)
	}
	if gracePeriodOverride != nil {
		g := *gracePeriodOverride
		c.GracePeriodOverride = &g
	}
	p.record(c)
	return err
}

// DeletePod implements kri.PodLifecycleHandler.
func (p *PodProvider) DeletePod(ctx context.Context, pod *v1.Pod) error {
	var err error
	if h := p.hooks().DeletePod; h != nil {
		err = h(ctx, p.core, pod)
	} else {
		err = p.core.DeletePod(ctx, pod)
	}
	p.record(Call{Method: MethodDeletePod, Pod: refOf(pod), Err: err})
	return err
}

// CleanupPods implements kri.PodLifecycleHandler.
func (p *PodProvider) CleanupPods(ctx context.Context, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error {
	var err error
	if h := p.hooks().CleanupPods; h != nil {
		err = h(ctx, p.core, pods, runningPods, possiblyRunningPods)
	} else {
		err = p.core.CleanupPods(ctx, pods, runningPods, possiblyRunningPods)
	}
	p.record(Call{Method: MethodCleanupPods, Err: err})
	return err
}

// RefreshPodStatus implements kri.PodLifecycleHandler.
func (p *PodProvider) RefreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus) {
	if h := p.hooks().RefreshPodStatus; h != nil {
		h(p.core, pod, podStatus)
	} else {
		p.core.RefreshPodStatus(pod, podStatus)
	}
	p.record(Call{Method: MethodRefreshPodStatus, Pod: refOf(pod)})
}

// GetPodStatus implements kri.PodLifecycleHandler.
func (p *PodProvider) GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	var (
		status *pkgcontainer.PodStatus
		err    error
	)
	if h := p.hooks().GetPodStatus; h != nil {
		status, err = h(ctx, p.core, pod)
	} else {
		status, err = p.core.GetPodStatus(ctx, pod)
	}
	p.record(Call{Method: MethodGetPodStatus, Pod: refOf(pod), Err: err})
	return status, err
}

// GetPods implements kri.PodLifecycleHandler.
func (p *PodProvider) GetPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error) {
	var (
		pods []*pkgcontainer.Pod
		err  error
	)
	if h := p.hooks().GetPods; h != nil {
		pods, err = h(ctx, p.core, all)
	} else {
		pods, err = p.core.GetPods(ctx, all)
	}
	p.record(Call{Method: MethodGetPods, All: all, Err: err})
	return pods, err
}

// Start implements kri.PodLifecycleHandler: it blocks until ctx is done or
// Stop is called, then returns nil. While it runs, transitions that are due
// because time passed are applied and published to subscribers as soon as
// the clock reaches them.
func (p *PodProvider) Start(ctx context.Context) error {
	var err error
	if h := p.hooks().Start; h != nil {
		err = h(ctx, p.core)
	} else {
		err = p.core.Start(ctx)
	}
	p.record(Call{Method: MethodStart, Err: err})
	return err
}

// Stop implements kri.PodLifecycleHandler: it ends Start and returns once
// Start has returned. Later calls do nothing.
func (p *PodProvider) Stop() {
	if h := p.hooks().Stop; h != nil {
		h(p.core)
	} else {
		p.core.Stop()
	}
	p.record(Call{Method: MethodStop})
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
}
