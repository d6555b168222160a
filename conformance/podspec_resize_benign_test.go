package conformance_test

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// The benign variants of the in-place resize specs (KRI-POD-080, 081): the
// fake changed only where the contract leaves room.
func podspecResizeBenign() []*benign {
	return []*benign{
		{
			name:    "resize-one-sync-late",
			freedom: "a resize may be applied at a later SyncPod than the first with the new resources (the kubelet applies it once its allocation manager admits it, and retries a resize that failed)",
			podLater: func(_ *fake.PodProvider, later *laterCalls) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: resizeLate(later)}
			},
		},
		{
			name:    "resize-partial-resources",
			freedom: "Resources may leave out the CPU limit and the memory request, as kuberuntime reports them from a CRI runtime without CFS quota and without its record of the memory request",
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: editStatuses(func(c *pkgcontainer.Status) {
					if r := c.Resources; r != nil {
						c.Resources = &pkgcontainer.ContainerResources{CPURequest: r.CPURequest, MemoryLimit: r.MemoryLimit}
					}
				})}
			},
		},
	}
}

// resizeLate returns a SyncPod interceptor that hands the provider a
// container's new resources one SyncPod after they first changed: the
// first SyncPod with changed resources still gets the old ones, and the
// provider asks for the sync that applies them (later).
func resizeLate(later *laterCalls) func(context.Context, kri.PodProvider, *v1.Pod, *pkgcontainer.PodStatus, *kri.ReasonCache) error {
	type key struct{ uid, name string }
	var mu sync.Mutex
	handed := map[key]v1.ResourceRequirements{} // what the provider last got
	deferred := map[key]bool{}                  // the change was held back once
	return func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
		if pod != nil {
			mu.Lock()
			pod = pod.DeepCopy()
			for i := range pod.Spec.Containers {
				c := &pod.Spec.Containers[i]
				k := key{string(pod.UID), c.Name}
				prev, seen := handed[k]
				switch {
				case !seen || equality.Semantic.DeepEqual(prev, c.Resources):
					delete(deferred, k)
				case !deferred[k]:
					deferred[k] = true
					c.Resources = *prev.DeepCopy()
					defer later.after(pod.UID, 0)
				default:
					delete(deferred, k)
				}
				handed[k] = *c.Resources.DeepCopy()
			}
			mu.Unlock()
		}
		return next.SyncPod(ctx, pod, st, rc)
	}
}
