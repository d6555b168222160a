package kri_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podsync"
)

// pollBackend is a backend that can only be polled: it answers what each
// pod's containers are doing now, and never says when that changes.
type pollBackend struct {
	mu   sync.Mutex
	pods map[types.UID]string // a digest of what GetPodStatus would report
}

func (b *pollBackend) list() map[types.UID]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.pods)
}

func (b *pollBackend) set(uid types.UID, digest string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pods[uid] = digest
}

// pollingProvider keeps the duty to notify over a backend that can only be
// polled: nobody else polls it (kuscia's agent has no resync), so the
// provider does, on a ticker of its own, and calls Notify for each pod
// whose digest (container IDs, states, exit codes, restart counts, Started
// and Ready: what the agent publishes) changed since the last poll, and
// only for those: a call per pod per poll would have the agent sync every
// pod at every poll.
type pollingProvider struct {
	podsync.Notifier // SetPodSyncHandler, Notify, NotifyAfter, Forget
	backend          *pollBackend
	last             map[types.UID]string
	// ... the kri.PodProvider methods
}

// poll is one poll of the backend.
func (p *pollingProvider) poll() {
	now := p.backend.list()
	for _, uid := range slices.Sorted(maps.Keys(now)) {
		if now[uid] != p.last[uid] {
			p.Notify(uid)
		}
	}
	p.last = now
}

// run polls every interval until ctx is done: the provider's Start runs it.
// The interval is how late a change may reach the agent: a second, as the
// kubelet's PLEG relists, suits a local backend; a remote one a few
// seconds. The conformance suite waits Timeouts.State (60s) at most.
func (p *pollingProvider) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.poll()
		}
	}
}

// A provider whose backend can only be polled polls it itself and notifies
// the pods whose state changed (pollingProvider above).
func ExamplePodSyncNotifier_pollOnlyBackend() {
	b := &pollBackend{pods: map[types.UID]string{"uid-1": "app running", "uid-2": "app running"}}
	p := &pollingProvider{backend: b, last: b.list()}
	var _ kri.PodSyncNotifier = p
	p.SetPodSyncHandler(kri.PodSyncHandlerFunc(func(uid types.UID) { fmt.Println("sync", uid) }))

	p.poll() // nothing changed: no call
	b.set("uid-2", "app exited 1, restarts 0")
	p.poll()  // one call, for uid-2
	_ = p.run // Start would run p.run(ctx, time.Second)
	// Output: sync uid-2
}

// logged is a decorator of another provider. Embedding kri.PodProvider
// gives it only the interface's methods: the wrapped provider's
// SetPodSyncHandler is hidden, and the agent (and the conformance suite)
// would see a provider that never notifies. It forwards the method.
type logged struct {
	kri.PodProvider
}

// SetPodSyncHandler forwards the agent's handler to the wrapped provider,
// which makes the calls.
func (l logged) SetPodSyncHandler(h kri.PodSyncHandler) {
	if n, ok := l.PodProvider.(kri.PodSyncNotifier); ok {
		n.SetPodSyncHandler(h)
	}
}

// hiding is the same decorator without the forwarding method: the trap.
type hiding struct {
	kri.PodProvider
}

// A wrapper that embeds kri.PodProvider must forward SetPodSyncHandler (or
// be built with interceptor.NewPodProvider, which forwards it).
func ExamplePodSyncNotifier_wrapper() {
	inner := fake.NewPodProvider()
	_, hides := any(hiding{inner}).(kri.PodSyncNotifier)
	_, forwards := any(logged{inner}).(kri.PodSyncNotifier)
	fmt.Println("embedding only, a PodSyncNotifier:", hides)
	fmt.Println("forwarding, a PodSyncNotifier:", forwards)
	// Output:
	// embedding only, a PodSyncNotifier: false
	// forwarding, a PodSyncNotifier: true
}
