package fake_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// A completed init container is Ready in RefreshPodStatus, in both modes,
// as the kubelet's prober manager reports it (UpdatePodStatus in
// pkg/kubelet/prober/prober_manager.go): kuscia's agent computes the
// Initialized condition from the init statuses' Ready, so a fake that left
// it false kept the pod Initialized=False for life. One that failed is not.
func TestRefreshPodStatusCompletedInitContainerIsReady(t *testing.T) {
	for _, m := range notifyModes {
		t.Run(m.name, func(t *testing.T) {
			for _, tc := range []struct {
				cmd   string
				ready bool
			}{{"true", true}, {"false", false}} {
				f := newFixture(t, m.opts...)
				pod := newPod("web", v1.RestartPolicyNever, container("app", "sleep", "infinity"))
				pod.Spec.InitContainers = []v1.Container{container("init", tc.cmd)}
				for range 3 {
					_ = f.sync(pod)
				}
				var st v1.PodStatus
				f.p.RefreshPodStatus(pod, &st)
				if len(st.InitContainerStatuses) != 1 || st.InitContainerStatuses[0].State.Terminated == nil {
					t.Fatalf("init %q: init statuses %+v, want one terminated", tc.cmd, st.InitContainerStatuses)
				}
				if got := st.InitContainerStatuses[0].Ready; got != tc.ready {
					t.Errorf("init %q exited %d: Ready = %v, want %v", tc.cmd, st.InitContainerStatuses[0].State.Terminated.ExitCode, got, tc.ready)
				}
			}
		})
	}
}
