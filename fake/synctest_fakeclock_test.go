package fake_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// clockWorker is the code under test: a pod worker that syncs its pod
// every second on the clock it is given, as the kubelet's pod workers
// resync.
func clockWorker(ctx context.Context, clk clock.Clock, provider kri.PodProvider, pod *v1.Pod, rc *kri.ReasonCache) {
	for {
		if st, err := provider.GetPodStatus(ctx, pod); err == nil {
			_ = provider.SyncPod(ctx, pod, st, rc)
		}
		select {
		case <-ctx.Done():
			return
		case <-clk.After(time.Second):
		}
	}
}

// TestFakeClockInASynctestBubble drives a controller that arms timers on a
// FakeClock, inside a testing/synctest bubble: after each FakeClock.Step,
// synctest.Wait returns once every goroutine the step woke (the worker, the
// fake's Start loop, a KillPod waiting out a grace period) has done its work
// and blocked again, so the next Step cannot race the controller's next
// timer. Time is the FakeClock's, exact, and the test reads the call log
// at known instants. It is the runnable form of the README's "FakeClock in
// a synctest bubble" (an Example function cannot host a bubble:
// synctest.Test needs a *testing.T).
func TestFakeClockInASynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Everything made inside the bubble: the clock's timers, the fake's
		// channels.
		clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		provider := fake.NewPodProvider(fake.WithClock(clk), fake.WithKubeletSemantics())
		rc := kri.NewReasonCache()
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
			Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{
				{Name: "app", Image: "kri.invalid/team/app:1", Command: []string{"sleep", "infinity"}},
			}},
		}
		start := clk.Now()
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer func() { cancel(); provider.Stop(); wg.Wait() }()
		wg.Go(func() { _ = provider.Start(ctx) })
		wg.Go(func() { clockWorker(ctx, clk, provider, pod, rc) })

		synctest.Wait() // the first sync is done; the worker waits on clk
		for range 30 {
			clk.Step(time.Second)
			synctest.Wait() // the worker has synced and armed its next timer
		}

		var pulls []time.Duration
		syncs := provider.Calls(fake.ForMethod(fake.MethodSyncPod), fake.Returned())
		for _, c := range syncs {
			if errors.Is(c.Err, fake.ErrImagePull) {
				pulls = append(pulls, c.Began.Sub(start))
			}
		}
		if len(syncs) != 31 || len(pulls) != 3 || pulls[0] != 0 || pulls[1] != 10*time.Second || pulls[2] != 30*time.Second {
			t.Fatalf("%d syncs in 30s, pulls at %v; want 31 syncs (one a second, exactly) and pulls at 0s, 10s and 30s (the kubelet's image back-off)", len(syncs), pulls)
		}
		if item, ok := rc.Get(pod.UID, "app"); !ok || item.Err.Error() != "ErrImagePull" {
			t.Fatalf("ReasonCache entry of app after the pull at 30s: %+v (found %v), want ErrImagePull", item, ok)
		}
	})
}
