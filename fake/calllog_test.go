package fake_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// TestCallIsLoggedBeforeItsEffectsAreVisible races CleanupPods against
// observers of its effect (the orphan pod disappearing): whoever sees the
// effect (a WaitFor condition, WaitFor's return, a subscriber) must find the
// call in the log already. One lost race in a few thousand runs is the bug
// this test exists for, so it runs many iterations (fewer with -short).
func TestCallIsLoggedBeforeItsEffectsAreVisible(t *testing.T) {
	runs := 5000
	if testing.Short() {
		runs = 500
	}
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	startDone := make(chan error, 1)
	go func() { startDone <- f.p.Start(ctx) }()
	defer func() { f.p.Stop(); <-startDone }()

	logged := func() bool { return len(f.p.Calls(fake.ForMethod(fake.MethodCleanupPods))) > 0 }
	for i := range runs {
		pod := newPod(fmt.Sprint("orphan-", i), v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
		f.mustSync(pod)
		f.p.ResetCalls()
		sub := f.p.Subscribe(16)
		cleaned := make(chan error, 1)
		go func() { cleaned <- f.p.CleanupPods(ctx, nil, nil, nil) }()

		seenEarly := false
		_, err := f.p.WaitFor(ctx, "default/"+pod.Name, func(_ fake.PodSnapshot, ok bool) bool {
			if !ok && !logged() {
				seenEarly = true
			}
			return !ok
		})
		if err != nil {
			t.Fatalf("run %d: WaitFor the orphan to go: %v", i, err)
		}
		if seenEarly || !logged() {
			t.Fatalf("run %d of %d: the orphan was gone (WaitFor) while the call log held no CleanupPods call", i+1, runs)
		}
		for e := range sub.C {
			if e.Type == fake.EventPodDeleted && e.Pod.UID == types.UID("uid-"+pod.Name) {
				if !logged() {
					t.Fatalf("run %d of %d: a subscriber got %s while the call log held no CleanupPods call", i+1, runs, e.Type)
				}
				break
			}
		}
		sub.Close()
		if err := <-cleaned; err != nil {
			t.Fatalf("run %d: CleanupPods: %v", i, err)
		}
	}
}

// TestCallIsLoggedWhileInterceptorsStillRun makes the ordering of
// TestCallIsLoggedBeforeItsEffectsAreVisible deterministic: an interceptor
// holds CleanupPods after the fake has dropped the orphan, so the effect is
// visible while the call has not returned. It must be in the log then, in
// flight, and complete once it returns.
func TestCallIsLoggedWhileInterceptorsStillRun(t *testing.T) {
	release := make(chan struct{})
	f := newFixture(t, fake.WithInterceptors(interceptor.PodFuncs{
		CleanupPods: func(ctx context.Context, next kri.PodProvider, pods []*v1.Pod, running []*pkgcontainer.Pod, possibly map[types.UID]sets.Empty) error {
			err := next.CleanupPods(ctx, pods, running, possibly)
			<-release
			return errors.Join(err, errBoom)
		},
	}))
	pod := newPod("orphan", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(pod)
	cleaned := make(chan error, 1)
	go func() { cleaned <- f.p.CleanupPods(context.Background(), nil, nil, nil) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := f.p.WaitFor(ctx, "default/orphan", func(_ fake.PodSnapshot, ok bool) bool { return !ok }); err != nil {
		t.Fatalf("WaitFor the orphan to go: %v", err)
	}
	calls := f.p.Calls(fake.ForMethod(fake.MethodCleanupPods))
	if len(calls) != 1 || calls[0].Returned || calls[0].Err != nil || !calls[0].Began.Equal(t0) {
		t.Fatalf("while the interceptor holds CleanupPods, whose effect is visible: logged %+v, want one call in flight (Returned false, no error, Began %s)", calls, t0)
	}
	close(release)
	if err := recv(t, "CleanupPods", cleaned); !errors.Is(err, errBoom) {
		t.Fatalf("CleanupPods = %v, want the interceptor's error", err)
	}
	calls = f.p.Calls(fake.ForMethod(fake.MethodCleanupPods))
	if len(calls) != 1 || !calls[0].Returned || !errors.Is(calls[0].Err, errBoom) || calls[0].Seq != 3 {
		t.Fatalf("after CleanupPods returned: logged %+v, want it completed in place (Seq 3, Returned, the interceptor's error)", calls)
	}
}

func TestWaitForCalls(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(pod)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 2 {
			_ = f.p.KillPod(context.Background(), pod, pkgcontainer.Pod{ID: pod.UID}, nil)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	calls, err := f.p.WaitForCalls(ctx, 2, fake.ForMethod(fake.MethodKillPod), fake.Returned())
	if err != nil {
		t.Fatalf("WaitForCalls(2 returned KillPod calls): %v", err)
	}
	if len(calls) != 2 || calls[0].Method != fake.MethodKillPod || !calls[1].Returned {
		t.Fatalf("WaitForCalls returned %+v, want the 2 KillPod calls, returned", calls)
	}
	<-done

	short, cancelShort := context.WithCancel(context.Background())
	cancelShort()
	calls, err = f.p.WaitForCalls(short, 3, fake.ForMethod(fake.MethodKillPod))
	if !errors.Is(err, context.Canceled) || len(calls) != 2 || !strings.Contains(err.Error(), "2 of 3 calls") {
		t.Fatalf("WaitForCalls(3) with a cancelled context = %d calls, %v; want the 2 so far and an error wrapping context.Canceled that counts them", len(calls), err)
	}
	for _, n := range []int{0, -1, fake.DefaultCallLogSize + 1} {
		if _, err := f.p.WaitForCalls(ctx, n); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("n is %d, want between 1 and the call log's size %d", n, fake.DefaultCallLogSize)) {
			t.Errorf("WaitForCalls(n=%d) = %v, want an error naming n and the log's size", n, err)
		}
	}
}

func TestSubscribeCalls(t *testing.T) {
	f := newFixture(t)
	all := f.p.SubscribeCalls(8)
	defer all.Close()
	kills := f.p.SubscribeCalls(8, fake.ForMethod(fake.MethodKillPod), fake.Returned())
	defer kills.Close()
	tiny := f.p.SubscribeCalls(1)
	defer tiny.Close()

	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(pod) // GetPodStatus, SyncPod
	if err := f.p.KillPod(context.Background(), pod, pkgcontainer.Pod{ID: pod.UID}, ptr[int64](3)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 6 {
		c := <-all.C
		got = append(got, fmt.Sprint(c.Seq, " ", c.Method, " ", c.Returned))
	}
	want := []string{"1 GetPodStatus false", "1 GetPodStatus true", "2 SyncPod false", "2 SyncPod true", "3 KillPod false", "3 KillPod true"}
	if !equalStrings(got, want) {
		t.Fatalf("SubscribeCalls without filters got %q, want %q", got, want)
	}
	if c := <-kills.C; c.Method != fake.MethodKillPod || !c.Returned || c.GracePeriodOverride == nil || *c.GracePeriodOverride != 3 {
		t.Fatalf("filtered subscription got %+v, want the returned KillPod with its grace period", c)
	}
	select {
	case c := <-kills.C:
		t.Fatalf("filtered subscription got %+v, want nothing more", c)
	default:
	}
	if n := tiny.Dropped(); n != 5 {
		t.Errorf("a subscription with room for 1 record dropped %d of 6, want 5", n)
	}
	all.Close()
	all.Close() // harmless
	f.mustSync(pod)
	if _, open := <-all.C; open {
		t.Fatal("C still open after Close")
	}
}

func TestCallLogWrapsAfterReset(t *testing.T) {
	f := newFixture(t, fake.WithCallLogSize(3))
	ctx := context.Background()
	for range 2 {
		_, _ = f.p.GetPods(ctx, false)
	}
	f.p.ResetCalls()
	for i, want := range []string{"[3]", "[3 4]", "[3 4 5]", "[4 5 6]", "[5 6 7]"} {
		_, _ = f.p.GetPods(ctx, true)
		var seqs []uint64
		for _, c := range f.p.Calls() {
			seqs = append(seqs, c.Seq)
		}
		if fmt.Sprint(seqs) != want {
			t.Fatalf("after 2 calls, ResetCalls and %d calls, a log of size 3 holds calls %v, want %s", i+1, seqs, want)
		}
	}
}
