package kubebackend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podsync"
)

// The labels and annotations of a mirror (backend pod).
const (
	// LabelAgent carries Options.Agent: GetPods lists only the mirrors
	// that carry the provider's agent name (kuscia labels them with its
	// node name the same way).
	LabelAgent = "kubebackend.kri-kit.io/agent"
	// AnnotationPodUID, AnnotationPodNamespace and AnnotationPodName name
	// the agent's pod a mirror stands for.
	AnnotationPodUID       = "kubebackend.kri-kit.io/pod-uid"
	AnnotationPodNamespace = "kubebackend.kri-kit.io/pod-namespace"
	AnnotationPodName      = "kubebackend.kri-kit.io/pod-name"
)

// DefaultAgent is the agent name of a provider whose Options leave it empty.
const DefaultAgent = "kubebackend"

// Options configure a Provider.
type Options struct {
	// Client talks to the backend cluster's API server (required).
	Client kubernetes.Interface
	// Namespace of the mirrors in the backend cluster (required); the
	// provider creates it when it is missing.
	Namespace string
	// Agent names the node agent in front of the provider (default
	// DefaultAgent); it labels every mirror, so that several agents can
	// share a namespace.
	Agent string
	// NodeName binds every mirror to this backend node; empty leaves them
	// to the backend's scheduler, as kuscia's K8sProvider does.
	NodeName string
	// PollInterval is how often KillPod looks whether the mirror is gone
	// (default 20ms).
	PollInterval time.Duration
}

// Provider is a kri.PodProvider that mirrors every pod into a backend
// Kubernetes cluster and lets that cluster's kubelet run it, in the shape of
// secretflow/kuscia's K8sProvider. It is safe for concurrent use.
//
// Its embedded Notifier implements kri.PodSyncNotifier: the informer's
// handlers call the agent's HandlePodSyncByUID with the agent pod's UID
// whenever a mirror is added, updated or deleted (see the package doc).
type Provider struct {
	// Notifier holds the agent's PodSyncHandler (SetPodSyncHandler); its
	// Clock runs the retries of failed syncs (SyncRetryPeriod).
	podsync.Notifier

	client    kubernetes.Interface
	namespace string
	agent     string
	nodeName  string
	poll      time.Duration

	factory informers.SharedInformerFactory
	lister  corelisters.PodNamespaceLister
	synced  cache.InformerSynced

	mu          sync.Mutex
	informersOn bool
	namespaceOK bool
	started     bool
	stopped     bool
	stop        chan struct{} // closed by the first Stop
	done        chan struct{} // closed when Start returns
}

var _ kri.PodProvider = (*Provider)(nil)

// New returns a Provider for the backend cluster opts.Client talks to, or an
// error naming the option that is wrong. It starts nothing: the informer
// starts with Start or with the first call that needs it, and Stop ends it.
func New(opts Options) (*Provider, error) {
	switch {
	case opts.Client == nil:
		return nil, errors.New("kubebackend: New needs Options.Client, got nil")
	case opts.Namespace == "":
		return nil, errors.New("kubebackend: New needs Options.Namespace")
	case opts.PollInterval < 0:
		return nil, fmt.Errorf("kubebackend: Options.PollInterval %s is negative", opts.PollInterval)
	}
	if errs := validation.IsDNS1123Label(opts.Namespace); len(errs) > 0 {
		return nil, fmt.Errorf("kubebackend: Options.Namespace %q: %v", opts.Namespace, errs)
	}
	if opts.Agent == "" {
		opts.Agent = DefaultAgent
	}
	if errs := validation.IsValidLabelValue(opts.Agent); len(errs) > 0 {
		return nil, fmt.Errorf("kubebackend: Options.Agent %q is no label value: %v", opts.Agent, errs)
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	p := &Provider{
		client: opts.Client, namespace: opts.Namespace, agent: opts.Agent, nodeName: opts.NodeName, poll: opts.PollInterval,
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	p.factory = informers.NewSharedInformerFactoryWithOptions(opts.Client, 0,
		informers.WithNamespace(opts.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.SelectorFromSet(labels.Set{LabelAgent: opts.Agent}).String()
		}))
	pods := p.factory.Core().V1().Pods()
	p.lister = pods.Lister().Pods(opts.Namespace)
	p.synced = pods.Informer().HasSynced
	// Every change of a mirror the backend reports is a change of the
	// agent's pod, as kuscia's K8sProvider relays its informer's updates
	// and deletes (k8s_provider.go NewK8sProvider, handleBackendPodChanged);
	// adds too, so that the agent sees a mirror the moment the informer
	// has it.
	_, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    p.mirrorChanged,
		UpdateFunc: func(_, obj any) { p.mirrorChanged(obj) },
		DeleteFunc: p.mirrorChanged,
	})
	if err != nil {
		return nil, fmt.Errorf("kubebackend: watching the backend's pods: %w", err)
	}
	return p, nil
}

// Start starts the informer on the backend's pods (if no call has yet) and
// blocks until Stop is called or ctx is done, then returns nil. A second
// Start returns an error, one after Stop nil at once.
func (p *Provider) Start(ctx context.Context) error {
	p.mu.Lock()
	switch {
	case p.stopped:
		p.mu.Unlock()
		return nil
	case p.started:
		p.mu.Unlock()
		return errors.New("kubebackend: Start called twice")
	}
	p.started = true
	p.mu.Unlock()
	defer close(p.done)
	// Stop or ctx ending while the informer syncs is the end Start waits
	// for, not a failure.
	if err := p.informers(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, errStopped) {
		return err
	}
	select {
	case <-ctx.Done():
	case <-p.stop:
	}
	return nil
}

// Stop ends Start and the informer, and returns once both have stopped;
// later calls are no-ops. The agent is told of no pod any longer (pending
// retries are cancelled). The mirrors are left alone: the backend's pods
// outlive the agent in front of it, as with kuscia's K8sProvider.
func (p *Provider) Stop() {
	p.Notifier.Stop()
	p.mu.Lock()
	if !p.stopped {
		p.stopped = true
		close(p.stop)
	}
	started := p.started
	p.mu.Unlock()
	if started {
		<-p.done
	}
	p.factory.Shutdown()
}

// errStopped is what calls made after Stop return.
var errStopped = errors.New("kubebackend: the provider is stopped")

// informers starts the informer on the first call and waits until it has
// synced, or ctx is done.
func (p *Provider) informers(ctx context.Context) error {
	p.mu.Lock()
	if !p.informersOn && !p.stopped {
		p.informersOn = true
		p.factory.Start(p.stop)
	}
	p.mu.Unlock()
	if p.synced() {
		return nil
	}
	err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		select {
		case <-p.stop:
			return false, errStopped
		default:
		}
		return p.synced(), nil
	})
	if err != nil {
		return fmt.Errorf("kubebackend: waiting for the informer on backend namespace %s: %w", p.namespace, err)
	}
	return nil
}

// ensureNamespace creates the backend namespace if it is missing, once.
func (p *Provider) ensureNamespace(ctx context.Context) error {
	p.mu.Lock()
	ok := p.namespaceOK
	p.mu.Unlock()
	if ok {
		return nil
	}
	_, err := p.client.CoreV1().Namespaces().Get(ctx, p.namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = p.client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.namespace}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("kubebackend: backend namespace %s: %w", p.namespace, err)
	}
	p.mu.Lock()
	p.namespaceOK = true
	p.mu.Unlock()
	return nil
}

// MirrorName is the name of the backend pod that mirrors the agent's pod
// namespace/name with UID uid: the pod's name, cut to leave room, and a hash
// of all three, so that a pod created again under the same name (another
// UID) and pods of the same name in several namespaces get mirrors of their
// own.
func MirrorName(namespace, name string, uid types.UID) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name + "/" + string(uid)))
	const keep = validation.DNS1123SubdomainMaxLength - 17
	if len(name) > keep {
		name = name[:keep]
	}
	return name + "-" + hex.EncodeToString(sum[:8])
}

// mirrorOf returns the mirror of the agent's pod uid in the informer's
// cache, or nil.
func (p *Provider) mirrorOf(namespace, name string, uid types.UID) (*v1.Pod, error) {
	bk, err := p.lister.Get(MirrorName(namespace, name, uid))
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case bk.Annotations[AnnotationPodUID] != string(uid):
		return nil, nil
	}
	return bk, nil
}

// mirrorChanged tells the agent that the pod a mirror stands for changed:
// the informer added, updated or deleted obj (a tombstone included).
func (p *Provider) mirrorChanged(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	bk, ok := obj.(*v1.Pod)
	if !ok || bk.Labels[LabelAgent] != p.agent {
		return
	}
	uid, _, _ := agentPod(bk)
	p.Notify(uid)
}

// agentPod is who a mirror stands for.
func agentPod(bk *v1.Pod) (uid types.UID, namespace, name string) {
	return types.UID(bk.Annotations[AnnotationPodUID]), bk.Annotations[AnnotationPodNamespace], bk.Annotations[AnnotationPodName]
}
