package podstatus_test

import (
	"slices"
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

// TestAsKusciaAgentConditions: kuscia's agent generates Initialized,
// Ready, ContainersReady and PodScheduled, in that order, no
// PodReadyToStartContainers, and Initialized from the init containers'
// Ready after RefreshPodStatus (pkg/agent/status/generate.go
// GeneratePodInitializedCondition): false until RefreshPodStatus sets a
// completed init container Ready, though the app container runs.
func TestAsKusciaAgentConditions(t *testing.T) {
	kuscia := podstatus.NewGenerator(podstatus.AsKusciaAgent())
	pod := mkPod(v1.PodSpec{InitContainers: containers("init"), Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways}, v1.PodStatus{})
	st := runtimeStatus(exitedI("init", "i1", 1, 0), runningI("app", "a1", 2))
	s := kuscia.Generate(pod, st, nil)
	var types []v1.PodConditionType
	for _, c := range s.Conditions {
		types = append(types, c.Type)
	}
	if want := []v1.PodConditionType{v1.PodInitialized, v1.PodReady, v1.ContainersReady, v1.PodScheduled}; !slices.Equal(types, want) {
		t.Fatalf("conditions %v, want %v (kuscia's order, no PodReadyToStartContainers)", types, want)
	}
	kuscia.UpdateConditions(pod, &s)
	if c := condition(s, v1.PodInitialized); c.Status != v1.ConditionFalse || c.Reason != "ContainersNotInitialized" {
		t.Fatalf("Initialized with init not Ready after RefreshPodStatus: %+v, want False ContainersNotInitialized (kuscia counts no app container that ran)", c)
	}
	// What RefreshPodStatus does for a completed init container (the
	// kubelet's prober manager sets it ready).
	s.InitContainerStatuses[0].Ready = true
	kuscia.UpdateConditions(pod, &s)
	if c := condition(s, v1.PodInitialized); c.Status != v1.ConditionTrue {
		t.Fatalf("Initialized with init Ready: %+v, want True", c)
	}
	// The kubelet 1.37 counts the app container that ran.
	kubelet := podstatus.NewGenerator(podstatus.WithProbeFieldsUnset())
	s = kubelet.Generate(pod, st, nil)
	kubelet.UpdateConditions(pod, &s)
	if c := condition(s, v1.PodInitialized); c.Status != v1.ConditionTrue {
		t.Fatalf("kubelet rules: Initialized %+v, want True once an app container ran", c)
	}
}

// TestAsKusciaAgentUnknownState: a container that ran and whose state the
// runtime can no longer tell is published terminated (137,
// ContainerStatusUnknown) with one restart more than the previous status
// showed, by kuscia's agent as by the kubelet.
func TestAsKusciaAgentUnknownState(t *testing.T) {
	pod := mkPod(v1.PodSpec{Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways},
		v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{withRestartCount(runningC("app", "a1", 1), 3)}})
	st := runtimeStatus(withRestarts(instance("app", "a1", 1, pkgcontainer.ContainerStateUnknown), 3))
	for name, g := range map[string]*podstatus.Generator{"kuscia": podstatus.NewGenerator(podstatus.AsKusciaAgent()), "kubelet": nil} {
		s := g.Generate(pod, st, nil)
		app := s.ContainerStatuses[0]
		if app.State.Terminated == nil || app.State.Terminated.ExitCode != 137 || app.RestartCount != 4 {
			t.Errorf("%s: app %+v, want Terminated 137 with RestartCount 4", name, app)
		}
	}
}

func condition(s v1.PodStatus, t v1.PodConditionType) v1.PodCondition {
	for _, c := range s.Conditions {
		if c.Type == t {
			return c
		}
	}
	return v1.PodCondition{}
}

func withRestartCount(c v1.ContainerStatus, n int32) v1.ContainerStatus {
	c.RestartCount = n
	return c
}
