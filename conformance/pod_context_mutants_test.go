package conformance_test

import (
	"context"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podContextMutants are the mutants of the group "context" (pod_context.go):
// the fake with one contract violation each, and the specs it must fail.
func podContextMutants() []*mutant {
	return []*mutant{
		{
			name:      "cancelled-sync-hangs",
			violation: "SyncPod ignores a cancelled context and never returns",
			want:      []string{"KRI-POD-027"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if ctx.Err() != nil {
						forever()
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
	}
}
