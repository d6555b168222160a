package podstatus_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
)

func examplePod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyAlways,
			Containers:    []v1.Container{{Name: "app", Image: "busybox:1.36"}},
		},
	}
}

// A container runtime keeps every instance of a container: here "app" ran,
// exited 1, was started again, exited 2, and SyncPod's last attempt to
// start it was backed off. The newest instance gives the termination, the
// one before it the last termination, and the reason cache the Waiting
// reason.
func ExampleGenerate() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := examplePod()
	status := &pkgcontainer.PodStatus{
		ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace,
		IPs: []string{"10.0.0.7"},
		SandboxStatuses: []*runtimeapi.PodSandboxStatus{{
			Id: "sb-1", State: runtimeapi.PodSandboxState_SANDBOX_READY,
			Network: &runtimeapi.PodSandboxNetworkStatus{Ip: "10.0.0.7"},
		}},
		ContainerStatuses: []*pkgcontainer.Status{
			{ID: pkgcontainer.ContainerID{Type: "containerd", ID: "c1"}, Name: "app", Image: "busybox:1.36",
				State: pkgcontainer.ContainerStateExited, ExitCode: 1, Reason: "Error",
				CreatedAt: t0, StartedAt: t0, FinishedAt: t0.Add(time.Second)},
			{ID: pkgcontainer.ContainerID{Type: "containerd", ID: "c2"}, Name: "app", Image: "busybox:1.36",
				State: pkgcontainer.ContainerStateExited, ExitCode: 2, Reason: "Error", RestartCount: 1,
				CreatedAt: t0.Add(10 * time.Second), StartedAt: t0.Add(10 * time.Second), FinishedAt: t0.Add(11 * time.Second)},
		},
	}
	reasons := kri.NewReasonCache()
	start := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, "app")
	start.Fail(errors.New("CrashLoopBackOff"), "back-off 20s restarting failed container=app")
	reasons.Update(pod.UID, pkgcontainer.PodSyncResult{SyncResults: []*pkgcontainer.SyncResult{start}})

	s := podstatus.Generate(pod, status, reasons)
	app := s.ContainerStatuses[0]
	fmt.Println(s.Phase, s.PodIP)
	fmt.Println(app.State.Waiting.Reason, app.RestartCount, app.ContainerID)
	fmt.Println("last:", app.LastTerminationState.Terminated.ExitCode, app.LastTerminationState.Terminated.ContainerID)
	for _, c := range s.Conditions {
		fmt.Println(strings.TrimSpace(fmt.Sprint(c.Type, " ", c.Status, " ", c.Reason)))
	}
	// Output:
	// Running 10.0.0.7
	// CrashLoopBackOff 1 containerd://c2
	// last: 2 containerd://c2
	// PodReadyToStartContainers True
	// Initialized True
	// Ready False ContainersNotReady
	// ContainersReady False ContainersNotReady
	// PodScheduled True
}

// A remote backend keeps one instance per container, with its restart
// count, and no sandbox. The agent passes the status it reported last back
// in pod.Status, which is where the last termination comes from.
func ExampleGenerate_remoteBackend() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := examplePod()
	job := func(state pkgcontainer.State, id string, restarts, exitCode int, at time.Duration) *pkgcontainer.PodStatus {
		return &pkgcontainer.PodStatus{ID: pod.UID, ContainerStatuses: []*pkgcontainer.Status{{
			ID: pkgcontainer.ContainerID{Type: "remote", ID: id}, Name: "app", State: state,
			RestartCount: restarts, ExitCode: exitCode, Reason: "Error",
			CreatedAt: t0.Add(at), StartedAt: t0.Add(at), FinishedAt: t0.Add(at + time.Second),
		}}}
	}

	pod.Status = podstatus.Generate(pod, job(pkgcontainer.ContainerStateExited, "job-1", 0, 3, 0), nil)
	fmt.Println(pod.Status.Phase, pod.Status.ContainerStatuses[0].State.Terminated.ExitCode)

	// The backend restarted it: only the new instance is left.
	pod.Status = podstatus.Generate(pod, job(pkgcontainer.ContainerStateRunning, "job-2", 1, 0, time.Minute), nil)
	app := pod.Status.ContainerStatuses[0]
	fmt.Println(pod.Status.Phase, app.RestartCount, app.Ready)
	fmt.Println("last:", app.LastTerminationState.Terminated.ExitCode, app.LastTerminationState.Terminated.ContainerID)
	// Output:
	// Running 3
	// Running 1 true
	// last: 3 remote://job-1
}

// Once the agent has killed a pod for good (here: deleted), it reports the
// final phase with GenerateTerminal: Generate would report a pod with
// restart policy Always as Running, its containers about to restart.
func ExampleGenerateTerminal() {
	pod := examplePod()
	deleted := metav1.Now()
	pod.DeletionTimestamp = &deleted
	killed := &pkgcontainer.PodStatus{
		ID: pod.UID,
		SandboxStatuses: []*runtimeapi.PodSandboxStatus{{
			Id: "sb-1", State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY,
		}},
		ContainerStatuses: []*pkgcontainer.Status{{
			ID: pkgcontainer.ContainerID{Type: "containerd", ID: "c1"}, Name: "app",
			State: pkgcontainer.ContainerStateExited, ExitCode: 143, Reason: "Error",
		}},
	}
	fmt.Println(podstatus.Generate(pod, killed, nil).Phase)
	fmt.Println(podstatus.GenerateTerminal(pod, killed, nil).Phase)
	// Output:
	// Running
	// Failed
}
