package kubebackend

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/internal/k8scompat"
	"github.com/kri-kit/testkit/kri/podstatus"
)

// GetPodStatus converts the status of the pod's mirror, as the informer last
// saw it, with podstatus.RuntimeStatus: up to two instances per container
// (the current run and the one before it), ordered by restart count despite
// the API's whole seconds, no sandboxes, the mirror's pod IPs. A pod without
// mirror (never synced, or killed) is unknown: a status with only its UID,
// name and namespace.
func (p *Provider) GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	if pod == nil {
		return nil, errors.New("kubebackend: GetPodStatus of a nil pod")
	}
	if err := p.informers(ctx); err != nil {
		return nil, fmt.Errorf("GetPodStatus of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	bk, err := p.mirrorOf(pod.Namespace, pod.Name, pod.UID)
	if err != nil {
		return nil, fmt.Errorf("GetPodStatus of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if bk == nil {
		return &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}, nil
	}
	st, err := podstatus.RuntimeStatus(bk)
	if err != nil {
		return nil, fmt.Errorf("GetPodStatus of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	st.ID, st.Name, st.Namespace = pod.UID, pod.Name, pod.Namespace
	return st, nil
}

// GetPods lists the agent's pods that have a mirror: with all, every one
// with every instance GetPodStatus reports; without, those with a running
// container, with their running containers.
func (p *Provider) GetPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error) {
	if err := p.informers(ctx); err != nil {
		return nil, fmt.Errorf("GetPods: %w", err)
	}
	mirrors, err := p.lister.List(labels.SelectorFromSet(labels.Set{LabelAgent: p.agent}))
	if err != nil {
		return nil, fmt.Errorf("GetPods: %w", err)
	}
	var out []*pkgcontainer.Pod
	for _, bk := range mirrors {
		uid, namespace, name := agentPod(bk)
		if uid == "" {
			continue
		}
		st, err := podstatus.RuntimeStatus(bk)
		if err != nil {
			return nil, fmt.Errorf("GetPods: pod %s/%s: %w", namespace, name, err)
		}
		pod := &pkgcontainer.Pod{ID: uid, Namespace: namespace, Name: name}
		for _, c := range st.ContainerStatuses {
			if !all && c.State != pkgcontainer.ContainerStateRunning {
				continue
			}
			rc := &pkgcontainer.Container{
				ID: c.ID, Name: c.Name, Image: c.Image, ImageID: c.ImageID, ImageRef: c.ImageRef, State: c.State,
			}
			k8scompat.SetContainerOrigin(rc, "", c.CreatedAt.UnixNano())
			pod.Containers = append(pod.Containers, rc)
		}
		if all || len(pod.Containers) > 0 {
			out = append(out, pod)
		}
	}
	return out, nil
}

// RefreshPodStatus replaces the container statuses of podStatus with those
// of the pod's mirror, by name, as kuscia's K8sProvider copies them: the
// backend's kubelet knows best (its Ready and Started come from its
// probes). Reason and Message of the pod are taken from the mirror when the
// agent has none. A pod without mirror leaves podStatus unchanged.
func (p *Provider) RefreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus) {
	if pod == nil || podStatus == nil {
		return
	}
	bk, err := p.mirrorOf(pod.Namespace, pod.Name, pod.UID)
	if err != nil || bk == nil {
		return
	}
	if podStatus.Reason == "" {
		podStatus.Reason = bk.Status.Reason
	}
	if podStatus.Message == "" {
		podStatus.Message = bk.Status.Message
	}
	replace(podStatus.InitContainerStatuses, bk.Status.InitContainerStatuses)
	replace(podStatus.ContainerStatuses, bk.Status.ContainerStatuses)
}

// replace overwrites every status in dst with the status of the same name in
// src, if there is one.
func replace(dst, src []v1.ContainerStatus) {
	for i := range dst {
		if j := slices.IndexFunc(src, func(s v1.ContainerStatus) bool { return s.Name == dst[i].Name }); j >= 0 {
			dst[i] = *src[j].DeepCopy()
		}
	}
}
