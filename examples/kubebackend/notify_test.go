package kubebackend_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/retry"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/examples/kubebackend"
	"github.com/kri-kit/testkit/kri"
)

// The provider's calls of the agent's HandlePodSyncByUID (kri.PodSyncNotifier).

// syncCall is one call of HandlePodSyncByUID, with what the provider's
// GetPodStatus showed of the pod when it came (as the agent's sync reads
// it).
type syncCall struct {
	uid  types.UID
	seen string
}

// syncRecorder is the agent's PodSyncHandler in these tests: it records
// every call, and what look says of the pod of its UID at that moment.
type syncRecorder struct {
	look func(types.UID) string

	mu    sync.Mutex
	calls []syncCall
}

func (r *syncRecorder) HandlePodSyncByUID(uid types.UID) {
	seen := r.look(uid)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, syncCall{uid, seen})
}

func (r *syncRecorder) all() []syncCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]syncCall(nil), r.calls...)
}

// waitCall waits until a call for uid, after the first from, saw want, and
// returns the calls so far. It gives up shortly before the test's deadline,
// with the calls seen.
func (r *syncRecorder) waitCall(t *testing.T, from int, uid types.UID, want string) []syncCall {
	t.Helper()
	deadline, hasDeadline := t.Deadline()
	for {
		calls := r.all()
		for _, c := range calls[min(from, len(calls)):] {
			if c.uid == uid && c.seen == want {
				return calls
			}
		}
		if hasDeadline && time.Until(deadline) < 10*time.Second {
			t.Fatalf("no HandlePodSyncByUID(%s) that saw %q came; the calls: %v", uid, want, calls)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// appState says what st shows of container app: "none", or its state and,
// for an exited run, its exit code.
func appState(st *pkgcontainer.PodStatus, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var newest *pkgcontainer.Status
	for _, c := range st.ContainerStatuses {
		if c.Name == "app" && (newest == nil || c.RestartCount > newest.RestartCount) {
			newest = c
		}
	}
	switch {
	case newest == nil:
		return "none"
	case newest.State == pkgcontainer.ContainerStateExited:
		return fmt.Sprintf("exited %d", newest.ExitCode)
	}
	return string(newest.State)
}

// A backend pod's status written by the simulated kubelet reaches the agent
// as a call with the UID of the agent's pod: the start and the exit of its
// container, and the mirror's deletion by the backend.
func TestProviderNotifiesWhenTheBackendChangesAMirror(t *testing.T) {
	e := newSim(t)
	p, err := kubebackend.New(kubebackend.Options{Client: e.client, Namespace: testNS, NodeName: testNode, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pod := agentPod("notified", v1.RestartPolicyNever, ctr("app", "sh", "-c", "sleep 3; exit 3"))
	rec := &syncRecorder{look: func(uid types.UID) string {
		if uid != pod.UID {
			return "another pod"
		}
		return appState(p.GetPodStatus(t.Context(), pod))
	}}
	p.SetPodSyncHandler(rec)
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Start(t.Context()) })
	t.Cleanup(func() { p.Stop(); wg.Wait() })

	// One SyncPod, as kuscia's agent makes for a new pod; the rest comes
	// from the backend.
	if err := p.SyncPod(t.Context(), pod, nil, kri.NewReasonCache()); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	calls := rec.waitCall(t, 0, pod.UID, string(pkgcontainer.ContainerStateRunning))
	e.step(3 * time.Second)
	calls = rec.waitCall(t, len(calls), pod.UID, "exited 3")

	// The backend deletes the mirror on its own (an eviction).
	name := kubebackend.MirrorName(pod.Namespace, pod.Name, pod.UID)
	if err := e.client.CoreV1().Pods(testNS).Delete(t.Context(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
		t.Fatalf("deleting the mirror: %v", err)
	}
	calls = rec.waitCall(t, len(calls), pod.UID, "none")
	for _, c := range calls {
		if c.uid != pod.UID {
			t.Errorf("HandlePodSyncByUID(%s): want only the agent pod's UID %s; the calls: %v", c.uid, pod.UID, calls)
		}
	}
}

// A SyncPod that fails on a call to the backend's API server asks for
// another sync SyncRetryPeriod later (the informer has nothing to report).
func TestProviderAsksForASyncAfterAFailedAPICall(t *testing.T) {
	client := kubebackend.NewFakeClientset()
	fail := true
	var mu sync.Mutex
	client.PrependReactor("create", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			fail = false
			return true, nil, errors.New("the API server is unavailable")
		}
		return false, nil, nil
	})
	p, err := kubebackend.New(kubebackend.Options{Client: client, Namespace: testNS, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(t0)
	p.Notifier.Clock = clk
	pod := agentPod("retried", v1.RestartPolicyNever, ctr("app", "sleep", "infinity"))
	rec := &syncRecorder{look: func(types.UID) string { return "" }}
	p.SetPodSyncHandler(rec)
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Start(t.Context()) })
	t.Cleanup(func() { p.Stop(); wg.Wait() })

	if err := p.SyncPod(t.Context(), pod, nil, kri.NewReasonCache()); err == nil {
		t.Fatal("SyncPod succeeded; the reactor fails the mirror's create")
	}
	if n := p.Pending(pod.UID); n != 1 {
		t.Fatalf("%d pending notifications after the failed SyncPod, want 1", n)
	}
	clk.Step(kubebackend.SyncRetryPeriod - time.Millisecond)
	if calls := rec.all(); len(calls) != 0 {
		t.Fatalf("calls before the retry period was over: %v", calls)
	}
	clk.Step(time.Millisecond)
	rec.waitCall(t, 0, pod.UID, "")
}

// The kuscia-faithful mode calls where K8sProvider calls: on an update and
// a delete of a backend pod labelled with its node, not on an add, with the
// UID of the pod-uid label.
func TestKusciaFaithfulNotifiesAsK8sProvider(t *testing.T) {
	e := newSim(t)
	k := newKusciaWith(t, e, 0)
	rec := &syncRecorder{look: func(types.UID) string { return "" }}
	k.SetPodSyncHandler(rec)
	startKuscia(t, k)

	pods := e.client.CoreV1().Pods(testNS)
	backendPod := func(name, node, uid string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name, Labels: map[string]string{
			kubebackend.KusciaLabelNode: node, kubebackend.KusciaLabelPodUID: uid,
		}}, Spec: v1.PodSpec{NodeName: "elsewhere", Containers: []v1.Container{ctr("app", "sleep", "infinity")}}}
	}
	touch := func(name, value string) {
		t.Helper()
		// The backend writes the pod's status too: an Update that meets a
		// newer resourceVersion is retried on the pod as it is then.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			bk, err := pods.Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			bk.Annotations = map[string]string{"touched": value}
			_, err = pods.Update(t.Context(), bk, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// The informer may list the probe pod or see its creation (an add,
	// which calls nothing): a probe pod, touched until its call comes,
	// shows the informer's watch running.
	if _, err := pods.Create(t.Context(), backendPod("probe", kusciaAgent, "uid-probe"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline, _ := t.Deadline()
	for i := 0; len(rec.all()) == 0; i++ {
		if time.Until(deadline) < 10*time.Second {
			t.Fatal("no call came for updates of a backend pod of the agent's node")
		}
		touch("probe", fmt.Sprint(i))
		time.Sleep(5 * time.Millisecond)
	}
	mark := len(rec.waitCall(t, 0, "uid-probe", ""))
	since := func() []syncCall {
		calls := rec.all()
		for len(calls) > mark && calls[mark].uid == "uid-probe" { // late calls of the probe
			mark++
		}
		return calls[mark:]
	}

	for _, bk := range []*v1.Pod{backendPod("mine", kusciaAgent, "uid-mine"), backendPod("other", "another-node", "uid-other")} {
		if _, err := pods.Create(t.Context(), bk, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	touch("other", "yes")
	touch("mine", "yes") // last: its call comes after every event before
	rec.waitCall(t, mark, "uid-mine", "")
	if calls := since(); len(calls) != 1 || calls[0].uid != "uid-mine" {
		t.Fatalf("after two adds and two updates, one of another node's pod: %v, want the one update of mine", calls)
	}
	// Deleted at once (a graceful delete is an update: deletionTimestamp).
	if err := pods.Delete(t.Context(), "mine", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
		t.Fatal(err)
	}
	for len(since()) < 2 && time.Until(deadline) > 10*time.Second {
		time.Sleep(2 * time.Millisecond)
	}
	if calls := since(); len(calls) != 2 || calls[1].uid != "uid-mine" {
		t.Fatalf("after the delete of mine: %v, want a second call for uid-mine", calls)
	}
}

// While the cache's lag hides a backend pod the faithful mode created, its
// updates reach the agent only once the cache shows them: every call finds
// the pod in GetPodStatus.
func TestKusciaFaithfulNotifiesOnceTheLaggingCacheHasThePod(t *testing.T) {
	e := newSim(t)
	k := newKusciaWith(t, e, 300*time.Millisecond)
	pod := agentPod("lagged", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	pod.Namespace = testNS
	// What a call finds: "hidden" while the cache hides the backend pod
	// (GetPods, which reads the cache as GetPodStatus does, leaves it out);
	// else the app container's state, "none" before the backend has
	// reported one (a loaded machine's backend may take longer than the lag).
	rec := &syncRecorder{look: func(types.UID) string {
		pods, err := k.GetPods(t.Context(), true)
		if err != nil {
			return "error: " + err.Error()
		}
		if !slices.ContainsFunc(pods, func(p *pkgcontainer.Pod) bool { return p.ID == pod.UID }) {
			return "hidden"
		}
		return appState(k.GetPodStatus(t.Context(), pod))
	}}
	k.SetPodSyncHandler(rec)
	startKuscia(t, k)
	if err := k.SyncPod(t.Context(), pod, nil, kri.NewReasonCache()); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	calls := rec.waitCall(t, 0, pod.UID, string(pkgcontainer.ContainerStateRunning))
	for _, c := range calls {
		if c.seen == "hidden" {
			t.Errorf("a call came while the cache hid the backend pod: %v", calls)
		}
	}
}

// newKusciaWith returns a KusciaFaithful bound to the test node of e with
// the cache lag given, not started.
func newKusciaWith(t *testing.T, e *simEnv, lag time.Duration) *kubebackend.KusciaFaithful {
	t.Helper()
	k, err := kubebackend.NewKusciaFaithful(kubebackend.Options{Client: e.client, Namespace: testNS, NodeName: testNode, Agent: kusciaAgent})
	if err != nil {
		t.Fatal(err)
	}
	k.SetCacheLag(lag)
	return k
}

// startKuscia runs k's Start until the test ends (its informers with it).
func startKuscia(t *testing.T, k *kubebackend.KusciaFaithful) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = k.Start(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}
