package conformance_test

import (
	"context"
	"sync"
	"time"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// notifyWrap builds the PodSyncHandler a variant hands the fake instead of
// the suite's h: it may drop, delay or add calls. Goroutines it starts end
// once stop is closed (the provider's Stop).
type notifyWrap func(p *fake.PodProvider, h kri.PodSyncHandler, stop <-chan struct{}, wg *sync.WaitGroup) kri.PodSyncHandler

// notifyWrapped is the fake with its PodSyncHandler replaced by a
// notifyWrap's.
type notifyWrapped struct {
	*fake.PodProvider
	wrap     notifyWrap
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

// SetPodSyncHandler hands the fake the wrapped handler.
func (w *notifyWrapped) SetPodSyncHandler(h kri.PodSyncHandler) {
	inner, ok := any(w.PodProvider).(kri.PodSyncNotifier)
	wrapped := w.wrap(w.PodProvider, h, w.stop, &w.wg)
	if ok && wrapped != nil {
		inner.SetPodSyncHandler(wrapped)
	}
}

// Stop stops the wrapper's goroutines, then the fake.
func (w *notifyWrapped) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	w.wg.Wait()
	w.PodProvider.Stop()
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
		return &notifyWrapped{PodProvider: p.(*fake.PodProvider), wrap: wrap, stop: make(chan struct{})}, nil
	}
	return cfg
}

// notifyEvery calls h for every pod the fake knows, every period, besides
// the fake's own calls: a provider that resyncs its pods on a timer.
func notifyEvery(period time.Duration) notifyWrap {
	return func(p *fake.PodProvider, h kri.PodSyncHandler, stop <-chan struct{}, wg *sync.WaitGroup) kri.PodSyncHandler {
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
