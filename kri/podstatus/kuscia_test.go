package podstatus_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// TestAsKusciaAgent: the phase and the runtime-only restart counts and last
// terminations kuscia's agent computes (pkg/agent/framework/pod.go getPhase
// and convertToAPIContainerStatuses), each case where it differs from the
// kubelet 1.37 and one where both agree.
func TestAsKusciaAgent(t *testing.T) {
	kuscia := podstatus.NewGenerator(podstatus.AsKusciaAgent())
	crashLooping := v1.ContainerStatus{Name: "app", RestartCount: 2,
		State:                v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1}}}
	for _, tc := range []struct {
		name                 string
		pod                  *v1.Pod
		status               *pkgcontainer.PodStatus
		kuscia, kubelet      v1.PodPhase
		lastExit             *int32 // app's LastTerminationState, nil for none
		kusciaRestarts       int32
		kubeletRestartsAtLst int32
	}{
		{
			name:   "a running sidecar keeps the pod Pending",
			pod:    mkPod(v1.PodSpec{InitContainers: []v1.Container{sidecar("side")}, Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways}, v1.PodStatus{}),
			status: runtimeStatus(runningI("side", "s1", 1), runningI("app", "a1", 2)),
			kuscia: v1.PodPending, kubelet: v1.PodRunning,
		},
		{
			name:   "an init container without status is still to run",
			pod:    mkPod(v1.PodSpec{InitContainers: containers("init"), Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways}, v1.PodStatus{}),
			status: runtimeStatus(runningI("app", "a1", 2)),
			kuscia: v1.PodPending, kubelet: v1.PodRunning,
		},
		{
			name: "a single instance reported Created after runs that exited: no last termination, Pending",
			pod: mkPod(v1.PodSpec{Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways},
				v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{crashLooping}}),
			status: runtimeStatus(withRestarts(createdI("app", "a3", 5), 2)),
			kuscia: v1.PodPending, kubelet: v1.PodRunning,
		},
		{
			name:   "the instance before the newest is the last termination for both",
			pod:    mkPod(v1.PodSpec{Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways}, v1.PodStatus{}),
			status: runtimeStatus(withRestarts(runningI("app", "a2", 3), 1), exitedI("app", "a1", 1, 7)),
			kuscia: v1.PodRunning, kubelet: v1.PodRunning, lastExit: ptrTo(int32(7)),
		},
		{
			name:   "a failed init container fails a Never pod",
			pod:    mkPod(v1.PodSpec{InitContainers: containers("init"), Containers: containers("app"), RestartPolicy: v1.RestartPolicyNever}, v1.PodStatus{}),
			status: runtimeStatus(exitedI("init", "i1", 1, 3)),
			kuscia: v1.PodFailed, kubelet: v1.PodFailed,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := kuscia.Generate(tc.pod, tc.status, nil)
			if got.Phase != tc.kuscia {
				t.Errorf("AsKusciaAgent phase = %s, want %s", got.Phase, tc.kuscia)
			}
			if kubelet := podstatus.Generate(tc.pod, tc.status, nil).Phase; kubelet != tc.kubelet {
				t.Errorf("Generate (the kubelet's rules) phase = %s, want %s", kubelet, tc.kubelet)
			}
			for _, cs := range got.ContainerStatuses {
				if cs.Name != "app" {
					continue
				}
				last := cs.LastTerminationState.Terminated
				switch {
				case tc.lastExit == nil && last != nil:
					t.Errorf("app's LastTerminationState = %+v, want none (kuscia takes it from the runtime alone)", *last)
				case tc.lastExit != nil && (last == nil || last.ExitCode != *tc.lastExit):
					t.Errorf("app's LastTerminationState = %+v, want exit code %d", last, *tc.lastExit)
				}
				if cs.Started != nil || cs.Ready {
					t.Errorf("app: Started %v, Ready %v, want both left to the provider", cs.Started, cs.Ready)
				}
			}
		})
	}
}
