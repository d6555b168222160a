package kubebackend_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/examples/kubebackend"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

// The kuscia-faithful mode in front of the simulated kubelet on a fake
// clock: each test checks one of the ways it behaves as kuscia's
// K8sProvider does, the conformance suite's verdict aside.

const kusciaAgent = "kuscia-node"

// newKuscia returns a KusciaFaithful bound to the test node of e; with start,
// its Start runs until the test ends. Its error is not checked: a test that
// ends within the 100ms client-go's WaitForCacheSync polls in ends Start
// before the caches are seen to sync, which is an error
// (TestKusciaFaithfulStartStop checks Start).
func newKuscia(t *testing.T, e *simEnv, start bool) *kubebackend.KusciaFaithful {
	t.Helper()
	k, err := kubebackend.NewKusciaFaithful(kubebackend.Options{Client: e.client, Namespace: testNS, NodeName: testNode, Agent: kusciaAgent})
	if err != nil {
		t.Fatal(err)
	}
	if start {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = k.Start(ctx) })
		t.Cleanup(func() { cancel(); wg.Wait() })
	}
	return k
}

// kusciaSynced syncs pod until cond holds for its backend pod in the API
// server and the informer has caught up with that (GetPodStatus shows each
// container's ID and state as the API does), and returns GetPodStatus then.
func kusciaSynced(t *testing.T, e *simEnv, k *kubebackend.KusciaFaithful, pod *v1.Pod, what string, cond func(*v1.Pod) bool) *pkgcontainer.PodStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := k.SyncPod(t.Context(), pod, nil, kri.NewReasonCache()); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("SyncPod: %v", err)
		}
		st, err := k.GetPodStatus(t.Context(), pod)
		if err != nil {
			t.Fatalf("GetPodStatus: %v", err)
		}
		if bk := e.get(pod.Name); bk != nil && cond(bk) && caughtUp(st, bk) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: synced for 10s without %s; backend pod %s", pod.Name, what, describe(e.get(pod.Name)))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// caughtUp reports whether st shows every app container of bk with its ID
// and its state.
func caughtUp(st *pkgcontainer.PodStatus, bk *v1.Pod) bool {
	if len(st.ContainerStatuses) != len(bk.Status.ContainerStatuses) {
		return false
	}
	for i, cs := range bk.Status.ContainerStatuses {
		want := pkgcontainer.ContainerStateCreated
		switch {
		case cs.State.Running != nil:
			want = pkgcontainer.ContainerStateRunning
		case cs.State.Terminated != nil:
			want = pkgcontainer.ContainerStateExited
		}
		if got := st.ContainerStatuses[i]; got.Name != cs.Name || got.ID.ID != cs.ContainerID || got.State != want {
			return false
		}
	}
	return true
}

func creates(e *simEnv) int {
	n := 0
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "pods" {
			n++
		}
	}
	return n
}

// 1: the backend pod is named by the pod's name; a pod created again under
// that name is served the old one; a create the informer has not seen yet
// makes the next SyncPod fail with AlreadyExists.
func TestKusciaFaithfulNamesBackendPodsByNameOnly(t *testing.T) {
	e := newSim(t)
	k := newKuscia(t, e, true)
	old := agentPod("web", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	kusciaSynced(t, e, k, old, "app running", func(p *v1.Pod) bool { return running(p, "app") })
	bk := e.get("web")
	for key, want := range map[string]string{
		kubebackend.KusciaLabelPodUID: string(old.UID), kubebackend.KusciaLabelNode: kusciaAgent,
		kubebackend.KusciaLabelNamespace: old.Namespace, "app": "web",
	} {
		if got := bk.Labels[key]; got != want {
			t.Errorf("backend pod label %s = %q, want %q", key, got, want)
		}
	}

	again := old.DeepCopy()
	again.UID = "uid-web-2"
	again.Spec.Containers[0].Image = "busybox:1.37"
	before := creates(e) // more than 1 when a SyncPod above met the informer lagging
	if err := k.SyncPod(t.Context(), again, nil, kri.NewReasonCache()); err != nil {
		t.Fatalf("SyncPod of the pod created again under its name = %v, want nil (the backend pod exists)", err)
	}
	if n := creates(e) - before; n != 0 {
		t.Errorf("SyncPod of the pod created again tried %d creates, want none", n)
	}
	if got := e.get("web"); got.Labels[kubebackend.KusciaLabelPodUID] != string(old.UID) || got.Spec.Containers[0].Image != "busybox:1.36" {
		t.Errorf("the backend pod changed: labels %v, image %s", got.Labels, got.Spec.Containers[0].Image)
	}
	st, err := k.GetPodStatus(t.Context(), again)
	if err != nil || len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].State != pkgcontainer.ContainerStateRunning {
		t.Errorf("GetPodStatus of the new pod = %+v, %v; want the old pod's running app", st, err)
	}

	// Informers never started: the cache stays empty.
	lag := newKuscia(t, e, false)
	fresh := agentPod("lag", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	if err := lag.SyncPod(t.Context(), fresh, nil, kri.NewReasonCache()); err != nil {
		t.Fatalf("first SyncPod: %v", err)
	}
	err = lag.SyncPod(t.Context(), fresh, nil, kri.NewReasonCache())
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("SyncPod while the cache lags = %v, want the API server's AlreadyExists", err)
	}
	if apierrors.IsAlreadyExists(err) {
		t.Errorf("SyncPod's error keeps the API error's type; K8sProvider formats it with %%v")
	}
}

// 2 and 7: the status as K8sProvider converts it; nothing in the
// ReasonCache and no error for a failed start.
func TestKusciaFaithfulStatus(t *testing.T) {
	e := newSim(t)
	k := newKuscia(t, e, true)
	pod := agentPod("crash", v1.RestartPolicyAlways, ctr("app", "sh", "-c", "exit 3"), ctr("side", "sleep", "infinity"))
	pod.Spec.InitContainers = []v1.Container{ctr("init", "sh", "-c", "exit 0")}
	st := kusciaSynced(t, e, k, pod, "app in back-off, side running", func(p *v1.Pod) bool {
		return waiting(p, "app", "CrashLoopBackOff") && running(p, "side")
	})
	if st.ID != "" || st.Name != pod.Name || st.Namespace != testNS {
		t.Errorf("status of %s/%s (UID %s) is for %s/%s (UID %q); want the backend namespace and no UID", pod.Namespace, pod.Name, pod.UID, st.Namespace, st.Name, st.ID)
	}
	if len(st.IPs) != 1 {
		t.Errorf("IPs %v, want the pod IP", st.IPs)
	}
	if len(st.ContainerStatuses) != 2 || len(st.SandboxStatuses) != 0 {
		t.Fatalf("want one instance per app container, no init container, no sandbox: %+v", st)
	}
	bk := e.get(pod.Name)
	for _, cs := range st.ContainerStatuses {
		if !cs.CreatedAt.IsZero() || cs.ID.Type != "" || cs.ID.ID != status(bk, cs.Name).ContainerID || !strings.HasPrefix(cs.ID.ID, kubebackend.RuntimeType+"://") {
			t.Errorf("%s: ID %#v, CreatedAt %s; want the API's ContainerID whole in ID, no Type, no CreatedAt", cs.Name, cs.ID, cs.CreatedAt)
		}
		switch cs.Name {
		case "app":
			if cs.State != pkgcontainer.ContainerStateCreated || cs.ExitCode != 0 || !cs.StartedAt.IsZero() {
				t.Errorf("app in back-off after exit 3: %+v; want created, no exit code, no start", cs)
			}
		case "side":
			if want := t0.Truncate(time.Second); cs.State != pkgcontainer.ContainerStateRunning || !cs.StartedAt.Equal(want) {
				t.Errorf("side: %+v; want running since %s", cs, want)
			}
		}
	}

	fails := agentPod("pull", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	fails.Spec.Containers[0].Image = workload.MissingImageDomain + "/x/missing:1"
	rc := kri.NewReasonCache()
	kusciaSynced(t, e, k, fails, "ErrImagePull", func(p *v1.Pod) bool { return waiting(p, "app", "ErrImagePull") })
	if err := k.SyncPod(t.Context(), fails, nil, rc); err != nil {
		t.Errorf("SyncPod of a pod whose image does not pull = %v, want nil", err)
	}
	if rc.Len() != 0 {
		t.Errorf("the ReasonCache has %d entries, want none", rc.Len())
	}
}

// 3: GetPods lists every backend pod of the node, with spec containers.
func TestKusciaFaithfulGetPods(t *testing.T) {
	e := newSim(t)
	k := newKuscia(t, e, true)
	pod := agentPod("web", v1.RestartPolicyNever, ctr("app", "sh", "-c", "exit 0"))
	pod.Spec.InitContainers = []v1.Container{ctr("init", "sh", "-c", "exit 0")}
	kusciaSynced(t, e, k, pod, "app exited", func(p *v1.Pod) bool { return terminated(p, "app", 0) })
	other := pod.DeepCopy()
	other.Name, other.Labels = "other", map[string]string{kubebackend.KusciaLabelNode: "another-node"}
	e.create(other)
	for _, all := range []bool{true, false} {
		pods, err := k.GetPods(t.Context(), all)
		if err != nil {
			t.Fatal(err)
		}
		want := []*pkgcontainer.Pod{{ID: pod.UID, Name: pod.Name, Namespace: testNS, Containers: []*pkgcontainer.Container{{Name: "app", Image: "busybox:1.36"}}}}
		if !reflect.DeepEqual(pods, want) {
			t.Errorf("GetPods(%v) = %+v, want %+v", all, pods, want)
		}
	}
}

// 4 and 5: KillPod deletes with the override and returns at once; DeletePod
// and CleanupPods do nothing.
func TestKusciaFaithfulKillPod(t *testing.T) {
	e := newSim(t)
	k := newKuscia(t, e, true)
	pod := agentPod("stubborn", v1.RestartPolicyAlways, ctr("app", "sh", "-c", "trap '' TERM; sleep infinity"))
	st := kusciaSynced(t, e, k, pod, "app running", func(p *v1.Pod) bool { return running(p, "app") })
	grace := int64(20)
	if err := k.KillPod(t.Context(), pod, pkgcontainer.ConvertPodStatusToRunningPod("", st), &grace); err != nil {
		t.Fatal(err)
	}
	bk := e.get(pod.Name)
	if bk == nil || bk.DeletionGracePeriodSeconds == nil || *bk.DeletionGracePeriodSeconds != grace || !running(bk, "app") {
		t.Fatalf("after KillPod: %s; want the backend pod still there, deleted with grace %d, app running", describe(bk), grace)
	}
	if err := k.DeletePod(t.Context(), pod); err != nil {
		t.Errorf("DeletePod: %v", err)
	}
	if err := k.CleanupPods(t.Context(), nil, nil, nil); err != nil {
		t.Errorf("CleanupPods: %v", err)
	}
	if e.get(pod.Name) == nil {
		t.Errorf("the backend pod is gone before its grace period is over")
	}
	if err := k.KillPod(t.Context(), agentPod("unknown", v1.RestartPolicyAlways), pkgcontainer.Pod{}, &grace); err != nil {
		t.Errorf("KillPod of a pod without backend pod = %v, want nil", err)
	}
}

// 6: RefreshPodStatus takes the backend's container statuses and its Ready
// and ContainersReady conditions.
func TestKusciaFaithfulRefreshPodStatus(t *testing.T) {
	e := newSim(t)
	k := newKuscia(t, e, true)
	pod := agentPod("web", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	pod.Spec.InitContainers = []v1.Container{ctr("init", "sh", "-c", "exit 0")}
	kusciaSynced(t, e, k, pod, "app running", func(p *v1.Pod) bool { return running(p, "app") })
	api := &v1.PodStatus{
		Reason:            "Mine",
		ContainerStatuses: []v1.ContainerStatus{{Name: "gone"}},
		Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue},
			{Type: v1.PodReady, Status: v1.ConditionFalse},
		},
	}
	// The informer may be a step behind the API server.
	var bk *v1.Pod
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		bk = e.get(pod.Name)
		got := api.DeepCopy()
		k.RefreshPodStatus(pod, got)
		if apiequality.Semantic.DeepEqual(got.ContainerStatuses, bk.Status.ContainerStatuses) || time.Now().After(deadline) {
			api = got
			break
		}
	}
	if api.Reason != "Mine" {
		t.Errorf("Reason %q, want the agent's kept", api.Reason)
	}
	if !apiequality.Semantic.DeepEqual(api.ContainerStatuses, bk.Status.ContainerStatuses) ||
		!apiequality.Semantic.DeepEqual(api.InitContainerStatuses, bk.Status.InitContainerStatuses) {
		t.Errorf("container statuses %+v / %+v, want the backend's", api.InitContainerStatuses, api.ContainerStatuses)
	}
	want := map[v1.PodConditionType]v1.ConditionStatus{v1.PodScheduled: v1.ConditionTrue, v1.PodReady: v1.ConditionTrue, v1.ContainersReady: v1.ConditionTrue}
	if len(api.Conditions) != len(want) {
		t.Errorf("conditions %+v, want %v", api.Conditions, want)
	}
	for _, c := range api.Conditions {
		if want[c.Type] != c.Status {
			t.Errorf("condition %s is %s, want %s", c.Type, c.Status, want[c.Type])
		}
	}

	unknown := agentPod("unknown", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	before := &v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "app"}}}
	after := before.DeepCopy()
	k.RefreshPodStatus(unknown, after)
	if !apiequality.Semantic.DeepEqual(before, after) {
		t.Errorf("RefreshPodStatus of a pod without backend pod changed %+v to %+v", before, after)
	}
}

// 8: Start blocks until its ctx is done; Stop does not end it.
func TestKusciaFaithfulStartStop(t *testing.T) {
	e := newSim(t)
	k := newKuscia(t, e, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- k.Start(ctx) }()
	k.Stop()
	select {
	case err := <-done:
		t.Fatalf("Start returned %v after Stop; want it to go on until its ctx is done", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Start returned %v once its ctx was done, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return within 10s of its ctx being done")
	}

	cancelled, stop := context.WithCancel(context.Background())
	stop()
	if err := newKuscia(t, e, false).Start(cancelled); err == nil {
		t.Errorf("Start with a ctx done before the caches synced returned nil, want an error")
	}
}

// SetCacheLag: a started provider whose cache lags fails the second SyncPod
// of a new pod with AlreadyExists and reports nothing of the pod until the
// lag has passed; then SyncPod returns nil.
func TestKusciaFaithfulCacheLag(t *testing.T) {
	e := newSim(t)
	k := newKuscia(t, e, false)
	const lag = 300 * time.Millisecond
	k.SetCacheLag(lag)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = k.Start(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	time.Sleep(200 * time.Millisecond) // the caches sync

	pod := agentPod("lagging", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	created := time.Now()
	if err := k.SyncPod(t.Context(), pod, nil, kri.NewReasonCache()); err != nil {
		t.Fatalf("first SyncPod: %v", err)
	}
	err := k.SyncPod(t.Context(), pod, nil, kri.NewReasonCache())
	if time.Since(created) < lag && (err == nil || !strings.Contains(err.Error(), "already exists")) {
		t.Fatalf("SyncPod within the cache's lag = %v, want the API server's AlreadyExists", err)
	}
	if st, err := k.GetPodStatus(t.Context(), pod); err != nil || (time.Since(created) < lag && len(st.ContainerStatuses) > 0) {
		t.Errorf("GetPodStatus within the cache's lag = %+v, %v: want nothing of the pod", st, err)
	}
	time.Sleep(lag)
	deadline := time.Now().Add(5 * time.Second)
	for k.SyncPod(t.Context(), pod, nil, kri.NewReasonCache()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("SyncPod still fails 5s after the cache's lag")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
