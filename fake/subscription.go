package fake

import (
	"sync"
	"sync/atomic"
)

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

// send hands v to every subscriber that keeps it, dropping it for those
// whose buffer is full. The keep functions run inside f's lock and the
// sender's.
func (f *fanout[T]) send(v T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		if s.keep != nil && !s.keep(v) {
			continue
		}
		select {
		case s.ch <- v:
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
