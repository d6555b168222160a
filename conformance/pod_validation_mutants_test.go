package conformance_test

import (
	"context"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podValidationMutants are the mutants of the group "validation"
// (pod_validation.go): the fake with one contract violation each, and the
// specs it must fail.
func podValidationMutants() []*mutant {
	return []*mutant{
		{
			name:      "duplicate-names-accepted",
			violation: "SyncPod runs a pod with two containers of the same name, dropping the second (a SHOULD)",
			want:      []string{"KRI-POD-036"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if pod != nil {
						seen := sets.New[string]()
						pod = pod.DeepCopy()
						pod.Spec.Containers = slices.DeleteFunc(pod.Spec.Containers, func(c v1.Container) bool {
							dup := seen.Has(c.Name)
							seen.Insert(c.Name)
							return dup
						})
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
	}
}
