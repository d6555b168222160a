package fake

import (
	"context"
	"sync"
	"time"
)

// EventType names a state transition of the simulation.
type EventType string

// The transitions the fake reports.
const (
	EventSandboxCreated       EventType = "SandboxCreated"
	EventSandboxStopped       EventType = "SandboxStopped"
	EventContainerCreated     EventType = "ContainerCreated"
	EventContainerStarted     EventType = "ContainerStarted"
	EventContainerStartFailed EventType = "ContainerStartFailed"
	EventContainerBackOff     EventType = "ContainerBackOff" // a start refused in crash-loop or image-pull back-off
	EventContainerKilling     EventType = "ContainerKilling" // KillPod sent SIGTERM
	EventContainerExited      EventType = "ContainerExited"
	EventPodDeleted           EventType = "PodDeleted"
	EventPostStartHook        EventType = "PostStartHook" // a postStart hook started: Message says how long it runs, ExitCode how it ends
	EventPreStopHook          EventType = "PreStopHook"   // KillPod started a preStop hook: Message says how long it runs
)

// Event is one state transition. Events are numbered in the order they
// happened; At is the simulated time of the transition.
type Event struct {
	Seq         uint64
	At          time.Time
	Type        EventType
	Pod         PodRef
	Container   string // empty for sandbox and pod events
	ContainerID string // container or sandbox ID, when there is one
	ExitCode    int    // for EventContainerExited
	Message     string // for EventContainerStartFailed and EventContainerBackOff: why
}

// Subscription receives events on C until Close. Delivery never blocks the
// fake: when C's buffer is full the event is dropped and counted.
type Subscription struct {
	C <-chan Event

	sub *subscriber[Event]
}

// Dropped returns how many events did not fit in the buffer.
func (s *Subscription) Dropped() uint64 { return s.sub.dropped.Load() }

// Close stops delivery and closes C. It is safe to call more than once and
// concurrently with the fake's work.
func (s *Subscription) Close() { s.sub.close() }

// eventHub fans events out to subscriptions and wakes waiters on change.
// Its lock is never held while calling the clock, so it may be used from
// clock callbacks.
type eventHub struct {
	mu      sync.Mutex
	subs    fanout[Event]
	seq     uint64
	changed chan struct{}
}

func newEventHub() *eventHub {
	return &eventHub{changed: make(chan struct{})}
}

func (h *eventHub) subscribe(buffer int) *Subscription {
	sub := h.subs.subscribe(buffer, nil)
	return &Subscription{C: sub.ch, sub: sub}
}

func (h *eventHub) publish(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e.Seq = h.seq
	h.subs.send(e)
	h.broadcastLocked()
}

// wake tells waiters that the state may have changed.
func (h *eventHub) wake() {
	h.mu.Lock()
	h.broadcastLocked()
	h.mu.Unlock()
}

func (h *eventHub) broadcastLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// changedChan returns a channel that is closed at the next change.
func (h *eventHub) changedChan() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

// Subscribe returns a subscription to the fake's state transitions with room
// for buffer undelivered events (at least 1). Transitions caused by a call
// are delivered during that call; transitions caused by time passing (a
// container exiting, a start latency or a grace period ending) are delivered
// as soon as the clock reaches them while Start runs, and otherwise at the
// next call. Close the subscription when done.
func (p *PodProvider) Subscribe(buffer int) *Subscription {
	return p.events.subscribe(buffer)
}

// WaitFor blocks until cond holds for the pod with the given key
// ("namespace/name"), without polling: it re-checks whenever the simulation
// changes or the clock reaches a scheduled transition. cond is called with
// ok false while the pod is unknown. It returns the snapshot for which cond
// held, or ctx's error.
func (p *PodProvider) WaitFor(ctx context.Context, key string, cond func(snap PodSnapshot, ok bool) bool) (PodSnapshot, error) {
	for {
		changed := p.events.changedChan()
		snap, ok := p.Snapshot(key)
		if cond(snap, ok) {
			return snap, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return snap, ctx.Err()
		}
	}
}

// The events of probe results: a probe's result changed (the kubelet's
// results managers publish changes only), Message names the probe kind.
const (
	EventProbeSucceeded EventType = "ProbeSucceeded"
	EventProbeFailed    EventType = "ProbeFailed"
)
