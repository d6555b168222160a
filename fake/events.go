package fake

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kri-kit/testkit/sim/workload"
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
	h.subs.send(&e)
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

// publish publishes e to subscribers and, for a transition the agent
// publishes or acts on, notifies the agent of the pod at the next unlock
// (podsync.go). The caller holds p.mu.
func (p *PodProvider) publish(e Event) {
	p.events.publish(e)
	if notifies(e.Type) {
		p.notifyPod(e.Pod.UID)
	}
}

// publish publishes e as p.publish does, but notifies the agent only when
// the sync is not recording a failed start (failStart notifies for those).
func (s *syncer) publish(e Event) {
	if s.quiet {
		s.p.events.publish(e)
		return
	}
	s.p.publish(e)
}

// onRunEvent publishes an event of a run of pod ps (and, when the run
// exits, keeps its termination message on its instance). The events of a
// run after its exit are dropped, but for its hooks'. The caller holds
// p.mu.
func (p *PodProvider) onRunEvent(ps *podState, e workload.PodEvent) {
	var in *instance // instanceOf(e.Run), read here
	if e.Run != nil {
		in, _ = e.Run.Data.(*instance)
	}
	if in == nil || in.exited && e.Kind != workload.HookRan {
		return
	}
	switch e.Kind {
	case workload.HookRan:
		p.publishHook(ps, in, e)
	case workload.RunStarted:
		p.publish(Event{At: e.At, Type: EventContainerStarted, Pod: ps.ref, Container: in.Spec.Name, ContainerID: in.ID})
	case workload.RunKilling:
		p.publish(Event{At: e.At, Type: EventContainerKilling, Pod: ps.ref, Container: in.Spec.Name, ContainerID: in.ID})
	case workload.RunExited:
		// What its command and its hooks left.
		in.exited, in.message = true, in.TerminationMessage(in.Spec)
		p.publish(Event{At: in.FinishedAt(), Type: EventContainerExited, Pod: ps.ref, Container: in.Spec.Name, ContainerID: in.ID, ExitCode: in.ExitCode()})
	case workload.ProbeChanged:
		p.publishProbe(ps, in, e.Probe)
	}
}

// publishProbe publishes the change of a probe's result of instance in.
func (p *PodProvider) publishProbe(ps *podState, in *instance, run workload.ProbeRun) {
	typ := EventProbeSucceeded
	if !run.Succeeded {
		typ = EventProbeFailed
	}
	p.publish(Event{At: run.At, Type: typ, Pod: ps.ref, Container: in.Spec.Name, ContainerID: in.ID, Message: string(run.Kind)})
}

// publishHook publishes the run of a hook of instance in (a HookRan event
// of the pod simulation): EventPostStartHook, or EventPreStopHook. The
// caller holds p.mu.
func (p *PodProvider) publishHook(ps *podState, in *instance, e workload.PodEvent) {
	run := e.Hook
	if e.HookKind == workload.HookPreStop {
		p.publish(Event{At: e.At, Type: EventPreStopHook, Pod: ps.ref, Container: in.Spec.Name, ContainerID: in.ID,
			Message: fmt.Sprintf("%s hook runs %s of the grace period %s from %s", run.Action, e.Until.Sub(e.From), e.Grace, e.From.Format(time.RFC3339Nano))})
		return
	}
	p.publish(Event{At: e.At, Type: EventPostStartHook, Pod: ps.ref, Container: in.Spec.Name, ContainerID: in.ID, ExitCode: exitCode(run),
		Message: fmt.Sprintf("%s hook runs %s from %s, exits %d", run.Action, run.Takes, e.From.Format(time.RFC3339Nano), exitCode(run))})
}

// exitCode is the exit code EventPostStartHook reports of hook h: an exec
// command's, 1 for another hook that failed.
func exitCode(h workload.Hook) int {
	if h.Failed && h.ExitCode == 0 {
		return 1
	}
	return h.ExitCode
}

// notifyPod asks for a notification of pod uid at the next unlock. The
// caller holds p.mu.
func (p *PodProvider) notifyPod(uid types.UID) {
	if p.notifying && uid != "" && (len(p.pending) == 0 || p.pending[len(p.pending)-1] != uid) {
		p.pending = append(p.pending, uid)
	}
}

// notifies reports whether a published transition of type t notifies the
// agent. A failed or refused start (EventContainerStartFailed,
// EventContainerBackOff) notifies through failedStart instead, so that an
// agent that syncs on every call is not kept in a loop of failing starts; a
// pod forgotten (EventPodDeleted) is no longer the agent's.
func notifies(t EventType) bool {
	switch t {
	case EventContainerStartFailed, EventContainerBackOff, EventPodDeleted:
		return false
	}
	return true
}

// fanout hands values of type T to its subscribers without ever blocking
// the sender: a subscriber whose buffer is full misses the value and
// counts it. Subscription (events) and CallSubscription (the call log) are
// its two uses. The zero fanout is ready to use.
type fanout[T any] struct {
	mu   sync.Mutex
	subs map[*subscriber[T]]struct{}
}

// subscriber is one subscription of a fanout.
type subscriber[T any] struct {
	ch      chan T
	keep    func(T) bool // nil keeps every value
	from    *fanout[T]
	dropped atomic.Uint64
	closed  bool // guarded by from.mu
}

// subscribe adds a subscriber with room for buffer undelivered values (at
// least 1), which gets the values keep accepts (every value when keep is
// nil).
func (f *fanout[T]) subscribe(buffer int, keep func(T) bool) *subscriber[T] {
	s := &subscriber[T]{ch: make(chan T, max(buffer, 1)), keep: keep, from: f}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.subs == nil {
		f.subs = map[*subscriber[T]]struct{}{}
	}
	f.subs[s] = struct{}{}
	return s
}

// send hands *v to every subscriber that keeps it, dropping it for those
// whose buffer is full (by pointer: a Call is copied only for a
// subscriber). The keep functions run inside f's lock and the sender's.
func (f *fanout[T]) send(v *T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) == 0 {
		return // no iterator started over an empty map
	}
	for s := range f.subs {
		if s.keep != nil && !s.keep(*v) {
			continue
		}
		select {
		case s.ch <- *v:
		default:
			s.dropped.Add(1)
		}
	}
}

// close stops delivery to s and closes its channel; later calls do nothing.
func (s *subscriber[T]) close() {
	s.from.mu.Lock()
	defer s.from.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	delete(s.from.subs, s)
	close(s.ch)
}
