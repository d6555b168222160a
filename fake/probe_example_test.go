package fake_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// "Readiness of container web fails from now on": the readiness probe's
// command (true) succeeds until the script takes over; three failures in a
// row (failureThreshold) later the container is no longer ready. The events
// show the probe results.
func ExampleContainerScript_FailProbe() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	provider := fake.NewPodProvider(fake.WithClock(clk))
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shop", UID: "uid-shop"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{
			Name: "web", Image: "nginx:1.27", Command: []string{"sleep", "infinity"},
			ReadinessProbe: &v1.Probe{
				ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}},
				PeriodSeconds: 1, FailureThreshold: 3,
			},
		}}},
	}
	sub := provider.Subscribe(16)
	defer sub.Close()
	_ = provider.SyncPod(context.Background(), pod, nil, kri.NewReasonCache())
	ready := func() bool {
		snap, _ := provider.Snapshot("default/shop")
		web, _ := snap.Container("web")
		return web.Ready
	}
	fmt.Println("ready:", ready())

	clk.Step(10 * time.Second)
	provider.Container("default/shop", "web").FailProbe(fake.ReadinessProbe)
	clk.Step(2 * time.Second)
	fmt.Println("after 2 failures, ready:", ready())
	clk.Step(time.Second)
	fmt.Println("after 3 failures, ready:", ready())

	for len(sub.C) > 0 {
		if e := <-sub.C; e.Type == fake.EventProbeSucceeded || e.Type == fake.EventProbeFailed {
			fmt.Println(e.At.Format("15:04:05"), e.Type, e.Container, e.Message)
		}
	}
	// Output:
	// ready: true
	// after 2 failures, ready: true
	// after 3 failures, ready: false
	// 00:00:00 ProbeSucceeded web readiness
	// 00:00:13 ProbeFailed web readiness
}

// A liveness probe scripted to pass keeps a container whose probe command
// fails alive; ResetProbe hands the result back to the command, and the
// container is killed at the next probe.
func ExampleContainerScript_PassProbe() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	provider := fake.NewPodProvider(fake.WithClock(clk))
	provider.Container("default/shop", "web").PassProbe(fake.LivenessProbe)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shop", UID: "uid-shop"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{
			Name: "web", Image: "nginx:1.27", Command: []string{"sleep", "infinity"},
			LivenessProbe: &v1.Probe{
				ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"false"}}},
				PeriodSeconds: 1, FailureThreshold: 1,
			},
		}}},
	}
	_ = provider.SyncPod(context.Background(), pod, nil, kri.NewReasonCache())
	state := func() string {
		snap, _ := provider.Snapshot("default/shop")
		web, _ := snap.Container("web")
		return fmt.Sprintf("%s (exit code %d)", web.State, web.ExitCode)
	}
	clk.Step(10 * time.Second)
	fmt.Println("scripted to pass:", state())
	provider.Container("default/shop", "web").ResetProbe(fake.LivenessProbe)
	clk.Step(time.Second)
	fmt.Println("after ResetProbe:", state())
	// Output:
	// scripted to pass: running (exit code 0)
	// after ResetProbe: exited (exit code 143)
}
