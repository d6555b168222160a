package fake

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// Call is one call of a kri.PodProvider method, as the caller saw it
// (interceptors included).
//
// A call enters the log when it begins, before it has any effect, and is
// completed in place when it returns: whoever sees an effect of a call (in
// WaitFor, Subscribe, Snapshot or GetPodStatus) finds the call in the log.
// While it is in flight, Returned is false and Err and At are unset.
type Call struct {
	// Seq numbers calls in the order they began, from 1.
	Seq    uint64
	Method Method
	// Pod is the pod the call was about (zero for GetPods, CleanupPods,
	// Start and Stop). For KillPod it is the running pod's identity.
	Pod PodRef
	// GracePeriodOverride is the override passed to KillPod, if any.
	GracePeriodOverride *int64
	// RunningContainers and RunningSandboxes, for KillPod, are the IDs
	// (ContainerID.ID) of the containers and sandboxes of the running pod
	// passed to it, in its order (nil for none; a nil entry gives "").
	RunningContainers []string
	RunningSandboxes  []string
	// All is the argument of GetPods.
	All bool
	// StaleStatus, for SyncPod, says how the podStatus handed in differed
	// from the fake's state when the call began (a container shown running
	// that has exited, a nil or empty status for a pod that has containers,
	// ...); it is empty when the status was up to date. It is recorded
	// whatever WithStatusDrivenSync says.
	StaleStatus string
	// Returned is true once the call has returned.
	Returned bool
	// Err is the error the call returned.
	Err error
	// Began is the clock's time when the call began.
	Began time.Time
	// At is the clock's time when the call returned.
	At time.Time
}

// CallFilter selects calls from the log.
type CallFilter func(Call) bool

// ForMethod selects calls of method m.
func ForMethod(m Method) CallFilter { return func(c Call) bool { return c.Method == m } }

// ForPod selects calls about the pod with the given key ("namespace/name").
func ForPod(key string) CallFilter {
	return func(c Call) bool { return keyIs(key, c.Pod.Namespace, c.Pod.Name) }
}

// Failed selects calls that returned an error.
func Failed() CallFilter { return func(c Call) bool { return c.Err != nil } }

// Returned selects calls that have returned (and not those in flight).
func Returned() CallFilter { return func(c Call) bool { return c.Returned } }

// StaleStatus selects SyncPod calls handed a podStatus that was out of date
// (Call.StaleStatus is set).
func StaleStatus() CallFilter { return func(c Call) bool { return c.StaleStatus != "" } }

// containerIDs lists the IDs of cs, nil for none.
func containerIDs(cs []*pkgcontainer.Container) []string {
	if len(cs) == 0 {
		return nil
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		if c != nil {
			ids[i] = c.ID.ID
		}
	}
	return ids
}

func matches(c Call, filters []CallFilter) bool {
	for _, f := range filters {
		if !f(c) {
			return false
		}
	}
	return true
}

// callLog keeps the latest calls in a ring, so that recording a call never
// allocates once the ring is full.
type callLog struct {
	mu    sync.Mutex
	size  int
	seq   uint64
	ring  []Call // grows to size, then wraps; emptied by reset
	start int    // index of the oldest call in ring
	subs  fanout[Call]
	// changed is closed at the next change of the log and then replaced;
	// it is made only when someone waits, so that recording does not
	// allocate.
	changed chan struct{}
}

// begin logs a call that has just begun and returns its sequence number.
func (l *callLog) begin(c Call) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	c.Seq = l.seq
	if len(l.ring) < l.size {
		l.ring = append(l.ring, c)
	} else {
		l.ring[l.start] = c
		l.start = (l.start + 1) % l.size
	}
	l.notifyLocked(&c)
	return c.Seq
}

// end completes the call numbered seq. A call dropped from the log since
// (by ResetCalls or because newer calls pushed it out) is still delivered
// to subscribers.
func (l *callLog) end(seq uint64, c Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.entryLocked(seq); e != nil {
		e.Returned, e.Err, e.At = true, c.Err, c.At
		c = *e
	} else {
		c.Seq, c.Returned = seq, true
	}
	l.notifyLocked(&c)
}

func (l *callLog) entryLocked(seq uint64) *Call {
	if len(l.ring) == 0 {
		return nil
	}
	oldest := l.ring[l.start].Seq
	if seq < oldest || seq-oldest >= uint64(len(l.ring)) {
		return nil
	}
	return &l.ring[(l.start+int(seq-oldest))%len(l.ring)]
}

func (l *callLog) notifyLocked(c *Call) {
	l.subs.send(c)
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

func (l *callLog) changedChan() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

func (l *callLog) list(filters []CallFilter) []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Call
	for i := range len(l.ring) {
		if c := l.ring[(l.start+i)%len(l.ring)]; matches(c, filters) {
			c.RunningContainers, c.RunningSandboxes = slices.Clone(c.RunningContainers), slices.Clone(c.RunningSandboxes)
			out = append(out, c)
		}
	}
	return out
}

func (l *callLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.ring)
	l.ring = l.ring[:0]
	l.start = 0
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// Calls returns, oldest first, the logged calls that pass every filter,
// those in flight included (add Returned to leave them out). The log keeps
// the latest calls only (see WithCallLogSize).
func (p *PodProvider) Calls(filters ...CallFilter) []Call {
	return p.log.list(filters)
}

// ResetCalls empties the call log; numbering goes on. A call in flight
// during ResetCalls is not logged again when it returns (subscribers still
// see it return).
func (p *PodProvider) ResetCalls() {
	p.log.reset()
}

// WaitForCalls blocks until the call log holds at least n calls that pass
// every filter, without polling, and returns them (all of them, oldest
// first). It counts calls in flight as Calls does: pass Returned to wait
// for calls that have returned. It returns ctx's error, with the calls that
// passed so far, if ctx ends first. n must be between 1 and the call log's
// size (WithCallLogSize): the log could never hold more.
func (p *PodProvider) WaitForCalls(ctx context.Context, n int, filters ...CallFilter) ([]Call, error) {
	if n < 1 || n > p.log.size {
		return nil, fmt.Errorf("fake: WaitForCalls: n is %d, want between 1 and the call log's size %d", n, p.log.size)
	}
	for {
		changed := p.log.changedChan()
		calls := p.log.list(filters)
		if len(calls) >= n {
			return calls, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return calls, fmt.Errorf("fake: WaitForCalls: %d of %d calls after waiting: %w", len(calls), n, ctx.Err())
		}
	}
}

// CallSubscription receives on C, in order, every change of the call log
// that passes its filters: a call when it begins (Returned false) and again,
// with the same Seq, when it returns. Delivery never blocks the fake: when
// C's buffer is full the record is dropped and counted.
type CallSubscription struct {
	C <-chan Call

	sub *subscriber[Call]
}

// SubscribeCalls returns a subscription to the calls that pass every
// filter, with room for buffer undelivered records (at least 1). The filters
// run inside the call log's lock: they must not call the provider. Close
// the subscription when done.
func (p *PodProvider) SubscribeCalls(buffer int, filters ...CallFilter) *CallSubscription {
	sub := p.log.subs.subscribe(buffer, func(c Call) bool { return matches(c, filters) })
	return &CallSubscription{C: sub.ch, sub: sub}
}

// Dropped returns how many records did not fit in the buffer.
func (s *CallSubscription) Dropped() uint64 { return s.sub.dropped.Load() }

// Close stops delivery and closes C. It is safe to call more than once and
// concurrently with calls of the fake.
func (s *CallSubscription) Close() { s.sub.close() }
