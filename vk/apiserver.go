package vk

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kri-kit/testkit/sim/apiserver"
)

// apiServer is what a spec's VK and the spec talk to: the in-process fake
// (package github.com/kri-kit/testkit/sim/apiserver) or a real
// kube-apiserver (Config.APIServer).
type apiServer interface {
	kubernetes.Interface
	// StatusHistory returns the statuses VK wrote to the pod
	// namespace/name, oldest first.
	StatusHistory(namespace, name string) []corev1.PodStatus
	// Rejected returns the writes the API server refused as invalid, each
	// with the API server's message.
	Rejected() []string
	// Close releases what the API server holds for the spec and removes
	// the spec's objects (its pods, the node and its lease).
	Close()
}

// inProcess is the fake API server: it rejects nothing and forgets
// everything with the spec.
type inProcess struct{ *apiserver.Server }

func (inProcess) Rejected() []string { return nil }
func (inProcess) Close()             {}

// newAPIServer returns the API server of one spec: a fresh in-process fake,
// or the real one cfg names, cleared of the suite's objects.
func newAPIServer(ctx context.Context, cfg Config) (apiServer, error) {
	if cfg.APIServer == nil {
		return inProcess{apiserver.New()}, nil
	}
	return connect(ctx, cfg.APIServer, cfg.nodeName())
}

// realAPI is a real kube-apiserver (Config.APIServer). The statuses VK
// writes are recorded from a watch of the suite's pods (a write that
// changes nothing is not seen, unlike in the fake); the writes it rejects
// with 400 or 422 (an invalid object) from the client's transport.
type realAPI struct {
	kubernetes.Interface
	node      string // the suite's node: its pods are bound to it
	stopWatch context.CancelFunc
	watched   chan struct{}

	mu       sync.Mutex
	statuses map[string][]corev1.PodStatus
	rejected []string
}

// connect opens a client of the API server cfg describes, removes what an
// earlier spec may have left and starts recording pod statuses.
func connect(ctx context.Context, cfg *rest.Config, node string) (*realAPI, error) {
	a := &realAPI{node: node, statuses: map[string][]corev1.PodStatus{}, watched: make(chan struct{})}
	c := rest.CopyConfig(cfg)
	if c.QPS == 0 {
		// client-go's default of 5 QPS would throttle VK's controllers.
		c.QPS, c.Burst = 200, 400
	}
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return rejections{rt, a} })
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("Config.APIServer: a client of %s: %w", cfg.Host, err)
	}
	a.Interface = client
	if err := a.clear(ctx); err != nil {
		return nil, fmt.Errorf("Config.APIServer: clearing %s of an earlier spec's objects: %w", cfg.Host, err)
	}
	if err := a.prepareNamespace(ctx); err != nil {
		return nil, fmt.Errorf("Config.APIServer: preparing namespace %s on %s: %w", Namespace, cfg.Host, err)
	}
	wctx, cancel := context.WithCancel(context.Background())
	a.stopWatch = cancel
	lw := cache.NewFilteredListWatchFromClient(client.CoreV1().RESTClient(), "pods", Namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", node).String()
	})
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: a.recordStatus}); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(a.watched)
		inf.Run(wctx.Done())
	}()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		a.Close()
		return nil, fmt.Errorf("Config.APIServer: the watch of pods on %s never synced: %w", cfg.Host, ctx.Err())
	}
	return a, nil
}

// prepareNamespace makes sure the suite's namespace has the service account
// the API server's ServiceAccount admission wants for every pod, which no
// controller manager creates when the API server runs alone.
func (a *realAPI) prepareNamespace(ctx context.Context) error {
	_, err := a.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	_, err = a.CoreV1().ServiceAccounts(Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("service account default: %w", err)
	}
	return nil
}

// clear deletes, at once, the suite's pods (those of Namespace bound to
// its node), the node and the node's lease, and waits until the pods are
// gone.
func (a *realAPI) clear(ctx context.Context) error {
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}
	pods := a.CoreV1().Pods(Namespace)
	onNode := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", a.node).String()}
	if err := pods.DeleteCollection(ctx, now, onNode); err != nil {
		return fmt.Errorf("pods of node %s: %w", a.node, err)
	}
	if err := a.CoreV1().Nodes().Delete(ctx, a.node, now); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("node %s: %w", a.node, err)
	}
	if err := a.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, a.node, now); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("lease %s/%s: %w", corev1.NamespaceNodeLease, a.node, err)
	}
	for {
		left, err := pods.List(ctx, onNode)
		if err != nil {
			return err
		}
		if len(left.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d pods of node %s still there: %w", len(left.Items), a.node, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (a *realAPI) recordStatus(oldObj, newObj any) {
	old, ok1 := oldObj.(*corev1.Pod)
	cur, ok2 := newObj.(*corev1.Pod)
	if !ok1 || !ok2 || apiequality.Semantic.DeepEqual(old.Status, cur.Status) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	k := cur.Namespace + "/" + cur.Name
	a.statuses[k] = append(a.statuses[k], *cur.Status.DeepCopy())
}

func (a *realAPI) StatusHistory(namespace, name string) []corev1.PodStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]corev1.PodStatus(nil), a.statuses[namespace+"/"+name]...)
}

func (a *realAPI) Rejected() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.rejected...)
}

// Close stops the watch and removes the spec's objects (within 30s).
func (a *realAPI) Close() {
	a.stopWatch()
	<-a.watched
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = a.clear(ctx)
}

// rejections is the transport of a realAPI's client: it notes every write
// the API server answers 400 Bad Request or 422 Unprocessable Entity (the
// object is invalid), with the API server's message.
type rejections struct {
	next http.RoundTripper
	a    *realAPI
}

func (r rejections) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil || req.Method == http.MethodGet || (resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusUnprocessableEntity) {
		return resp, err
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if rerr != nil {
		return resp, nil
	}
	msg := strings.TrimSpace(string(body))
	// The body is a Status in the request's encoding (protobuf, by default,
	// for the core API).
	if obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil); err == nil {
		if st, ok := obj.(*metav1.Status); ok && st.Message != "" {
			msg = st.Message
		}
	}
	r.a.mu.Lock()
	r.a.rejected = append(r.a.rejected, fmt.Sprintf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, msg))
	r.a.mu.Unlock()
	return resp, nil
}
