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
// GetPodStatus and its ReasonCache, as the kubelet's prober manager does
// (pkg/kubelet/prober/prober_manager.go, UpdatePodStatus) for containers
// without probes: a running container is Started and Ready; a container
// that is not running is not Started and keeps its Ready; a completed init
// container (exit code 0) is Ready. It adds no status and changes no state.
func (p *Provider) RefreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus) {
	if pod == nil || podStatus == nil {
		return
	}
	for i := range podStatus.ContainerStatuses {
		refine(&podStatus.ContainerStatuses[i])
	}
	restartable := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		restartable[c.Name] = c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
	}
	for i := range podStatus.InitContainerStatuses {
		cs := &podStatus.InitContainerStatuses[i]
		r, inSpec := restartable[cs.Name]
		switch {
		case !inSpec: // the prober marks it started or not, and leaves it
			started := cs.State.Running != nil
			cs.Started = &started
		case r: // a sidecar is refined as an app container
			refine(cs)
		default:
			started := cs.State.Running != nil
			cs.Started = &started
			if t := cs.State.Terminated; t != nil && t.ExitCode == 0 {
				cs.Ready = true
			}
		}
	}
}

// refine sets Started and, for a started container, Ready, as the prober
// manager does when the container has no startup or readiness probe.
func refine(cs *v1.ContainerStatus) {
	started := cs.State.Running != nil
	cs.Started = &started
	if started {
		cs.Ready = true
	}
}
