package kubeletruntime

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/images"

	"github.com/kri-kit/testkit/kri"
)

// SyncPod hands pod to the runtime manager's SyncPod with the provider's
// crash-loop back-off, records the result in reasonCache and returns nil
// when every failed action was only a back-off, as kuscia's
// CRIProvider.SyncPod does: a container in CrashLoopBackOff or
// ImagePullBackOff is waiting as it should, not failing. A failure of the
// sync as a whole (PodSyncResult.SyncError) is an error, even with no failed
// action.
//
// A nil podStatus is taken for the empty status of a pod never started (the
// kubelet's pod cache always has one). The runtime manager is given a copy
// of pod: it rewrites sysctl names in place.
func (p *Provider) SyncPod(ctx context.Context, pod *v1.Pod, podStatus *pkgcontainer.PodStatus, reasonCache *kri.ReasonCache) error {
	if err := validatePod("SyncPod", pod); err != nil {
		return err
	}
	if reasonCache == nil {
		return fmt.Errorf("kubeletruntime: SyncPod of pod %s: the ReasonCache is nil", podRef(pod))
	}
	if podStatus == nil {
		podStatus = &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	}
	p.pods.revive(pod.UID)
	// The pod's cgroup, as the kubelet's SyncPod ensures it before the
	// runtime's: the configuration a resize starts from.
	if err := p.cgroups.EnsureExists(klog.FromContext(ctx), pod); err != nil {
		return fmt.Errorf("kubeletruntime: SyncPod of pod %s: %w", podRef(pod), err)
	}
	// The pod's probe workers, as the kubelet's SyncPod adds them before
	// the runtime's SyncPod (pkg/kubelet/kubelet.go SyncPod,
	// probeManager.AddPod) and kuscia's CRIProvider.SyncPod does
	// (pkg/agent/provider/pod/cri_provider.go): a worker per probe, once.
	// (kuscia's prober is a copy of the kubelet's, pkg/agent/prober.)
	// The runtime manager then reads their results: a container whose
	// liveness probe failed is killed and started again by the next
	// SyncPod (computePodActions): kuscia's CRIProvider.syncLoopIteration
	// and the kubelet's syncLoopIteration sync a pod on a liveness failure
	// (livenessManager.Updates()); here the provider relays those updates
	// to the agent (notify.go).
	p.probes.AddPod(ctx, pod)
	result := p.runtime.SyncPod(ctx, pod.DeepCopy(), podStatus, nil, p.backOff, false)
	reasonCache.Update(pod.UID, result)
	// The kubelet's pod worker would sync the pod again when the back-off
	// or the failure is over; kuscia's agent has to be told (notify.go).
	p.notifyBackOffEnds(pod, result, p.retry)
	p.requestRelist(result)
	if result.Error() == nil || onlyBackOff(result) {
		return nil
	}
	// As kuscia's CRIProvider: the runtime manager's error as it is
	// (failed to "StartContainer" for "app" with ...), not wrapped.
	return result.Error()
}

// onlyBackOff reports whether every failure in result is a back-off.
func onlyBackOff(result pkgcontainer.PodSyncResult) bool {
	if result.SyncError != nil {
		return false
	}
	for _, r := range result.SyncResults {
		if r != nil && r.Error != nil && !isBackOff(r.Error) {
			return false
		}
	}
	return true
}

// isBackOff reports whether err says an action waits for its back-off: the
// runtime manager's crash-loop back-off (a pkgcontainer.BackoffError around
// ErrCrashLoopBackOff, which pod workers detect with MinBackoffExpiration)
// or the image manager's ErrImagePullBackOff.
func isBackOff(err error) bool {
	if errors.Is(err, pkgcontainer.ErrCrashLoopBackOff) || errors.Is(err, images.ErrImagePullBackOff) {
		return true
	}
	_, ok := pkgcontainer.MinBackoffExpiration(err)
	return ok
}

// validatePod rejects what the API server would never hand a node agent and
// the runtime manager cannot work with: a nil pod, a pod without UID and
// two containers (init or app) of the same name.
func validatePod(method string, pod *v1.Pod) error {
	if pod == nil {
		return fmt.Errorf("kubeletruntime: %s: the pod is nil", method)
	}
	if pod.UID == "" {
		return fmt.Errorf("kubeletruntime: %s of pod %s: the pod has no UID", method, podRef(pod))
	}
	seen := make(map[string]bool, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if seen[c.Name] {
				return fmt.Errorf("kubeletruntime: %s of pod %s: two containers are named %q", method, podRef(pod), c.Name)
			}
			seen[c.Name] = true
		}
	}
	return nil
}

func podRef(pod *v1.Pod) string {
	return pod.Namespace + "/" + pod.Name
}
