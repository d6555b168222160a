package conformance_test

import (
	"context"
	"slices"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podInitMutants are the mutants of the group "init" (pod_init.go): the fake
// with one contract violation each, and the specs it must fail.
func podInitMutants() []*mutant {
	return []*mutant{
		{
			name:      "init-instances-not-reported",
			violation: "GetPodStatus reports no instance of any init container",
			want: []string{
				"KRI-POD-010", "KRI-POD-011", "KRI-POD-055", "KRI-POD-066", "KRI-POD-067", "KRI-POD-068", "KRI-POD-069", "KRI-POD-070", "KRI-POD-071",
				// KRI-POD-091 checks the init order.
				"KRI-POD-091",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: statusEditFor(func(pod *v1.Pod, st *pkgcontainer.PodStatus) {
					init := func(c *pkgcontainer.Status) bool {
						return slices.ContainsFunc(pod.Spec.InitContainers, func(ic v1.Container) bool { return ic.Name == c.Name })
					}
					st.ContainerStatuses = slices.DeleteFunc(st.ContainerStatuses, init)
					st.ActiveContainerStatuses = slices.DeleteFunc(st.ActiveContainerStatuses, init)
				})}
			},
		},
		{
			name:      "app-containers-reported-before-created",
			violation: "GetPodStatus reports every app container that does not exist yet as Created (a backend's PodInitializing)",
			want:      []string{"KRI-POD-010", "KRI-POD-011", "KRI-POD-055", "KRI-POD-066"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: statusEditFor(func(pod *v1.Pod, st *pkgcontainer.PodStatus) {
					if len(st.ContainerStatuses) == 0 {
						return // no backend pod yet
					}
					for _, c := range pod.Spec.Containers {
						if st.FindContainerStatusByName(c.Name) == nil {
							st.ContainerStatuses = append(st.ContainerStatuses, &pkgcontainer.Status{
								ID: pkgcontainer.ContainerID{Type: fake.RuntimeName, ID: "placeholder-" + c.Name}, Name: c.Name, Image: c.Image,
								State: pkgcontainer.ContainerStateCreated,
							})
						}
					}
				})}
			},
		},
		{
			name:      "init-order-reversed",
			violation: "SyncPod runs the init containers in reverse order",
			want: []string{
				"KRI-POD-010", "KRI-POD-011", "KRI-POD-066", "KRI-POD-070",
				// KRI-POD-091 checks the init order.
				"KRI-POD-091",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if pod != nil && len(pod.Spec.InitContainers) > 1 {
						pod = pod.DeepCopy()
						slices.Reverse(pod.Spec.InitContainers)
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
	}
}

// statusEditFor is statusEdit with the pod the status is of.
func statusEditFor(edit func(*v1.Pod, *pkgcontainer.PodStatus)) func(context.Context, kri.PodProvider, *v1.Pod) (*pkgcontainer.PodStatus, error) {
	return func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
		st, err := next.GetPodStatus(ctx, pod)
		if st != nil && pod != nil {
			edit(pod, st)
		}
		return st, err
	}
}
