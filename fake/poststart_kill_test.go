package fake_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The SIGTERM after a failed postStart hook ends the container as KillPod's
// would: one that ignores it is killed with 137 when the pod's grace
// period is over, one whose handler takes a while exits when it is done.
func TestFailedPostStartHookStopsLikeKillPod(t *testing.T) {
	for _, tt := range []struct {
		name, script string
		wantAfter    time.Duration // from the start
		wantCode     int
	}{
		{"ignores SIGTERM", "trap '' TERM; sleep infinity", 11 * time.Second, 137},
		{"slow handler", "trap 'sleep 3; exit 7' TERM; sleep infinity & wait", 4 * time.Second, 7},
	} {
		f := newFixture(t)
		pod := newPod("poststart-kill", v1.RestartPolicyNever, withHooks(container("app", "sh", "-c", tt.script), "sleep 1; exit 2", ""))
		grace := int64(10)
		pod.Spec.TerminationGracePeriodSeconds = &grace
		_ = f.sync(pod) // reports the hook's failure at its end, not now
		f.clock.Step(12 * time.Second)
		c := f.current(pod, "app")
		if c.State != pkgcontainer.ContainerStateExited || c.ExitCode != tt.wantCode || c.FinishedAt.Sub(c.StartedAt) != tt.wantAfter {
			t.Errorf("%s, postStart hook failed after 1s, grace 10s: %s with %d after %s; want exited with %d after %s",
				tt.name, c.State, c.ExitCode, c.FinishedAt.Sub(c.StartedAt), tt.wantCode, tt.wantAfter)
		}
	}
}

// The kill after a failed postStart hook runs the container's preStop hook
// first, as every kill of the kubelet's killContainer does: SIGTERM comes
// when the preStop hook has ended.
func TestFailedPostStartHookRunsThePreStopHook(t *testing.T) {
	for _, tt := range []struct {
		name, postStart string
		wantAfter       time.Duration // from the start
	}{
		{"fails at once", "exit 2", 3 * time.Second},
		{"fails after 1s", "sleep 1; exit 2", 4 * time.Second},
	} {
		f := newFixture(t)
		pod := newPod("poststart-prestop", v1.RestartPolicyNever, withHooks(container("app", "sh", "-c", untilKilled), tt.postStart, "sleep 3"))
		_ = f.sync(pod)
		f.clock.Step(10 * time.Second)
		c := f.current(pod, "app")
		if c.State != pkgcontainer.ContainerStateExited || c.ExitCode != 143 || c.FinishedAt.Sub(c.StartedAt) != tt.wantAfter {
			t.Errorf("postStart hook %s, preStop hook sleeps 3s: %s with %d after %s; want exited with 143 after %s",
				tt.name, c.State, c.ExitCode, c.FinishedAt.Sub(c.StartedAt), tt.wantAfter)
		}
	}
}
