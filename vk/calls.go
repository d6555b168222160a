package vk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/suite"
)

// call is one call VK (or a spec) made to the provider.
type call struct {
	Method string
	At     time.Time
	Pod    *corev1.Pod // a copy of the pod argument (CreatePod, UpdatePod, DeletePod)
	Key    string      // namespace/name
	Err    error
	Found  bool // GetPod answered a pod
}

// callLog records the calls a provider gets, as VK makes them, and the
// objects the provider answered or notified, each with a copy taken when
// it was handed over (KVK-POD-013 compares them later). Once closed, calls
// no longer reach the provider.
type callLog struct {
	mu       sync.Mutex
	calls    []call
	handed   []handedOver
	closed   bool
	inFlight int
	idle     *sync.Cond // on mu: inFlight dropped to 0
}

// handedOver is an object the provider gave VK: obj as answered, copy as
// it was then.
type handedOver struct {
	What string // "GetPod(ns/name)", "NotifyPods callback", ...
	At   time.Time
	Obj  any // *corev1.Pod or *corev1.PodStatus
	Copy any
}

// errSpecOver is what a call gets once the spec has closed the log.
var errSpecOver = errors.New("the spec is over: the call did not reach the provider")

// enter counts a call to the provider in; it answers false once the log is
// closed (the call must not reach the provider).
func (l *callLog) enter() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.inFlight++
	return true
}

func (l *callLog) leave() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	if l.inFlight == 0 && l.idle != nil {
		l.idle.Broadcast()
	}
}

// close keeps further calls from reaching the provider and waits, up to
// bound, for those under way to return: after it answers true, everything
// the provider did inside a call happened before it. It answers false when
// calls were still running at the bound.
func (l *callLog) close(bound time.Duration) bool {
	l.mu.Lock()
	l.closed = true
	if l.idle == nil {
		l.idle = sync.NewCond(&l.mu)
	}
	l.mu.Unlock()
	deadline := time.Now().Add(bound)
	for {
		l.mu.Lock()
		n := l.inFlight
		l.mu.Unlock()
		if n == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hand records obj, which the provider handed VK, with a copy of it as it
// is now.
func (l *callLog) hand(what string, obj any) {
	var cp any
	switch o := obj.(type) {
	case *corev1.Pod:
		if o == nil {
			return
		}
		cp = o.DeepCopy()
	case *corev1.PodStatus:
		if o == nil {
			return
		}
		cp = o.DeepCopy()
	default:
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.handed = append(l.handed, handedOver{What: what, At: time.Now(), Obj: obj, Copy: cp})
}

func (l *callLog) handedOver() []handedOver {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]handedOver(nil), l.handed...)
}

// len is the number of calls recorded so far.
func (l *callLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}

// since returns the calls of method for namespace/name recorded after the
// first n calls of the log.
func (l *callLog) since(n int, method, key string) []call {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []call
	for _, c := range l.calls[min(n, len(l.calls)):] {
		if c.Method == method && (key == "" || c.Key == key) {
			out = append(out, c)
		}
	}
	return out
}

func (l *callLog) add(c call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
}

// notSupported returns the first call the provider answered with an error
// that is, or wraps, ErrNotSupported (suite.IsNotSupported), and whether
// there is one.
func (l *callLog) notSupported() (call, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.calls {
		if suite.IsNotSupported(c.Err) {
			return c, true
		}
	}
	return call{}, false
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
	if !r.log.enter() {
		return errSpecOver
	}
	defer r.log.leave()
	c := call{Method: "CreatePod", At: time.Now(), Pod: pod.DeepCopy(), Key: podKey(pod)}
	c.Err = r.p.CreatePod(ctx, pod)
	r.log.add(c)
	return c.Err
}

func (r recordedPods) UpdatePod(ctx context.Context, pod *corev1.Pod) error {
	if !r.log.enter() {
		return errSpecOver
	}
	defer r.log.leave()
	c := call{Method: "UpdatePod", At: time.Now(), Pod: pod.DeepCopy(), Key: podKey(pod)}
	c.Err = r.p.UpdatePod(ctx, pod)
	r.log.add(c)
	return c.Err
}

func (r recordedPods) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	if !r.log.enter() {
		return errSpecOver
	}
	defer r.log.leave()
	c := call{Method: "DeletePod", At: time.Now(), Pod: pod.DeepCopy(), Key: podKey(pod)}
	c.Err = r.p.DeletePod(ctx, pod)
	r.log.add(c)
	return c.Err
}

func (r recordedPods) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	if !r.log.enter() {
		return nil, errSpecOver
	}
	defer r.log.leave()
	pod, err := r.p.GetPod(ctx, namespace, name)
	r.log.hand("GetPod("+namespace+"/"+name+")", pod)
	r.log.add(call{Method: "GetPod", At: time.Now(), Key: namespace + "/" + name, Err: err, Found: pod != nil})
	return pod, err
}

func (r recordedPods) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	if !r.log.enter() {
		return nil, errSpecOver
	}
	defer r.log.leave()
	st, err := r.p.GetPodStatus(ctx, namespace, name)
	r.log.hand("GetPodStatus("+namespace+"/"+name+")", st)
	r.log.add(call{Method: "GetPodStatus", At: time.Now(), Key: namespace + "/" + name, Err: err})
	return st, err
}

func (r recordedPods) GetPods(ctx context.Context) ([]*corev1.Pod, error) {
	if !r.log.enter() {
		return nil, errSpecOver
	}
	defer r.log.leave()
	pods, err := r.p.GetPods(ctx)
	for _, p := range pods {
		if p != nil {
			r.log.hand("GetPods (pod "+podKey(p)+")", p)
		}
	}
	r.log.add(call{Method: "GetPods", At: time.Now(), Err: err})
	return pods, err
}

// NotifyPods numbers the callbacks it registers (#1, #2, ... : a VK
// restarted registers a new one), so that what each got can be told apart.
func (r recordedAsyncPods) NotifyPods(ctx context.Context, cb func(*corev1.Pod)) {
	n := len(r.log.of("NotifyPods", "")) + 1
	r.n.NotifyPods(ctx, func(pod *corev1.Pod) {
		if !r.log.enter() {
			return
		}
		defer r.log.leave()
		if pod != nil {
			r.log.hand(fmt.Sprintf("the NotifyPods callback #%d (pod %s)", n, podKey(pod)), pod)
		}
		cb(pod)
	})
	r.log.add(call{Method: "NotifyPods", At: time.Now()})
}

// recordedNode wraps a node provider; returned is closed when its
// NotifyNodeStatus has returned.
type recordedNode struct {
	p        node.NodeProvider
	log      *callLog
	once     sync.Once
	returned chan struct{}

	mu      sync.Mutex
	pinging []time.Time // when each Ping still running was called, oldest first
	pushes  []pushedNode
}

// pushedNode is a node the provider pushed through VK's NotifyNodeStatus
// callback: the provider's object (Pushed) and a copy taken then (Node),
// which is what VK gets, so that VK's own writes (heartbeat times,
// node/node.go updateNodeStatusHeartbeat) never touch the provider's
// object.
type pushedNode struct {
	At     time.Time
	Node   *corev1.Node
	Pushed *corev1.Node
}

// pushed answers the nodes pushed so far, oldest first.
func (r *recordedNode) pushed() []pushedNode {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.pushes)
}

func (r *recordedNode) Ping(ctx context.Context) error {
	start := time.Now()
	r.mu.Lock()
	r.pinging = append(r.pinging, start)
	r.mu.Unlock()
	err := r.p.Ping(ctx)
	r.mu.Lock()
	if i := slices.Index(r.pinging, start); i >= 0 {
		r.pinging = slices.Delete(r.pinging, i, i+1)
	}
	r.mu.Unlock()
	r.log.add(call{Method: "Ping", At: time.Now(), Err: err})
	return err
}

// pingRunningSince answers when the oldest Ping still running was called,
// and whether one is.
func (r *recordedNode) pingRunningSince() (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pinging) == 0 {
		return time.Time{}, false
	}
	return r.pinging[0], true
}

func (r *recordedNode) NotifyNodeStatus(ctx context.Context, cb func(*corev1.Node)) {
	r.p.NotifyNodeStatus(ctx, func(n *corev1.Node) {
		var cp *corev1.Node
		if n != nil {
			cp = n.DeepCopy()
		}
		r.mu.Lock()
		r.pushes = append(r.pushes, pushedNode{At: time.Now(), Node: cp, Pushed: n})
		r.mu.Unlock()
		if cp != nil {
			cp = cp.DeepCopy()
		}
		cb(cp)
	})
	r.log.add(call{Method: "NotifyNodeStatus", At: time.Now()})
	r.once.Do(func() { close(r.returned) })
}
