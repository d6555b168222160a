package fake_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// A test waits for the controller to have called KillPod twice, without
// polling.
func ExamplePodProvider_WaitForCalls() {
	ctx := context.Background()
	provider := fake.NewPodProvider(fake.WithClock(clocktesting.NewFakeClock(time.Time{})))
	pod := examplePod()
	_ = podWorker(ctx, provider, pod, kri.NewReasonCache())

	go func() { // the controller under test
		for range 2 {
			_ = provider.KillPod(ctx, pod, pkgcontainer.Pod{ID: pod.UID}, nil)
		}
	}()
	calls, err := provider.WaitForCalls(ctx, 2, fake.ForMethod(fake.MethodKillPod), fake.Returned())
	fmt.Println(len(calls), err)
	// Output:
	// 2 <nil>
}

// A subscription sees each call begin and return.
func ExamplePodProvider_SubscribeCalls() {
	provider := fake.NewPodProvider(fake.WithClock(clocktesting.NewFakeClock(time.Time{})))
	sub := provider.SubscribeCalls(8, fake.ForMethod(fake.MethodSyncPod))
	defer sub.Close()
	_ = podWorker(context.Background(), provider, examplePod(), kri.NewReasonCache())
	for range 2 {
		c := <-sub.C
		fmt.Println(c.Seq, c.Method, "returned:", c.Returned)
	}
	// Output:
	// 2 SyncPod returned: false
	// 2 SyncPod returned: true
}

// With status-driven sync, a controller that hands SyncPod an outdated
// status does not get its crashed container restarted; the call log says
// the status was stale.
func ExampleWithStatusDrivenSync() {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Time{})
	provider := fake.NewPodProvider(fake.WithClock(clk), fake.WithStatusDrivenSync())
	rc := kri.NewReasonCache()
	pod := examplePod() // app exits with 3 after 5s
	_ = podWorker(ctx, provider, pod, rc)
	stale, _ := provider.GetPodStatus(ctx, pod)

	clk.Step(5 * time.Second)
	_ = provider.SyncPod(ctx, pod, stale, rc) // the bug under test: an old status
	snap, _ := provider.Snapshot("default/web")
	app, _ := snap.Container("app")
	fmt.Println(app.State, "restarts:", app.RestartCount)
	for _, c := range provider.Calls(fake.StaleStatus()) {
		fmt.Println(c.Method, c.StaleStatus)
	}

	_ = podWorker(ctx, provider, pod, rc) // a fresh status
	snap, _ = provider.Snapshot("default/web")
	app, _ = snap.Container("app")
	fmt.Println(app.State, "restarts:", app.RestartCount)
	// Output:
	// exited restarts: 0
	// SyncPod container "app": podStatus shows 00000002 running, the runtime's newest is 00000002 exited (exit code 3)
	// running restarts: 1
}

// Crash-loop back-off: the first restart is immediate, the next waits 10s
// from the exit, on the provider's clock.
func ExampleWithCrashLoopBackOff() {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Time{})
	provider := fake.NewPodProvider(fake.WithClock(clk), fake.WithCrashLoopBackOff())
	rc := kri.NewReasonCache()
	pod := examplePod()
	pod.Spec.Containers[0].Command = []string{"false"} // exits at once

	for _, step := range []time.Duration{0, 0, 0, 9 * time.Second, time.Second} {
		clk.Step(step)
		err := podWorker(ctx, provider, pod, rc)
		item, _ := rc.Get(pod.UID, "app")
		fmt.Printf("+%-3s backed off: %-5v %v\n", step, errors.Is(err, pkgcontainer.ErrCrashLoopBackOff), item)
	}
	// Output:
	// +0s  backed off: false <nil>
	// +0s  backed off: false <nil>
	// +0s  backed off: true  &{CrashLoopBackOff back-off 10s restarting failed container=app pod=web_default(uid-web)}
	// +9s  backed off: true  &{CrashLoopBackOff back-off 10s restarting failed container=app pod=web_default(uid-web)}
	// +1s  backed off: false <nil>
}

// SetCrashLoopBackOff turns back-off on for a provider already made, as a
// scenario applied to it may ask.
func ExamplePodProvider_SetCrashLoopBackOff() {
	ctx := context.Background()
	provider := fake.NewPodProvider(fake.WithClock(clocktesting.NewFakeClock(time.Time{})))
	rc := kri.NewReasonCache()
	pod := examplePod()
	pod.Spec.Containers[0].Command = []string{"false"}
	provider.SetCrashLoopBackOff(true)
	for range 3 {
		err := podWorker(ctx, provider, pod, rc)
		fmt.Println(errors.Is(err, pkgcontainer.ErrCrashLoopBackOff))
	}
	// Output:
	// false
	// false
	// true
}

// A container that cannot start leaves an exited instance, as under
// containerd, and its restarts are counted.
func ExampleWithStartErrorInstances() {
	ctx := context.Background()
	provider := fake.NewPodProvider(fake.WithClock(clocktesting.NewFakeClock(time.Time{})), fake.WithStartErrorInstances())
	rc := kri.NewReasonCache()
	pod := examplePod()
	pod.Spec.Containers[0].Command = []string{"/nonexistent/app"}
	for range 2 {
		_ = podWorker(ctx, provider, pod, rc)
	}
	snap, _ := provider.Snapshot("default/web")
	app, _ := snap.Container("app")
	fmt.Println(app.State, app.ExitCode, app.Reason, "restarts:", app.RestartCount)
	// Output:
	// exited 128 StartError restarts: 1
}

// CleanupPods stops an orphan as KillPod would: a container that ignores
// SIGTERM lives until its grace period ends, then the orphan is forgotten.
func ExamplePodProvider_CleanupPods() {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Time{})
	provider := fake.NewPodProvider(fake.WithClock(clk))
	pod := examplePod()
	pod.Spec.Containers[0].Command = []string{"sh", "-c", "trap '' TERM; sleep infinity"}
	pod.Spec.TerminationGracePeriodSeconds = new(int64(10))
	_ = podWorker(ctx, provider, pod, kri.NewReasonCache())

	sub := provider.Subscribe(8)
	defer sub.Close()
	_ = provider.CleanupPods(ctx, []*v1.Pod{}, nil, nil) // pod is desired no more
	_, known := provider.Snapshot("default/web")
	fmt.Println("known:", known)
	clk.Step(10 * time.Second)
	_, known = provider.Snapshot("default/web")
	fmt.Println("known:", known)
	for range 4 {
		e := <-sub.C
		fmt.Println(e.Type, e.Container, e.ExitCode)
	}
	// Output:
	// known: true
	// known: false
	// ContainerKilling app 0
	// SandboxStopped  0
	// ContainerExited app 137
	// PodDeleted  0
}
