package conformance_test

import (
	"context"
	"math"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
	"github.com/kri-kit/testkit/sim/workload"
)

// The mutants of the lifecycle hook specs (KRI-POD-062 to 065), built on
// the hostprocess example, which runs the hooks for real: each decorates it
// with interceptor.PodFuncs.

// hookOf returns the postStart (post) or preStop hook of c, or nil.
func hookOf(c *v1.Container, post bool) *v1.LifecycleHandler {
	switch {
	case c.Lifecycle == nil:
		return nil
	case post:
		return c.Lifecycle.PostStart
	default:
		return c.Lifecycle.PreStop
	}
}

// hookFails reports whether the exec hook h of c fails.
func hookFails(c *v1.Container, h *v1.LifecycleHandler) bool {
	b, ok := workload.OfHandler(c, h)
	return ok && !b.RunsUntilKilled && b.ExitCode != 0
}

// stripHooks returns a copy of pod without the hooks keep says to drop
// (post: postStart hooks, else preStop hooks).
func stripHooks(pod *v1.Pod, post bool, drop func(*v1.Container, *v1.LifecycleHandler) bool) *v1.Pod {
	if pod == nil {
		return nil
	}
	pod = pod.DeepCopy()
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := &list[i]
			if h := hookOf(c, post); h != nil && drop(c, h) {
				if post {
					c.Lifecycle.PostStart = nil
				} else {
					c.Lifecycle.PreStop = nil
				}
			}
		}
	}
	return pod
}

// runHostHook runs the exec hook h as a host process, for at most limit
// (0: no limit), and returns when it has ended.
func runHostHook(h *v1.LifecycleHandler, limit time.Duration) {
	if h == nil || h.Exec == nil || len(h.Exec.Command) == 0 {
		return
	}
	ctx := context.Background()
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, h.Exec.Command[0], h.Exec.Command[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	_ = cmd.Run()
}

// hasFailingPostStart reports whether a container of pod has a postStart
// hook that fails.
func hasFailingPostStart(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if h := hookOf(c, true); h != nil && hookFails(c, h) {
			return true
		}
	}
	return false
}

// podspecHooksMutants are the mutants of the pod-spec capability "hooks"
// (podspec_hooks.go): the hostprocess example with one contract violation each
// (selftest_hostprocess_test.go), and the specs it must fail.
func podspecHooksMutants() []*mutant {
	return []*mutant{
		{
			name:      "host-poststart-async",
			violation: "a postStart hook that succeeds runs in the background: the next container starts before it ends",
			want:      []string{"KRI-POD-062"},
			host: func() interceptor.PodFuncs {
				var mu sync.Mutex
				hooked := map[string]bool{} // instance IDs whose hook was started
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					stripped := stripHooks(pod, true, func(c *v1.Container, h *v1.LifecycleHandler) bool { return !hookFails(c, h) })
					err := next.SyncPod(ctx, stripped, st, rc)
					if pod == nil {
						return err
					}
					now, serr := next.GetPodStatus(ctx, pod)
					if serr != nil {
						return err
					}
					for i := range pod.Spec.Containers {
						c := &pod.Spec.Containers[i]
						h := hookOf(c, true)
						if h == nil || hookFails(c, h) {
							continue
						}
						for _, inst := range now.ContainerStatuses {
							if inst.Name != c.Name || inst.State != pkgcontainer.ContainerStateRunning {
								continue
							}
							mu.Lock()
							seen := hooked[inst.ID.ID]
							hooked[inst.ID.ID] = true
							mu.Unlock()
							if !seen {
								go runHostHook(h, time.Minute)
							}
						}
					}
					return err
				}}
			},
		},
		{
			name:      "host-poststart-ignored",
			violation: "postStart hooks are never run",
			want:      []string{"KRI-POD-062", "KRI-POD-063"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					return next.SyncPod(ctx, stripHooks(pod, true, func(*v1.Container, *v1.LifecycleHandler) bool { return true }), st, rc)
				}}
			},
		},
		{
			name:      "host-poststart-failure-not-restarted",
			violation: "a container killed because its postStart hook failed is never started again, whatever the restart policy",
			want:      []string{"KRI-POD-063"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: syncSkippedWhen(hasFailingPostStart, func(pod *v1.Pod, now *pkgcontainer.PodStatus) bool {
					return slices.ContainsFunc(now.ContainerStatuses, func(inst *pkgcontainer.Status) bool {
						return inst.State == pkgcontainer.ContainerStateExited
					})
				})}
			},
		},
		{
			name:      "host-poststart-killed-exits-zero",
			violation: "a container killed because its postStart hook failed is reported with exit code 0",
			want:      []string{"KRI-POD-063"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
					st, err := next.GetPodStatus(ctx, pod)
					if st != nil && hasFailingPostStart(pod) {
						for _, c := range st.ContainerStatuses {
							if c.State == pkgcontainer.ContainerStateExited {
								c.ExitCode = 0
							}
						}
					}
					return st, err
				}}
			},
		},
		{
			name:      "host-prestop-ignored",
			violation: "KillPod never runs preStop hooks",
			want: []string{
				"KRI-POD-064",
				// KRI-POD-090, the HTTP preStop hook.
				"KRI-POD-090",
			},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, running pkgcontainer.Pod, grace *int64) error {
					return next.KillPod(ctx, stripHooks(pod, false, func(*v1.Container, *v1.LifecycleHandler) bool { return true }), running, grace)
				}}
			},
		},
		{
			name:      "host-prestop-after-sigterm",
			violation: "KillPod runs the preStop hooks after it has stopped the containers (within the grace period)",
			want: []string{
				"KRI-POD-064",
				// KRI-POD-090, the HTTP preStop hook: its server has exited before the request.
				"KRI-POD-090",
			},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, running pkgcontainer.Pod, grace *int64) error {
					err := next.KillPod(ctx, stripHooks(pod, false, func(*v1.Container, *v1.LifecycleHandler) bool { return true }), running, grace)
					if pod != nil && grace != nil {
						for i := range pod.Spec.Containers {
							runHostHook(hookOf(&pod.Spec.Containers[i], false), time.Duration(*grace)*time.Second)
						}
					}
					return err
				}}
			},
		},
		{
			name:      "host-prestop-outlasts-grace",
			violation: "KillPod waits for a preStop hook to end, however long it takes, before it counts the grace period",
			want:      []string{"KRI-POD-065"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, running pkgcontainer.Pod, grace *int64) error {
					if pod != nil && grace != nil {
						longest := 0.0
						for i := range pod.Spec.Containers {
							c := &pod.Spec.Containers[i]
							if h := hookOf(c, false); h != nil {
								if b, ok := workload.OfHandler(c, h); ok && !b.RunsUntilKilled {
									longest = max(longest, b.RunFor.Seconds())
								}
							}
						}
						g := *grace + int64(math.Ceil(longest))
						grace = &g
					}
					return next.KillPod(ctx, pod, running, grace)
				}}
			},
		},
	}
}
