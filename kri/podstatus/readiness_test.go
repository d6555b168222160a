package podstatus_test

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
)

// runningApp is the runtime status of examplePod with "app" running.
func runningApp(pod *v1.Pod, t0 time.Time) *pkgcontainer.PodStatus {
	return &pkgcontainer.PodStatus{
		ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace,
		SandboxStatuses: []*runtimeapi.PodSandboxStatus{{Id: "sb-1", State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: t0.UnixNano()}},
		ContainerStatuses: []*pkgcontainer.Status{{
			ID: pkgcontainer.ContainerID{Type: "fake", ID: "c1"}, Name: "app", State: pkgcontainer.ContainerStateRunning,
			CreatedAt: t0, StartedAt: t0, Image: "busybox:1.36",
		}},
	}
}

// A provider that runs a readiness probe reports the container not ready
// (in RefreshPodStatus); UpdateReadiness then makes the pod's Ready and
// ContainersReady conditions say so, as kuscia's agent generates them after
// RefreshPodStatus.
func ExampleUpdateReadiness() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := examplePod()
	s := podstatus.Generate(pod, runningApp(pod, t0), kri.NewReasonCache())
	s.ContainerStatuses[0].Ready = false // what the provider's RefreshPodStatus did
	podstatus.UpdateReadiness(pod, &s)
	for _, c := range s.Conditions {
		if c.Type == v1.PodReady || c.Type == v1.ContainersReady {
			fmt.Println(c.Type, c.Status, c.Reason, c.Message)
		}
	}
	// Output:
	// Ready False ContainersNotReady containers with unready status: [app]
	// ContainersReady False ContainersNotReady containers with unready status: [app]
}

func TestUpdateReadiness(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := examplePod()
	pod.Generation = 3
	s := podstatus.Generate(pod, runningApp(pod, t0), kri.NewReasonCache())
	before := len(s.Conditions)

	// Unchanged Ready: UpdateReadiness changes nothing.
	same := *s.DeepCopy()
	podstatus.UpdateReadiness(pod, &same)
	if len(same.Conditions) != before {
		t.Fatalf("UpdateReadiness of an unchanged status: %d conditions, want %d", len(same.Conditions), before)
	}

	// The previous status had the pod ready since t0: a container that is
	// ready again keeps that transition time; one not ready has none.
	stamped := metav1.NewTime(t0)
	pod.Status.Conditions = []v1.PodCondition{
		{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: stamped},
		{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: stamped},
	}
	podstatus.UpdateReadiness(pod, &s)
	for _, typ := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
		_, c := podutil.GetPodConditionFromList(s.Conditions, typ)
		if c == nil || c.Status != v1.ConditionTrue || !c.LastTransitionTime.Equal(&stamped) || c.ObservedGeneration != 3 {
			t.Errorf("ready container: condition %s = %+v, want True since t0, generation 3", typ, c)
		}
	}
	s.ContainerStatuses[0].Ready = false
	podstatus.UpdateReadiness(pod, &s)
	for _, typ := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
		_, c := podutil.GetPodConditionFromList(s.Conditions, typ)
		if c == nil || c.Status != v1.ConditionFalse || !c.LastTransitionTime.IsZero() {
			t.Errorf("unready container: condition %s = %+v, want False without a transition time", typ, c)
		}
	}
	if len(s.Conditions) != before {
		t.Errorf("%d conditions after UpdateReadiness, want %d (replaced, not added)", len(s.Conditions), before)
	}
	podstatus.UpdateReadiness(nil, &s) // no panic
	podstatus.UpdateReadiness(pod, nil)
}
