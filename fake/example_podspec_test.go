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

// A controller that reads a job's result from its termination message: the
// fake plays the job's command, expands $(VAR) in it as the kubelet does,
// and reports what it wrote to its terminationMessagePath in the status a
// kubelet would report.
func ExamplePodProvider_terminationMessage() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	p := fake.NewPodProvider(fake.WithClock(clk))
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "report", UID: "report-1"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{
			Name:  "job",
			Image: "busybox:1.36",
			Env:   []v1.EnvVar{{Name: "RESULT", Value: "42-rows"}},
			Command: []string{"sh", "-c",
				"sleep 3; echo -n $(RESULT) > /dev/termination-log; exit 0"},
			TerminationMessagePath: "/dev/termination-log",
		}}},
	}
	rc := kri.NewReasonCache()
	ctx := context.Background()
	if err := p.SyncPod(ctx, pod, nil, rc); err != nil {
		fmt.Println(err)
		return
	}
	clk.Step(3 * time.Second)
	status, err := p.APIPodStatus(ctx, pod, rc)
	if err != nil {
		fmt.Println(err)
		return
	}
	term := status.ContainerStatuses[0].State.Terminated
	fmt.Println(status.Phase, term.Reason, term.ExitCode, term.Message)
	// Output:
	// Succeeded Completed 0 42-rows
}
