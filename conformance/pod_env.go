package conformance

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	apicorev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

func newUID() types.UID { return uuid.NewUUID() }

// stopHung records that Stop hung in a cleanup of this run.
var stopHung atomic.Bool

// podEnv drives one fresh PodProvider the way a kubelet pod worker does.
type podEnv struct {
	*base
	p  kri.PodProvider
	rc *kri.ReasonCache

	mu           sync.Mutex
	pods         []*v1.Pod                             // created by the spec, removed at cleanup
	last         map[types.UID]*pkgcontainer.PodStatus // what GetPodStatus last returned
	published    map[types.UID]v1.PodStatus            // what the agent published last (agent.go)
	diagnosed    map[string]bool                       // what diagnose has noted
	seen         map[types.UID]agentSeen               // the agent's last sync of each pod (agent_cadence.go)
	syncPodCalls map[types.UID]int                     // SyncPod calls of the agent's syncs, per pod
	// calls is the PodSyncHandler handed to the provider, notifier whether
	// it took one (kri.PodSyncNotifier).
	calls    *syncCalls
	notifier bool
	// strictSync makes an unexpected SyncPod error fail the spec (the
	// specs that own it); elsewhere it is noted and the spec goes on.
	strictSync bool

	// attempt is the try of slowTries under way (from 1), 0 outside one;
	// newPod labels the try's pods with it (TryLabel).
	attempt int

	startCancel context.CancelFunc
	startDone   chan struct{} // closed once Start has returned
	startErr    error         // set before startDone is closed
	startPanic  string        // set before startDone is closed
}

// newPodEnv builds the provider of the spec, registers its cleanup and,
// when start is true, runs Start in its own goroutine.
func newPodEnv(b *base, start bool) *podEnv {
	e := &podEnv{base: b, rc: kri.NewReasonCache(), last: map[types.UID]*pkgcontainer.PodStatus{}, published: map[types.UID]v1.PodStatus{}, diagnosed: map[string]bool{},
		seen: map[types.UID]agentSeen{}, syncPodCalls: map[types.UID]int{}, calls: newSyncCalls()}
	var p kri.PodProvider
	var err error
	b.do("NewPodProvider", func(context.Context) { p, err = b.st.cfg.NewPodProvider(b.ctx) })
	if err != nil {
		b.failf("NewPodProvider: %v", err)
	}
	if p == nil {
		b.fail("NewPodProvider returned a nil provider and no error")
	}
	e.p = p
	e.deferCleanup(e.cleanup)
	e.handOver()
	if start {
		e.start()
	}
	return e
}

// start runs Start in its own goroutine, as a node agent does.
func (e *podEnv) start() {
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	e.startCancel, e.startDone = cancel, done
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				e.startPanic = fmt.Sprintf("Start panicked: %v\n\n%s", r, debug.Stack())
			}
		}()
		e.startErr = e.p.Start(ctx)
	}()
}

// cleanup removes the pods of the spec (KillPod with grace 1, DeletePod),
// stops the provider and cancels Start's context. Problems are noted, not
// failed: the specs check these calls themselves. Calls that hang are
// abandoned after the call timeout.
func (e *podEnv) cleanup() {
	e.mu.Lock()
	pods := slices.Clone(e.pods)
	e.mu.Unlock()
	one := int64(1) // the shortest override an agent passes
	for _, pod := range pods {
		running := pkgcontainer.Pod{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
		var st *pkgcontainer.PodStatus
		var err error
		if cerr := e.try("GetPodStatus", func(ctx context.Context) { st, err = e.p.GetPodStatus(ctx, pod) }); cerr != nil {
			e.note("cleanup: " + firstLine(cerr.Error()))
		} else if err == nil && st != nil {
			running = pkgcontainer.ConvertPodStatusToRunningPod(e.runtimeName(st), st)
		}
		if cerr := e.try("KillPod", func(ctx context.Context) { err = e.p.KillPod(ctx, pod, running, &one) }); cerr != nil {
			e.note("cleanup: " + firstLine(cerr.Error()))
		} else if err != nil {
			e.note(fmt.Sprintf("cleanup: KillPod of pod %s: %v", podRef(pod), err))
		}
		if cerr := e.try("DeletePod", func(ctx context.Context) { err = e.p.DeletePod(ctx, pod) }); cerr != nil {
			e.note("cleanup: " + firstLine(cerr.Error()))
		} else if err != nil {
			e.note(fmt.Sprintf("cleanup: DeletePod of pod %s: %v", podRef(pod), err))
		}
	}
	// A provider whose Stop hung in an earlier cleanup of this run fails
	// the Stop specs; later cleanups do not wait the full call timeout again.
	within := e.st.t.Call
	if stopHung.Load() {
		within = e.st.t.Stable
	}
	if err := e.tryWithin("Stop", within, func(context.Context) { e.p.Stop() }); err != nil {
		if ce, ok := err.(*callError); ok && ce.hung {
			stopHung.Store(true)
		}
		e.note("cleanup: " + firstLine(err.Error()))
	}
	if e.startCancel != nil {
		e.startCancel()
	}
}

func (e *podEnv) w() Workloads { return e.st.w }

// named gives c its name.
func named(name string, c v1.Container) v1.Container {
	c.Name = name
	return c
}

// newPod returns a new pod of the spec (unique name and UID, the grace
// period of the settings) with the given restart policy and app containers,
// and remembers it for cleanup.
func (e *podEnv) newPod(name string, policy v1.RestartPolicy, containers ...v1.Container) *v1.Pod {
	grace := e.st.graceSecs
	pod := &v1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      strings.ToLower(e.spec.id) + "-" + name + "-" + uniqueSuffix()[:6],
			Namespace: e.st.cfg.Namespace,
			UID:       newUID(),
			Labels:    map[string]string{SpecLabel: e.spec.id},
		},
		Spec: v1.PodSpec{
			RestartPolicy:                 policy,
			Containers:                    containers,
			TerminationGracePeriodSeconds: &grace,
		},
	}
	if e.attempt > 0 {
		pod.Labels[TryLabel] = strconv.Itoa(e.attempt)
	}
	if e.w().Pod != nil {
		e.w().Pod(pod)
	}
	defaultPod(pod)
	e.checkNames(pod)
	e.track(pod)
	return pod
}

// checkNames fails the spec when the pod or one of its containers has a
// name an API server rejects: a bug of the suite (or of Workloads.Pod) that
// only a provider backed by a real API server would otherwise show.
func (e *podEnv) checkNames(pod *v1.Pod) {
	var errs []string
	errs = append(errs, validation.IsDNS1123Subdomain(pod.Name)...)
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, fmt.Sprintf("container %q: %s", c.Name, msg))
			}
		}
	}
	if len(errs) > 0 {
		e.failf("the pod %q built for this spec is invalid for an API server (a bug in the suite or in Workloads.Pod): %s", pod.Name, strings.Join(errs, "; "))
	}
}

// defaultPod fills in the fields the API server defaults (security context,
// DNS policy, termination message path, ...): a node agent only ever sees
// defaulted pods, and the kubelet's runtime relies on some of them (it sets
// up host namespaces only when pod.Spec.SecurityContext is set).
func defaultPod(pod *v1.Pod) {
	apicorev1.SetObjectDefaults_Pod(pod)
}

// setInitContainers gives pod its init containers, defaulted as the API
// server defaults them.
func setInitContainers(pod *v1.Pod, cs ...v1.Container) {
	pod.Spec.InitContainers = cs
	defaultPod(pod)
}

func (e *podEnv) track(pod *v1.Pod) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pods = append(e.pods, pod)
}

// runtimeName is what ConvertPodStatusToRunningPod is given.
func (e *podEnv) runtimeName(st *pkgcontainer.PodStatus) string {
	if e.st.cfg.RuntimeName != "" {
		return e.st.cfg.RuntimeName
	}
	for _, c := range st.ContainerStatuses {
		if c != nil && c.ID.Type != "" {
			return c.ID.Type
		}
	}
	return "kri"
}

// emptyStatus is the status a pod worker has for a pod it never saw.
func emptyStatus(pod *v1.Pod) *pkgcontainer.PodStatus {
	return &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
}

func (e *podEnv) lastStatus(pod *v1.Pod) *pkgcontainer.PodStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	if st := e.last[pod.UID]; st != nil {
		return st
	}
	return emptyStatus(pod)
}

func (e *podEnv) setLast(pod *v1.Pod, st *pkgcontainer.PodStatus) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.last[pod.UID] = st
}

func podRef(pod *v1.Pod) string {
	if pod == nil {
		return "<nil>"
	}
	return pod.Namespace + "/" + pod.Name
}

// --- guarded provider calls: a hang or a panic fails the spec ---

func (e *podEnv) syncPod(pod *v1.Pod, status *pkgcontainer.PodStatus) error {
	var err error
	e.do("SyncPod", func(ctx context.Context) { err = e.p.SyncPod(ctx, pod, status, e.rc) })
	return err
}

// tryStatus is GetPodStatus of pod with its error; ErrNotSupported skips
// the spec, and a nil status or container status fails it (status).
func (e *podEnv) tryStatus(pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	var st *pkgcontainer.PodStatus
	var err error
	e.do("GetPodStatus", func(ctx context.Context) { st, err = e.p.GetPodStatus(ctx, pod) })
	if err != nil {
		e.skipIfNotSupported("GetPodStatus", err)
		return nil, fmt.Errorf("GetPodStatus of pod %s: %w", podRef(pod), err)
	}
	return e.checkStatus(pod, st), nil
}

// status returns GetPodStatus of pod. An error, a nil status or a nil
// container status fails the spec: kuscia's agent cannot sync a pod without
// its status (pod_workers.go fails the sync; pods_controller.go syncPod and
// pod.go convertToAPIContainerStatuses dereference both). A status that
// names another pod is only noted: the agent reads ID and Namespace only
// through ConvertPodStatusToRunningPod into KillPod, and KRI-POD-084 checks
// them.
func (e *podEnv) status(pod *v1.Pod) *pkgcontainer.PodStatus {
	var st *pkgcontainer.PodStatus
	var err error
	e.do("GetPodStatus", func(ctx context.Context) { st, err = e.p.GetPodStatus(ctx, pod) })
	e.noError("GetPodStatus", err)
	return e.checkStatus(pod, st)
}

// checkStatus fails the spec for a nil status or container status of pod,
// and notes one that names another pod.
func (e *podEnv) checkStatus(pod *v1.Pod, st *pkgcontainer.PodStatus) *pkgcontainer.PodStatus {
	if st == nil {
		e.failf("GetPodStatus of pod %s returned a nil status and no error: kuscia's agent would crash syncing it (pods_controller.go syncPod writes podStatus.IPs)", podRef(pod))
	}
	if st.ID != pod.UID || st.Name != pod.Name || st.Namespace != pod.Namespace {
		e.diagnose("GetPodStatus of pod %s (UID %s) returned a status for %s/%s (UID %q): kuscia's agent hands these to KillPod as the running pod's ID, name and namespace (ConvertPodStatusToRunningPod); KRI-POD-084 checks them",
			podRef(pod), pod.UID, st.Namespace, st.Name, st.ID)
	}
	for _, c := range st.ContainerStatuses {
		if c == nil {
			e.failf("GetPodStatus of pod %s returned a nil container status: kuscia's agent would crash converting it (pod.go convertToAPIContainerStatuses)", podRef(pod))
		}
	}
	return st
}

func (e *podEnv) getPods(all bool) []*pkgcontainer.Pod {
	var pods []*pkgcontainer.Pod
	var err error
	e.do("GetPods", func(ctx context.Context) { pods, err = e.p.GetPods(ctx, all) })
	e.noError("GetPods", err)
	return pods
}

func (e *podEnv) killPod(pod *v1.Pod, running pkgcontainer.Pod, grace *int64) error {
	var err error
	e.do("KillPod", func(ctx context.Context) { err = e.p.KillPod(ctx, pod, running, grace) })
	return err
}

func (e *podEnv) deletePod(pod *v1.Pod) error {
	var err error
	e.do("DeletePod", func(ctx context.Context) { err = e.p.DeletePod(ctx, pod) })
	return err
}

func (e *podEnv) cleanupPods(pods []*v1.Pod, running []*pkgcontainer.Pod, possibly map[types.UID]sets.Empty) error {
	if !e.spec.alone {
		// A spec of the suite that calls CleanupPods must run alone under
		// Config.Parallel, or it stops the pods of the specs beside it.
		e.failf("internal error of the suite: %s calls CleanupPods but is not marked alone", e.spec.id)
	}
	var err error
	e.do("CleanupPods", func(ctx context.Context) { err = e.p.CleanupPods(ctx, pods, running, possibly) })
	return err
}

func (e *podEnv) refresh(pod *v1.Pod, st *v1.PodStatus) {
	e.do("RefreshPodStatus", func(context.Context) { e.p.RefreshPodStatus(pod, st) })
}

// ctxErrOK reports whether err is what a call with a cancelled context may
// return: nil (the work was done anyway), the context's error, wrapped, or
// the gRPC status a remote call reports for it (codes Canceled and
// DeadlineExceeded), as a CRI runtime behind k8s.io/cri-client does.
func ctxErrOK(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.Canceled, codes.DeadlineExceeded:
		return true
	}
	return false
}

// withEnv returns c with the given variables, in order (name, value, ...).
func withEnv(c v1.Container, kv ...string) v1.Container {
	for i := 0; i+1 < len(kv); i += 2 {
		c.Env = append(c.Env, v1.EnvVar{Name: kv[i], Value: kv[i+1]})
	}
	return c
}

// shell is the Shell workload running script, named name.
func (e *podEnv) shell(name, script string) v1.Container {
	return named(name, e.w().Shell(script))
}

// The labels of the pods the suite makes, for a provider's logs and for
// tests that wrap a provider to single out a spec's pods.
const (
	// SpecLabel is on every pod: the ID of the spec that made it.
	SpecLabel = "kri-conformance/spec"
	// TryLabel is on the pods of a spec that checks a real process against
	// a wall-clock window and, when the first try misses on a loaded
	// machine, tries again with a longer one (README, "On a loaded
	// machine"): the number of the try, from 1.
	TryLabel = "kri-conformance/try"
)

// slowTries runs a spec whose check needs a real process to act within
// wall-clock time the spec cannot wait on (a server to answer a probe
// before its container removes the file, a hook to run while its container
// runs, a file written before the first liveness probe) with the window
// first, then, when a loaded machine made that try miss, once more with
// the State timeout the user scales for a slow runtime (at least four
// times first). try runs one try on a pod of its own (n counts from 1;
// newPod labels the try's pods with it, TryLabel) and returns the pod and,
// when the try missed, what it saw; a passed try returns "". A missed try
// is noted and its pod killed as the agent would before the next; the last
// try's miss fails the spec. A provider that never does it fails both
// tries; one that is only slow passes the second, the fake the first.
func (e *podEnv) slowTries(first time.Duration, try func(n int, window time.Duration, last bool) (pod *v1.Pod, missed string)) {
	windows := []time.Duration{first, max(e.st.t.State, 4*first)}
	defer func() { e.attempt = 0 }()
	for i, w := range windows {
		last := i == len(windows)-1
		e.attempt = i + 1
		pod, missed := try(i+1, w, last)
		switch {
		case missed == "":
			return
		case last:
			e.failf("%s", missed)
		}
		e.note(fmt.Sprintf("pod %s: %s; trying again with %s, in case a loaded machine made this try miss", podRef(pod), missed, windows[i+1]))
		e.killUntilStopped(pod, agentGrace(pod))
	}
}
