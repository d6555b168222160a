package conformance

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onsi/gomega"
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

	mu        sync.Mutex
	pods      []*v1.Pod                             // created by the spec, removed at cleanup
	last      map[types.UID]*pkgcontainer.PodStatus // what GetPodStatus last returned
	published map[types.UID]v1.PodStatus            // what the agent published last (agent.go)
	diagnosed map[string]bool                       // what diagnose has noted
	// strictSync makes an unexpected SyncPod error fail the spec (the
	// specs that own it); elsewhere it is noted and the spec goes on.
	strictSync bool

	startCancel context.CancelFunc
	startDone   chan struct{} // closed once Start has returned
	startErr    error         // set before startDone is closed
	startPanic  string        // set before startDone is closed
}

// newPodEnv builds the provider of the spec, registers its cleanup and,
// when start is true, runs Start in its own goroutine.
func newPodEnv(b *base, start bool) *podEnv {
	e := &podEnv{base: b, rc: kri.NewReasonCache(), last: map[types.UID]*pkgcontainer.PodStatus{}, published: map[types.UID]v1.PodStatus{}, diagnosed: map[string]bool{}}
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
			Labels:    map[string]string{"kri-conformance/spec": e.spec.id},
		},
		Spec: v1.PodSpec{
			RestartPolicy:                 policy,
			Containers:                    containers,
			TerminationGracePeriodSeconds: &grace,
		},
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

// --- the pod worker loop ---

// syncOnce is one sync of kuscia's pod worker (agent.go): GetPodStatus,
// the status the agent publishes from it, and, unless its phase is
// terminal, SyncPod with the same runtime status; then GetPodStatus again,
// which it returns (the status the next sync starts from). Unless allowErr,
// SyncPod should return nil: the agent reports an error as a failed sync
// (pod_workers.go managePodLoop). Only the specs that own that promise
// (strictSync) fail on it; the others note it and go on.
func (e *podEnv) syncOnce(pod *v1.Pod, allowErr bool) *pkgcontainer.PodStatus {
	after, err := e.agentSync(pod)
	if err != nil && !allowErr {
		msg := fmt.Sprintf("SyncPod of pod %s returned an unexpected error: %v (kuscia's agent would report the sync as failed: pod_workers.go logs \"Error syncing pod\")", podRef(pod), err)
		if !e.strictSync {
			// The agent only logs it: the spec goes on, and
			// KRI-POD-001 and KRI-POD-003 judge the error.
			e.diagnose("%s; KRI-POD-001 and KRI-POD-003 check this", msg)
			return after
		}
		e.fail(msg)
	}
	return after
}

// agentSync is syncOnce that returns SyncPod's error (nil when the agent
// did not call it); ErrNotSupported skips the spec.
func (e *podEnv) agentSync(pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	st, serr := e.tryStatus(pod)
	if serr != nil {
		// The agent would skip this sync; the spec goes on with the
		// status of the last sync, and KRI-POD-002 judges the error.
		e.diagnose("%s: kuscia's pod worker would not sync the pod (KRI-POD-002 checks GetPodStatus of a pod the provider has not seen)", serr)
		st = e.lastStatus(pod)
	}
	var err error
	if api := e.publish(pod, st); !terminalPhase(api.Phase) {
		if err = e.syncPod(pod, st); err != nil {
			e.skipIfNotSupported("SyncPod", err)
		}
	}
	after := e.status(pod)
	e.setLast(pod, after)
	return after, err
}

// syncUntil repeats syncOnce until cond holds (state timeout). SyncPod must
// succeed in every round.
func (e *podEnv) syncUntil(pod *v1.Pod, desc string, cond func(g gomega.Gomega, st *pkgcontainer.PodStatus)) *pkgcontainer.PodStatus {
	return e.syncUntilOpt(pod, false, desc, cond)
}

func (e *podEnv) syncUntilOpt(pod *v1.Pod, allowErr bool, desc string, cond func(g gomega.Gomega, st *pkgcontainer.PodStatus)) *pkgcontainer.PodStatus {
	var st *pkgcontainer.PodStatus
	e.eventually(fmt.Sprintf("pod %s: %s", podRef(pod), desc), func(g gomega.Gomega) {
		st = e.syncOnce(pod, allowErr)
		cond(g, st)
	})
	return st
}

// syncUntilRunning syncs pod until each of its app containers runs.
func (e *podEnv) syncUntilRunning(pod *v1.Pod) *pkgcontainer.PodStatus {
	return e.syncUntil(pod, "every app container running", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		for _, c := range pod.Spec.Containers {
			if runningOf(st, c.Name) == nil {
				s := e.publishedOf(pod)
				g.Expect(runningOf(st, c.Name)).NotTo(gomega.BeNil(), "container %q is not running; status: %s; kuscia's agent publishes: %s", c.Name, describeStatus(st), describeAPIStatus(s))
			}
		}
	})
}

// holdSync keeps syncing pod for the stable window; cond must hold in every
// round.
func (e *podEnv) holdSync(pod *v1.Pod, allowErr bool, desc string, cond func(g gomega.Gomega, st *pkgcontainer.PodStatus)) {
	e.consistently(fmt.Sprintf("pod %s: %s", podRef(pod), desc), func(g gomega.Gomega) {
		cond(g, e.syncOnce(pod, allowErr))
	})
}

// hold queries pod (no SyncPod) for the stable window; cond must hold.
func (e *podEnv) hold(pod *v1.Pod, desc string, cond func(g gomega.Gomega, st *pkgcontainer.PodStatus)) {
	e.consistently(fmt.Sprintf("pod %s: %s", podRef(pod), desc), func(g gomega.Gomega) {
		cond(g, e.status(pod))
	})
}

// runningPod is what a pod worker hands KillPod: the running pod built
// from the latest status.
func (e *podEnv) runningPod(pod *v1.Pod) pkgcontainer.Pod {
	st := e.status(pod)
	return pkgcontainer.ConvertPodStatusToRunningPod(e.runtimeName(st), st)
}

// minimumGraceSecs is the shortest grace period a provider may give instead
// of a shorter one: the kubelet's runtime never gives less
// (kuberuntime_container.go, minimumGracePeriodInSeconds). Specs that need a
// grace period to be clearly longer than another add it.
const minimumGraceSecs = 2

// agentGrace is the gracePeriodOverride a node agent hands KillPod for pod:
// DeletionGracePeriodSeconds, else TerminationGracePeriodSeconds, at least 1
// (the kubelet's pod_workers.go calculateEffectiveGracePeriod; kuscia's
// pod_workers.go does the same).
func agentGrace(pod *v1.Pod) *int64 {
	g := int64(1)
	switch {
	case pod == nil:
	case pod.DeletionGracePeriodSeconds != nil:
		g = *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		g = *pod.Spec.TerminationGracePeriodSeconds
	}
	g = max(g, 1)
	return &g
}

// killAsAgent is kill with the override a node agent computes for pod.
func (e *podEnv) killAsAgent(pod *v1.Pod) time.Duration {
	return e.kill(pod, agentGrace(pod))
}

// kill terminates pod as kuscia's agent does (terminate) until the
// termination succeeds: KillPod must return nil, and while GetPodStatus
// right after still reports a running container the agent fails the
// termination and tries again (noted, not failed: KRI-POD-014 judges it).
// It returns how long it took from the first KillPod to the successful
// termination.
func (e *podEnv) kill(pod *v1.Pod, grace *int64) time.Duration {
	start := time.Now()
	// A provider whose KillPod returns early stops the containers at the
	// end of the grace period: the retries last that long and a little.
	effective := grace
	if effective == nil {
		effective = agentGrace(pod)
	}
	within := 2*e.st.t.Stable + time.Duration(max(*effective, minimumGraceSecs))*time.Second
	e.eventuallyFor(within, fmt.Sprintf("pod %s terminated as kuscia's agent terminates it (KillPod, then no running container in GetPodStatus)", podRef(pod)), func(g gomega.Gomega) {
		running, err := e.terminate(pod, grace)
		e.noError("KillPod", err)
		if len(running) > 0 {
			e.diagnose("%s (KRI-POD-014 checks this; the agent tries again)", killGuardFailure(pod, running))
		}
		g.Expect(running).To(gomega.BeEmpty(), "%s", killGuardFailure(pod, running))
	})
	return time.Since(start)
}

// expectNothingRunning fails when GetPodStatus reports a running container
// of pod.
func (e *podEnv) expectNothingRunning(pod *v1.Pod, after string) {
	st := e.status(pod)
	for _, c := range st.ContainerStatuses {
		if c.State == pkgcontainer.ContainerStateRunning {
			e.failf("%s, container %q (%s) of pod %s is still running: kuscia's agent would fail the termination (\"detected running containers after a successful KillPod\") and the pod could not finish terminating; status: %s", after, c.Name, c.ID.String(), podRef(pod), describeStatus(st))
		}
	}
}

// --- reading statuses ---

// instancesOf returns the statuses of the instances of container name.
func instancesOf(st *pkgcontainer.PodStatus, name string) []*pkgcontainer.Status {
	var out []*pkgcontainer.Status
	for _, c := range st.ContainerStatuses {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// runningOf returns the running instance of container name, or nil.
func runningOf(st *pkgcontainer.PodStatus, name string) *pkgcontainer.Status {
	for _, c := range instancesOf(st, name) {
		if c.State == pkgcontainer.ContainerStateRunning {
			return c
		}
	}
	return nil
}

// exitedOf returns the exited instances of container name.
func exitedOf(st *pkgcontainer.PodStatus, name string) []*pkgcontainer.Status {
	var out []*pkgcontainer.Status
	for _, c := range instancesOf(st, name) {
		if c.State == pkgcontainer.ContainerStateExited {
			out = append(out, c)
		}
	}
	return out
}

// succeededOf returns an instance of container name that exited 0, or nil.
func succeededOf(st *pkgcontainer.PodStatus, name string) *pkgcontainer.Status {
	for _, c := range exitedOf(st, name) {
		if c.ExitCode == 0 {
			return c
		}
	}
	return nil
}

// describeStatus renders the containers of st for failure messages.
func describeStatus(st *pkgcontainer.PodStatus) string {
	if st == nil {
		return "<nil>"
	}
	if len(st.ContainerStatuses) == 0 {
		return "no containers"
	}
	parts := make([]string, 0, len(st.ContainerStatuses))
	for _, c := range st.ContainerStatuses {
		s := fmt.Sprintf("%s[%s %s", c.Name, c.ID.ID, c.State)
		if c.State == pkgcontainer.ContainerStateExited {
			s += fmt.Sprintf(" code=%d", c.ExitCode)
		}
		parts = append(parts, s+"]")
	}
	return strings.Join(parts, " ")
}

// canonicalStatus renders what the contract says of st in a form that does
// not depend on the order of its lists, to compare two answers.
func canonicalStatus(st *pkgcontainer.PodStatus) string {
	if st == nil {
		return "<nil>"
	}
	instances := func(ss []*pkgcontainer.Status) string {
		lines := make([]string, 0, len(ss))
		for _, c := range ss {
			if c == nil {
				lines = append(lines, "<nil>")
				continue
			}
			lines = append(lines, fmt.Sprintf("%s[%s %s code=%d image=%q restarts=%d created=%s started=%s finished=%s reason=%q]",
				c.Name, c.ID.String(), c.State, c.ExitCode, c.Image, c.RestartCount,
				c.CreatedAt.Format(time.RFC3339Nano), c.StartedAt.Format(time.RFC3339Nano), c.FinishedAt.Format(time.RFC3339Nano), c.Reason))
		}
		slices.Sort(lines)
		return strings.Join(lines, " ")
	}
	sandboxes := make([]string, 0, len(st.SandboxStatuses))
	for _, sb := range st.SandboxStatuses {
		if sb == nil {
			sandboxes = append(sandboxes, "<nil>")
			continue
		}
		sandboxes = append(sandboxes, sb.Id+"="+sb.State.String())
	}
	slices.Sort(sandboxes)
	return fmt.Sprintf("pod %s/%s (%s) IPs %v; containers: %s; active: %s; sandboxes: %s",
		st.Namespace, st.Name, st.ID, st.IPs, instances(st.ContainerStatuses), instances(st.ActiveContainerStatuses), strings.Join(sandboxes, " "))
}

// canonicalPod renders a pod of GetPods independently of the order of its
// containers and sandboxes.
func canonicalPod(p *pkgcontainer.Pod) string {
	list := func(cs []*pkgcontainer.Container) string {
		lines := make([]string, 0, len(cs))
		for _, c := range cs {
			if c == nil {
				lines = append(lines, "<nil>")
				continue
			}
			lines = append(lines, fmt.Sprintf("%s=%s/%s", c.Name, c.ID.String(), c.State))
		}
		slices.Sort(lines)
		return strings.Join(lines, " ")
	}
	return fmt.Sprintf("pod %s/%s (%s); containers: %s; sandboxes: %s", p.Namespace, p.Name, p.ID, list(p.Containers), list(p.Sandboxes))
}

// copyStatus copies st deeply enough to notice a provider mutating it.
func copyStatus(st *pkgcontainer.PodStatus) *pkgcontainer.PodStatus {
	if st == nil {
		return nil
	}
	cp := *st
	cp.IPs = slices.Clone(st.IPs)
	cp.ContainerStatuses = copyStatuses(st.ContainerStatuses)
	cp.ActiveContainerStatuses = copyStatuses(st.ActiveContainerStatuses)
	cp.SandboxStatuses = slices.Clone(st.SandboxStatuses)
	return &cp
}

func copyStatuses(in []*pkgcontainer.Status) []*pkgcontainer.Status {
	if in == nil {
		return nil
	}
	out := make([]*pkgcontainer.Status, len(in))
	for i, s := range in {
		if s != nil {
			c := *s
			c.Mounts = slices.Clone(s.Mounts)
			out[i] = &c
		}
	}
	return out
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
