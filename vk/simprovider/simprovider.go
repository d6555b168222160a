// Package simprovider is the kit's reference virtual-kubelet provider: an
// in-memory simulation of a backend that runs pods, offered as
// node.PodLifecycleHandler (New, a sync provider: VK polls GetPodStatus) or
// as node.PodLifecycleHandler and node.PodNotifier (NewAsync: it reports
// every change through NotifyPods), and a node.NodeProvider (NewNode).
//
// A pod's containers start when CreatePod returns and run until DeletePod,
// which stops them with exit code 0 and forgets the pod. Every answer is a
// copy the provider never changes afterwards. Its clock is the time package,
// so inside a testing/synctest bubble it runs on the bubble's.
//
// It passes the vk suite; the suite's self-tests derive its mutants and
// benign variants from it.
package simprovider

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Provider is the sync variant: it does not implement node.PodNotifier, so
// VK's PodController polls its GetPodStatus (node/sync.go,
// syncProviderWrapper).
type Provider struct {
	mu     sync.Mutex
	pods   map[string]*corev1.Pod // by namespace/name
	notify func(*corev1.Pod)      // nil for the sync variant
}

var _ node.PodLifecycleHandler = (*Provider)(nil)

// New returns an empty sync provider.
func New() *Provider { return &Provider{pods: map[string]*corev1.Pod{}} }

// AsyncProvider is the async variant: VK registers a callback with
// NotifyPods and never polls GetPodStatus (node/podcontroller.go, Run).
type AsyncProvider struct{ *Provider }

var (
	_ node.PodLifecycleHandler = AsyncProvider{}
	_ node.PodNotifier         = AsyncProvider{}
)

// NewAsync returns an empty async provider.
func NewAsync() AsyncProvider { return AsyncProvider{New()} }

// NotifyPods registers cb, which the provider calls with a copy of a pod
// after each change of its status. It does not block.
func (p AsyncProvider) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = cb
}

func key(namespace, name string) string { return namespace + "/" + name }

// notifyLocked returns the call that notifies VK of pod, to be made once
// p.mu is released (VK's callback may wait for its own locks).
func (p *Provider) notifyLocked(pod *corev1.Pod) func() {
	cb, cp := p.notify, pod.DeepCopy()
	if cb == nil {
		return func() {}
	}
	return func() { cb(cp) }
}

// CreatePod starts the pod's containers. For a pod it runs already (the
// same UID) it does nothing and answers nil: VK calls CreatePod again
// whenever GetPod answered nil before (node/pod.go, createOrUpdatePod).
func (p *Provider) CreatePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	k := key(pod.Namespace, pod.Name)
	if cur, ok := p.pods[k]; ok && cur.UID == pod.UID {
		p.mu.Unlock()
		return nil
	}
	run := pod.DeepCopy()
	now := metav1.NewTime(time.Now())
	run.Status = corev1.PodStatus{
		Phase:     corev1.PodRunning,
		StartTime: &now,
		HostIP:    "10.0.0.1",
		PodIP:     "10.1.0.1",
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
	for _, c := range pod.Spec.Containers {
		run.Status.ContainerStatuses = append(run.Status.ContainerStatuses, corev1.ContainerStatus{
			Name:        c.Name,
			Image:       c.Image,
			ImageID:     "sim://" + c.Image,
			ContainerID: fmt.Sprintf("sim://%s/%s", pod.UID, c.Name),
			Ready:       true,
			Started:     new(true),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	p.pods[k] = run
	notify := p.notifyLocked(run)
	p.mu.Unlock()
	notify()
	return nil
}

// UpdatePod takes the fields a running pod may change (its containers'
// images, labels, annotations, tolerations, activeDeadlineSeconds).
func (p *Provider) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	cur, ok := p.pods[key(pod.Namespace, pod.Name)]
	if !ok {
		p.mu.Unlock()
		return errdefs.NotFoundf("pod %s/%s is not known", pod.Namespace, pod.Name)
	}
	cur.Labels, cur.Annotations = pod.DeepCopy().Labels, pod.DeepCopy().Annotations
	cur.Spec.Containers = pod.DeepCopy().Spec.Containers
	cur.Spec.InitContainers = pod.DeepCopy().Spec.InitContainers
	cur.Spec.EphemeralContainers = pod.DeepCopy().Spec.EphemeralContainers
	cur.Spec.Tolerations = pod.DeepCopy().Spec.Tolerations
	cur.Spec.ActiveDeadlineSeconds = pod.DeepCopy().Spec.ActiveDeadlineSeconds
	notify := p.notifyLocked(cur)
	p.mu.Unlock()
	notify()
	return nil
}

// DeletePod stops the pod's containers (exit code 0), notifies the terminal
// status (async variant) and forgets the pod. A pod it does not run answers
// errdefs.NotFound.
func (p *Provider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	k := key(pod.Namespace, pod.Name)
	cur, ok := p.pods[k]
	if !ok {
		p.mu.Unlock()
		return errdefs.NotFoundf("pod %s is not known", k)
	}
	delete(p.pods, k)
	end := cur.DeepCopy()
	Terminate(&end.Status, 0, "Completed")
	notify := p.notifyLocked(end)
	p.mu.Unlock()
	notify()
	return nil
}

// Terminate stops every running container of status with exitCode and
// reason, now, and sets the phase it ends in (Succeeded if every container
// exited 0, else Failed).
func Terminate(status *corev1.PodStatus, exitCode int32, reason string) {
	now := metav1.NewTime(time.Now())
	phase := corev1.PodSucceeded
	for i := range status.ContainerStatuses {
		cs := &status.ContainerStatuses[i]
		if r := cs.State.Running; r != nil {
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exitCode, Reason: reason, StartedAt: r.StartedAt, FinishedAt: now, ContainerID: cs.ContainerID,
			}}
		}
		cs.Ready, cs.Started = false, new(false)
		if t := cs.State.Terminated; t == nil || t.ExitCode != 0 {
			phase = corev1.PodFailed
		}
	}
	status.Phase = phase
	for i := range status.Conditions {
		if c := &status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.LastTransitionTime = corev1.ConditionFalse, now
		}
	}
}

// GetPod answers a copy of the pod it runs, or nil and errdefs.NotFound.
func (p *Provider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur, ok := p.pods[key(namespace, name)]
	if !ok {
		return nil, errdefs.NotFoundf("pod %s is not known", key(namespace, name))
	}
	return cur.DeepCopy(), nil
}

// GetPodStatus answers a copy of the status of the pod it runs, or nil and
// errdefs.NotFound.
func (p *Provider) GetPodStatus(_ context.Context, namespace, name string) (*corev1.PodStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur, ok := p.pods[key(namespace, name)]
	if !ok {
		return nil, errdefs.NotFoundf("pod %s is not known", key(namespace, name))
	}
	return cur.Status.DeepCopy(), nil
}

// GetPods answers copies of every pod it runs, ordered by namespace/name.
func (p *Provider) GetPods(context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]string, 0, len(p.pods))
	for k := range p.pods {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*corev1.Pod, 0, len(keys))
	for _, k := range keys {
		out = append(out, p.pods[k].DeepCopy())
	}
	return out, nil
}

// Node is the reference node.NodeProvider: Ping answers nil, and
// NotifyNodeStatus keeps the callback and returns.
type Node struct {
	mu sync.Mutex
	cb func(*corev1.Node)
}

var _ node.NodeProvider = (*Node)(nil)

// NewNode returns a healthy node provider.
func NewNode() *Node { return &Node{} }

// Ping answers nil unless ctx is done.
func (n *Node) Ping(ctx context.Context) error { return ctx.Err() }

// NotifyNodeStatus keeps cb and returns at once.
func (n *Node) NotifyNodeStatus(_ context.Context, cb func(*corev1.Node)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cb = cb
}
