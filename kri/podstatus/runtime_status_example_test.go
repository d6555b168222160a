package podstatus_test

import (
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// A backend cluster's kubelet reports a container that exited 1 and was
// started again within the same second: the API keeps whole seconds, so
// both runs carry the same timestamps. RuntimeStatus orders them by restart
// count, so that the kubelet's sort by CreatedAt puts the current run first.
func ExampleRuntimeStatus() {
	t := metav1.NewTime(time.Date(2026, 1, 1, 12, 0, 7, 0, time.UTC))
	backend := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "backend", Name: "web-5f2c", UID: "backend-uid"},
		Status: v1.PodStatus{
			PodIPs: []v1.PodIP{{IP: "10.244.0.7"}},
			ContainerStatuses: []v1.ContainerStatus{{
				Name: "app", Image: "busybox:1.36", RestartCount: 1,
				ContainerID: "containerd://c2",
				State:       v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: t}},
				LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
					ContainerID: "containerd://c1", ExitCode: 1, Reason: "Error", StartedAt: t, FinishedAt: t,
				}},
			}},
		},
	}
	status, err := podstatus.RuntimeStatus(backend)
	if err != nil {
		fmt.Println(err)
		return
	}
	instances := status.ContainerStatuses
	sort.Sort(sort.Reverse(pkgcontainer.SortContainerStatusesByCreationTime(instances)))
	fmt.Println(status.IPs)
	for _, c := range instances {
		fmt.Println(c.ID.ID, c.State, c.RestartCount, c.ExitCode, c.CreatedAt.Format(time.RFC3339Nano))
	}
	// Output:
	// [10.244.0.7]
	// c2 running 1 0 2026-01-01T12:00:07.000000001Z
	// c1 exited 0 1 2026-01-01T12:00:07Z
}
