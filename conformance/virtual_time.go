package conformance

import (
	"bytes"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/onsi/ginkgo/v2"
)

// Virtual time (Config.VirtualTime): each spec runs its provider, its calls,
// its waits and its cleanups inside a testing/synctest bubble of its own,
// whose clock moves only when every goroutine in it is blocked on a channel,
// a timer, a sync.Cond or a sync.WaitGroup of the bubble. Ginkgo itself stays
// outside (its interrupt handler leaves a goroutine behind and signal.Notify
// from inside a bubble is fatal: onsi/ginkgo#1601): the spec goroutine starts
// the bubble and waits for it, runs for it what must see real time (Ginkgo's
// steps and report entries, which carry timestamps), and carries its failure
// (a Ginkgo Fail or Skip, which panic) back to Ginkgo by panicking again.
//
// A bubble can fail in two ways a real clock cannot:
//   - its goroutines outlive the spec (the provider leaves goroutines running
//     after Stop and its context cancelled, or a call hung on a channel): the
//     bubble ends in synctest's deadlock panic, which becomes the spec's failure,
//     listing the goroutines left;
//   - a call blocks on something synctest does not see (a mutex held for good,
//     real I/O, a busy loop): the virtual clock then stands still, no call
//     timeout can fire, and only the spec goroutine's watchdog, on the real
//     clock, notices. It fails the spec naming the call in flight and abandons
//     the bubble (its goroutines stay behind, blocked).

// bubble is the state the spec goroutine and the spec's bubble share.
type bubble struct {
	// calls and returned are made outside the bubble, so both sides may use
	// them: the bubble hands the spec goroutine a function to run (outside)
	// and waits for it.
	calls    chan func()
	returned chan struct{}
	mu       sync.Mutex // one outside call at a time

	// progress counts the steps of the spec (provider calls begun and
	// returned, checks of a wait, outside calls); the watchdog reads it.
	progress atomic.Int64
	// call is the provider call begun last and not yet returned ("" when
	// none).
	call atomic.Pointer[string]
	// abandoned: the watchdog gave up on the bubble; whatever it still does
	// must not reach Ginkgo, which has moved on to other specs.
	abandoned atomic.Bool
	// id is the synctest bubble's number in goroutine tracebacks, set by
	// the bubble as it starts, read by the watchdog at any time.
	id atomic.Value // string
}

// bubbleID returns the bubble's number ("" before it is known).
func (bb *bubble) bubbleID() string {
	id, _ := bb.id.Load().(string)
	return id
}

// bubbleAbandoned ends the body of a bubble the watchdog gave up on.
type bubbleAbandoned struct{}

// stuckAfter is how long, on the real clock, a bubble may make no progress
// before the watchdog fails the spec: the call timeout, at least 10s.
func (b *base) stuckAfter() time.Duration { return max(b.st.t.Call, 10*time.Second) }

// runVirtual runs fn, the whole spec after its skips, in a synctest bubble
// of its own (t is the test that called Run), and returns when fn has
// returned and every goroutine of the bubble has ended or blocked for good.
// A panic of fn (the spec's failure or skip) is raised again in the calling
// goroutine.
func (b *base) runVirtual(t *testing.T, fn func()) {
	bb := &bubble{calls: make(chan func()), returned: make(chan struct{})}
	b.vt = bb
	type outcome struct {
		carried  any // fn's panic
		deadlock any // synctest's, when goroutines were left blocked
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			o.deadlock = recover()
			done <- o
		}()
		synctest.Test(t, func(*testing.T) {
			own := make([]byte, 256)
			bb.id.Store(bubbleOf(own[:runtime.Stack(own, false)]))
			defer func() {
				o.carried = recover()
				b.settle()
			}()
			fn()
		})
	}()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, since := bb.progress.Load(), time.Now()
	for {
		select {
		case f := <-bb.calls:
			func() {
				defer func() { bb.returned <- struct{}{} }()
				f()
			}()
		case o := <-done:
			b.vt = nil // the bubble is over: what follows runs here
			if o.deadlock != nil {
				b.leftover(o.deadlock, bb.bubbleID(), o.carried != nil)
			}
			if o.carried != nil {
				panic(o.carried)
			}
			return
		case <-tick.C:
			if p := bb.progress.Load(); p != last {
				last, since = p, time.Now()
				continue
			}
			if stood := time.Since(since); stood >= b.stuckAfter() {
				msg := stuckMessage(bb, stood)
				bb.abandoned.Store(true)
				b.failSpec(msg, 0)
				return
			}
		}
	}
}

// settle gives the goroutines the provider started up to the call timeout
// of virtual time to end once the spec is over (a backend that completes a
// deletion a moment after KillPod returned, a goroutine of Stop's): in real
// time they would end unseen after the spec. It runs in the bubble.
func (b *base) settle() {
	deadline := time.Now().Add(b.st.t.Call)
	for wait := b.st.t.Poll; len(providerGoroutines(b.vt.bubbleID())) > 0 && time.Now().Before(deadline); wait *= 2 {
		time.Sleep(min(wait, time.Until(deadline)))
	}
}

// leftover handles synctest's deadlock panic: goroutines of the bubble were
// still blocked when the spec was over. Those the provider started fail the
// spec (or, when it failed already, are noted); those the suite started
// (calls it abandoned after the call timeout, a Start that did not return)
// are only noted: the specs that own those promises judge them, as on the
// real clock, where such goroutines go on unseen.
func (b *base) leftover(deadlock any, id string, failed bool) {
	left := providerGoroutines(id)
	reason := fmt.Sprint(deadlock)
	if len(left) == 0 {
		b.note("calls the suite abandoned were still blocked when the spec ended (" + reason + ")")
		return
	}
	msg := fmt.Sprintf("goroutines of the provider outlived the spec: after the spec's pods were killed and deleted, "+
		"Stop returned and the provider's context was cancelled, %d goroutine(s) it started were still blocked "+
		"%s of virtual time later. Under Config.VirtualTime each spec runs in a synctest bubble that ends only when "+
		"every goroutine started in it has ended (%s).\n\nGoroutines left:\n%s",
		len(left), b.st.t.Call, reason, strings.Join(left, "\n\n"))
	if failed {
		b.note(msg)
		return
	}
	b.failHandler(msg, 0)
}

// outside runs f on the spec goroutine when the spec runs in a bubble (so
// that what Ginkgo records carries real timestamps), else at once.
func (b *base) outside(f func()) {
	bb := b.vt
	if bb == nil {
		f()
		return
	}
	if bb.abandoned.Load() {
		return
	}
	bb.progress.Add(1)
	bb.mu.Lock()
	defer bb.mu.Unlock()
	bb.calls <- f
	<-bb.returned
}

// begin and end mark a provider call for the watchdog.
func (b *base) begin(method string) {
	if bb := b.vt; bb != nil {
		bb.progress.Add(1)
		bb.call.Store(&method)
	}
}

func (b *base) end() {
	if bb := b.vt; bb != nil {
		bb.progress.Add(1)
		none := ""
		bb.call.Store(&none)
	}
}

// advanced marks one check of a wait for the watchdog.
func (b *base) advanced() {
	if bb := b.vt; bb != nil {
		bb.progress.Add(1)
	}
}

// step is ginkgo.By, run outside the bubble.
func (b *base) step(text string) {
	b.outside(func() { ginkgo.By(text) })
}

// reportEntry is ginkgo.AddReportEntry, run outside the bubble.
func (b *base) reportEntry(name string, args ...any) {
	b.outside(func() { ginkgo.AddReportEntry(name, args...) })
}

// stuckMessage says which call the watchdog gave up on.
func stuckMessage(bb *bubble, stood time.Duration) string {
	what := "the spec"
	if c := bb.call.Load(); c != nil && *c != "" {
		what = *c
	}
	return fmt.Sprintf("%s made no progress for %s of real time while the spec's virtual clock stood still: "+
		"under Config.VirtualTime a provider may only wait on channels, timers, sync.Cond or sync.WaitGroup "+
		"(synctest moves the clock when every goroutine waits on one of them); it blocks on something else "+
		"(a mutex held for good, real I/O, a busy loop). The spec was abandoned, its goroutines left behind; "+
		"a provider that does real I/O needs the real clock (VirtualTime false).\n\n"+
		"Goroutines of the spec:\n%s", what, stood.Round(time.Second), bubbleStacks(bb.bubbleID()))
}

var bubbleHeader = regexp.MustCompile(`synctest bubble (\d+)`)

// bubbleOf returns the bubble number in a goroutine's traceback ("" when it
// has none).
func bubbleOf(stack []byte) string {
	if m := bubbleHeader.FindSubmatch(stack); m != nil {
		return string(m[1])
	}
	return ""
}

// bubbleStacks returns the tracebacks of the goroutines of bubble id.
func bubbleStacks(id string) string {
	gs := goroutinesOf(id, false)
	if len(gs) == 0 {
		return "(none found)"
	}
	return strings.Join(gs, "\n\n")
}

// providerGoroutines returns the tracebacks of the goroutines of bubble id
// other than the caller that neither the suite nor synctest started.
func providerGoroutines(id string) []string { return goroutinesOf(id, true) }

// suiteCreated marks the goroutines package conformance starts (provider
// calls, Start); synctestRoot the bubble's own goroutine.
const (
	suiteCreated = "created by github.com/kri-kit/testkit/conformance."
	synctestRoot = "testing.testingSynctestTest("
)

// goroutinesOf returns the tracebacks of the goroutines of bubble id, other
// than the caller; onlyProvider leaves out those of the suite and synctest.
func goroutinesOf(id string, onlyProvider bool) []string {
	if id == "" {
		return nil
	}
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for i, g := range bytes.Split(buf, []byte("\n\n")) {
		if i == 0 || bubbleOf(g) != id { // the caller's comes first
			continue
		}
		if onlyProvider && (bytes.Contains(g, []byte(suiteCreated)) || bytes.Contains(g, []byte(synctestRoot))) {
			continue
		}
		out = append(out, string(g))
	}
	return out
}
