// Package echoprovider is a VK provider as a provider author writes one,
// in a module of its own: a map of pods whose containers run from CreatePod
// to DeletePod, reporting changes through NotifyPods. It stands for the
// author's provider in the kit's check that a VK provider's module can run
// the vk suite with only the vk module as a requirement.
package echoprovider

import (
	"context"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Provider runs pods in memory.
type Provider struct {
	mu     sync.Mutex
	pods   map[string]*corev1.Pod
	notify func(*corev1.Pod)
}

// New returns an empty provider.
func New() *Provider { return &Provider{pods: map[string]*corev1.Pod{}} }

func key(ns, name string) string { return ns + "/" + name }

// NotifyPods keeps cb and returns.
func (p *Provider) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = cb
}

func (p *Provider) publish(pod *corev1.Pod) {
	p.mu.Lock()
	cb := p.notify
	p.mu.Unlock()
	if cb != nil {
		cb(pod.DeepCopy())
	}
}

// CreatePod starts the pod's containers; a pod it runs already is left alone.
func (p *Provider) CreatePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	if cur, ok := p.pods[key(pod.Namespace, pod.Name)]; ok && cur.UID == pod.UID {
		p.mu.Unlock()
		return nil
	}
	now := metav1.NewTime(time.Now())
	run := pod.DeepCopy()
	run.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	for _, c := range pod.Spec.Containers {
		run.Status.ContainerStatuses = append(run.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true, ContainerID: "echo://" + string(pod.UID) + "/" + c.Name,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	p.pods[key(pod.Namespace, pod.Name)] = run
	p.mu.Unlock()
	p.publish(run)
	return nil
}

// UpdatePod takes the pod's new labels and annotations.
func (p *Provider) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	cur, ok := p.pods[key(pod.Namespace, pod.Name)]
	if !ok {
		p.mu.Unlock()
		return errdefs.NotFound("no such pod")
	}
	cur.Labels, cur.Annotations = pod.DeepCopy().Labels, pod.DeepCopy().Annotations
	cp := cur.DeepCopy()
	p.mu.Unlock()
	p.publish(cp)
	return nil
}

// DeletePod stops the containers, reports the pod Succeeded and forgets it.
func (p *Provider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	cur, ok := p.pods[key(pod.Namespace, pod.Name)]
	if !ok {
		p.mu.Unlock()
		return errdefs.NotFound("no such pod")
	}
	delete(p.pods, key(pod.Namespace, pod.Name))
	p.mu.Unlock()
	now := metav1.NewTime(time.Now())
	cur.Status.Phase = corev1.PodSucceeded
	for i := range cur.Status.ContainerStatuses {
		cs := &cur.Status.ContainerStatuses[i]
		cs.Ready = false
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: "Completed", StartedAt: cs.State.Running.StartedAt, FinishedAt: now}}
	}
	p.publish(cur)
	return nil
}

// GetPod answers a copy of the pod, or nil and errdefs.NotFound.
func (p *Provider) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur, ok := p.pods[key(ns, name)]; ok {
		return cur.DeepCopy(), nil
	}
	return nil, errdefs.NotFound("no such pod")
}

// GetPodStatus answers a copy of the pod's status, or nil and errdefs.NotFound.
func (p *Provider) GetPodStatus(ctx context.Context, ns, name string) (*corev1.PodStatus, error) {
	pod, err := p.GetPod(ctx, ns, name)
	if pod == nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods answers copies of every pod.
func (p *Provider) GetPods(context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*corev1.Pod
	for _, cur := range p.pods {
		out = append(out, cur.DeepCopy())
	}
	return out, nil
}
