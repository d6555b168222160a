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
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podWorker is the code under test in these examples: one round of a
// kubelet-style pod worker that reads the pod's status and syncs it.
func podWorker(ctx context.Context, provider kri.PodProvider, pod *v1.Pod, rc *kri.ReasonCache) error {
	status, err := provider.GetPodStatus(ctx, pod)
	if err != nil {
		return err
	}
	return provider.SyncPod(ctx, pod, status, rc)
}

func examplePod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyAlways,
			Containers: []v1.Container{{
				Name: "app", Image: "busybox:1.36",
				Command: []string{"sh", "-c", "sleep 5; exit 3"}, // the fake reads the command
			}},
		},
	}
}

// A controller's unit test: the fake runs on a fake clock, so the test
// steps time to see the container crash and the worker restart it.
func ExampleNewPodProvider() {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	provider := fake.NewPodProvider(fake.WithClock(clk))
	rc := kri.NewReasonCache()
	pod := examplePod()

	_ = podWorker(ctx, provider, pod, rc)
	snap, _ := provider.Snapshot("default/web")
	app, _ := snap.Container("app")
	fmt.Println(app.ID, app.State)

	clk.Step(5 * time.Second) // the command exits with 3 after 5s
	snap, _ = provider.Snapshot("default/web")
	app, _ = snap.Container("app")
	fmt.Println(app.ID, app.State, app.ExitCode)

	_ = podWorker(ctx, provider, pod, rc) // RestartPolicy Always: a new instance
	snap, _ = provider.Snapshot("default/web")
	app, _ = snap.Container("app")
	fmt.Println(app.ID, app.State, "restarts:", app.RestartCount)
	// Output:
	// 00000002 running
	// 00000002 exited 3
	// 00000003 running restarts: 1
}

// Scripted faults: the first two starts fail like an image pull; the
// controller must surface the reason recorded in the ReasonCache.
func ExampleContainerScript_FailStarts() {
	ctx := context.Background()
	provider := fake.NewPodProvider(fake.WithClock(clocktesting.NewFakeClock(time.Time{})))
	errPull := errors.New("ErrImagePull")
	provider.Container("default/web", "app").FailStarts(2, errPull, "pull access denied")
	rc := kri.NewReasonCache()
	pod := examplePod()

	for range 3 {
		err := podWorker(ctx, provider, pod, rc)
		item, failed := rc.Get(pod.UID, "app")
		if failed {
			fmt.Println(errors.Is(err, errPull), item.Err, item.Message)
		} else {
			fmt.Println("started:", err == nil)
		}
	}
	// Output:
	// true ErrImagePull pull access denied
	// true ErrImagePull pull access denied
	// started: true
}

// Interceptors wrap the real behaviour: here GetPodStatus fails for one pod
// while every other call goes through.
func ExampleWithInterceptors() {
	provider := fake.NewPodProvider(fake.WithInterceptors(interceptor.PodFuncs{
		GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
			if pod.Name == "web" {
				return nil, errors.New("runtime unavailable")
			}
			return next.GetPodStatus(ctx, pod)
		},
	}))
	err := podWorker(context.Background(), provider, examplePod(), kri.NewReasonCache())
	fmt.Println(err)
	fmt.Println(len(provider.Calls(fake.ForMethod(fake.MethodGetPodStatus), fake.Failed())))
	// Output:
	// runtime unavailable
	// 1
}

// The call log shows what the code under test asked of the provider.
func ExamplePodProvider_Calls() {
	provider := fake.NewPodProvider(fake.WithClock(clocktesting.NewFakeClock(time.Time{})))
	_ = podWorker(context.Background(), provider, examplePod(), kri.NewReasonCache())
	for _, c := range provider.Calls(fake.ForPod("default/web")) {
		fmt.Println(c.Seq, c.Method, c.Err)
	}
	// Output:
	// 1 GetPodStatus <nil>
	// 2 SyncPod <nil>
}

// KillPod waits on the provider's clock for a container that ignores
// SIGTERM; a test steps the clock past the grace period.
func ExamplePodProvider_KillPod() {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Time{})
	provider := fake.NewPodProvider(fake.WithClock(clk))
	pod := examplePod()
	pod.Spec.Containers[0].Command = []string{"sh", "-c", "trap '' TERM; sleep infinity"}
	_ = podWorker(ctx, provider, pod, kri.NewReasonCache())

	status, _ := provider.GetPodStatus(ctx, pod)
	done := make(chan error)
	go func() {
		done <- provider.KillPod(ctx, pod, pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, status), nil)
	}()
	_, _ = provider.WaitFor(ctx, "default/web", func(s fake.PodSnapshot, _ bool) bool {
		app, _ := s.Container("app")
		return app.Terminating
	})
	clk.Step(30 * time.Second) // the default grace period
	fmt.Println(<-done)
	snap, _ := provider.Snapshot("default/web")
	app, _ := snap.Container("app")
	fmt.Println(app.State, app.ExitCode)
	// Output:
	// <nil>
	// exited 137
}

// Subscribe delivers state transitions as they happen.
func ExamplePodProvider_Subscribe() {
	provider := fake.NewPodProvider(fake.WithClock(clocktesting.NewFakeClock(time.Time{})))
	sub := provider.Subscribe(16)
	defer sub.Close()
	pod := examplePod()
	pod.Spec.Containers[0].Command = []string{"false"}
	_ = podWorker(context.Background(), provider, pod, kri.NewReasonCache())
	for range 4 {
		e := <-sub.C
		fmt.Println(e.Seq, e.Type, e.Container, e.ExitCode)
	}
	// Output:
	// 1 SandboxCreated  0
	// 2 ContainerCreated app 0
	// 3 ContainerStarted app 0
	// 4 ContainerExited app 1
}
