package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
	"github.com/kri-kit/testkit/sim/workload"
)

// podspecImageHostBenign are the benign variants of the pod-spec capability
// "image" (podspec_image.go) on the hostprocess example, which the suite must
// pass.
func podspecImageHostBenign() []hostBenign {
	return []hostBenign{
		{
			name:    "host-image-pull-backoff",
			freedom: "after the first failed pull, a provider backs off and reports ImagePullBackOff, as the kubelet's image manager does",
			ic: func() interceptor.PodFuncs {
				var mu sync.Mutex
				failures := map[types.UID]int{}
				return interceptor.PodFuncs{
					SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
						err := next.SyncPod(ctx, pod, st, rc)
						if pod == nil || rc == nil {
							return err
						}
						var result pkgcontainer.PodSyncResult
						for _, c := range pod.Spec.Containers {
							item, ok := rc.Get(pod.UID, c.Name)
							if !ok || !errors.Is(item.Err, workload.ErrImagePull) {
								continue
							}
							mu.Lock()
							failures[pod.UID]++
							n := failures[pod.UID]
							mu.Unlock()
							if n > 1 {
								r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
								r.Fail(errImagePullBackOff, fmt.Sprintf("Back-off pulling image %q", c.Image))
								result.AddSyncResult(r)
							}
						}
						if len(result.SyncResults) > 0 {
							rc.Update(pod.UID, result)
						}
						return err
					},
					RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
						// The provider's own Waiting reason would say
						// ErrImagePull; keep the agent's (from the ReasonCache).
						before := map[string]*v1.ContainerStateWaiting{}
						for _, cs := range ps.ContainerStatuses {
							if w := cs.State.Waiting; w != nil && w.Reason == errImagePullBackOff.Error() {
								before[cs.Name] = w.DeepCopy()
							}
						}
						next.RefreshPodStatus(pod, ps)
						for i := range ps.ContainerStatuses {
							if w, ok := before[ps.ContainerStatuses[i].Name]; ok && ps.ContainerStatuses[i].State.Waiting != nil {
								ps.ContainerStatuses[i].State.Waiting = w
							}
						}
					},
				}
			},
		},
	}
}

// The benign variants of the pod-spec specs: the hostprocess example (the
// fake does not simulate these features yet) changed only where the
// contract leaves room. Each must pass every pod spec that applies to it.

// errImagePullBackOff has the text of the kubelet's images.ErrImagePullBackOff.
var errImagePullBackOff = errors.New("ImagePullBackOff")
