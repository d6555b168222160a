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
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// resyncWorker is the code under test: a pod worker that syncs its pod
// every second on the real clock, as the kubelet's pod workers resync.
func resyncWorker(ctx context.Context, provider kri.PodProvider, pod *v1.Pod, rc *kri.ReasonCache) {
	for {
		if st, err := provider.GetPodStatus(ctx, pod); err == nil {
			_ = provider.SyncPod(ctx, pod, st, rc)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// TestInASynctestBubble runs the fake, on the real clock, in a
// testing/synctest bubble together with a controller that arms timers of
// its own. Time in the bubble moves only when every goroutine in it is
// blocked, so the test needs no FakeClock, cannot race the controller's
// timers, and synctest.Wait marks the point where the controller and the
// fake are idle. This is the pattern doc.go and the README show.
func TestInASynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Made inside the bubble: the fake's channels and timers belong to
		// it, so its Start loop and WaitFor block durably.
		provider := fake.NewPodProvider(fake.WithCrashLoopBackOff())
		rc := kri.NewReasonCache()
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
			Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{
				{Name: "app", Image: "busybox:1.36", Command: []string{"sh", "-c", "sleep 5; exit 3"}},
			}},
		}
		start := time.Now()
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer func() { cancel(); provider.Stop(); wg.Wait() }()
		wg.Go(func() { _ = provider.Start(ctx) })
		wg.Go(func() { resyncWorker(ctx, provider, pod, rc) })

		app := func() fake.ContainerSnapshot {
			snap, _ := provider.Snapshot("default/web")
			c, _ := snap.Container("app")
			return c
		}
		time.Sleep(4 * time.Second)
		synctest.Wait() // the worker has synced and sleeps; the fake is idle
		if c := app(); c.State != pkgcontainer.ContainerStateRunning || c.RestartCount != 0 {
			t.Fatalf("at 4s app is %+v, want running, never restarted", c)
		}

		// The first exit (at 5s) is restarted at once; the second (at 10s)
		// enters a 10s back-off, so the next restart comes at 20s.
		time.Sleep(11 * time.Second)
		synctest.Wait()
		if item, ok := rc.Get(pod.UID, "app"); !ok || !errors.Is(item.Err, pkgcontainer.ErrCrashLoopBackOff) {
			t.Fatalf("at 15s the ReasonCache entry of app is %+v (found %v), want CrashLoopBackOff", item, ok)
		}
		snap, err := provider.WaitFor(ctx, "default/web", func(s fake.PodSnapshot, _ bool) bool {
			c, _ := s.Container("app")
			return c.RestartCount == 2
		})
		if err != nil {
			t.Fatalf("WaitFor the second restart: %v", err)
		}
		if c, _ := snap.Container("app"); !c.CreatedAt.Equal(start.Add(20*time.Second)) || time.Since(start) != 20*time.Second {
			t.Fatalf("second restart created at %s, seen at %s; want both at 20s (bubble time is exact)", c.CreatedAt.Sub(start), time.Since(start))
		}
		calls, err := provider.WaitForCalls(ctx, 1, fake.ForMethod(fake.MethodSyncPod), fake.Failed())
		if err != nil || !errors.Is(calls[0].Err, pkgcontainer.ErrCrashLoopBackOff) {
			t.Fatalf("failed SyncPod calls: %+v, %v; want the back-off", calls, err)
		}
	})
}
