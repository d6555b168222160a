package conformance_test

import (
	"context"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/utils/ptr"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// killAs returns a KillPod interceptor that hands the provider the copy of
// a pod with sidecars that edit makes.
func killAs(edit func(*v1.Pod)) func(context.Context, kri.PodProvider, *v1.Pod, pkgcontainer.Pod, *int64) error {
	return func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, running pkgcontainer.Pod, grace *int64) error {
		if hasSidecar(pod) {
			pod = pod.DeepCopy()
			edit(pod)
		}
		return next.KillPod(ctx, pod, running, grace)
	}
}

// podspecSidecarsMutants are the mutants of the pod-spec capability
// "sidecars" (podspec_sidecars.go): the hostprocess example with one
// contract violation each (selftest_hostprocess_test.go), and the specs it
// must fail; sidecar-startup-not-awaited decorates the fake.
func podspecSidecarsMutants() []*mutant {
	return []*mutant{
		{
			name:      "sidecar-startup-not-awaited",
			violation: "the next init container starts once a sidecar runs, without waiting for its startup probe",
			want:      []string{"KRI-POD-091"},
			// On the fake: hostprocess holds the next init container as
			// computeInitContainerActions does, and so does the fake.
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					if c.RestartPolicy != nil {
						c.StartupProbe = nil
					}
				})}
			},
		},
		{
			name:      "sidecar-startup-first-only",
			violation: "only the first restartable init container's startup probe holds what follows it: a later sidecar lets the next container start once it runs",
			want:      []string{"KRI-POD-091"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if pod != nil {
						pod = pod.DeepCopy()
						first := true
						for i := range pod.Spec.InitContainers {
							if c := &pod.Spec.InitContainers[i]; podutil.IsRestartableInitContainer(c) {
								if !first {
									c.StartupProbe = nil
								}
								first = false
							}
						}
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
		{
			name:      "host-sidecar-blocking",
			violation: "a native sidecar runs as a blocking init container: the app containers wait for it to exit",
			want: []string{
				"KRI-POD-066", "KRI-POD-067", "KRI-POD-068", "KRI-POD-069", "KRI-POD-070", "KRI-POD-071",
				// KRI-POD-091 needs the sidecar beside the next init container.
				"KRI-POD-091",
			},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) { c.RestartPolicy = nil })}
			},
		},
		{
			name:      "host-sidecar-started-last",
			violation: "the restartable init containers are started after the other init containers, not in spec order",
			want: []string{
				"KRI-POD-066",
				// KRI-POD-091 checks the init order.
				"KRI-POD-091",
			},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if hasSidecar(pod) {
						pod = pod.DeepCopy()
						slices.SortStableFunc(pod.Spec.InitContainers, func(a, b v1.Container) int {
							return boolInt(podutil.IsRestartableInitContainer(&a)) - boolInt(podutil.IsRestartableInitContainer(&b))
						})
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
		{
			name:      "host-sidecar-pod-policy",
			violation: "an exited sidecar is restarted only as the pod's restart policy allows (never under Never)",
			want:      []string{"KRI-POD-067"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: withoutSidecars(func(pod *v1.Pod, n *pkgcontainer.Status) bool {
					return n != nil && n.State == pkgcontainer.ContainerStateExited && !policyRestarts(pod.Spec.RestartPolicy, n.ExitCode)
				})}
			},
		},
		{
			name:      "host-sidecar-outlives-app",
			violation: "once the app containers are done, SyncPod does nothing more: the sidecars keep the pod running",
			want:      []string{"KRI-POD-068"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: syncSkippedWhen(hasSidecar, appsDoneFor)}
			},
		},
		{
			name:      "host-sidecars-killed-first",
			violation: "KillPod stops the sidecars (the last first) before the app containers",
			want:      []string{"KRI-POD-069"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: killAs(func(pod *v1.Pod) {
					// Every app container becomes a sidecar ahead of the real
					// ones: stopped last, after them.
					always := v1.ContainerRestartPolicyAlways
					apps := pod.Spec.Containers
					for i := range apps {
						apps[i].RestartPolicy = &always
					}
					pod.Spec.InitContainers = append(apps, pod.Spec.InitContainers...)
					pod.Spec.Containers = nil
				})}
			},
		},
		{
			name:      "host-sidecars-killed-together",
			violation: "KillPod stops the sidecars together with the app containers",
			want:      []string{"KRI-POD-069", "KRI-POD-070"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: killAs(func(pod *v1.Pod) {
					for i := range pod.Spec.InitContainers {
						pod.Spec.InitContainers[i].RestartPolicy = nil
					}
				})}
			},
			// Killed together, the quick container must be seen to exit
			// before the slow one, whose SIGTERM handler takes ShortRun:
			// at the scaled 100ms, a loaded machine (make test beside
			// four busy loops) once reported them the other way round,
			// and KRI-POD-070 passed this mutant. A second gives a margin
			// load does not cross.
			timeouts: ptr.To(hostMutantTimeouts(func(t *conformance.Timeouts) { t.ShortRun = time.Second })),
		},
		{
			name:      "host-sidecars-killed-in-spec-order",
			violation: "KillPod stops the sidecars after the app containers but in spec order, the first first",
			want:      []string{"KRI-POD-070"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: killAs(func(pod *v1.Pod) { slices.Reverse(pod.Spec.InitContainers) })}
			},
		},
		{
			name:      "host-sidecar-not-ready",
			violation: "RefreshPodStatus reports a running sidecar as a regular init container: not ready until it has exited 0",
			want:      []string{"KRI-POD-071"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
					next.RefreshPodStatus(pod, ps)
					if !hasSidecar(pod) {
						return
					}
					for i := range ps.InitContainerStatuses {
						if s := &ps.InitContainerStatuses[i]; s.State.Running != nil {
							s.Ready = false
						}
					}
				}}
			},
		},
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The mutants and benign variants of the native sidecar specs
// (KRI-POD-066..071), on the hostprocess example, which runs restartable
// init containers as real processes. Each edits only pods that have a
// restartable init container, so the other specs see hostprocess as it is.

// hasSidecar reports whether pod has a restartable init container.
func hasSidecar(pod *v1.Pod) bool {
	return pod != nil && slices.ContainsFunc(pod.Spec.InitContainers, func(c v1.Container) bool {
		return podutil.IsRestartableInitContainer(&c)
	})
}

// newestOf returns the newest instance of container name in st, or nil.
func newestOf(st *pkgcontainer.PodStatus, name string) *pkgcontainer.Status {
	var n *pkgcontainer.Status
	for _, c := range st.ContainerStatuses {
		if c.Name == name && (n == nil || c.CreatedAt.After(n.CreatedAt) || c.RestartCount > n.RestartCount) {
			n = c
		}
	}
	return n
}

// policyRestarts reports whether the pod's restart policy restarts a
// container that exited with code.
func policyRestarts(policy v1.RestartPolicy, code int) bool {
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return code != 0
	}
	return true
}

// appsDoneFor reports whether every app container of pod has exited and
// will not be restarted under the pod's policy.
func appsDoneFor(pod *v1.Pod, st *pkgcontainer.PodStatus) bool {
	for _, c := range pod.Spec.Containers {
		n := newestOf(st, c.Name)
		if n == nil || n.State != pkgcontainer.ContainerStateExited || policyRestarts(pod.Spec.RestartPolicy, n.ExitCode) {
			return false
		}
	}
	return len(pod.Spec.Containers) > 0
}

// withoutSidecars returns a SyncPod interceptor that hands the provider a
// copy of a pod with sidecars without the restartable init containers for
// which drop returns true, given the newest instance (nil: never ran).
func withoutSidecars(drop func(pod *v1.Pod, newest *pkgcontainer.Status) bool) func(context.Context, kri.PodProvider, *v1.Pod, *pkgcontainer.PodStatus, *kri.ReasonCache) error {
	return func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
		if hasSidecar(pod) {
			if cur, err := next.GetPodStatus(ctx, pod); err == nil {
				cp := pod.DeepCopy()
				cp.Spec.InitContainers = slices.DeleteFunc(cp.Spec.InitContainers, func(c v1.Container) bool {
					return podutil.IsRestartableInitContainer(&c) && drop(pod, newestOf(cur, c.Name))
				})
				pod = cp
			}
		}
		return next.SyncPod(ctx, pod, st, rc)
	}
}
