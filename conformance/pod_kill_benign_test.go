package conformance_test

import (
	"context"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podKillBenign are the benign variants of the group "kill" (pod_kill.go): the
// fake taking one freedom each, which the suite must pass.
func podKillBenign() []*benign {
	return []*benign{
		{
			name:    "minimum-grace",
			freedom: "a minimum grace period of the provider's own (the kubelet's runtime never gives less than 2 seconds)",
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					const floor = 2
					g := int64(floor)
					switch {
					case grace != nil:
						g = max(*grace, floor)
					case pod != nil && pod.DeletionGracePeriodSeconds != nil:
						g = max(*pod.DeletionGracePeriodSeconds, floor)
					case pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil:
						g = max(*pod.Spec.TerminationGracePeriodSeconds, floor)
					}
					return next.KillPod(ctx, pod, rp, &g)
				}}
			},
		},
		{
			name:    "kill-returns-late-on-a-loaded-machine",
			freedom: "a KillPod that returns seconds after the grace period and the runtime's minimum are over, as a real runtime on a loaded machine can (KRI-POD-065's first try, whose limit leaves a grace period's worth of slack, gets a second with the State timeout)",
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					err := next.KillPod(ctx, pod, rp, grace)
					if pod != nil && pod.Labels[conformance.SpecLabel] == "KRI-POD-065" && pod.Labels[conformance.TryLabel] == "1" {
						time.Sleep(3500 * time.Millisecond) // the fake takes 1s (grace period 1s): 4.5s, past the first try's 4.1s, within the Call timeout of 5s
					}
					return err
				}}
			},
		},
		{
			name:    "forgets-on-kill",
			freedom: "forgetting a pod as KillPod stops it, as a provider that deletes the backend cluster's pod does (GetPodStatus then reports it unknown, GetPods leaves it out)",
			pod:     func(*fake.PodProvider) interceptor.PodFuncs { return forgetOnKill() },
		},
	}
}

// forgetOnKill makes KillPod forget the pod once it has stopped it (the
// fake's DeletePod), as kuscia's K8sProvider, whose KillPod deletes the
// backend pod: afterwards GetPodStatus reports the pod unknown and GetPods
// does not list it.
func forgetOnKill() interceptor.PodFuncs {
	return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
		if err := next.KillPod(ctx, pod, rp, grace); err != nil {
			return err
		}
		if pod == nil {
			pod = rp.ToAPIPod()
		}
		if pod.UID == "" {
			return nil
		}
		return next.DeletePod(context.WithoutCancel(ctx), pod)
	}}
}

// podKillHostBenign are the benign variants of the group "kill" on
// hostprocess.
func podKillHostBenign() []hostBenign {
	return []hostBenign{
		{
			name:    "host-trap-set-late",
			state:   30 * time.Second,
			freedom: "a container whose shell traps SIGTERM (to ignore it, or to take a while to stop) may get SIGTERM before its shell has run the trap, when a loaded machine has not yet given the shell the CPU: it then exits 143",
			ic: func() interceptor.PodFuncs {
				// The first pod of one spec of each kind that retries
				// such a kill (KRI-POD-018: killStubborn; KRI-POD-069:
				// killInOrder) runs its trapping containers without the
				// trap. Each second try waits the State timeout first,
				// kept to 30s here.
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if pod != nil && firstTrapTry(pod) {
						return rewritePod(func(c *v1.Container) {
							if slices.ContainsFunc(c.Args, trapsTERM) || slices.ContainsFunc(c.Command, trapsTERM) {
								c.Command, c.Args = []string{"sleep", "infinity"}, nil
							}
						})(ctx, next, pod, st, rc)
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
	}
}

// firstTrapTry reports whether pod is of the first try (slowTries) of
// KRI-POD-018 (killStubborn, pod_kill.go) or KRI-POD-069 (killInOrder,
// podspec_sidecars.go).
func firstTrapTry(pod *v1.Pod) bool {
	spec := pod.Labels[conformance.SpecLabel]
	return (spec == "KRI-POD-018" || spec == "KRI-POD-069") && pod.Labels[conformance.TryLabel] == "1"
}

// trapsTERM reports whether a shell script sets a trap for SIGTERM.
func trapsTERM(script string) bool {
	return strings.Contains(script, "trap ") && strings.Contains(script, " TERM")
}
