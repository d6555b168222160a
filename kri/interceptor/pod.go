package interceptor

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

// PodFuncs holds one optional function per method of kri.PodProvider, and
// one for kri.PodSyncNotifier's SetPodSyncHandler. A function that is set
// is called instead of the wrapped provider's method, with next, the
// wrapped provider; a nil one leaves the method to the wrapped provider.
// The zero PodFuncs changes nothing.
type PodFuncs struct {
	SyncPod          func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, podStatus *pkgcontainer.PodStatus, reasonCache *kri.ReasonCache) error
	KillPod          func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error
	DeletePod        func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) error
	CleanupPods      func(ctx context.Context, next kri.PodProvider, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error
	RefreshPodStatus func(next kri.PodProvider, pod *v1.Pod, podStatus *v1.PodStatus)
	GetPodStatus     func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error)
	GetPods          func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error)
	Start            func(ctx context.Context, next kri.PodProvider) error
	Stop             func(next kri.PodProvider)

	// SetPodSyncHandler is called only when the wrapped provider is a
	// kri.PodSyncNotifier (next); the wrapper of any other provider has
	// no SetPodSyncHandler method.
	SetPodSyncHandler func(next kri.PodSyncNotifier, h kri.PodSyncHandler)
}

// NewPodProvider returns p with funcs around its methods: each call goes to
// the matching function of funcs, with p as next, or to p's own method when
// that function is nil. The result implements kri.PodSyncNotifier exactly
// when p does. funcs is copied: changing the caller's PodFuncs later changes
// nothing. NewPodProvider panics if p is nil.
func NewPodProvider(p kri.PodProvider, funcs PodFuncs) kri.PodProvider {
	if p == nil {
		panic("interceptor: NewPodProvider of a nil provider")
	}
	w := &podProvider{next: p, funcs: funcs}
	if n, ok := p.(kri.PodSyncNotifier); ok {
		return &notifyingPodProvider{podProvider: w, notifier: n}
	}
	return w
}

// podProvider is the wrapper of a provider that is no PodSyncNotifier.
type podProvider struct {
	next  kri.PodProvider
	funcs PodFuncs
}

var _ kri.PodProvider = (*podProvider)(nil)

func (w *podProvider) SyncPod(ctx context.Context, pod *v1.Pod, podStatus *pkgcontainer.PodStatus, reasonCache *kri.ReasonCache) error {
	if f := w.funcs.SyncPod; f != nil {
		return f(ctx, w.next, pod, podStatus, reasonCache)
	}
	return w.next.SyncPod(ctx, pod, podStatus, reasonCache)
}

func (w *podProvider) KillPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error {
	if f := w.funcs.KillPod; f != nil {
		return f(ctx, w.next, pod, runningPod, gracePeriodOverride)
	}
	return w.next.KillPod(ctx, pod, runningPod, gracePeriodOverride)
}

func (w *podProvider) DeletePod(ctx context.Context, pod *v1.Pod) error {
	if f := w.funcs.DeletePod; f != nil {
		return f(ctx, w.next, pod)
	}
	return w.next.DeletePod(ctx, pod)
}

func (w *podProvider) CleanupPods(ctx context.Context, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error {
	if f := w.funcs.CleanupPods; f != nil {
		return f(ctx, w.next, pods, runningPods, possiblyRunningPods)
	}
	return w.next.CleanupPods(ctx, pods, runningPods, possiblyRunningPods)
}

func (w *podProvider) RefreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus) {
	if f := w.funcs.RefreshPodStatus; f != nil {
		f(w.next, pod, podStatus)
		return
	}
	w.next.RefreshPodStatus(pod, podStatus)
}

func (w *podProvider) GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	if f := w.funcs.GetPodStatus; f != nil {
		return f(ctx, w.next, pod)
	}
	return w.next.GetPodStatus(ctx, pod)
}

func (w *podProvider) GetPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error) {
	if f := w.funcs.GetPods; f != nil {
		return f(ctx, w.next, all)
	}
	return w.next.GetPods(ctx, all)
}

func (w *podProvider) Start(ctx context.Context) error {
	if f := w.funcs.Start; f != nil {
		return f(ctx, w.next)
	}
	return w.next.Start(ctx)
}

func (w *podProvider) Stop() {
	if f := w.funcs.Stop; f != nil {
		f(w.next)
		return
	}
	w.next.Stop()
}

// notifyingPodProvider is the wrapper of a provider that is a
// PodSyncNotifier.
type notifyingPodProvider struct {
	*podProvider
	notifier kri.PodSyncNotifier // the wrapped provider
}

var _ kri.PodSyncNotifier = (*notifyingPodProvider)(nil)

func (w *notifyingPodProvider) SetPodSyncHandler(h kri.PodSyncHandler) {
	if f := w.funcs.SetPodSyncHandler; f != nil {
		f(w.notifier, h)
		return
	}
	w.notifier.SetPodSyncHandler(h)
}
