package fake_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// A controller test makes a container's postStart hook fail after a while:
// the container is killed when the hook ends, and the next sync reports
// PostStartHookError, as the kubelet's runtime manager would.
func ExampleContainerScript_PostStartHook() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := fake.NewPodProvider(fake.WithClock(clk))
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{
			{Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}},
		}},
	}
	p.Container("default/web", "app").PostStartHook(2*time.Second, 1)
	rc := kri.NewReasonCache()
	ctx := context.Background()

	fmt.Println("first sync:", podWorker(ctx, p, pod, rc))
	clk.Step(2 * time.Second)
	err := podWorker(ctx, p, pod, rc)
	fmt.Println("after the hook:", errors.Is(err, fake.ErrPostStartHook))
	snap, _ := p.Snapshot("default/web")
	app, _ := snap.Container("app")
	fmt.Println(app.State, app.ExitCode)
	// Output:
	// first sync: <nil>
	// after the hook: true
	// exited 143
}

// A preStop hook takes its time from the grace period: KillPod waits for it
// on the provider's clock, then sends SIGTERM.
func ExampleContainerScript_PreStopHook() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := fake.NewPodProvider(fake.WithClock(clk))
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{
			{Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}},
		}},
	}
	p.Container("default/web", "app").PreStopHook(3 * time.Second)
	ctx := context.Background()
	_ = podWorker(ctx, p, pod, kri.NewReasonCache())

	start := clk.Now()
	grace := int64(30)
	done := make(chan error)
	st, _ := p.GetPodStatus(ctx, pod)
	running := pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, st)
	go func() { done <- p.KillPod(ctx, pod, running, &grace) }()
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	clk.Step(3 * time.Second)
	fmt.Println(<-done, clk.Now().Sub(start))
	// Output: <nil> 3s
}
