package fake_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
)

func TestSubscribeSeesTransitionsInOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFixture(t)
	sub := f.p.Subscribe(32)
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	startDone := make(chan error, 1)
	go func() { startDone <- f.p.Start(ctx) }()
	defer func() { cancel(); <-startDone }()

	pod := newPod("web", v1.RestartPolicyNever, container("app", "sh", "-c", "sleep 3; exit 2"))
	f.mustSync(pod)
	want := []fake.EventType{fake.EventSandboxCreated, fake.EventContainerCreated, fake.EventContainerStarted}
	for _, w := range want {
		if e := <-sub.C; e.Type != w {
			t.Fatalf("event %+v, want %s", e, w)
		}
	}
	// Time passing alone produces the exit, delivered by Start's loop.
	f.clock.Step(3 * time.Second)
	select {
	case e := <-sub.C:
		if e.Type != fake.EventContainerExited || e.ExitCode != 2 || !e.At.Equal(t0.Add(3*time.Second)) || e.Container != "app" {
			t.Fatalf("event %+v, want app exited 2 at t0+3s", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event for a container exiting as the clock passed its run time")
	}
}

func TestSlowSubscriberNeverBlocksTheFake(t *testing.T) {
	f := newFixture(t)
	sub := f.p.Subscribe(1)
	for i := range 20 {
		f.mustSync(newPod(fmt.Sprint("p", i), v1.RestartPolicyAlways, container("app", "sleep", "infinity")))
	}
	if sub.Dropped() == 0 {
		t.Fatal("a full subscription reported no dropped events")
	}
	if e := <-sub.C; e.Type != fake.EventSandboxCreated || e.Seq != 1 {
		t.Fatalf("the buffered event is %+v, want the first one", e)
	}
	sub.Close()
	sub.Close()
	f.mustSync(newPod("after-close", v1.RestartPolicyAlways, container("app", "sleep", "infinity")))
	if _, open := <-sub.C; open {
		t.Fatal("channel still open after Close")
	}
}

func TestWaitForWakesOnClockSteps(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyNever, container("app", "sleep", "60"))
	f.mustSync(pod)

	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		// Step the clock once WaitFor waits; it has nothing else to wake it.
		for !f.clock.HasWaiters() {
			time.Sleep(time.Millisecond)
		}
		f.clock.Step(time.Minute)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snap, err := f.p.WaitFor(ctx, "default/web", func(s fake.PodSnapshot, ok bool) bool {
		c, _ := s.Container("app")
		return c.State == pkgcontainer.ContainerStateExited
	})
	if err != nil {
		t.Fatalf("WaitFor: %v", err)
	}
	if c, _ := snap.Container("app"); !c.FinishedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("snapshot %+v, want app finished at t0+1m", c)
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := f.p.WaitFor(ctx, "default/ghost", func(_ fake.PodSnapshot, ok bool) bool { return ok }); err == nil {
		t.Fatal("WaitFor with a cancelled context returned no error")
	}
}

func TestConcurrentUse(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	startDone := make(chan error, 1)
	go func() { startDone <- f.p.Start(ctx) }()
	sub := f.p.Subscribe(4)
	shared := newPod("shared", v1.RestartPolicyAlways, container("app", "sh", "-c", "sleep 1; exit 1"))

	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			own := newPod(fmt.Sprint("pod-", g), v1.RestartPolicyAlways, container("a", "sleep", "2"), container("b", "sleep", "infinity"))
			for i := range 30 {
				for _, pod := range []*v1.Pod{own, shared} {
					st, err := f.p.GetPodStatus(ctx, pod)
					if err != nil {
						t.Error(err)
						return
					}
					if err := f.p.SyncPod(ctx, pod, st, f.rc); err != nil {
						t.Error(err)
					}
					var ps v1.PodStatus
					f.p.RefreshPodStatus(pod, &ps)
				}
				if i%10 == 9 {
					st, _ := f.p.GetPodStatus(ctx, own)
					if err := f.p.KillPod(ctx, own, pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, st), ptr[int64](0)); err != nil {
						t.Error(err)
					}
				}
				_, _ = f.p.GetPods(ctx, i%2 == 0)
				_ = f.p.Snapshots()
				if g == 0 {
					f.clock.Step(500 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	sub.Close()
	cancel()
	<-startDone
	f.p.Stop()
	if got := len(f.p.Snapshots()); got != 9 {
		t.Fatalf("%d pods known after the run, want 9", got)
	}
	// The shared pod never has two running instances of one container.
	st := f.status(shared)
	if n := len(st.GetRunningContainerStatuses()); n > 1 {
		t.Fatalf("shared pod has %d running instances of app", n)
	}
}
