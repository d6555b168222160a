package vk

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"
)

// NodeName is the name of the node the suite's VK runs as unless
// Config.NodeName names another; every pod of a spec is bound to it.
const NodeName = "vk-conformance"

// Namespace is the namespace of every pod of a spec.
const Namespace = "default"

// judge is one spec's virtual-kubelet: the real PodController and
// NodeController of github.com/virtual-kubelet/virtual-kubelet/node, wired as
// VK's own node/lifecycle_test.go (wireUpSystem) and node/nodeutil wire them,
// over the faithful fake API server of package
// github.com/kri-kit/testkit/sim/apiserver, or a real one (Config.APIServer).
type judge struct {
	node   string // the node VK runs as
	api    apiServer
	events *eventLog
	stops  []func() // in reverse order of start
}

func newJudge(ctx context.Context, cfg Config) (*judge, error) {
	api, err := newAPIServer(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &judge{node: cfg.nodeName(), api: api, events: &eventLog{}}, nil
}

// startPods runs a PodController for provider until stop, or until the
// stop function it returns is called (a VK that goes down while the API
// server and the provider stay); it returns once the controller is ready
// (its informers synced, dangling pods deleted).
func (j *judge) startPods(ctx context.Context, provider node.PodLifecycleHandler) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	// As VK's nodeutil does: the pod informer sees only the node's pods, the
	// others (for the downward API) see everything.
	podFactory := informers.NewSharedInformerFactoryWithOptions(j.api, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", j.node).String()
		}))
	otherFactory := informers.NewSharedInformerFactory(j.api, 0)
	podInformer := podFactory.Core().V1().Pods()
	pc, err := node.NewPodController(node.PodControllerConfig{
		PodClient:         j.api.CoreV1(),
		PodInformer:       podInformer,
		EventRecorder:     j.events,
		Provider:          provider,
		ConfigMapInformer: otherFactory.Core().V1().ConfigMaps(),
		SecretInformer:    otherFactory.Core().V1().Secrets(),
		ServiceInformer:   otherFactory.Core().V1().Services(),
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("node.NewPodController: %w", err)
	}
	podFactory.Start(ctx.Done())
	otherFactory.Start(ctx.Done())
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-pc.Done()
			podFactory.Shutdown()
			otherFactory.Shutdown()
		})
	}
	j.stops = append(j.stops, stop)
	podFactory.WaitForCacheSync(ctx.Done())
	otherFactory.WaitForCacheSync(ctx.Done())
	go func() { _ = pc.Run(ctx, 2) }()
	select {
	case <-pc.Ready():
		return stop, nil
	case <-pc.Done():
		return stop, fmt.Errorf("VK's PodController.Run ended before it was ready: %v", pc.Err())
	case <-ctx.Done():
		return stop, ctx.Err()
	}
}

// startNode runs a NodeController for provider with a v1 lease of 40s (VK's
// default, renewed every 10s) until stop, and returns the controller. It
// does not wait for the node to be registered.
func (j *judge) startNode(ctx context.Context, provider node.NodeProvider) (*node.NodeController, error) {
	ctx, cancel := context.WithCancel(ctx)
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: j.node, Labels: map[string]string{"type": "virtual-kubelet"}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
		},
	}
	nc, err := node.NewNodeController(provider, n, j.api.CoreV1().Nodes(),
		node.WithNodeEnableLeaseV1(j.api.CoordinationV1().Leases(corev1.NamespaceNodeLease), 0))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("node.NewNodeController: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = nc.Run(ctx)
	}()
	j.stops = append(j.stops, func() {
		cancel()
		<-done
	})
	return nc, nil
}

// stop ends every controller the judge started, waits for them and then
// closes the API server.
func (j *judge) stop() {
	for i := len(j.stops) - 1; i >= 0; i-- {
		j.stops[i]()
	}
	j.stops = nil
	j.api.Close()
}

// eventLog is the EventRecorder the suite hands VK: it keeps the events VK
// records (ProviderCreateFailed, ProviderDeleteSuccess, ...).
type eventLog struct {
	mu     sync.Mutex
	events []event
}

type event struct {
	At                    time.Time
	Object                string // namespace/name
	Type, Reason, Message string
}

var _ record.EventRecorder = (*eventLog)(nil)

func (l *eventLog) Event(obj runtime.Object, eventtype, reason, message string) {
	name := "?"
	if p, ok := obj.(*corev1.Pod); ok {
		name = p.Namespace + "/" + p.Name
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, event{At: time.Now(), Object: name, Type: eventtype, Reason: reason, Message: message})
}

func (l *eventLog) Eventf(obj runtime.Object, eventtype, reason, format string, args ...any) {
	l.Event(obj, eventtype, reason, fmt.Sprintf(format, args...))
}

func (l *eventLog) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventtype, reason, format string, args ...any) {
	l.Eventf(obj, eventtype, reason, format, args...)
}

func (l *eventLog) all() []event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]event(nil), l.events...)
}
