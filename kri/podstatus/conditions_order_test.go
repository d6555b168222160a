package podstatus_test

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// TestResizeConditions: as the kubelet 1.37's generateAPIPodStatus, the
// resize conditions come after the conditions the kubelet does not own,
// and a pod being terminated (GenerateTerminal) has none
// (kubelet_pods.go determinePodResizeStatus clears them).
func TestResizeConditions(t *testing.T) {
	old := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
		{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue},
		{Type: "example.com/Custom", Status: v1.ConditionTrue},
	}}
	pod := mkPod(v1.PodSpec{Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways}, old)
	st := runtimeStatus(runningI("app", "a1", 1))
	types := func(s v1.PodStatus) []v1.PodConditionType {
		var out []v1.PodConditionType
		for _, c := range s.Conditions {
			out = append(out, c.Type)
		}
		return out
	}
	got := types(podstatus.Generate(pod, st, nil))
	want := []v1.PodConditionType{"example.com/Custom", v1.PodResizeInProgress, v1.PodReadyToStartContainers, v1.PodInitialized, v1.PodReady, v1.ContainersReady, v1.PodScheduled}
	if !slices.Equal(got, want) {
		t.Errorf("Generate: conditions %v, want %v", got, want)
	}
	got = types(podstatus.GenerateTerminal(pod, st, nil))
	if slices.Contains(got, v1.PodResizeInProgress) {
		t.Errorf("GenerateTerminal kept the resize condition: %v", got)
	}
}
