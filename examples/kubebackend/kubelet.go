package kubebackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// RuntimeType is the type of the container IDs the simulated kubelet
// reports ("sim://<32 hex digits>").
const RuntimeType = "sim"

// The default crash-loop back-off of the simulated kubelet: short, so that
// the conformance suite sees several restarts within a second or two. The
// kubelet uses 10s doubling to 5m (workload.KubeletBackOff).
const (
	DefaultBackOffInitial = 200 * time.Millisecond
	DefaultBackOffMax     = 2 * time.Second
)

// ErrImagePullBackOff is the reason of a container whose image pull failed
// and is backed off. Its text is that of the kubelet's
// images.ErrImagePullBackOff (k8s.io/kubernetes/pkg/kubelet/images, not
// imported for the size of its dependencies), as workload.ErrImagePull is
// that of images.ErrImagePull.
var ErrImagePullBackOff = errors.New("ImagePullBackOff")

// BackOff is the crash-loop and image-pull back-off of the simulated
// kubelet: the first retry waits Initial, every further one twice as long,
// at most Max; a container not backed off for 2×Max starts again from
// Initial (client-go's flowcontrol.Backoff, as the kubelet uses it).
type BackOff struct {
	Initial time.Duration
	Max     time.Duration
}

// KubeletOptions configure a Kubelet.
type KubeletOptions struct {
	// Namespace whose pods the Kubelet plays (required).
	Namespace string
	// NodeName: the Kubelet plays the pods bound to this node (required).
	NodeName string
	// Clock is the Kubelet's time (default clock.RealClock{}); unit tests
	// hand in a k8s.io/utils/clock/testing.FakeClock and step it.
	Clock clock.WithTicker
	// BackOff; zero fields take DefaultBackOffInitial and
	// DefaultBackOffMax.
	BackOff BackOff
	// NodeIP is the HostIP of its pods (default 192.0.2.10).
	NodeIP string
	// Logf receives what goes wrong in the background (failed API calls);
	// default: dropped.
	Logf func(format string, args ...any)
}

// Kubelet is a simulated kubelet of a backend cluster: it plays the pods
// bound to its node with package workload's vocabulary and reports their
// status through the API, as a node's kubelet does. It talks to the API
// server only through a kubernetes.Interface — the kit's fake API server
// (NewFakeClientset) or a real kube-apiserver — with an informer for reads,
// the status subresource (UpdateStatus, retried on conflicts) for writes,
// and a delete with grace period 0 to finish a graceful deletion.
//
// What it plays:
//
//   - init containers one at a time in order, each to exit code 0 before
//     the next and before the app containers;
//   - restarts as the pod's restart policy says, each after a crash-loop
//     back-off (BackOff) counted from the exit, shown as Waiting
//     CrashLoopBackOff;
//   - an image under workload.MissingImageDomain cannot be pulled: the
//     container waits with ErrImagePull, then ImagePullBackOff half-way to
//     the next attempt; a missing executable waits with RunContainerError;
//     both are retried after the back-off, and a changed image is tried at
//     once; under imagePullPolicy Never a missing image is never pulled:
//     the container waits with ErrImageNeverPull;
//   - the environment: Env with $(VAR) expanded as the kubelet does
//     (workload.OfEnv);
//   - an exited run's message is its termination message, as
//     workload.Behaviour.TerminationMessage gives it;
//   - a graceful deletion (deletionTimestamp, deletionGracePeriodSeconds):
//     SIGTERM at once — a container that exits on it exits 143, one that
//     ignores it is killed with 137 when the grace period is over — then,
//     once nothing runs, the terminal status and a delete with grace 0.
//     A pod deleted at once (grace 0, or never bound) is dropped.
//
// It builds each status as a kubelet does, from the runtime view (the
// current and previous run of each container, exact times) with
// podstatus.Generator (with its node's address as HostIP), stamps the first
// StartTime and new condition transitions (podstatus.StampTimes), and writes it as the API keeps it: serialised, so with whole
// seconds. Everything happens at the instants the workloads and back-offs
// say, on its Clock.
type Kubelet struct {
	client    kubernetes.Interface
	opts      KubeletOptions
	backOff   BackOff
	generator *podstatus.Generator

	mu     sync.Mutex
	pods   map[types.UID]*simPod
	nextIP uint32
	wake   chan struct{}
}

// NewKubelet returns a Kubelet for the pods bound to opts.NodeName in
// opts.Namespace, or an error naming the option that is wrong. Run plays
// them.
func NewKubelet(client kubernetes.Interface, opts KubeletOptions) (*Kubelet, error) {
	switch {
	case client == nil:
		return nil, errors.New("kubebackend: NewKubelet needs a client, got nil")
	case opts.Namespace == "":
		return nil, errors.New("kubebackend: NewKubelet needs KubeletOptions.Namespace")
	case opts.NodeName == "":
		return nil, errors.New("kubebackend: NewKubelet needs KubeletOptions.NodeName")
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.NodeIP == "" {
		opts.NodeIP = "192.0.2.10"
	}
	if _, err := netip.ParseAddr(opts.NodeIP); err != nil {
		return nil, fmt.Errorf("kubebackend: KubeletOptions.NodeIP: %w", err)
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	b := opts.BackOff
	if b.Initial == 0 {
		b.Initial = DefaultBackOffInitial
	}
	if b.Max == 0 {
		b.Max = max(DefaultBackOffMax, b.Initial)
	}
	if b.Initial < time.Millisecond || b.Max < b.Initial {
		return nil, fmt.Errorf("kubebackend: BackOff %+v: want Initial at least 1ms and Max at least Initial", opts.BackOff)
	}
	g := podstatus.NewGenerator(podstatus.WithNodeAddresses([]v1.NodeAddress{{Type: v1.NodeInternalIP, Address: opts.NodeIP}}))
	return &Kubelet{client: client, opts: opts, backOff: b, generator: g, pods: map[types.UID]*simPod{}, wake: make(chan struct{}, 1)}, nil
}

// Run plays the pods until ctx is done, then returns nil once everything it
// started has stopped. It returns an error when its informer cannot start.
func (k *Kubelet) Run(ctx context.Context) error {
	factory := informers.NewSharedInformerFactoryWithOptions(k.client, 0,
		informers.WithNamespace(k.opts.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			// The API server filters (the kit's fake too); observe
			// filters again all the same.
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", k.opts.NodeName).String()
		}))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k.observe(obj, false) },
		UpdateFunc: func(_, obj any) { k.observe(obj, false) },
		DeleteFunc: func(obj any) { k.observe(obj, true) },
	}); err != nil {
		return fmt.Errorf("kubebackend: simulated kubelet: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for {
		next, ok := k.step(ctx)
		if ok && !next.After(k.opts.Clock.Now()) {
			continue // due already (the clock moved while we worked)
		}
		var timer clock.Timer
		var fire <-chan time.Time
		if ok {
			timer = k.opts.Clock.NewTimer(max(next.Sub(k.opts.Clock.Now()), 0))
			fire = timer.C()
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return nil
		case <-k.wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// observe records a new version of a pod, or its deletion, and wakes Run.
func (k *Kubelet) observe(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, deleted = d.Obj, true
	}
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.Spec.NodeName != k.opts.NodeName {
		return
	}
	now := k.opts.Clock.Now()
	k.mu.Lock()
	p := k.pods[pod.UID]
	switch {
	case deleted:
		// Gone (deleted at once, or by our own final delete): its
		// containers are gone with it.
		delete(k.pods, pod.UID)
	case p == nil && pod.DeletionTimestamp == nil:
		k.nextIP++
		k.pods[pod.UID] = newSimPod(pod, podIP(k.nextIP), k.backOff)
	case p != nil:
		p.observe(pod, now)
	}
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// podIP is the nth address of 10.244.0.0/16.
func podIP(n uint32) string {
	a := netip.AddrFrom4([4]byte{10, 244, byte(n >> 8), byte(n)})
	return a.String()
}

// work is one API call Run makes for a pod.
type work struct {
	uid    types.UID
	name   string
	status *v1.PodStatus // write this status
	remove bool          // then finish the graceful deletion
}

// step brings every pod up to now, makes the API calls their changes need
// and returns when the next change is due.
func (k *Kubelet) step(ctx context.Context) (next time.Time, ok bool) {
	now := k.opts.Clock.Now()
	var todo []work
	k.mu.Lock()
	for _, p := range k.pods {
		p.Advance(now)
		p.Reconcile(now)
		w := work{uid: p.UID, name: p.Name}
		if !p.retryAt.IsZero() && !now.Before(p.retryAt) {
			p.retryAt = time.Time{}
		}
		if st := k.apiStatus(p, now); p.written == nil || !apiequality.Semantic.DeepEqual(*st, *p.written) {
			w.status, p.written = st, st
		}
		if p.Stopped && !p.AnyRunning() && !p.deleting {
			w.remove, p.deleting = true, true
		}
		if w.status != nil || w.remove {
			todo = append(todo, w)
		}
		if t, due := p.nextChange(now); due && (!ok || t.Before(next)) {
			next, ok = t, true
		}
		if t := p.retryAt; !t.IsZero() && (!ok || t.Before(next)) {
			next, ok = t, true
		}
	}
	k.mu.Unlock()
	for _, w := range todo {
		k.do(ctx, w)
	}
	return next, ok
}

// apiStatus is the status a kubelet reports for p at now, as the API keeps
// it.
func (k *Kubelet) apiStatus(p *simPod, now time.Time) *v1.PodStatus {
	rt, reasons := p.runtimeStatus(now)
	// The previous status is the one last written: the Kubelet is the only
	// writer of the status, and its informer may not have caught up yet.
	pod := *p.object
	if p.written != nil {
		pod.Status = *p.written
	}
	var st v1.PodStatus
	if p.Stopped && !p.AnyRunning() {
		st = k.generator.GenerateTerminal(&pod, rt, reasons)
	} else {
		st = k.generator.Generate(&pod, rt, reasons)
	}
	podstatus.StampTimes(&pod.Status, &st, now)
	return wire(&st)
}

// wire returns st as an API server keeps it: serialised and read back, so
// with timestamps in whole seconds (metav1.Time is RFC 3339 on the wire).
func wire(st *v1.PodStatus) *v1.PodStatus {
	b, err := json.Marshal(st)
	if err != nil {
		panic(fmt.Sprintf("kubebackend: a v1.PodStatus does not marshal: %v", err)) // cannot happen
	}
	var out v1.PodStatus
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("kubebackend: a marshalled v1.PodStatus does not unmarshal: %v", err)) // cannot happen
	}
	return &out
}

// do makes the API calls of w: the status through the status subresource,
// retried on conflicts with the latest version of the pod, and the final
// delete with grace 0, preconditioned on the pod's UID.
func (k *Kubelet) do(ctx context.Context, w work) {
	pods := k.client.CoreV1().Pods(k.opts.Namespace)
	if w.status != nil {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			pod, err := pods.Get(ctx, w.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if pod.UID != w.uid {
				return apierrors.NewNotFound(v1.Resource("pods"), w.name)
			}
			pod.Status = *w.status
			_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
			return err
		})
		if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
			k.opts.Logf("kubebackend: simulated kubelet: status of pod %s/%s: %v", k.opts.Namespace, w.name, err)
			k.retryLater(w.uid)
		}
	}
	if w.remove {
		zero := int64(0)
		err := pods.Delete(ctx, w.name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: metav1.NewUIDPreconditions(string(w.uid))})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
			k.opts.Logf("kubebackend: simulated kubelet: deleting pod %s/%s: %v", k.opts.Namespace, w.name, err)
			k.retryLater(w.uid)
		}
	}
}

// retryInterval is how long the Kubelet waits before it repeats a failed
// API call.
const retryInterval = 100 * time.Millisecond

// retryLater forgets what was written for the pod, so that a step
// retryInterval from now writes (and deletes) again.
func (k *Kubelet) retryLater(uid types.UID) {
	k.mu.Lock()
	if p := k.pods[uid]; p != nil {
		p.written, p.deleting = nil, false
		p.retryAt = k.opts.Clock.Now().Add(retryInterval)
	}
	k.mu.Unlock()
}
