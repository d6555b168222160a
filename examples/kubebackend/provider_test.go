package kubebackend_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/examples/kubebackend"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

// The provider in front of the simulated kubelet on a fake clock.

// newProvider returns a started provider bound to the test node of e,
// stopped when the test ends.
func newProvider(t *testing.T, e *simEnv) *kubebackend.Provider {
	t.Helper()
	p, err := kubebackend.New(kubebackend.Options{Client: e.client, Namespace: testNS, NodeName: testNode, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := p.Start(context.Background()); err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	t.Cleanup(func() { p.Stop(); wg.Wait() })
	return p
}

// agentPod is a pod as the node agent has it (not bound to the backend).
func agentPod(name string, policy v1.RestartPolicy, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "agent-ns", Name: name, UID: types.UID("uid-" + name + "-1"), Labels: map[string]string{"app": name}},
		Spec:       v1.PodSpec{NodeName: "agent-node", RestartPolicy: policy, Containers: containers, TerminationGracePeriodSeconds: ptr(int64(30))},
	}
}

// syncUntil syncs pod (real time; the backend reacts within milliseconds)
// until cond holds for its GetPodStatus, and returns that status.
func syncUntil(t *testing.T, p *kubebackend.Provider, pod *v1.Pod, rc *kri.ReasonCache, what string, cond func(*pkgcontainer.PodStatus) bool) *pkgcontainer.PodStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_ = p.SyncPod(t.Context(), pod, nil, rc)
		st, err := p.GetPodStatus(t.Context(), pod)
		if err != nil {
			t.Fatalf("GetPodStatus: %v", err)
		}
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: synced for 10s without %s; last status %+v", pod.Name, what, st)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func runningIn(st *pkgcontainer.PodStatus, name string) *pkgcontainer.Status {
	for _, c := range st.ContainerStatuses {
		if c.Name == name && c.State == pkgcontainer.ContainerStateRunning {
			return c
		}
	}
	return nil
}

func TestSyncPodCreatesOneMirror(t *testing.T) {
	e := newSim(t)
	p := newProvider(t, e)
	pod := agentPod("web", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	rc := kri.NewReasonCache()
	st := syncUntil(t, p, pod, rc, "app running", func(st *pkgcontainer.PodStatus) bool { return runningIn(st, "app") != nil })
	if st.ID != pod.UID || st.Namespace != pod.Namespace || st.Name != pod.Name {
		t.Errorf("GetPodStatus names pod %s %s/%s, want the agent's %s %s/%s", st.ID, st.Namespace, st.Name, pod.UID, pod.Namespace, pod.Name)
	}
	// While the informer had not yet seen the mirror, syncUntil's SyncPods
	// may have tried to create it again (refused: AlreadyExists); once
	// GetPodStatus, which reads the informer, shows it running, a SyncPod
	// creates nothing.
	createsBefore := countCreates(e)
	for range 5 {
		if err := p.SyncPod(t.Context(), pod, st, rc); err != nil {
			t.Fatalf("SyncPod of a running pod: %v", err)
		}
	}
	if creates := countCreates(e) - createsBefore; creates != 0 {
		t.Errorf("5 SyncPods of a pod whose mirror runs tried to create %d pods in the backend, want none", creates)
	}
	mirrors, err := e.client.CoreV1().Pods(testNS).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing the backend's pods: %v", err)
	}
	if n := len(mirrors.Items); n != 1 {
		t.Errorf("%d pods in the backend for one pod synced again and again, want 1", n)
	}
	mirror := e.get(kubebackend.MirrorName(pod.Namespace, pod.Name, pod.UID))
	switch {
	case mirror == nil:
		t.Fatalf("no mirror named %s", kubebackend.MirrorName(pod.Namespace, pod.Name, pod.UID))
	case mirror.Spec.NodeName != testNode || mirror.Labels[kubebackend.LabelAgent] != kubebackend.DefaultAgent || mirror.Labels["app"] != "web" ||
		mirror.Annotations[kubebackend.AnnotationPodUID] != string(pod.UID):
		t.Errorf("mirror %s: node %q, labels %v, annotations %v; want node %s, the pod's labels with the agent's, the pod's UID", mirror.Name,
			mirror.Spec.NodeName, mirror.Labels, mirror.Annotations, testNode)
	}
	if _, err := e.client.CoreV1().Namespaces().Get(t.Context(), testNS, metav1.GetOptions{}); err != nil {
		t.Errorf("the backend namespace was not created: %v", err)
	}
}

// countCreates counts the pod creations the backend was asked for,
// refused ones included.
func countCreates(e *simEnv) int {
	n := 0
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "pods" {
			n++
		}
	}
	return n
}

func TestSyncPodReportsPullFailuresAndTheirEnd(t *testing.T) {
	e := newSim(t)
	p := newProvider(t, e)
	pod := agentPod("pull", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	pod.Spec.Containers[0].Image = workload.MissingImageDomain + "/x/missing:1"
	rc := kri.NewReasonCache()
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for err == nil && time.Now().Before(deadline) {
		err = p.SyncPod(t.Context(), pod, nil, rc)
		time.Sleep(2 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), `"app"`) || !strings.Contains(err.Error(), "ErrImagePull") {
		t.Fatalf("SyncPod of a pod whose image does not pull = %v; want an error naming app and ErrImagePull", err)
	}
	if item, ok := rc.Get(pod.UID, "app"); !ok || !errors.Is(item.Err, workload.ErrImagePull) {
		t.Fatalf("ReasonCache entry of app = %+v, %v; want workload.ErrImagePull", item, ok)
	}
	e.step(kubebackend.DefaultBackOffInitial / 2)
	deadline = time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		_ = p.SyncPod(t.Context(), pod, nil, rc)
		if item, ok := rc.Get(pod.UID, "app"); ok && errors.Is(item.Err, kubebackend.ErrImagePullBackOff) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if item, ok := rc.Get(pod.UID, "app"); !ok || !errors.Is(item.Err, kubebackend.ErrImagePullBackOff) {
		t.Fatalf("ReasonCache entry of app half-way through the back-off = %+v, %v; want ErrImagePullBackOff", item, ok)
	}
	fixed := pod.DeepCopy()
	fixed.Spec.Containers[0].Image = "busybox:1.36"
	syncUntil(t, p, fixed, rc, "app running with the fixed image", func(st *pkgcontainer.PodStatus) bool { return runningIn(st, "app") != nil })
	if err := p.SyncPod(t.Context(), fixed, nil, rc); err != nil {
		t.Errorf("SyncPod once app runs = %v, want nil", err)
	}
	if item, ok := rc.Get(pod.UID, "app"); ok {
		t.Errorf("the ReasonCache still holds %v: %s for app, which runs", item.Err, item.Message)
	}
}

func TestKillPodGivesTheKubeletsGracePeriodAndForgets(t *testing.T) {
	cases := []struct {
		name     string
		override *int64
		deletion *int64
		pod      *int64
		orphan   bool // KillPod with a nil pod: the grace periods are the mirror's
		want     int64
	}{
		{name: "override", override: ptr(int64(3)), deletion: ptr(int64(9)), pod: ptr(int64(30)), want: 3},
		{name: "deletion grace", deletion: ptr(int64(4)), pod: ptr(int64(30)), want: 4},
		{name: "termination grace", pod: ptr(int64(5)), want: 5},
		{name: "default: the runtime's 2s", want: kri.RuntimeMinimumGracePeriodSeconds},
		{name: "override 0: at least 2s", override: ptr(int64(0)), want: kri.RuntimeMinimumGracePeriodSeconds},
		{name: "override 1: at least 2s", override: ptr(int64(1)), pod: ptr(int64(30)), want: kri.RuntimeMinimumGracePeriodSeconds},
		{name: "termination grace 1: at least 2s", pod: ptr(int64(1)), want: kri.RuntimeMinimumGracePeriodSeconds},
		{name: "orphan: the mirror's termination grace", pod: ptr(int64(5)), orphan: true, want: 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newSim(t)
			p := newProvider(t, e)
			pod := agentPod("kill", v1.RestartPolicyAlways, ctr("stubborn", "sh", "-c", "trap '' TERM; sleep infinity"))
			pod.Spec.TerminationGracePeriodSeconds, pod.DeletionGracePeriodSeconds = tc.pod, tc.deletion
			st := syncUntil(t, p, pod, kri.NewReasonCache(), "stubborn running", func(st *pkgcontainer.PodStatus) bool { return runningIn(st, "stubborn") != nil })
			running := pkgcontainer.ConvertPodStatusToRunningPod(kubebackend.RuntimeType, st)
			handed := pod
			if tc.orphan {
				handed = nil
			}
			killed := make(chan error, 1)
			go func() { killed <- p.KillPod(t.Context(), handed, running, tc.override) }()
			name := kubebackend.MirrorName(pod.Namespace, pod.Name, pod.UID)
			mirror := e.waitFor(name, "a graceful deletion", func(p *v1.Pod) bool { return p != nil && p.DeletionTimestamp != nil })
			if g := mirror.DeletionGracePeriodSeconds; g == nil || *g != tc.want {
				t.Fatalf("KillPod (override %s, pod handed in: %v) deleted the mirror with grace %s, want %ds", secs(tc.override), !tc.orphan, secs(g), tc.want)
			}
			e.step(time.Duration(tc.want)*time.Second - time.Millisecond)
			select {
			case err := <-killed:
				t.Fatalf("KillPod returned %v before the grace period of %ds was over", err, tc.want)
			case <-time.After(50 * time.Millisecond):
			}
			e.step(time.Millisecond)
			select {
			case err := <-killed:
				if err != nil {
					t.Fatalf("KillPod: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("KillPod did not return within 10s after the grace period")
			}
			if e.get(name) != nil {
				t.Errorf("the mirror is still there after KillPod")
			}
			after, err := p.GetPodStatus(t.Context(), pod)
			if err != nil || len(after.ContainerStatuses) != 0 || after.ID != pod.UID {
				t.Errorf("GetPodStatus after KillPod = %+v, %v; want the pod unknown (only its UID, name and namespace)", after, err)
			}
			pods, err := p.GetPods(t.Context(), true)
			if err != nil || len(pods) != 0 {
				t.Errorf("GetPods(true) after KillPod = %v, %v; want nothing", pods, err)
			}
		})
	}
}

// secs shows a number of seconds that may be absent.
func secs(s *int64) string {
	if s == nil {
		return "none"
	}
	return fmt.Sprintf("%ds", *s)
}

func TestKillPodReturnsWhenTheContextEnds(t *testing.T) {
	e := newSim(t)
	p := newProvider(t, e)
	pod := agentPod("cancel", v1.RestartPolicyAlways, ctr("stubborn", "sh", "-c", "trap '' TERM; sleep infinity"))
	st := syncUntil(t, p, pod, kri.NewReasonCache(), "stubborn running", func(st *pkgcontainer.PodStatus) bool { return runningIn(st, "stubborn") != nil })
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	err := p.KillPod(ctx, pod, pkgcontainer.ConvertPodStatusToRunningPod(kubebackend.RuntimeType, st), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("KillPod waiting out a 30s grace period under a 100ms context = %v, want the context's error", err)
	}
}

func TestGetPodsAndRefreshPodStatus(t *testing.T) {
	e := newSim(t)
	p := newProvider(t, e)
	pod := agentPod("mixed", v1.RestartPolicyNever, ctr("app", "sleep", "infinity"), ctr("done", "sh", "-c", "exit 3"))
	rc := kri.NewReasonCache()
	st := syncUntil(t, p, pod, rc, "app running, done exited", func(st *pkgcontainer.PodStatus) bool {
		return runningIn(st, "app") != nil && len(st.ContainerStatuses) == 2
	})
	for _, all := range []bool{false, true} {
		pods, err := p.GetPods(t.Context(), all)
		if err != nil || len(pods) != 1 || pods[0].ID != pod.UID || pods[0].Name != pod.Name || pods[0].Namespace != pod.Namespace {
			t.Fatalf("GetPods(%v) = %v, %v; want the agent's pod", all, pods, err)
		}
		if want := map[bool]int{false: 1, true: 2}[all]; len(pods[0].Containers) != want {
			t.Errorf("GetPods(%v) lists %d containers, want %d", all, len(pods[0].Containers), want)
		}
	}
	unknown := agentPod("unknown", v1.RestartPolicyNever, ctr("app"))
	before := v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{{Name: "app"}}}
	refreshed := *before.DeepCopy()
	p.RefreshPodStatus(unknown, &refreshed)
	if refreshed.ContainerStatuses[0].State != before.ContainerStatuses[0].State {
		t.Errorf("RefreshPodStatus of an unknown pod changed its status")
	}
	agent := v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "app"}, {Name: "done"}}}
	p.RefreshPodStatus(pod, &agent)
	for _, cs := range agent.ContainerStatuses {
		var inst *pkgcontainer.Status
		for _, c := range st.ContainerStatuses {
			if c.Name == cs.Name {
				inst = c
			}
		}
		if cs.ContainerID != inst.ID.String() || (cs.State.Running == nil) != (inst.State != pkgcontainer.ContainerStateRunning) {
			t.Errorf("RefreshPodStatus gives %s %s running=%v, GetPodStatus %s %s", cs.Name, cs.ContainerID, cs.State.Running != nil, inst.ID, inst.State)
		}
	}
}

func TestSyncPodAfterStopReturns(t *testing.T) {
	e := newSim(t)
	p, err := kubebackend.New(kubebackend.Options{Client: e.client, Namespace: testNS})
	if err != nil {
		t.Fatal(err)
	}
	p.Stop() // never started: returns at once
	p.Stop()
	if err := p.SyncPod(t.Context(), agentPod("late", v1.RestartPolicyAlways, ctr("app")), nil, kri.NewReasonCache()); err == nil {
		t.Errorf("SyncPod after Stop = nil, want an error saying the provider is stopped")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	client := kubebackend.NewFakeClientset()
	for name, opts := range map[string]kubebackend.Options{
		"no client":     {Namespace: "ns"},
		"no namespace":  {Client: client},
		"bad namespace": {Client: client, Namespace: "Not_A_Namespace"},
		"bad agent":     {Client: client, Namespace: "ns", Agent: "not a label value"},
		"negative poll": {Client: client, Namespace: "ns", PollInterval: -time.Second},
	} {
		if p, err := kubebackend.New(opts); err == nil {
			t.Errorf("%s: New(%+v) = %v, nil; want an error", name, opts, p)
		}
	}
}

func TestSyncPodRejectsBadInput(t *testing.T) {
	e := newSim(t)
	p := newProvider(t, e)
	dup := agentPod("dup", v1.RestartPolicyAlways, ctr("app"), ctr("app"))
	noUID := agentPod("nouid", v1.RestartPolicyAlways, ctr("app"))
	noUID.UID = ""
	for name, call := range map[string]func() error{
		"nil pod": func() error { return p.SyncPod(t.Context(), nil, nil, kri.NewReasonCache()) },
		"no UID":  func() error { return p.SyncPod(t.Context(), noUID, nil, kri.NewReasonCache()) },
		"nil reason cache": func() error {
			return p.SyncPod(t.Context(), agentPod("x", v1.RestartPolicyAlways, ctr("app")), nil, nil)
		},
		"duplicate names": func() error { return p.SyncPod(t.Context(), dup, nil, kri.NewReasonCache()) },
	} {
		if err := call(); err == nil {
			t.Errorf("SyncPod with %s = nil, want an error", name)
		}
	}
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "pods" {
			t.Errorf("SyncPod of bad input created a backend pod: %v", a.(clienttesting.CreateAction).GetObject())
		}
	}
}

// TestSyncPodIgnoresTheFailureOfAReplacedImage: right after SyncPod changed
// a container's image, the backend's status still shows the old image's
// pull failure; that is no failure of the new image.
func TestSyncPodIgnoresTheFailureOfAReplacedImage(t *testing.T) {
	client := kubebackend.NewFakeClientset()
	p, err := kubebackend.New(kubebackend.Options{Client: client, Namespace: testNS, NodeName: testNode})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	old := workload.MissingImageDomain + "/x/missing:1"
	pod := agentPod("swap", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	pod.Spec.Containers[0].Image = old
	rc := kri.NewReasonCache()
	if err := p.SyncPod(t.Context(), pod, nil, rc); err != nil {
		t.Fatal(err)
	}
	name := kubebackend.MirrorName(pod.Namespace, pod.Name, pod.UID)
	mirror, err := client.CoreV1().Pods(testNS).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mirror.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", Image: old,
		State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "no such registry"}}}}
	if _, err := client.CoreV1().Pods(testNS).UpdateStatus(t.Context(), mirror, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for err = nil; err == nil && time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		err = p.SyncPod(t.Context(), pod, nil, rc) // until the informer shows the status
	}
	if err == nil {
		t.Fatalf("SyncPod never reported the pull failure the backend shows")
	}
	fixed := pod.DeepCopy()
	fixed.Spec.Containers[0].Image = "busybox:1.36"
	if err := p.SyncPod(t.Context(), fixed, nil, rc); err != nil {
		t.Errorf("SyncPod that changed the image = %v; want nil, the failure was the old image's", err)
	}
	if got, _ := client.CoreV1().Pods(testNS).Get(t.Context(), name, metav1.GetOptions{}); got.Spec.Containers[0].Image != "busybox:1.36" {
		t.Errorf("the mirror's image is %s after SyncPod with busybox:1.36", got.Spec.Containers[0].Image)
	}
}
