package fake_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
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
	f := newFixture(t, fake.WithInterceptors(fake.Interceptors{
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
