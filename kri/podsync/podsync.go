// Package podsync helps a provider keep its duty to the node agent (see
// kri.PodSyncNotifier): tell it, by the PodSyncHandler the agent hands the
// provider, when a pod needs a sync.
//
// A provider embeds a Notifier, which implements kri.PodSyncNotifier, and
// calls Notify when it sees a pod change (a container started or exited, a
// probe result, a backend update) and NotifyAfter when it knows a change
// is due later (a crash-loop or image-pull back-off that ends then).
package podsync

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kri-kit/testkit/kri"
)

// Notifier holds the agent's PodSyncHandler and calls it. The zero value is
// ready to use, on the real clock; it is safe for concurrent use. Before
// SetPodSyncHandler and after Stop, its calls do nothing. It never calls
// the handler or the clock while it holds a lock of its own, and never
// calls the handler from within the clock (a clocktesting.FakeClock's Step
// runs timer callbacks under its lock): a handler may read the provider
// and its clock.
type Notifier struct {
	// Clock runs NotifyAfter's timers; nil means the real clock.
	Clock clock.WithDelayedExecution

	mu      sync.Mutex
	h       kri.PodSyncHandler
	timers  map[types.UID][]*pendingCall
	stopped bool
}

// pendingCall is one NotifyAfter not yet made.
type pendingCall struct {
	t         clock.Timer
	fired     bool // the timer fired: the call is being made
	cancelled bool // Forget or Stop came first
}

// SetPodSyncHandler keeps h, the agent's handler (kri.PodSyncNotifier).
func (n *Notifier) SetPodSyncHandler(h kri.PodSyncHandler) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.h = h
}

// Notify asks the agent to sync the pod of uid. It calls the handler in the
// calling goroutine, without holding any lock of the Notifier.
func (n *Notifier) Notify(uid types.UID) {
	n.mu.Lock()
	h, stopped := n.h, n.stopped
	n.mu.Unlock()
	if h != nil && !stopped && uid != "" {
		h.HandlePodSyncByUID(uid)
	}
}

// NotifyAfter calls Notify(uid) once d has passed on the Notifier's clock
// (at once when d is not positive), unless Forget(uid) or Stop comes first.
// Several pending calls for one pod each fire. The call is made from a
// goroutine of its own.
func (n *Notifier) NotifyAfter(uid types.UID, d time.Duration) {
	if d <= 0 {
		n.Notify(uid)
		return
	}
	n.mu.Lock()
	stopped := n.stopped
	n.mu.Unlock()
	if stopped || uid == "" {
		return
	}
	pc := &pendingCall{}
	t := n.clock().AfterFunc(d, func() { go n.fire(uid, pc) })
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.stopped:
		pc.cancelled = true
		t.Stop()
	case !pc.fired:
		pc.t = t
		if n.timers == nil {
			n.timers = map[types.UID][]*pendingCall{}
		}
		n.timers[uid] = append(n.timers[uid], pc)
	}
}

// fire makes the call of pc, unless it was cancelled.
func (n *Notifier) fire(uid types.UID, pc *pendingCall) {
	n.mu.Lock()
	pc.fired = true
	cancelled := pc.cancelled
	ts := slices.DeleteFunc(n.timers[uid], func(p *pendingCall) bool { return p == pc })
	if len(ts) == 0 {
		delete(n.timers, uid)
	} else {
		n.timers[uid] = ts
	}
	n.mu.Unlock()
	if !cancelled {
		n.Notify(uid)
	}
}

// Pending returns how many NotifyAfter calls for uid have not fired yet.
func (n *Notifier) Pending(uid types.UID) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.timers[uid])
}

// Forget cancels the pending NotifyAfter calls for uid (a pod the provider
// has deleted).
func (n *Notifier) Forget(uid types.UID) {
	n.mu.Lock()
	ts := n.timers[uid]
	delete(n.timers, uid)
	for _, pc := range ts {
		pc.cancelled = true
	}
	n.mu.Unlock()
	for _, pc := range ts {
		pc.t.Stop()
	}
}

// Stop cancels every pending NotifyAfter call; later calls of Notify and
// NotifyAfter do nothing. A provider calls it from its own Stop, so that no
// timer outlives it.
func (n *Notifier) Stop() {
	n.mu.Lock()
	n.stopped = true
	all := n.timers
	n.timers = nil
	for _, ts := range all {
		for _, pc := range ts {
			pc.cancelled = true
		}
	}
	n.mu.Unlock()
	for _, ts := range all {
		for _, pc := range ts {
			pc.t.Stop()
		}
	}
}

func (n *Notifier) clock() clock.WithDelayedExecution {
	if n.Clock != nil {
		return n.Clock
	}
	return clock.RealClock{}
}

var _ kri.PodSyncNotifier = (*Notifier)(nil)
