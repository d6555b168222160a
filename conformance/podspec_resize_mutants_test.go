package conformance_test

import (
	"context"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// resizeSpecChangeMutants are the mutants of the pod-spec capability "resize"
// (podspec_resize.go): the fake with one contract violation each, and the
// specs it must fail.
func resizeSpecChangeMutants() []*mutant {
	return []*mutant{
		{
			name:      "spec-changes-ignored",
			violation: "SyncPod of a pod it already runs changes nothing, whatever the new spec says (a backend pod that exists is left as it is)",
			want:      []string{"KRI-POD-013", "KRI-POD-080", "KRI-POD-081"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				var mu sync.Mutex
				first := map[types.UID]*v1.Pod{}
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if pod != nil {
						mu.Lock()
						if f, ok := first[pod.UID]; ok {
							pod = f
						} else {
							first[pod.UID] = pod.DeepCopy()
						}
						mu.Unlock()
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
	}
}

// The mutants of the in-place resize specs (KRI-POD-080, 081), on the
// fake, which resizes by default. Every other mutant of the fake runs
// these specs too and must pass them.

// firstResources returns a SyncPod interceptor that hands the provider
// every pod with the container resources it had at its first SyncPod
// (per UID): the provider never sees a resize.
func firstResources() func(context.Context, kri.PodProvider, *v1.Pod, *pkgcontainer.PodStatus, *kri.ReasonCache) error {
	var mu sync.Mutex
	first := map[types.UID]map[string]v1.ResourceRequirements{}
	return func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
		if pod != nil {
			mu.Lock()
			seen, ok := first[pod.UID]
			if !ok {
				seen = map[string]v1.ResourceRequirements{}
				for _, c := range pod.Spec.Containers {
					seen[c.Name] = *c.Resources.DeepCopy()
				}
				first[pod.UID] = seen
			}
			pod = pod.DeepCopy()
			for i := range pod.Spec.Containers {
				if r, ok := seen[pod.Spec.Containers[i].Name]; ok {
					pod.Spec.Containers[i].Resources = *r.DeepCopy()
				}
			}
			mu.Unlock()
		}
		return next.SyncPod(ctx, pod, st, rc)
	}
}

// resizePolicyAll returns a SyncPod interceptor that gives every
// container the resize policy p for CPU and memory.
func resizePolicyAll(p v1.ResourceResizeRestartPolicy) func(context.Context, kri.PodProvider, *v1.Pod, *pkgcontainer.PodStatus, *kri.ReasonCache) error {
	return rewritePod(func(c *v1.Container) {
		c.ResizePolicy = []v1.ContainerResizePolicy{
			{ResourceName: v1.ResourceCPU, RestartPolicy: p},
			{ResourceName: v1.ResourceMemory, RestartPolicy: p},
		}
	})
}

// podspecResizeMutants are the mutants of the pod-spec capability "resize"
// (podspec_resize.go): the fake with one contract violation each, and the
// specs it must fail.
func podspecResizeMutants() []*mutant {
	return append([]*mutant{
		{
			name:      "resize-ignored",
			violation: "SyncPod ignores changed resources: a running container keeps those it started with",
			want:      []string{"KRI-POD-080", "KRI-POD-081"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: firstResources()}
			},
		},
		{
			name:      "resize-always-restarts",
			violation: "every resize restarts the container, also one whose resize policy is NotRequired",
			want:      []string{"KRI-POD-080"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: resizePolicyAll(v1.RestartContainer)}
			},
		},
		{
			name:      "resize-never-restarts",
			violation: "a resize whose policy is RestartContainer is applied in place, without a restart",
			want:      []string{"KRI-POD-081"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: resizePolicyAll(v1.NotRequired)}
			},
		},
		{
			name:      "resize-resources-unreported",
			violation: "GetPodStatus reports no Resources: the agent cannot tell what a container runs with",
			want:      []string{"KRI-POD-080", "KRI-POD-081"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: editStatuses(func(c *pkgcontainer.Status) { c.Resources = nil })}
			},
		},
		{
			name:      "resize-restart-uncounted",
			violation: "the instance started again for a resize keeps the restart count of the one it replaced",
			want:      []string{"KRI-POD-081"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				// Only instances of a container that was resized (the
				// specs' container app with 256Mi) lose their count, so
				// that the other specs see restarts counted.
				return interceptor.PodFuncs{GetPodStatus: editStatuses(func(c *pkgcontainer.Status) {
					if r := c.Resources; r != nil && r.MemoryLimit != nil && r.MemoryLimit.Value() == 256<<20 && c.RestartCount > 0 {
						c.RestartCount--
					}
				})}
			},
		},
	}, slices.Concat(resizeRefreshMutants(), resizeSpecChangeMutants())...)
}

// resizeRefreshMutants are the mutants of KRI-POD-082.
func resizeRefreshMutants() []*mutant {
	return []*mutant{{
		name:      "refresh-drops-resources",
		violation: "RefreshPodStatus leaves container statuses without Resources",
		want:      []string{"KRI-POD-082"},
		pod: func(*fake.PodProvider) interceptor.PodFuncs {
			return interceptor.PodFuncs{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
				next.RefreshPodStatus(pod, ps)
				for i := range ps.ContainerStatuses {
					ps.ContainerStatuses[i].Resources = nil
				}
			}}
		},
	}}
}

// editStatuses returns a GetPodStatus interceptor that applies edit to
// every container status.
func editStatuses(edit func(*pkgcontainer.Status)) func(context.Context, kri.PodProvider, *v1.Pod) (*pkgcontainer.PodStatus, error) {
	return func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
		st, err := next.GetPodStatus(ctx, pod)
		if st != nil {
			for _, list := range [][]*pkgcontainer.Status{st.ContainerStatuses, st.ActiveContainerStatuses} {
				for _, c := range list {
					edit(c)
				}
			}
		}
		return st, err
	}
}
