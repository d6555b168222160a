package conformance_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podDeleteMutants are the mutants of the group "delete" (pod_delete.go): the
// fake with one contract violation each, and the specs it must fail.
func podDeleteMutants() []*mutant {
	return []*mutant{
		{
			name:      "deletepod-forgets-nothing",
			violation: "DeletePod returns nil and keeps the pod",
			want:      []string{"KRI-POD-020"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{DeletePod: func(context.Context, kri.PodProvider, *v1.Pod) error { return nil }}
			},
		},
		{
			name:      "delete-unknown-pod-errors",
			violation: "DeletePod of a pod it does not know returns an error",
			want:      []string{"KRI-POD-019"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{DeletePod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) error {
					if unknownPod(ctx, next, pod) {
						return fmt.Errorf("pod %s/%s not found", pod.Namespace, pod.Name)
					}
					return next.DeletePod(ctx, pod)
				}}
			},
		},
	}
}
