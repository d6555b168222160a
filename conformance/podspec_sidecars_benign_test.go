package conformance_test

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// sidecarRunning reports whether a restartable init container of pod runs.
func sidecarRunning(pod *v1.Pod, st *pkgcontainer.PodStatus) bool {
	for _, c := range pod.Spec.InitContainers {
		if podutil.IsRestartableInitContainer(&c) {
			if n := newestOf(st, c.Name); n != nil && n.State == pkgcontainer.ContainerStateRunning {
				return true
			}
		}
	}
	return false
}

// sidecarRestartBackOff is the back-off of the benign variant
// host-sidecar-restart-backoff.
const sidecarRestartBackOff = time.Second

// podspecSidecarsHostBenign are the benign variants of the pod-spec capability
// "sidecars" (podspec_sidecars.go) on the hostprocess example, which the suite
// must pass.
func podspecSidecarsHostBenign() []hostBenign {
	return []hostBenign{
		{
			name:    "host-sidecar-restart-backoff",
			freedom: "an exited sidecar is restarted after a back-off, as the kubelet's crash-loop back-off delays it",
			icLater: func(later *laterCalls) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: withoutSidecars(func(pod *v1.Pod, n *pkgcontainer.Status) bool {
					held := n != nil && n.State == pkgcontainer.ContainerStateExited && time.Since(n.FinishedAt) < sidecarRestartBackOff
					if held {
						later.after(pod.UID, sidecarRestartBackOff-time.Since(n.FinishedAt))
					}
					return held
				})}
			},
		},
		{
			name:    "host-sidecar-stop-next-sync",
			freedom: "the sidecars of a pod whose app containers are done are stopped by a later SyncPod, not the first that could (the kubelet stops them in the sync after it has seen the app containers exit)",
			icLater: func(later *laterCalls) interceptor.PodFuncs {
				var mu sync.Mutex
				deferred := map[types.UID]bool{}
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if hasSidecar(pod) {
						if cur, err := next.GetPodStatus(ctx, pod); err == nil && appsDoneFor(pod, cur) && sidecarRunning(pod, cur) {
							mu.Lock()
							first := !deferred[pod.UID]
							deferred[pod.UID] = true
							mu.Unlock()
							if first {
								later.after(pod.UID, 0)
								return nil
							}
						}
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
	}
}
