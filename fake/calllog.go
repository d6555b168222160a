package fake

import (
	"sync"
	"time"
)

// Call is one call of a kri.PodProvider method, as the caller saw it
// (interceptors included).
type Call struct {
	// Seq numbers calls in the order they returned, from 1.
	Seq    uint64
	Method Method
	// Pod is the pod the call was about (zero for GetPods, CleanupPods,
	// Start and Stop). For KillPod it is the running pod's identity.
	Pod PodRef
	// GracePeriodOverride is the override passed to KillPod, if any.
	GracePeriodOverride *int64
	// All is the argument of GetPods.
	All bool
	// Err is the error the call returned.
	Err error
	// At is the clock's time when the call returned.
	At time.Time
}

// CallFilter selects calls from the log.
type CallFilter func(Call) bool

// ForMethod selects calls of method m.
func ForMethod(m Method) CallFilter { return func(c Call) bool { return c.Method == m } }

// ForPod selects calls about the pod with the given key ("namespace/name").
func ForPod(key string) CallFilter { return func(c Call) bool { return c.Pod.Key() == key } }

// Failed selects calls that returned an error.
func Failed() CallFilter { return func(c Call) bool { return c.Err != nil } }

// callLog keeps the latest calls, bounded.
type callLog struct {
	mu    sync.Mutex
	size  int
	seq   uint64
	calls []Call
}

func (l *callLog) record(c Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	c.Seq = l.seq
	l.calls = append(l.calls, c)
	// Trim in batches so that recording stays O(1) amortised.
	if len(l.calls) >= 2*l.size {
		l.calls = append(l.calls[:0:0], l.calls[len(l.calls)-l.size:]...)
	}
}

func (l *callLog) list(filters []CallFilter) []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := max(0, len(l.calls)-l.size)
	var out []Call
next:
	for _, c := range l.calls[start:] {
		for _, f := range filters {
			if !f(c) {
				continue next
			}
		}
		out = append(out, c)
	}
	return out
}

func (l *callLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = nil
}

// Calls returns, oldest first, the logged calls that pass every filter. The
// log keeps the latest calls only (see WithCallLogSize).
func (p *PodProvider) Calls(filters ...CallFilter) []Call {
	return p.log.list(filters)
}

// ResetCalls empties the call log; numbering goes on.
func (p *PodProvider) ResetCalls() {
	p.log.reset()
}
