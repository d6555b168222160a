package vk

import (
	"context"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
)

// call is one call VK (or a spec) made to the provider.
type call struct {
	Method string
	At     time.Time
	Pod    *corev1.Pod // a copy of the pod argument (CreatePod, UpdatePod, DeletePod)
	Key    string      // namespace/name
	Err    error
}

// callLog records the calls a provider gets, as VK makes them.
type callLog struct {
	mu    sync.Mutex
	calls []call
}

func (l *callLog) add(c call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
}

// of returns the calls of method for the pod namespace/name, in order.
func (l *callLog) of(method, key string) []call {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []call
	for _, c := range l.calls {
		if c.Method == method && (key == "" || c.Key == key) {
			out = append(out, c)
		}
	}
	return out
}

// recordedPods wraps a sync provider; recordedAsyncPods adds NotifyPods, so
// that VK sees the provider it would see without the suite in between
// (node/podcontroller.go, Run: asyncProvider or syncProviderWrapper).
type recordedPods struct {
	p   node.PodLifecycleHandler
	log *callLog
}

type recordedAsyncPods struct {
	recordedPods
	n node.PodNotifier
}

func recordPods(p node.PodLifecycleHandler, log *callLog) node.PodLifecycleHandler {
	r := recordedPods{p: p, log: log}
	if n, ok := p.(node.PodNotifier); ok {
		return recordedAsyncPods{r, n}
	}
	return r
}

func podKey(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

func (r recordedPods) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	c := call{Method: "CreatePod", At: time.Now(), Pod: pod.DeepCopy(), Key: podKey(pod)}
	c.Err = r.p.CreatePod(ctx, pod)
	r.log.add(c)
	return c.Err
}

func (r recordedPods) UpdatePod(ctx context.Context, pod *corev1.Pod) error {
	c := call{Method: "UpdatePod", At: time.Now(), Pod: pod.DeepCopy(), Key: podKey(pod)}
	c.Err = r.p.UpdatePod(ctx, pod)
	r.log.add(c)
	return c.Err
}

func (r recordedPods) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	c := call{Method: "DeletePod", At: time.Now(), Pod: pod.DeepCopy(), Key: podKey(pod)}
	c.Err = r.p.DeletePod(ctx, pod)
	r.log.add(c)
	return c.Err
}

func (r recordedPods) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	pod, err := r.p.GetPod(ctx, namespace, name)
	r.log.add(call{Method: "GetPod", At: time.Now(), Key: namespace + "/" + name, Err: err})
	return pod, err
}

func (r recordedPods) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	st, err := r.p.GetPodStatus(ctx, namespace, name)
	r.log.add(call{Method: "GetPodStatus", At: time.Now(), Key: namespace + "/" + name, Err: err})
	return st, err
}

func (r recordedPods) GetPods(ctx context.Context) ([]*corev1.Pod, error) {
	pods, err := r.p.GetPods(ctx)
	r.log.add(call{Method: "GetPods", At: time.Now(), Err: err})
	return pods, err
}

func (r recordedAsyncPods) NotifyPods(ctx context.Context, cb func(*corev1.Pod)) {
	r.n.NotifyPods(ctx, cb)
	r.log.add(call{Method: "NotifyPods", At: time.Now()})
}

// recordedNode wraps a node provider; returned is closed when its
// NotifyNodeStatus has returned.
type recordedNode struct {
	p        node.NodeProvider
	log      *callLog
	once     sync.Once
	returned chan struct{}
}

func (r *recordedNode) Ping(ctx context.Context) error {
	err := r.p.Ping(ctx)
	r.log.add(call{Method: "Ping", At: time.Now(), Err: err})
	return err
}

func (r *recordedNode) NotifyNodeStatus(ctx context.Context, cb func(*corev1.Node)) {
	r.p.NotifyNodeStatus(ctx, cb)
	r.log.add(call{Method: "NotifyNodeStatus", At: time.Now()})
	r.once.Do(func() { close(r.returned) })
}
