package kubebackend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podsync"
)

// The labels kuscia puts on a backend pod (the keys of its pkg/common
// constants LabelNodeNamespace, LabelNodeName and LabelPodUID).
const (
	// KusciaLabelNamespace carries the namespace of the agent's pod.
	KusciaLabelNamespace = "kuscia.secretflow/namespace"
	// KusciaLabelNode carries the agent's node name (Options.Agent);
	// GetPods lists the backend pods that carry it.
	KusciaLabelNode = "kuscia.secretflow/node"
	// KusciaLabelPodUID carries the UID of the agent's pod. The faithful
	// GetPods reads it from the backend pod; GetPodStatus reads it from
	// the agent's pod, which never carries it.
	KusciaLabelPodUID = "kuscia.secretflow/pod-uid"
)

// KusciaFaithful behaves as kuscia's K8sProvider does
// (pkg/agent/provider/pod/k8s_provider.go of secretflow/kuscia), bugs
// included, so that the conformance suite's verdict on it can be tested. It
// is not a provider to use: Provider is the correct one. It is rewritten here
// from a reading of K8sProvider, one method for each of K8sProvider's:
//
//   - SyncPod names the backend pod by the agent pod's name alone. When the
//     informer's cache has a backend pod of that name — whichever pod it
//     was made for — it does nothing and returns nil; otherwise it creates
//     one: the pod's spec and status, its labels with KusciaLabelNamespace,
//     KusciaLabelNode and KusciaLabelPodUID added, its annotations, in the
//     backend namespace. A pod created again under the same name is served
//     the old backend pod, and a create while the informer lags behind an
//     earlier one fails with AlreadyExists, returned as SyncPod's error.
//     Nothing is reported to the ReasonCache, and a container that fails
//     to start is not an error (the backend's kubelet shows it in the API
//     status only). A nil pod panics; a nil ReasonCache, a pod without UID
//     or one with two containers of the same name is not rejected.
//   - GetPodStatus reads the backend pod of the pod's name from the
//     informer's cache. Its ID is the agent pod's KusciaLabelPodUID label
//     (so empty), its Namespace the backend namespace. Each app container
//     status becomes one instance: ID the API's ContainerID string whole
//     (the "type://" prefix inside ID, Type empty), Running or Exited as
//     the API says, Created for anything else (Waiting, a crash-looping
//     container whose last run exited included); StartedAt and FinishedAt
//     from the API (whole seconds), CreatedAt zero, no previous run, no
//     init containers, no sandboxes; the pod IPs.
//   - GetPods lists every backend pod labelled with the node, for all and
//     not all alike: ID the backend pod's KusciaLabelPodUID label, the
//     backend namespace, and the spec's app containers with name and image
//     only (no ID, no state).
//   - KillPod gets the backend pod of the pod's name from the API server
//     (none: nil), deletes it with the override as grace period (nil: the
//     API server's default) and returns: it does not wait for the backend's
//     kubelet to stop the containers. A nil pod panics.
//   - DeletePod and CleanupPods do nothing and return nil.
//   - RefreshPodStatus, when the cache has a backend pod of the pod's name,
//     fills in the pod's Reason and Message if empty, replaces the container
//     and init container statuses with deep copies of the backend's, and
//     copies its Ready and ContainersReady conditions; otherwise it leaves
//     the status alone.
//   - Start starts the informers with ctx, waits for their caches to sync
//     (an error if ctx ends first), then blocks until ctx is done and
//     returns nil. Stop does nothing: it neither ends Start nor the
//     informers.
//   - The agent is told of a pod (HandlePodSyncByUID, through the embedded
//     podsync.Notifier) exactly where K8sProvider tells it: from the pod
//     informer's update and delete handlers (not on add), for a backend
//     pod labelled with the agent's node, with the UID of its
//     KusciaLabelPodUID label (NewK8sProvider's AddEventHandler,
//     handleBackendPodChanged); the informer's resync every 5 minutes
//     updates every pod again. K8sProvider's other call, in
//     syncErrAction for a pod an admission webhook denied, has no
//     counterpart (the fake backend denies none). Stop leaves the
//     notifications on, as K8sProvider's does.
//
// What K8sProvider does and KusciaFaithful does not: the pod's ConfigMaps
// and Secrets, DNS policy and config, runtime class, labels, annotations
// and affinities from the configuration, the backend plugin and hooks,
// events, logs, leader election, and the pods an admission webhook denied
// (the fake backend denies none). Where K8sProvider leaves a backend pod
// to the backend's scheduler, KusciaFaithful binds it to Options.NodeName
// as Provider does (the simulated kubelet has no scheduler in front of it).
type KusciaFaithful struct {
	// Notifier holds the agent's PodSyncHandler (SetPodSyncHandler).
	podsync.Notifier

	client    kubernetes.Interface
	namespace string // of the backend pods
	node      string // the agent's node name: Options.Agent
	nodeName  string // the backend node: Options.NodeName

	factory informers.SharedInformerFactory
	lister  corelisters.PodNamespaceLister
	synced  []cache.InformerSynced

	// The cache's lag (SetCacheLag): when each backend pod was created.
	mu      sync.Mutex
	lag     time.Duration
	created map[string]time.Time
}

// SetCacheLag makes the informer's cache see a backend pod the provider
// created only d after it created it, as a watch lags behind a loaded API
// server: in the meantime SyncPod creates it again and fails with
// AlreadyExists, and GetPodStatus reports nothing of it. kuscia's
// K8sProvider meets that lag whenever its agent syncs a pod twice in quick
// succession; set before Start, it makes the lag sure instead of a matter
// of timing.
func (k *KusciaFaithful) SetCacheLag(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lag = d
}

// cached is the cache's answer for the backend pod bk read from it: nil
// while the lag hides it.
func (k *KusciaFaithful) cached(bk *v1.Pod) *v1.Pod {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t, ok := k.created[bk.Name]; ok && time.Since(t) < k.lag {
		return nil
	}
	return bk
}

// hiddenFor is how much longer the lag hides the backend pod of name: 0
// when the cache sees it.
func (k *KusciaFaithful) hiddenFor(name string) time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t, ok := k.created[name]; ok {
		return max(k.lag-time.Since(t), 0)
	}
	return 0
}

// get is the cache's Get of the backend pod name, with the lag.
func (k *KusciaFaithful) get(name string) (*v1.Pod, error) {
	bk, err := k.lister.Get(name)
	if err == nil && k.cached(bk) == nil {
		return nil, apierrors.NewNotFound(v1.Resource("pods"), name)
	}
	return bk, err
}

var _ kri.PodProvider = (*KusciaFaithful)(nil)

// kusciaResync is the resync period of K8sProvider's informers.
const kusciaResync = 5 * time.Minute

// NewKusciaFaithful returns a provider that behaves as kuscia's K8sProvider
// does, bugs included (see KusciaFaithful), for the backend cluster
// opts.Client talks to: its pods in opts.Namespace, labelled with
// opts.Agent as the agent's node name and bound to opts.NodeName.
// PollInterval is not used. Its informers watch every pod, ConfigMap and
// Secret of the namespace, as K8sProvider's do, and start only with Start.
func NewKusciaFaithful(opts Options) (*KusciaFaithful, error) {
	switch {
	case opts.Client == nil:
		return nil, errors.New("kubebackend: NewKusciaFaithful needs Options.Client, got nil")
	case opts.Namespace == "":
		return nil, errors.New("kubebackend: NewKusciaFaithful needs Options.Namespace")
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
	k := &KusciaFaithful{client: opts.Client, namespace: opts.Namespace, node: opts.Agent, nodeName: opts.NodeName}
	k.factory = informers.NewSharedInformerFactoryWithOptions(opts.Client, kusciaResync, informers.WithNamespace(opts.Namespace))
	core := k.factory.Core().V1()
	k.lister = core.Pods().Lister().Pods(opts.Namespace)
	// K8sProvider's handlers: updates and deletes, no adds.
	_, err := core.Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { k.backendPodChanged(obj) },
		DeleteFunc: k.backendPodChanged,
	})
	if err != nil {
		return nil, fmt.Errorf("kubebackend: watching the backend's pods: %w", err)
	}
	k.synced = []cache.InformerSynced{
		core.Pods().Informer().HasSynced,
		core.ConfigMaps().Informer().HasSynced,
		core.Secrets().Informer().HasSynced,
	}
	return k, nil
}

// Start starts the informers with ctx, waits for their caches, then blocks
// until ctx is done and returns nil. It returns an error when ctx ends
// before the caches have synced.
func (k *KusciaFaithful) Start(ctx context.Context) error {
	go k.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), k.synced...) {
		return fmt.Errorf("kubebackend: the informers on backend namespace %s did not sync", k.namespace)
	}
	<-ctx.Done()
	return nil
}

// WaitForCacheSync starts the informers with ctx, as Start does, and waits
// for their caches to sync: an error if ctx ends first. kuscia's agent runs
// Start in a goroutine of its own and syncs pods at once
// (pods_controller.go Run), so for the pods it syncs at its start the
// informer may list a backend pod only once its kubelet has written the
// status: the informer adds it, K8sProvider's handlers ignore adds, and
// nothing tells the agent to sync it again. For every pod created once the
// caches have synced, the backend's writes reach the update handler. A
// caller that waits here before the first SyncPod models those pods, made
// sure rather than left to which goroutine runs first.
func (k *KusciaFaithful) WaitForCacheSync(ctx context.Context) error {
	k.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), k.synced...) {
		return fmt.Errorf("kubebackend: the informers on backend namespace %s did not sync", k.namespace)
	}
	return nil
}

// Stop does nothing, as K8sProvider's: Start goes on until its ctx is done.
func (k *KusciaFaithful) Stop() {}

// backendPodChanged tells the agent of the pod a backend pod stands for, as
// K8sProvider.handleBackendPodChanged does: obj (a tombstone included) must
// carry the agent's node label, and the UID is its KusciaLabelPodUID label.
// While the cache's lag (SetCacheLag) hides the backend pod, the call waits
// until the cache sees it: an informer calls its handlers only once its
// cache has the change, so a lagging watch delays them as much.
func (k *KusciaFaithful) backendPodChanged(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	bk, ok := obj.(metav1.Object)
	if !ok || bk.GetLabels()[KusciaLabelNode] != k.node {
		return
	}
	k.NotifyAfter(types.UID(bk.GetLabels()[KusciaLabelPodUID]), k.hiddenFor(bk.GetName()))
}

// backendMeta is the metadata of the backend pod for the agent's pod: the
// pod's name and labels and annotations, the kuscia labels, the backend
// namespace; nothing else (no UID, resourceVersion, owners, finalizers).
func (k *KusciaFaithful) backendMeta(pod *v1.Pod) metav1.ObjectMeta {
	meta := metav1.ObjectMeta{
		Namespace:   k.namespace,
		Name:        pod.Name,
		Labels:      make(map[string]string, len(pod.Labels)+3),
		Annotations: make(map[string]string, len(pod.Annotations)),
	}
	for key, v := range pod.Labels {
		meta.Labels[key] = v
	}
	// kuscia's agent serves the pods of one namespace, its domain's: the
	// pod's namespace is the agent's.
	meta.Labels[KusciaLabelNamespace] = pod.Namespace
	meta.Labels[KusciaLabelNode] = k.node
	meta.Labels[KusciaLabelPodUID] = string(pod.UID)
	for key, v := range pod.Annotations {
		meta.Annotations[key] = v
	}
	return meta
}

// SyncPod creates the backend pod of pod's name unless the informer's cache
// has one (see KusciaFaithful). The podStatus and the reasonCache are not
// used.
func (k *KusciaFaithful) SyncPod(ctx context.Context, pod *v1.Pod, _ *pkgcontainer.PodStatus, _ *kri.ReasonCache) error {
	bk := pod.DeepCopy() // status included, as K8sProvider sends it
	bk.ObjectMeta = k.backendMeta(pod)
	if _, err := k.get(pod.Name); err == nil {
		return nil // "already exists": whichever pod it was made for
	}
	bk.Spec.NodeName, bk.Spec.NodeSelector, bk.Spec.SchedulerName = k.nodeName, nil, ""
	if err := k.apply(ctx, bk); err != nil {
		return fmt.Errorf("SyncPod of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// apply creates bk unless the informer's cache has a pod of its name. An
// AlreadyExists from the API server (the cache lags) is an error, its text
// kept but not its type, as K8sProvider formats it.
func (k *KusciaFaithful) apply(ctx context.Context, bk *v1.Pod) error {
	_, err := k.get(bk.Name)
	switch {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading backend pod %s/%s from the cache: %v", bk.Namespace, bk.Name, err)
	}
	// The lag counts from before the create: the informer may deliver the
	// new pod before Create returns (a loaded machine), and its handler
	// must find it hidden then too (backendPodChanged).
	k.mu.Lock()
	if k.created == nil {
		k.created = map[string]time.Time{}
	}
	before, had := k.created[bk.Name]
	k.created[bk.Name] = time.Now()
	k.mu.Unlock()
	if _, err := k.client.CoreV1().Pods(k.namespace).Create(ctx, bk, metav1.CreateOptions{}); err != nil {
		k.mu.Lock()
		if had {
			k.created[bk.Name] = before
		} else {
			delete(k.created, bk.Name)
		}
		k.mu.Unlock()
		return fmt.Errorf("creating backend pod %s/%s: %v", bk.Namespace, bk.Name, err)
	}
	return nil
}

// GetPodStatus converts the status of the backend pod of pod's name as the
// informer's cache has it (see KusciaFaithful).
func (k *KusciaFaithful) GetPodStatus(_ context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	st := &pkgcontainer.PodStatus{Namespace: k.namespace, Name: pod.Name}
	if pod.Labels != nil {
		st.ID = types.UID(pod.Labels[KusciaLabelPodUID])
	}
	bk, err := k.get(pod.Name)
	switch {
	case apierrors.IsNotFound(err):
		return st, nil
	case err != nil:
		return nil, fmt.Errorf("GetPodStatus of pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	for _, ip := range bk.Status.PodIPs {
		st.IPs = append(st.IPs, ip.IP)
	}
	for _, bkcs := range bk.Status.ContainerStatuses {
		cs := &pkgcontainer.Status{
			ID:           pkgcontainer.ContainerID{ID: bkcs.ContainerID},
			Name:         bkcs.Name,
			RestartCount: int(bkcs.RestartCount),
			Image:        bkcs.Image,
			ImageID:      bkcs.ImageID,
			State:        pkgcontainer.ContainerStateCreated,
		}
		switch state := bkcs.State; {
		case state.Running != nil:
			cs.State = pkgcontainer.ContainerStateRunning
			cs.StartedAt = state.Running.StartedAt.Time
		case state.Terminated != nil:
			t := state.Terminated
			cs.State = pkgcontainer.ContainerStateExited
			cs.StartedAt, cs.FinishedAt = t.StartedAt.Time, t.FinishedAt.Time
			cs.ExitCode, cs.Reason, cs.Message = int(t.ExitCode), t.Reason, t.Message
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return st, nil
}

// GetPods lists the backend pods labelled with the agent's node, whatever
// all says (see KusciaFaithful).
func (k *KusciaFaithful) GetPods(context.Context, bool) ([]*pkgcontainer.Pod, error) {
	bks, err := k.lister.List(labels.SelectorFromSet(labels.Set{KusciaLabelNode: k.node}))
	if err != nil {
		return nil, fmt.Errorf("GetPods: %v", err)
	}
	var out []*pkgcontainer.Pod
	for _, bk := range bks {
		if k.cached(bk) == nil {
			continue
		}
		pod := &pkgcontainer.Pod{ID: bk.UID, Name: bk.Name, Namespace: k.namespace}
		if bk.Labels != nil {
			pod.ID = types.UID(bk.Labels[KusciaLabelPodUID])
		}
		for _, c := range bk.Spec.Containers {
			pod.Containers = append(pod.Containers, &pkgcontainer.Container{Name: c.Name, Image: c.Image})
		}
		out = append(out, pod)
	}
	return out, nil
}

// KillPod deletes the backend pod of pod's name with gracePeriodOverride
// and returns without waiting for it to go (see KusciaFaithful).
func (k *KusciaFaithful) KillPod(ctx context.Context, pod *v1.Pod, _ pkgcontainer.Pod, gracePeriodOverride *int64) error {
	pods := k.client.CoreV1().Pods(k.namespace)
	if _, err := pods.Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: gracePeriodOverride})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("KillPod of pod %s/%s: deleting backend pod %s/%s: %v", pod.Namespace, pod.Name, k.namespace, pod.Name, err)
	}
	return nil
}

// DeletePod does nothing and returns nil.
func (k *KusciaFaithful) DeletePod(context.Context, *v1.Pod) error { return nil }

// CleanupPods does nothing and returns nil.
func (k *KusciaFaithful) CleanupPods(context.Context, []*v1.Pod, []*pkgcontainer.Pod, map[types.UID]sets.Empty) error {
	return nil
}

// RefreshPodStatus copies into podStatus what the backend pod of pod's name
// says (see KusciaFaithful); without one it leaves podStatus alone.
func (k *KusciaFaithful) RefreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus) {
	bk, err := k.get(pod.Name)
	if err != nil {
		return // NotFound or a cache error, both only logged by K8sProvider
	}
	if podStatus.Reason == "" {
		podStatus.Reason = bk.Status.Reason
	}
	if podStatus.Message == "" {
		podStatus.Message = bk.Status.Message
	}
	podStatus.ContainerStatuses = make([]v1.ContainerStatus, len(bk.Status.ContainerStatuses))
	for i := range bk.Status.ContainerStatuses {
		podStatus.ContainerStatuses[i] = *bk.Status.ContainerStatuses[i].DeepCopy()
	}
	podStatus.InitContainerStatuses = make([]v1.ContainerStatus, len(bk.Status.InitContainerStatuses))
	for i := range bk.Status.InitContainerStatuses {
		podStatus.InitContainerStatuses[i] = *bk.Status.InitContainerStatuses[i].DeepCopy()
	}
	for _, t := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
		copyCondition(podStatus, bk.Status.Conditions, t)
	}
}

// copyCondition sets the condition of type t in dst to the first one of
// that type in src, replacing dst's or appended; none in src: dst is left
// alone.
func copyCondition(dst *v1.PodStatus, src []v1.PodCondition, t v1.PodConditionType) {
	for _, c := range src {
		if c.Type != t {
			continue
		}
		for i := range dst.Conditions {
			if dst.Conditions[i].Type == t {
				dst.Conditions[i] = c
				return
			}
		}
		dst.Conditions = append(dst.Conditions, c)
		return
	}
}

// KusciaFaithfulBackend is a KusciaFaithful in front of a backend cluster
// whose only node is a simulated Kubelet, for the conformance run of
// TestKusciaFaithfulVerdict. Unlike Backend's, its Stop is the provider's
// (nothing): the backend cluster goes on until the ctx of
// NewKusciaFaithfulBackend is done, as a real one outlives the agent.
type KusciaFaithfulBackend struct {
	*KusciaFaithful
	Kubelet *Kubelet
}

// NewKusciaFaithfulBackend creates the backend namespace opts.Namespace on
// client (kuscia expects it to exist), starts a Kubelet for node
// opts.NodeName in it (kopts sets the rest) that runs until ctx is done, and
// returns a KusciaFaithful bound to that node.
func NewKusciaFaithfulBackend(ctx context.Context, client kubernetes.Interface, opts Options, kopts KubeletOptions) (*KusciaFaithfulBackend, error) {
	opts.Client = client
	k, err := NewKusciaFaithful(opts)
	if err != nil {
		return nil, err
	}
	_, err = client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.Namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("kubebackend: creating backend namespace %s: %w", opts.Namespace, err)
	}
	kopts.Namespace, kopts.NodeName = opts.Namespace, opts.NodeName
	kubelet, err := NewKubelet(client, kopts)
	if err != nil {
		return nil, err
	}
	logf := kopts.Logf
	go func() {
		if err := kubelet.Run(ctx); err != nil && logf != nil {
			logf("kubebackend: simulated kubelet: %v", err)
		}
	}()
	return &KusciaFaithfulBackend{KusciaFaithful: k, Kubelet: kubelet}, nil
}
