package conformance_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// notifyWrap builds the PodSyncHandler a variant hands the fake instead of
// the suite's h: it may drop, delay or add calls. Goroutines it starts end
// once stop is closed (the provider's Stop).
type notifyWrap func(p *fake.PodProvider, h kri.PodSyncHandler, stop <-chan struct{}, wg *goroutines) kri.PodSyncHandler

// notifyWrapped returns p with wrap between the agent's PodSyncHandler and
// p: at SetPodSyncHandler, wrap gets the agent's handler and p gets the
// handler wrap returns (none when it returns nil). At Stop, the goroutines
// wrap started end before p stops. f is the fake p is or wraps, handed to
// wrap (nil for another provider).
func notifyWrapped(p kri.PodProvider, f *fake.PodProvider, wrap notifyWrap) kri.PodProvider {
	stop := make(chan struct{})
	var stopOnce sync.Once
	var wg goroutines
	return interceptor.NewPodProvider(p, interceptor.PodFuncs{
		SetPodSyncHandler: func(next kri.PodSyncNotifier, h kri.PodSyncHandler) {
			if wrapped := wrap(f, h, stop, &wg); wrapped != nil {
				next.SetPodSyncHandler(wrapped)
			}
		},
		Stop: func(next kri.PodProvider) {
			wg.stop()
			stopOnce.Do(func() { close(stop) })
			wg.wg.Wait()
			next.Stop()
		},
	})
}

// withNotifyWrap makes cfg's fakes hand their calls through wrap.
func withNotifyWrap(cfg conformance.Config, wrap notifyWrap) conformance.Config {
	if wrap == nil || cfg.NewPodProvider == nil {
		return cfg
	}
	next := cfg.NewPodProvider
	cfg.NewPodProvider = func(ctx context.Context) (kri.PodProvider, error) {
		p, err := next(ctx)
		if err != nil {
			return nil, err
		}
		return notifyWrapped(p, p.(*fake.PodProvider), wrap), nil
	}
	return cfg
}

// withLaterCalls makes cfg's fakes run the interceptors build makes, with
// a laterCalls of their own.
func withLaterCalls(cfg conformance.Config, build func(*fake.PodProvider, *laterCalls) interceptor.PodFuncs) conformance.Config {
	next := cfg.NewPodProvider
	cfg.NewPodProvider = func(ctx context.Context) (kri.PodProvider, error) {
		p, err := next(ctx)
		if err != nil {
			return nil, err
		}
		f := p.(*fake.PodProvider)
		later := &laterCalls{}
		f.SetInterceptors(build(f, later))
		return notifyWrapped(f, f, later.wrap), nil
	}
	return cfg
}

// notifyEvery calls h for every pod the fake knows, every period, besides
// the fake's own calls: a provider that resyncs its pods on a timer.
func notifyEvery(period time.Duration) notifyWrap {
	return func(p *fake.PodProvider, h kri.PodSyncHandler, stop <-chan struct{}, wg *goroutines) kri.PodSyncHandler {
		wg.Go(func() {
			t := time.NewTicker(period)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					for _, s := range p.Snapshots() {
						h.HandlePodSyncByUID(s.Pod.UID)
					}
				}
			}
		})
		return h
	}
}

// notifyNever drops every call: a provider that never calls
// HandlePodSyncByUID.
func notifyNever(*fake.PodProvider, kri.PodSyncHandler, <-chan struct{}, *goroutines) kri.PodSyncHandler {
	return kri.PodSyncHandlerFunc(func(types.UID) {})
}

// notifyOnStartsOnly forwards a call only when the pod has a running
// container it did not have at the last forwarded call: a provider that
// tells the agent of container starts and of nothing else.
func notifyOnStartsOnly(p *fake.PodProvider, h kri.PodSyncHandler, _ <-chan struct{}, _ *goroutines) kri.PodSyncHandler {
	var mu sync.Mutex
	seen := map[types.UID]sets.Set[string]{}
	return kri.PodSyncHandlerFunc(func(uid types.UID) {
		running := sets.New[string]()
		for _, s := range p.Snapshots() {
			if s.Pod.UID != uid {
				continue
			}
			for _, c := range s.Containers {
				if c.State == pkgcontainer.ContainerStateRunning {
					running.Insert(c.ID)
				}
			}
		}
		mu.Lock()
		started := running.Difference(seen[uid]).Len() > 0
		seen[uid] = running
		mu.Unlock()
		if started {
			h.HandlePodSyncByUID(uid)
		}
	})
}

// notifyOnChangesOnly forwards a call only when what the fake reports of
// the pod's containers (their instances, states, exit codes, readiness)
// changed since the last forwarded call: a provider that relays container
// events (a PLEG) and probe results but forgets the end of a back-off,
// which changes nothing it reports (kuscia's own CRIProvider, by reading).
func notifyOnChangesOnly(p *fake.PodProvider, h kri.PodSyncHandler, _ <-chan struct{}, _ *goroutines) kri.PodSyncHandler {
	var mu sync.Mutex
	seen := map[types.UID]string{}
	return kri.PodSyncHandlerFunc(func(uid types.UID) {
		var b strings.Builder
		for _, s := range p.Snapshots() {
			if s.Pod.UID == uid {
				fmt.Fprintf(&b, "%+v", s.Containers)
			}
		}
		mu.Lock()
		changed := seen[uid] != b.String()
		seen[uid] = b.String()
		mu.Unlock()
		if changed {
			h.HandlePodSyncByUID(uid)
		}
	})
}

// notifyLate makes each call from a goroutine of its own, delay later.
func notifyLate(delay time.Duration) notifyWrap {
	return func(_ *fake.PodProvider, h kri.PodSyncHandler, stop <-chan struct{}, wg *goroutines) kri.PodSyncHandler {
		return kri.PodSyncHandlerFunc(func(uid types.UID) {
			afterUnlessStopped(wg, stop, delay, func() { h.HandlePodSyncByUID(uid) })
		})
	}
}

// notifyDebounced folds the calls for a pod that come within window of the
// first into one, made at the end of the window.
func notifyDebounced(window time.Duration) notifyWrap {
	return func(_ *fake.PodProvider, h kri.PodSyncHandler, stop <-chan struct{}, wg *goroutines) kri.PodSyncHandler {
		var mu sync.Mutex
		pending := map[types.UID]bool{}
		return kri.PodSyncHandlerFunc(func(uid types.UID) {
			mu.Lock()
			if pending[uid] {
				mu.Unlock()
				return
			}
			pending[uid] = true
			mu.Unlock()
			afterUnlessStopped(wg, stop, window, func() {
				mu.Lock()
				delete(pending, uid)
				mu.Unlock()
				h.HandlePodSyncByUID(uid)
			})
		})
	}
}

// laterCalls lets a variant's interceptors ask for a call of the agent's
// handler later, as a provider must when a delay of its own ends (a
// back-off, a result held back): the interceptors change when things
// happen, behind the fake's own calls.
type laterCalls struct {
	mu   sync.Mutex
	h    kri.PodSyncHandler
	stop <-chan struct{}
	wg   *goroutines
}

// wrap is the notifyWrap that gives l the handler; the fake keeps its own
// calls.
func (l *laterCalls) wrap(_ *fake.PodProvider, h kri.PodSyncHandler, stop <-chan struct{}, wg *goroutines) kri.PodSyncHandler {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.h, l.stop, l.wg = h, stop, wg
	return h
}

// after calls the handler for uid once d has passed (at once when d is
// not positive), unless the provider has stopped.
func (l *laterCalls) after(uid types.UID, d time.Duration) {
	l.mu.Lock()
	h, stop, wg := l.h, l.stop, l.wg
	l.mu.Unlock()
	if h == nil {
		return
	}
	if d <= 0 {
		h.HandlePodSyncByUID(uid)
		return
	}
	afterUnlessStopped(wg, stop, d, func() { h.HandlePodSyncByUID(uid) })
}

// goroutines are those a notifyWrap starts. Go starts none once stop has
// been called, so that the Wait after it sees every one: a WaitGroup's Add
// must not race its Wait (the race detector fails the notify-late and
// notify-debounced variants otherwise).
type goroutines struct {
	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup
}

// Go runs f in a goroutine of its own, unless stop has been called.
func (g *goroutines) Go(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopped {
		g.wg.Go(f)
	}
}

// stop makes later calls of Go do nothing.
func (g *goroutines) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
}

// afterUnlessStopped runs fn in a goroutine of wg once d has passed,
// unless stop is closed first.
func afterUnlessStopped(wg *goroutines, stop <-chan struct{}, d time.Duration, fn func()) {
	wg.Go(func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-stop:
		case <-t.C:
			fn()
		}
	})
}
