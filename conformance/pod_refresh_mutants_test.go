package conformance_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podRefreshMutants are the mutants of the group "refresh" (pod_refresh.go):
// the fake with one contract violation each, and the specs it must fail.
func podRefreshMutants() []*mutant {
	return []*mutant{
		{
			name:      "refresh-names-foreign-container",
			violation: "RefreshPodStatus adds a status for a container the spec does not have",
			want:      []string{"KRI-POD-025"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
					before := ps.DeepCopy()
					next.RefreshPodStatus(pod, ps)
					if !equalPodStatus(before, ps) {
						ps.ContainerStatuses = append(ps.ContainerStatuses, v1.ContainerStatus{Name: "ghost"})
					}
				}}
			},
		},
		{
			name:      "refresh-touches-unknown-pod",
			violation: "RefreshPodStatus of a pod it does not know marks it Unknown",
			want:      []string{"KRI-POD-024"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
					if unknownPod(context.Background(), next, pod) {
						ps.Phase = v1.PodUnknown
						return
					}
					next.RefreshPodStatus(pod, ps)
				}}
			},
		},
		{
			name:      "refresh-drops-init-statuses",
			violation: "RefreshPodStatus reports no init containers",
			want:      []string{"KRI-POD-050", "KRI-POD-071"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
					next.RefreshPodStatus(pod, ps)
					ps.InitContainerStatuses = nil
				}}
			},
		},
		{
			name:      "last-termination-state-dropped",
			violation: "RefreshPodStatus never reports LastTerminationState",
			want: []string{
				"KRI-POD-042",
				// Not the liveness probe specs (KRI-POD-074, 088, 089,
				// 106): they see the kill in the killed instance that
				// GetPodStatus reports as well.
				// KRI-POD-093 waits for each restart to be published.
				"KRI-POD-093",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{RefreshPodStatus: refreshEdit(func(cs *v1.ContainerStatus) {
					cs.LastTerminationState = v1.ContainerState{}
				})}
			},
		},
	}
}

func equalPodStatus(a, b *v1.PodStatus) bool {
	return fmt.Sprintf("%+v", *a) == fmt.Sprintf("%+v", *b)
}
