package conformance_test

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podOwnershipMutants are the mutants of the group "ownership"
// (pod_ownership.go): the fake with one contract violation each, and the specs
// it must fail.
func podOwnershipMutants() []*mutant {
	return []*mutant{
		{
			name:      "syncpod-mutates-its-input",
			violation: "SyncPod writes to the status it was handed",
			want:      []string{"KRI-POD-035"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if st != nil {
						st.IPs = append(st.IPs, "192.0.2.1")
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
		{
			name:      "killpod-marks-its-input",
			violation: "KillPod marks the containers of the running pod it was handed exited",
			want:      []string{"KRI-POD-045"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					err := next.KillPod(ctx, pod, rp, grace)
					for _, c := range rp.Containers {
						c.State = pkgcontainer.ContainerStateExited
					}
					return err
				}}
			},
		},
		{
			name:      "refresh-reads-the-kept-pod",
			violation: "SyncPod keeps the caller's pod and RefreshPodStatus reads the containers from it",
			want:      []string{"KRI-POD-045"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				var mu sync.Mutex
				kept := map[types.UID]*v1.Pod{}
				return interceptor.PodFuncs{
					SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
						if pod != nil {
							mu.Lock()
							kept[pod.UID] = pod
							mu.Unlock()
						}
						return next.SyncPod(ctx, pod, st, rc)
					},
					RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
						if pod != nil {
							mu.Lock()
							if k := kept[pod.UID]; k != nil {
								pod = k
							}
							mu.Unlock()
						}
						next.RefreshPodStatus(pod, ps)
					},
				}
			},
		},
	}
}
