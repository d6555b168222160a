package fake_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// rolloutGate is the code under test: a controller that waits for its pod's
// container to become ready (as a rollout gates on readiness) and then for
// it to be restarted (as an alerting controller watches restarts), without
// polling: it blocks in the fake's WaitFor, which wakes on every transition,
// probe results included.
func rolloutGate(ctx context.Context, provider *fake.PodProvider, key, container string, clk interface{ Now() time.Time }) (readyAt, restartedAt time.Time, err error) {
	ready := func(s fake.PodSnapshot, ok bool) bool {
		c, _ := s.Container(container)
		return ok && c.Ready
	}
	if _, err := provider.WaitFor(ctx, key, ready); err != nil {
		return readyAt, restartedAt, err
	}
	readyAt = clk.Now()
	restarted := func(s fake.PodSnapshot, ok bool) bool {
		c, _ := s.Container(container)
		return ok && c.RestartCount > 0 && c.State == pkgcontainer.ContainerStateRunning
	}
	if _, err := provider.WaitFor(ctx, key, restarted); err != nil {
		return readyAt, restartedAt, err
	}
	return readyAt, clk.Now(), nil
}

// TestControllerWaitsForReadinessAndLivenessRestart runs rolloutGate beside
// a pod worker that syncs every second (clockWorker), on a FakeClock in a
// testing/synctest bubble: the container becomes ready when its readiness
// probe first finds /tmp/ready (2s), its liveness probe fails three times
// once /tmp/health is gone (10s, 11s, 12s), the fake kills it at 12s and the
// worker's sync at 12s starts it again. Nothing sleeps: the test steps the
// clock and synctest.Wait lets every goroutine settle after each step, so
// the instants are exact.
func TestControllerWaitsForReadinessAndLivenessRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clocktesting.NewFakeClock(probeEpoch)
		provider := fake.NewPodProvider(fake.WithClock(clk))
		pod := probedPod("echo ok > /tmp/health; sleep 2; echo ok > /tmp/ready; sleep 8; rm -f /tmp/health; sleep infinity", func(c *v1.Container) {
			c.ReadinessProbe = probe("cat /tmp/ready", 1)
			c.LivenessProbe = probe("cat /tmp/health", 3)
		})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer func() { cancel(); provider.Stop(); wg.Wait() }()
		wg.Go(func() { _ = provider.Start(ctx) })
		wg.Go(func() { clockWorker(ctx, clk, provider, pod, kri.NewReasonCache()) })
		var readyAt, restartedAt time.Time
		var gateErr error
		gateDone := make(chan struct{})
		wg.Go(func() {
			defer close(gateDone)
			readyAt, restartedAt, gateErr = rolloutGate(ctx, provider, "default/web", "web", clk)
		})

		synctest.Wait()
		for i := 0; i < 30; i++ {
			select {
			case <-gateDone:
				i = 30
				continue
			default:
			}
			clk.Step(time.Second)
			synctest.Wait()
		}
		select {
		case <-gateDone:
		default:
			t.Fatalf("after 30s the controller still waits; web: %+v", snapshotOf(t, provider))
		}
		if gateErr != nil {
			t.Fatalf("rolloutGate: %v", gateErr)
		}
		if got, want := readyAt.Sub(probeEpoch), 2*time.Second; got != want {
			t.Errorf("the controller saw web ready after %v, want %v (the readiness probe finds /tmp/ready at 2s)", got, want)
		}
		if got, want := restartedAt.Sub(probeEpoch), 12*time.Second; got != want {
			t.Errorf("the controller saw web restarted after %v, want %v (liveness fails at 10s, 11s, 12s; the worker syncs at 12s)", got, want)
		}
		for _, c := range provider.Calls(fake.ForMethod(fake.MethodSyncPod), fake.Returned()) {
			if c.Err != nil {
				t.Errorf("SyncPod at %v failed: %v", c.Began.Sub(probeEpoch), c.Err)
			}
		}
		snap := snapshotOf(t, provider)
		if snap.RestartCount != 1 {
			t.Errorf("web has restarted %d times, want 1", snap.RestartCount)
		}
	})
}

func snapshotOf(t *testing.T, p *fake.PodProvider) fake.ContainerSnapshot {
	t.Helper()
	s, _ := p.Snapshot("default/web")
	c, _ := s.Container("web")
	return c
}
