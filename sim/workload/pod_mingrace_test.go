package workload_test

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

// MinimumGracePeriod is the least a run gets between SIGTERM and SIGKILL in
// every kill, once, after its preStop hook, as the kubelet's killContainer
// applies minimumGracePeriodInSeconds: a grace period of 0 runs no hook and
// still gives the floor; one of 1s gives the hook 1s, then the floor.
func TestPodMinimumGracePeriodOnce(t *testing.T) {
	app := shc("app", "trap '' TERM; sleep infinity")
	app.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "sleep 30"}}}}
	for _, tc := range []struct {
		grace time.Duration
		want  string
	}{
		{0, "1s RunKilling app/a grace 0s\n3s RunExited app/a exit 137"},
		{time.Second, "1s RunKilling app/a grace 1s\n1s HookRan app/a preStop exec from 1s until 2s failed=false grace 1s\n4s RunExited app/a exit 137"},
		{5 * time.Second, "1s RunKilling app/a grace 5s\n1s HookRan app/a preStop exec from 1s until 6s failed=false grace 5s\n8s RunExited app/a exit 137"},
	} {
		p, log := newCallerPod(app)
		p.MinimumGracePeriod = 2 * time.Second
		p.StartRun(&app, false, t0, workload.RunOptions{ID: "a"})
		p.Advance(sec(1))
		*log = nil
		p.StopRuns(sec(1), tc.grace, nil)
		p.Advance(sec(20))
		if got := strings.Join(*log, "\n"); got != tc.want {
			t.Errorf("grace %v: events:\n%s\nwant:\n%s", tc.grace, got, tc.want)
		}
	}
}
