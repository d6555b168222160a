package conformance_test

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podCleanupMutants are the mutants of the group "cleanup" (pod_cleanup.go):
// the fake with one contract violation each, and the specs it must fail.
func podCleanupMutants() []*mutant {
	return []*mutant{
		{
			name:      "cleanup-kills-desired-pods",
			violation: "CleanupPods treats every pod as an orphan",
			want:      []string{"KRI-POD-021", "KRI-POD-022", "KRI-POD-028"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{CleanupPods: func(ctx context.Context, next kri.PodProvider, _ []*v1.Pod, _ []*pkgcontainer.Pod, _ map[types.UID]sets.Empty) error {
					return next.CleanupPods(ctx, nil, nil, nil)
				}}
			},
		},
		{
			name:      "cleanup-ignores-running-and-possibly-running",
			violation: "CleanupPods keeps only the desired pods, ignoring runningPods and possiblyRunningPods",
			want:      []string{"KRI-POD-022"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{CleanupPods: func(ctx context.Context, next kri.PodProvider, pods []*v1.Pod, _ []*pkgcontainer.Pod, _ map[types.UID]sets.Empty) error {
					return next.CleanupPods(ctx, pods, nil, nil)
				}}
			},
		},
	}
}
