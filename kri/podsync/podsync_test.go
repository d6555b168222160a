package podsync_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podsync"
	"github.com/kri-kit/testkit/kri/podsync/podsynctest"
)

// recorder counts calls per pod.
type recorder = podsynctest.Recorder

func TestNotifyBeforeHandlerAndAfterStopDoNothing(t *testing.T) {
	var n podsync.Notifier
	n.Notify("a") // no handler yet: no panic, nothing to call
	r := &recorder{}
	n.SetPodSyncHandler(r)
	n.Notify("a")
	n.Notify("")
	if got := r.Count("a"); got != 1 {
		t.Fatalf("Notify(a) with a handler: %d calls, want 1", got)
	}
	n.Stop()
	n.Notify("a")
	n.NotifyAfter("a", time.Second)
	if got := r.Count("a"); got != 1 {
		t.Fatalf("Notify after Stop: %d calls, want still 1", got)
	}
}

func TestNotifyAfterFiresOnceItsTimeHasCome(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	n := podsync.Notifier{Clock: clk}
	r := &recorder{}
	n.SetPodSyncHandler(r)
	n.NotifyAfter("a", 10*time.Second)
	n.NotifyAfter("a", 20*time.Second)
	n.NotifyAfter("b", 0) // at once
	if got := r.Count("b"); got != 1 {
		t.Fatalf("NotifyAfter(b, 0): %d calls, want 1 at once", got)
	}
	if got := n.Pending("a"); got != 2 {
		t.Fatalf("Pending(a) = %d, want 2", got)
	}
	clk.Step(9 * time.Second)
	if got := r.Count("a"); got != 0 {
		t.Fatalf("9s into a 10s back-off: %d calls, want 0", got)
	}
	clk.Step(time.Second)
	waitFor(t, func() bool { return r.Count("a") == 1 }, "the 10s call")
	clk.Step(10 * time.Second)
	waitFor(t, func() bool { return r.Count("a") == 2 }, "the 20s call")
	if got := n.Pending("a"); got != 0 {
		t.Fatalf("Pending(a) after both fired = %d, want 0", got)
	}
}

func TestForgetAndStopCancelPendingCalls(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	n := podsync.Notifier{Clock: clk}
	r := &recorder{}
	n.SetPodSyncHandler(r)
	n.NotifyAfter("a", time.Second)
	n.NotifyAfter("b", time.Second)
	n.Forget("a")
	if clk.HasWaiters() != true {
		t.Fatal("b's timer should still wait")
	}
	n.Stop()
	if clk.HasWaiters() {
		t.Fatal("Stop left a timer armed")
	}
	clk.Step(time.Minute)
	time.Sleep(10 * time.Millisecond)
	if r.Count("a")+r.Count("b") != 0 {
		t.Fatalf("cancelled calls fired: a=%d b=%d", r.Count("a"), r.Count("b"))
	}
}

// A handler that reads the clock, on a FakeClock whose Step runs timer
// callbacks under its lock, and NotifyAfter alongside Step: neither
// deadlocks.
func TestFakeClockStepAndHandlerReadingTheClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	n := podsync.Notifier{Clock: clk}
	var mu sync.Mutex
	seen := 0
	n.SetPodSyncHandler(kri.PodSyncHandlerFunc(func(types.UID) {
		_ = clk.Now()
		mu.Lock()
		seen++
		mu.Unlock()
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			n.NotifyAfter("a", time.Second)
		}
	}()
	for range 100 {
		clk.Step(time.Second)
	}
	<-done
	clk.Step(time.Second)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return seen == 100 }, "100 calls")
	n.Stop()
}

func TestConcurrentUseIsSafe(t *testing.T) {
	var n podsync.Notifier
	r := &recorder{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if i == 0 {
				n.SetPodSyncHandler(r)
			}
			for range 100 {
				n.Notify("a")
				n.NotifyAfter("a", time.Hour)
				n.Forget("a")
			}
		})
	}
	wg.Wait()
	n.Stop()
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s never came", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A provider embeds a Notifier: it is then a kri.PodSyncNotifier, and calls
// Notify when it sees a pod change and NotifyAfter for a back-off's end.
func Example() {
	type provider struct {
		podsync.Notifier
		// ... the provider's own state
	}
	p := &provider{}
	var _ kri.PodSyncNotifier = p

	// The agent hands its handler before Start.
	p.SetPodSyncHandler(kri.PodSyncHandlerFunc(func(uid types.UID) {
		fmt.Println("sync", uid)
	}))
	// A container of pod "uid-1" exited: the agent should publish it.
	p.Notify("uid-1")
	// SyncPod met a crash-loop back-off of 10s: sync again when it ends.
	p.NotifyAfter("uid-1", 10*time.Second)
	// The provider's Stop.
	p.Stop()
	// Output: sync uid-1
}
