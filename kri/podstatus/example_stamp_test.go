package podstatus_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// Generate keeps the transition time of a condition that holds and leaves
// a changed one without; StampTimes stamps those, and a first StartTime, as
// the kubelet's status manager does just before it sends a status.
func ExampleStampTimes() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := examplePod()
	running := &pkgcontainer.PodStatus{ID: pod.UID, ContainerStatuses: []*pkgcontainer.Status{{
		ID: pkgcontainer.ContainerID{Type: "remote", ID: "c1"}, Name: "app",
		State: pkgcontainer.ContainerStateRunning, CreatedAt: t0, StartedAt: t0,
	}}}
	exited := &pkgcontainer.PodStatus{ID: pod.UID, ContainerStatuses: []*pkgcontainer.Status{{
		ID: pkgcontainer.ContainerID{Type: "remote", ID: "c1"}, Name: "app",
		State: pkgcontainer.ContainerStateExited, ExitCode: 1, CreatedAt: t0, StartedAt: t0, FinishedAt: t0.Add(time.Minute),
	}}}

	s := podstatus.Generate(pod, running, nil)
	podstatus.StampTimes(&pod.Status, &s, t0.Add(time.Second))
	pod.Status = s

	s = podstatus.Generate(pod, exited, nil)
	podstatus.StampTimes(&pod.Status, &s, t0.Add(61*time.Second))
	fmt.Println("started:", s.StartTime.UTC().Format(time.TimeOnly))
	for _, c := range s.Conditions {
		if c.Type == v1.PodReady || c.Type == v1.PodScheduled {
			fmt.Println(c.Type, c.Status, c.LastTransitionTime.UTC().Format(time.TimeOnly))
		}
	}
	// Output:
	// started: 00:00:01
	// Ready False 00:01:01
	// PodScheduled True 00:00:01
}
