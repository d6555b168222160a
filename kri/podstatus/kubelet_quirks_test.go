package podstatus_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// The tests in this file pin places where Generate follows the kubelet
// although the kubelet's result looks accidental; each names the kubelet
// code it follows, so that a change on either side is noticed.

// TestTerminalPhaseReasonAsKubelet: generateAPIPodStatus (kubelet_pods.go)
// keeps Reason and Message only while the phase it computed (after the
// three-way merge restored a terminal previous phase over a non-terminal
// one) equals the previous phase; a computed phase that is the other
// terminal phase is forced back afterwards ("Pod attempted illegal phase
// transition") with Reason and Message already cleared.
func TestTerminalPhaseReasonAsKubelet(t *testing.T) {
	never := v1.PodSpec{Containers: containers("app"), RestartPolicy: v1.RestartPolicyNever}
	evicted := v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted", Message: "The node was low on resource"}
	completed := v1.PodStatus{Phase: v1.PodSucceeded, Reason: "R", Message: "M"}
	tests := []struct {
		name            string
		prev            v1.PodStatus
		runtime         []int // exit codes of "app" instances; -1: running
		terminal        bool
		phase           v1.PodPhase
		reason, message string
	}{
		{name: "Failed, computed Running: restored by the three-way merge, reason kept",
			prev: evicted, runtime: []int{-1}, phase: v1.PodFailed, reason: evicted.Reason, message: evicted.Message},
		{name: "Failed, computed Failed: same phase, reason kept",
			prev: evicted, runtime: []int{1}, phase: v1.PodFailed, reason: evicted.Reason, message: evicted.Message},
		{name: "Failed, computed Succeeded: forced back, reason dropped",
			prev: evicted, runtime: []int{0}, phase: v1.PodFailed},
		{name: "Failed, computed Succeeded by GenerateTerminal: forced back, reason dropped",
			prev: evicted, runtime: []int{0}, terminal: true, phase: v1.PodFailed},
		{name: "Succeeded, computed Failed: forced back, reason dropped",
			prev: completed, runtime: []int{1}, phase: v1.PodSucceeded},
		{name: "Succeeded, computed Pending: restored, reason kept",
			prev: completed, phase: v1.PodSucceeded, reason: "R", message: "M"},
		{name: "Running, computed Succeeded: a change, reason dropped",
			prev: v1.PodStatus{Phase: v1.PodRunning, Reason: "R", Message: "M"}, runtime: []int{0}, phase: v1.PodSucceeded},
		{name: "Running, computed Running: reason kept",
			prev: v1.PodStatus{Phase: v1.PodRunning, Reason: "R", Message: "M"}, runtime: []int{-1}, phase: v1.PodRunning, reason: "R", message: "M"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status := noRuntime()
			for _, code := range tc.runtime {
				if code < 0 {
					status = runtimeStatus(runningI("app", "a1", 1))
				} else {
					status = stoppedRuntime(exitedI("app", "a1", 1, code))
				}
			}
			gen, name := podstatus.Generate, "Generate"
			if tc.terminal {
				gen, name = podstatus.GenerateTerminal, "GenerateTerminal"
			}
			got := gen(mkPod(never, tc.prev), status, nil)
			if got.Phase != tc.phase || got.Reason != tc.reason || got.Message != tc.message {
				t.Errorf("%s after phase %s (reason %q, message %q) with app exit codes %v: phase %s, reason %q, message %q; want %s, %q, %q (the kubelet's generateAPIPodStatus)",
					name, tc.prev.Phase, tc.prev.Reason, tc.prev.Message, tc.runtime, got.Phase, got.Reason, got.Message, tc.phase, tc.reason, tc.message)
			}
		})
	}
}

// TestStaleInitReadyAsKubelet: convertToAPIContainerStatuses copies the
// whole previous status of a container the previous status showed
// terminated and the runtime no longer reports, Ready included; a start
// failure then makes it Waiting, and the prober manager (UpdatePodStatus)
// sets Ready of a regular init container only when it exited 0, of any
// other container only once it has started: the stale Ready=true stays. A
// container the runtime does report gets a fresh status, not ready until it
// runs (or, as an init container, completes).
func TestStaleInitReadyAsKubelet(t *testing.T) {
	done := withReady(terminatedC("init", "i1", 1, 0), true)
	spec := v1.PodSpec{InitContainers: containers("init"), Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways}
	pullFailed := [2]string{"ErrImagePull", "pull failed"}

	t.Run("instance removed, start failure in a new sandbox: stays ready", func(t *testing.T) {
		pod := mkPod(spec, v1.PodStatus{InitContainerStatuses: list(done)})
		got := podstatus.Generate(pod, runtimeStatus(), reasonCache(podUID, map[string][2]string{"init": pullFailed}))
		want := withLast(withState(done, waitingS("ErrImagePull", "pull failed")), done.State)
		if d := cmp.Diff(list(want), got.InitContainerStatuses); d != "" {
			t.Errorf("Generate of a completed init container whose instance is gone and whose restart failed: init statuses (-want +got):\n%s", d)
		}
	})
	t.Run("instance removed, no failure: stays terminated and ready", func(t *testing.T) {
		pod := mkPod(spec, v1.PodStatus{InitContainerStatuses: list(done)})
		got := podstatus.Generate(pod, runtimeStatus(), nil)
		if d := cmp.Diff(list(done), got.InitContainerStatuses); d != "" {
			t.Errorf("Generate of a completed init container whose instance is gone: init statuses (-want +got):\n%s", d)
		}
	})
	t.Run("instance reported running: a fresh status, not ready", func(t *testing.T) {
		pod := mkPod(spec, v1.PodStatus{InitContainerStatuses: list(done)})
		got := podstatus.Generate(pod, runtimeStatus(runningI("init", "i2", 5)), nil)
		if st := got.InitContainerStatuses[0]; st.Ready {
			t.Errorf("Generate of an init container running again after it completed: Ready true, want false (%+v)", st)
		}
	})
	t.Run("app container reported exited after a ready run: not ready", func(t *testing.T) {
		pod := mkPod(v1.PodSpec{Containers: containers("app")}, v1.PodStatus{ContainerStatuses: list(runningC("app", "a1", 1))})
		got := podstatus.Generate(pod, runtimeStatus(exitedI("app", "a1", 1, 1)), nil)
		if st := got.ContainerStatuses[0]; st.Ready {
			t.Errorf("Generate of an app container that exited after the previous status showed it ready: Ready true, want false (%+v)", st)
		}
	})
}
