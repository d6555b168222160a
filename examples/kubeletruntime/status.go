package kubeletruntime

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// GetPodStatus returns the runtime manager's status of pod, which it builds
// from the pod's sandboxes and containers as the runtime lists them (as the
// kubelet's PLEG does with the pods of GetPods(true)). A pod of which the
// runtime has nothing, or a pod without UID, is reported with only its ID,
// name and namespace.
func (p *Provider) GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	if pod == nil {
		return nil, errors.New("kubeletruntime: GetPodStatus: the pod is nil")
	}
	unknown := &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	if pod.UID == "" {
		return unknown, nil
	}
	rp, err := p.runtime.GetPod(ctx, pod.UID)
	if errors.Is(err, pkgcontainer.ErrPodNotFound) {
		return unknown, nil
	}
	if err != nil {
		return nil, err
	}
	return p.runtime.GetPodStatus(ctx, rp)
}

// GetPods returns the runtime manager's GetPods: with all false, the pods
// with a running container or a ready sandbox, each with its running
// containers and ready sandboxes.
func (p *Provider) GetPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error) {
	return p.runtime.GetPods(ctx, all)
}

// RefreshPodStatus refines the API status that the agent built from
// GetPodStatus and its ReasonCache with the kubelet's prober manager
// (pkg/kubelet/prober/prober_manager.go UpdatePodStatus), as the kubelet's
// generateAPIPodStatus and kuscia's CRIProvider do: a running container is
// Started once its startup probe succeeded (at once without one) and then
// Ready while its readiness probe succeeds (always without one); a container
// that is not running is not Started and keeps its Ready; a completed init
// container (exit code 0) is Ready. It then keeps the refined status for the
// pod's probe workers, which probe the containers it names (the kubelet's
// status manager caches it for them). It changes no container.
func (p *Provider) RefreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus) {
	if pod == nil || podStatus == nil {
		return
	}
	p.probes.UpdatePodStatus(context.Background(), pod, podStatus)
	if pod.UID != "" {
		p.statuses.set(pod.UID, podStatus)
	}
}
