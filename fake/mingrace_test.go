package fake_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// Under WithMinimumGracePeriod the 2s floor comes after the preStop hook,
// once, as the kubelet's killContainer applies minimumGracePeriodInSeconds
// (pkg/kubelet/kuberuntime/kuberuntime_container.go): a grace period of 1s
// gives the hook 1s, then SIGTERM and 2s before SIGKILL; one of 0 runs no
// hook (killContainer runs it only with a grace period above 0), SIGKILL
// 2s after SIGTERM.
func TestMinimumGracePeriodAfterPreStopHook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stubborn := container("app", "sh", "-c", "trap '' TERM; sleep infinity")
		for _, tc := range []struct {
			grace int64
			took  time.Duration
			hook  bool
		}{
			{grace: 1, took: 3 * time.Second, hook: true},
			{grace: 0, took: 2 * time.Second, hook: false},
		} {
			p := fake.NewPodProvider(fake.WithMinimumGracePeriod())
			sub := p.Subscribe(64)
			pod := newPod(fmt.Sprintf("floor-%d", tc.grace), v1.RestartPolicyAlways, withHooks(stubborn, "", "sleep 30"))
			if err := p.SyncPod(t.Context(), pod, nil, kri.NewReasonCache()); err != nil {
				t.Fatal(err)
			}
			st, _ := p.GetPodStatus(t.Context(), pod)
			start := time.Now()
			if err := p.KillPod(t.Context(), pod, pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, st), &tc.grace); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took != tc.took {
				t.Errorf("grace %ds: KillPod (preStop sleep 30, SIGTERM ignored) took %s, want %s", tc.grace, took, tc.took)
			}
			st, _ = p.GetPodStatus(t.Context(), pod)
			if app := st.FindContainerStatusByName("app"); app == nil || app.ExitCode != 137 {
				t.Errorf("grace %ds: after KillPod: %s, want app exited 137", tc.grace, describe(st))
			}
			hook := false
			for len(sub.C) > 0 {
				if e := <-sub.C; e.Type == fake.EventPreStopHook {
					hook = true
				}
			}
			if hook != tc.hook {
				t.Errorf("grace %ds: preStop hook ran %v, want %v", tc.grace, hook, tc.hook)
			}
			sub.Close()
			p.Stop()
		}
	})
}
