package kubeletruntime_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/examples/kubeletruntime"
	"github.com/kri-kit/testkit/examples/kubeletruntime/crisim"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

func newProvider(t *testing.T, opts kubeletruntime.Options) *kubeletruntime.Provider {
	t.Helper()
	if opts.RootDir == "" {
		opts.RootDir = t.TempDir()
	}
	if opts.InitialBackOff == 0 {
		opts.InitialBackOff, opts.MaxBackOff = time.Minute, time.Minute
	}
	p, err := kubeletruntime.New(t.Context(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(p.Stop)
	return p
}

func newPod(name string, policy v1.RestartPolicy, containers ...v1.Container) *v1.Pod {
	grace := int64(2)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uuid.NewUUID()},
		Spec:       v1.PodSpec{RestartPolicy: policy, Containers: containers, TerminationGracePeriodSeconds: &grace},
	}
}

func container(name string, command ...string) v1.Container {
	return v1.Container{Name: name, Image: "busybox:1.36", Command: command, ImagePullPolicy: v1.PullIfNotPresent}
}

// syncUntil syncs pod as a pod worker does, SyncPod with the latest status,
// until cond holds of the status (within 5s), and returns that status.
func syncUntil(t *testing.T, p *kubeletruntime.Provider, rc *kri.ReasonCache, pod *v1.Pod, cond func(*pkgcontainer.PodStatus) bool) *pkgcontainer.PodStatus {
	t.Helper()
	st := &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_ = p.SyncPod(t.Context(), pod, st, rc)
		var err error
		if st, err = p.GetPodStatus(t.Context(), pod); err != nil {
			t.Fatalf("GetPodStatus: %v", err)
		}
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s did not reach the state within 5s; last status: %s", pod.Name, describe(st))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func running(name string) func(*pkgcontainer.PodStatus) bool {
	return func(st *pkgcontainer.PodStatus) bool { return runningID(st, name) != "" }
}

func runningID(st *pkgcontainer.PodStatus, name string) string {
	for _, c := range st.ContainerStatuses {
		if c.Name == name && c.State == pkgcontainer.ContainerStateRunning {
			return c.ID.ID
		}
	}
	return ""
}

func anyRunning(st *pkgcontainer.PodStatus) bool {
	for _, c := range st.ContainerStatuses {
		if c.State == pkgcontainer.ContainerStateRunning {
			return true
		}
	}
	return false
}

func describe(st *pkgcontainer.PodStatus) string {
	var b strings.Builder
	for _, c := range st.ContainerStatuses {
		b.WriteString(c.Name + "=" + string(c.State) + " ")
	}
	return b.String()
}

// TestDefaultBackOffIsTheKubelets ties the provider's default back-off to
// the kit's one statement of the kubelet's (workload.KubeletBackOff, which
// internal/kubeletequiv checks against the kubelet's source).
func TestDefaultBackOffIsTheKubelets(t *testing.T) {
	got := workload.BackOff{Initial: kubeletruntime.DefaultInitialBackOff, Max: kubeletruntime.DefaultMaxBackOff}
	if got != workload.KubeletBackOff {
		t.Errorf("DefaultInitialBackOff, DefaultMaxBackOff = %v, %v; the kubelet's crash-loop back-off is %v, %v", got.Initial, got.Max, workload.KubeletBackOff.Initial, workload.KubeletBackOff.Max)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, opts := range map[string]kubeletruntime.Options{
		"no root":               {},
		"missing root":          {RootDir: filepath.Join(dir, "missing")},
		"root is a file":        {RootDir: file},
		"negative back-off":     {RootDir: dir, InitialBackOff: -time.Second},
		"max below initial":     {RootDir: dir, InitialBackOff: time.Minute, MaxBackOff: time.Second},
		"negative GC period":    {RootDir: dir, GCPeriod: -1},
		"negative maximum pods": {RootDir: dir, MaxPods: -1},
	} {
		if p, err := kubeletruntime.New(t.Context(), opts); err == nil {
			p.Stop()
			t.Errorf("New with %s = nil error, want one", name)
		} else if !strings.HasPrefix(err.Error(), "kubeletruntime: Options.") {
			t.Errorf("New with %s: %q does not name the option", name, err)
		}
	}
}

func TestSyncPodRejectsBadInputAndChangesNothing(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{})
	rc := kri.NewReasonCache()
	noUID := newPod("nouid", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	noUID.UID = ""
	dup := newPod("dup", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	dup.Spec.InitContainers = []v1.Container{container("app", "true")}
	for name, call := range map[string]func() error{
		"a nil pod":                  func() error { return p.SyncPod(t.Context(), nil, nil, rc) },
		"a pod without UID":          func() error { return p.SyncPod(t.Context(), noUID, nil, rc) },
		"a nil ReasonCache":          func() error { return p.SyncPod(t.Context(), dup, nil, nil) },
		"two containers of one name": func() error { return p.SyncPod(t.Context(), dup, nil, rc) },
	} {
		if err := call(); err == nil {
			t.Errorf("SyncPod of %s = nil, want an error", name)
		}
	}
	pods, err := p.GetPods(t.Context(), true)
	if err != nil || len(pods) != 0 {
		t.Errorf("after rejected SyncPods GetPods(true) = %v, %v; want no pod", pods, err)
	}
}

func TestSyncPodCopiesThePod(t *testing.T) {
	// The runtime manager rewrites sysctl names ("net/ipv4/ip_forward" to
	// "net.ipv4.ip_forward") in the pod it is given.
	p := newProvider(t, kubeletruntime.Options{})
	pod := newPod("sysctl", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	pod.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "net/ipv4/ip_forward", Value: "1"}}}
	before := pod.DeepCopy()
	syncUntil(t, p, kri.NewReasonCache(), pod, running("app"))
	if diff := cmp.Diff(before, pod); diff != "" {
		t.Errorf("SyncPod changed the pod handed in (-before +after):\n%s", diff)
	}
}

func TestSyncPodBackOffIsNotAnError(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{})
	rc := kri.NewReasonCache()
	pod := newPod("broken", v1.RestartPolicyAlways, container("app", "/nonexistent/app"))

	err := p.SyncPod(t.Context(), pod, nil, rc)
	if err == nil || !strings.Contains(err.Error(), `"app"`) || !strings.Contains(err.Error(), "RunContainerError") {
		t.Fatalf("first SyncPod of a container whose executable is missing = %v, want a RunContainerError naming app", err)
	}
	if item, ok := rc.Get(pod.UID, "app"); !ok || !errors.Is(item.Err, pkgcontainer.ErrRunContainer) || item.Message == "" {
		t.Fatalf("ReasonCache after the failed start = %+v, %v; want RunContainerError with a message", item, ok)
	}
	st, err := p.GetPodStatus(t.Context(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].ExitCode != 128 || st.ContainerStatuses[0].Reason != "StartError" {
		t.Fatalf("GetPodStatus after the failed start: %+v; want one instance exited 128, StartError", st.ContainerStatuses)
	}
	// The next start is attempted at once (the back-off starts with it);
	// the one after that waits for the back-off: no error, but the reason.
	if err := p.SyncPod(t.Context(), pod, st, rc); err == nil {
		t.Fatal("second SyncPod (the first restart) = nil, want the start failure again")
	}
	if st, err = p.GetPodStatus(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	if err := p.SyncPod(t.Context(), pod, st, rc); err != nil {
		t.Fatalf("SyncPod while the container backs off = %v, want nil: waiting for the back-off is no failure", err)
	}
	if item, ok := rc.Get(pod.UID, "app"); !ok || !errors.Is(item.Err, pkgcontainer.ErrCrashLoopBackOff) && item.Err.Error() != "CrashLoopBackOff" {
		t.Errorf("ReasonCache during the back-off = %+v, %v; want CrashLoopBackOff", item, ok)
	}
}

func TestKillPodWithNilPodStopsTheRunningPod(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{})
	pod := newPod("nilpod", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	st := syncUntil(t, p, kri.NewReasonCache(), pod, running("app"))
	zero := int64(0)
	if err := p.KillPod(t.Context(), nil, pkgcontainer.ConvertPodStatusToRunningPod(p.RuntimeName(), st), &zero); err != nil {
		t.Fatalf("KillPod with a nil pod: %v", err)
	}
	if st, _ = p.GetPodStatus(t.Context(), pod); anyRunning(st) {
		t.Errorf("after KillPod with a nil pod: %s", describe(st))
	}
}

// TestKillPodWithCancelledContextReturnsPromptly: a KillPod whose context
// ends during the grace period returns soon after, with the runtime
// manager's error as it is (kuscia's CRIProvider passes it through: it need
// not carry the context's).
func TestKillPodWithCancelledContextReturnsPromptly(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{})
	pod := newPod("stubborn", v1.RestartPolicyAlways, container("app", "sh", "-c", "trap '' TERM; sleep infinity"))
	st := syncUntil(t, p, kri.NewReasonCache(), pod, running("app"))
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err := p.KillPod(ctx, pod, pkgcontainer.ConvertPodStatusToRunningPod(p.RuntimeName(), st), nil)
	if err == nil {
		t.Fatalf("KillPod whose context ends during the grace period returned nil, want the runtime manager's error")
	}
	if took := time.Since(begin); took > time.Second {
		t.Errorf("KillPod returned %s after it started, want soon after its context ended (100ms)", took)
	}
}

func TestDeletePodStopsThePodAndTheGarbageCollectorForgetsIt(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{GCPeriod: 20 * time.Millisecond})
	pod := newPod("deleted", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	keep := newPod("kept", v1.RestartPolicyNever, container("app", "sh", "-c", "exit 0"))
	rc := kri.NewReasonCache()
	syncUntil(t, p, rc, pod, running("app"))
	syncUntil(t, p, rc, keep, func(st *pkgcontainer.PodStatus) bool { return len(st.ContainerStatuses) == 1 && !anyRunning(st) })

	if err := p.DeletePod(t.Context(), pod); err != nil {
		t.Fatalf("DeletePod of a running pod: %v", err)
	}
	if st, _ := p.GetPodStatus(t.Context(), pod); anyRunning(st) {
		t.Fatalf("after DeletePod: %s", describe(st))
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- p.Start(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := p.GetPodStatus(t.Context(), pod)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.ContainerStatuses) == 0 && len(st.SandboxStatuses) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5s after DeletePod the garbage collector has not removed the pod: %s", describe(st))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A pod that was not deleted keeps its dead container.
	if st, _ := p.GetPodStatus(t.Context(), keep); len(st.ContainerStatuses) != 1 {
		t.Errorf("the garbage collector removed the dead container of a pod that was not deleted: %s", describe(st))
	}
	if err := p.DeletePod(t.Context(), pod); err != nil {
		t.Errorf("DeletePod of a forgotten pod = %v, want nil", err)
	}
}

func TestCleanupPodsKillsOnlyOrphans(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{})
	rc := kri.NewReasonCache()
	desired := newPod("desired", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	viaRunning := newPod("running", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	viaPossibly := newPod("possibly", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	orphan := newPod("orphan", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	ids := map[types.UID]string{}
	for _, pod := range []*v1.Pod{desired, viaRunning, viaPossibly, orphan} {
		ids[pod.UID] = runningID(syncUntil(t, p, rc, pod, running("app")), "app")
	}
	err := p.CleanupPods(t.Context(), []*v1.Pod{desired},
		[]*pkgcontainer.Pod{{ID: viaRunning.UID}}, map[types.UID]sets.Empty{viaPossibly.UID: {}})
	if err != nil {
		t.Fatalf("CleanupPods: %v", err)
	}
	for _, pod := range []*v1.Pod{desired, viaRunning, viaPossibly} {
		st, _ := p.GetPodStatus(t.Context(), pod)
		if got := runningID(st, "app"); got != ids[pod.UID] {
			t.Errorf("after CleanupPods pod %s runs %q, want %q still", pod.Name, got, ids[pod.UID])
		}
	}
	if st, _ := p.GetPodStatus(t.Context(), orphan); anyRunning(st) {
		t.Errorf("CleanupPods left the orphan running: %s", describe(st))
	}
	pods, err := p.GetPods(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, rp := range pods {
		if rp.ID == orphan.UID {
			t.Errorf("GetPods(false) still lists the orphan after CleanupPods: %+v", rp)
		}
	}
}

func TestRefreshPodStatusRefinesOnly(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{})
	always := v1.ContainerRestartPolicyAlways
	pod := newPod("refresh", v1.RestartPolicyAlways, container("run", "sleep", "infinity"), container("wait", "sleep", "infinity"), container("done", "true"))
	pod.Spec.InitContainers = []v1.Container{container("init-ok", "true"), container("init-bad", "false"), container("init-running", "sleep", "infinity")}
	sidecar := container("sidecar", "sleep", "infinity")
	sidecar.RestartPolicy = &always
	pod.Spec.InitContainers = append(pod.Spec.InitContainers, sidecar)

	runningState := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	waiting := v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	exited := func(code int32) v1.ContainerState {
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}
	}
	yes, no := true, false
	in := &v1.PodStatus{
		ContainerStatuses: []v1.ContainerStatus{
			{Name: "run", State: runningState, ContainerID: "fakeRuntime://1"},
			{Name: "wait", State: waiting, Ready: true}, // Ready left as it is
			{Name: "done", State: exited(0)},
		},
		InitContainerStatuses: []v1.ContainerStatus{
			{Name: "init-ok", State: exited(0)},
			{Name: "init-bad", State: exited(1)},
			{Name: "init-running", State: runningState},
			{Name: "sidecar", State: runningState},
			{Name: "not-in-spec", State: runningState},
		},
	}
	want := in.DeepCopy()
	set := func(cs *v1.ContainerStatus, started *bool, ready bool) { cs.Started, cs.Ready = started, ready }
	set(&want.ContainerStatuses[0], &yes, true)
	set(&want.ContainerStatuses[1], &no, true)
	set(&want.ContainerStatuses[2], &no, false)
	set(&want.InitContainerStatuses[0], &no, true)
	set(&want.InitContainerStatuses[1], &no, false)
	set(&want.InitContainerStatuses[2], &yes, false) // a running init container is not ready until it completes
	set(&want.InitContainerStatuses[3], &yes, true)  // a running sidecar is
	set(&want.InitContainerStatuses[4], &yes, false) // not in the spec: only Started
	p.RefreshPodStatus(pod, in)
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("RefreshPodStatus (-want +got):\n%s", diff)
	}

	empty := &v1.PodStatus{}
	p.RefreshPodStatus(pod, empty)
	if diff := cmp.Diff(&v1.PodStatus{}, empty); diff != "" {
		t.Errorf("RefreshPodStatus added to an empty status (-want +got):\n%s", diff)
	}
	p.RefreshPodStatus(nil, in)  // must not panic
	p.RefreshPodStatus(pod, nil) // must not panic
}

func TestStartAndStop(t *testing.T) {
	t.Run("Stop before Start returns at once, and Start after it too", func(t *testing.T) {
		p := newProvider(t, kubeletruntime.Options{})
		p.Stop()
		p.Stop()
		if err := p.Start(t.Context()); err != nil {
			t.Errorf("Start after Stop = %v, want nil", err)
		}
	})
	t.Run("Stop ends Start", func(t *testing.T) {
		rs := crisim.NewRuntimeService(crisim.Options{})
		p := newProvider(t, kubeletruntime.Options{RuntimeService: rs, GCPeriod: time.Millisecond})
		done := make(chan error)
		go func() { done <- p.Start(context.Background()) }()
		// Start is running once its garbage collector lists sandboxes.
		for !slices.Contains(rs.GetCalls(), "ListPodSandbox") {
			time.Sleep(time.Millisecond)
		}
		p.Stop()
		// Start's goroutine sends only after Start has returned, which
		// may be just after Stop returned: wait for it (a Start that
		// never ends hangs the test until its -timeout).
		if err := <-done; err != nil {
			t.Errorf("Start = %v after Stop, want nil", err)
		}
		if err := p.Start(t.Context()); err == nil {
			t.Error("a second Start = nil, want an error")
		}
	})
	t.Run("a cancelled context ends Start", func(t *testing.T) {
		p := newProvider(t, kubeletruntime.Options{})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := p.Start(ctx); err != nil {
			t.Errorf("Start with a cancelled context = %v, want nil", err)
		}
	})
}
