package conformance_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// The benign variants of the lifecycle hook specs: hostprocess changed only
// where the contract leaves room. They are among hostBenignVariants, so
// TestHostBenignVariantsPass checks that each passes every pod spec that
// applies to hostprocess.

// kubeletMinimumGraceSecs is the kubelet's minimumGracePeriodInSeconds.
const kubeletMinimumGraceSecs = 2

// podspecHooksHostBenign are the benign variants of the pod-spec capability
// "hooks" (podspec_hooks.go) on the hostprocess example, which the suite must
// pass.
// hookBackOff is the back-off step of host-poststart-crashloop-backoff.
const hookBackOff = 100 * time.Millisecond

func podspecHooksHostBenign() []hostBenign {
	return []hostBenign{
		{
			name:    "host-poststart-late",
			freedom: "a postStart hook may start a while after its container (an exec into a container takes time), as long as the next container waits for it",
			ic: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					if h := hookOf(c, true); h != nil && h.Exec != nil && len(h.Exec.Command) == 3 && h.Exec.Command[0] == "sh" && h.Exec.Command[1] == "-c" {
						h.Exec.Command = []string{"sh", "-c", "sleep 0.2; " + h.Exec.Command[2]}
					}
				})}
			},
		},
		{
			name:    "host-prestop-by-runner-kubelet-minimum",
			freedom: "the preStop hook may be run by a runner outside the provider's containers (as kuberuntime's handler runner execs it), and after it the container may get the kubelet's minimum of 2 seconds rather than what is left of the grace period",
			ic: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, running pkgcontainer.Pod, grace *int64) error {
					if pod == nil || grace == nil || *grace <= 0 {
						return next.KillPod(ctx, pod, running, grace)
					}
					limit := time.Duration(*grace) * time.Second
					start := time.Now()
					var wg sync.WaitGroup
					for _, rc := range running.Containers {
						if rc.State != pkgcontainer.ContainerStateRunning {
							continue
						}
						for i := range pod.Spec.Containers {
							if c := &pod.Spec.Containers[i]; c.Name == rc.Name {
								wg.Go(func() { runHostHook(hookOf(c, false), limit) })
							}
						}
					}
					wg.Wait()
					// killContainer: the hook's whole seconds are taken from
					// the grace period, which is at least the minimum.
					left := max(*grace-int64(time.Since(start).Seconds()), kubeletMinimumGraceSecs)
					// The runner ran the exec hooks; the others (HTTP) are
					// still the provider's.
					return next.KillPod(ctx, stripHooks(pod, false, func(_ *v1.Container, h *v1.LifecycleHandler) bool { return h.Exec != nil }), running, &left)
				}}
			},
		},
		{
			name:    "host-poststart-crashloop-backoff",
			freedom: "a container killed for its failed postStart hook may be restarted after a back-off, reported as CrashLoopBackOff meanwhile, as the kubelet does (three syncs, each asked for hookBackOff after the one before)",
			icLater: func(later *laterCalls) interceptor.PodFuncs {
				var mu sync.Mutex
				waited := map[types.UID]int{}
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if rc == nil || !hasFailingPostStart(pod) || pod.Spec.RestartPolicy == v1.RestartPolicyNever {
						return next.SyncPod(ctx, pod, st, rc)
					}
					now, err := next.GetPodStatus(ctx, pod)
					if err != nil || slices.IndexFunc(now.ContainerStatuses, func(s *pkgcontainer.Status) bool { return s.State == pkgcontainer.ContainerStateRunning }) >= 0 ||
						len(now.ContainerStatuses) == 0 {
						return next.SyncPod(ctx, pod, st, rc)
					}
					mu.Lock()
					waited[pod.UID]++
					n := waited[pod.UID]
					if n > 3 {
						waited[pod.UID] = 0
					}
					mu.Unlock()
					if n > 3 {
						return next.SyncPod(ctx, pod, st, rc)
					}
					var result pkgcontainer.PodSyncResult
					for _, c := range pod.Spec.Containers {
						if h := hookOf(&c, true); h == nil || !hookFails(&c, h) {
							continue
						}
						r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
						r.Fail(pkgcontainer.ErrCrashLoopBackOff, fmt.Sprintf("back-off restarting failed container %s", c.Name))
						result.AddSyncResult(r)
					}
					rc.Update(pod.UID, result)
					later.after(pod.UID, hookBackOff)
					return result.Error()
				}}
			},
		},
	}
}
