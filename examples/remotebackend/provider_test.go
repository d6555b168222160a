package remotebackend_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/examples/remotebackend"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
	"github.com/kri-kit/testkit/sim/workload"
)

func newFakeProvider(t testing.TB) (*remotebackend.Provider, *remotebackend.Service, *testingclock.FakeClock) {
	t.Helper()
	svc, fc := newFakeService(t)
	p, err := remotebackend.New(svc)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p, svc, fc
}

func status(t *testing.T, p *remotebackend.Provider, pod *v1.Pod) *pkgcontainer.PodStatus {
	t.Helper()
	st, err := p.GetPodStatus(context.Background(), pod)
	if err != nil {
		t.Fatalf("GetPodStatus: %v", err)
	}
	return st
}

// refresh builds the API status as the agent does and hands it to
// RefreshPodStatus.
func refresh(t *testing.T, p *remotebackend.Provider, pod *v1.Pod, rc *kri.ReasonCache) v1.PodStatus {
	t.Helper()
	ps := podstatus.Generate(pod, status(t, p, pod), rc)
	p.RefreshPodStatus(pod, &ps)
	return ps
}

func apiStatus(t *testing.T, list []v1.ContainerStatus, name string) v1.ContainerStatus {
	t.Helper()
	for _, s := range list {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no status for container %s in %+v", name, list)
	return v1.ContainerStatus{}
}

func TestNewNeedsAService(t *testing.T) {
	if p, err := remotebackend.New(nil); err == nil || p != nil {
		t.Fatalf("New(nil) = %v, %v; want an error", p, err)
	}
}

func TestSyncPodReportsStarts(t *testing.T) {
	p, _, fc := newFakeProvider(t)
	rc := kri.NewReasonCache()
	img := ctr("img", "sleep", "infinity")
	img.Image = workload.MissingImageDomain + "/app:1"
	pod := newPod(v1.RestartPolicyAlways, ctr("ok", "sleep", "infinity"), sh("crash", "sleep 1; exit 1"), ctr("exe", "/nonexistent/app"), img)
	entries := func(when string, want map[string]error) {
		t.Helper()
		for _, name := range []string{"ok", "crash", "exe", "img"} {
			item, ok := rc.Get(pod.UID, name)
			switch w := want[name]; {
			case w == nil && ok:
				t.Errorf("%s: ReasonCache entry of %s = %+v; want none", when, name, item)
			case w != nil && (!ok || !errors.Is(item.Err, w) || item.Message == ""):
				t.Errorf("%s: ReasonCache entry of %s = %+v, %v; want %v with a message", when, name, item, ok, w)
			}
		}
	}

	err := p.SyncPod(context.Background(), pod, nil, rc)
	if err == nil || !strings.Contains(err.Error(), `"exe"`) || !strings.Contains(err.Error(), `"img"`) || strings.Contains(err.Error(), `"ok"`) || strings.Contains(err.Error(), `"crash"`) {
		t.Fatalf("SyncPod = %v; want an error naming exe and img only", err)
	}
	entries("first SyncPod", map[string]error{"exe": pkgcontainer.ErrRunContainer, "img": workload.ErrImagePull})

	fixed := pod.DeepCopy()
	fixed.Spec.Containers[3].Image = "busybox:1.36"
	fc.SetTime(at(1100)) // crash exited at 1s, restarts at 1.2s
	err = p.SyncPod(context.Background(), fixed, nil, rc)
	if err == nil || !strings.Contains(err.Error(), `"exe"`) || strings.Contains(err.Error(), `"img"`) || strings.Contains(err.Error(), `"crash"`) {
		t.Fatalf("SyncPod with img fixed and crash backing off = %v; want an error naming exe only (a back-off is no error)", err)
	}
	entries("img fixed, crash backing off", map[string]error{"crash": pkgcontainer.ErrCrashLoopBackOff, "exe": pkgcontainer.ErrRunContainer})

	fc.SetTime(at(1300))
	_ = p.SyncPod(context.Background(), fixed, nil, rc)
	entries("crash restarted", map[string]error{"exe": pkgcontainer.ErrRunContainer})
}

func TestSyncPodRejects(t *testing.T) {
	p, svc, _ := newFakeProvider(t)
	rc := kri.NewReasonCache()
	good := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	if err := p.SyncPod(context.Background(), good, nil, nil); err == nil {
		t.Error("SyncPod with a nil ReasonCache returned nil")
	}
	if err := p.SyncPod(context.Background(), nil, nil, rc); err == nil {
		t.Error("SyncPod of a nil pod returned nil")
	}
	if pods, _ := svc.List(context.Background()); len(pods) != 0 {
		t.Errorf("rejected SyncPods submitted %d pods", len(pods))
	}
}

func TestGetPodStatusMapsTheCurrentRun(t *testing.T) {
	p, svc, fc := newFakeProvider(t)
	pod := newPod(v1.RestartPolicyAlways, sh("app", "sleep 1; exit 3"))
	pod.Spec.InitContainers = []v1.Container{sh("setup", "exit 0")}
	apply(t, svc, pod)
	fc.SetTime(at(1300)) // app ran 0-1s, restarted at 1.2s
	st := status(t, p, pod)
	if st.ID != pod.UID || st.Name != pod.Name || st.Namespace != pod.Namespace || len(st.SandboxStatuses) != 0 || len(st.ActiveContainerStatuses) != 0 {
		t.Fatalf("GetPodStatus = %+v; want the pod's identity, no sandboxes, no active statuses", st)
	}
	if len(st.ContainerStatuses) != 2 {
		t.Fatalf("GetPodStatus reports %d instances, want one per container: %+v", len(st.ContainerStatuses), st.ContainerStatuses)
	}
	c := container(t, svc, pod, "app")
	app := st.FindContainerStatusByName("app")
	want := pkgcontainer.Status{
		ID: pkgcontainer.ContainerID{Type: remotebackend.RuntimeName, ID: c.Current.ID}, Name: "app",
		State: pkgcontainer.ContainerStateRunning, CreatedAt: at(1200), StartedAt: at(1200),
		Image: "docker.io/library/busybox:1.36", RestartCount: 1,
	}
	if diff := cmp.Diff(want, *app); diff != "" {
		t.Errorf("GetPodStatus of app (-want +got):\n%s", diff)
	}
	setup := st.FindContainerStatusByName("setup")
	if setup.State != pkgcontainer.ContainerStateExited || setup.ExitCode != 0 || setup.Reason != "Completed" || !setup.FinishedAt.Equal(t0) {
		t.Errorf("setup = %+v; want exited 0, Completed, at t0", *setup)
	}
	unknown := newPod(v1.RestartPolicyAlways)
	if st := status(t, p, unknown); st.ID != unknown.UID || st.Name != unknown.Name || len(st.ContainerStatuses) != 0 {
		t.Errorf("GetPodStatus of an unknown pod = %+v; want only its identity", st)
	}
	if _, err := p.GetPodStatus(context.Background(), nil); err == nil {
		t.Error("GetPodStatus of a nil pod returned no error")
	}
}

func TestRefreshPodStatus(t *testing.T) {
	p, svc, fc := newFakeProvider(t)
	rc := kri.NewReasonCache()
	pod := newPod(v1.RestartPolicyAlways, sh("app", "sleep 1; exit 3"), ctr("later", "sleep", "infinity"))
	pod.Spec.InitContainers = []v1.Container{sh("setup", "sleep 0.5")}
	if err := p.SyncPod(context.Background(), pod, nil, rc); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}

	// While the init container runs, the app containers have not been
	// tried: the agent's Waiting state stands.
	ps := refresh(t, p, pod, rc)
	if s := apiStatus(t, ps.ContainerStatuses, "app"); s.State.Waiting == nil || s.State.Waiting.Reason != "PodInitializing" {
		t.Errorf("app before the init container completed: %+v; want the agent's Waiting PodInitializing", s.State)
	}
	if s := apiStatus(t, ps.InitContainerStatuses, "setup"); s.State.Running == nil || s.Started == nil || !*s.Started || s.Ready {
		t.Errorf("running init container setup: %+v; want Running, started, not ready", s)
	}

	fc.SetTime(at(1600)) // app ran 0.5-1.5s, exited 3, back-off until 1.7s
	if err := p.SyncPod(context.Background(), pod, nil, rc); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	first := container(t, svc, pod, "app").Current
	ps = refresh(t, p, pod, rc)
	app := apiStatus(t, ps.ContainerStatuses, "app")
	last := app.LastTerminationState.Terminated
	switch {
	case app.State.Waiting == nil || app.State.Waiting.Reason != remotebackend.ReasonCrashLoopBackOff:
		t.Errorf("app in back-off: state %+v; want Waiting CrashLoopBackOff", app.State)
	case app.ContainerID != remotebackend.RuntimeName+"://"+first.ID:
		t.Errorf("app in back-off: ContainerID %q; want the exited run's", app.ContainerID)
	case last == nil || last.ContainerID != app.ContainerID || last.ExitCode != 3 || !last.FinishedAt.Time.Equal(at(1500)):
		t.Errorf("app in back-off: last termination %+v; want the exited run (exit 3 at 1.5s)", last)
	case app.Ready || app.Started == nil || *app.Started:
		t.Errorf("app in back-off: ready %v, started %v; want neither", app.Ready, app.Started)
	}

	fc.SetTime(at(1800)) // restarted at 1.7s
	ps = refresh(t, p, pod, rc)
	app = apiStatus(t, ps.ContainerStatuses, "app")
	cur := container(t, svc, pod, "app").Current
	last = app.LastTerminationState.Terminated
	switch {
	case app.State.Running == nil || !app.State.Running.StartedAt.Time.Equal(at(1700)):
		t.Errorf("restarted app: state %+v; want Running since 1.7s", app.State)
	case app.ContainerID != remotebackend.RuntimeName+"://"+cur.ID || app.RestartCount != 1 || app.Image != "docker.io/library/busybox:1.36":
		t.Errorf("restarted app: ID %q, restarts %d, image %q; want the new run's, 1, the normalised image", app.ContainerID, app.RestartCount, app.Image)
	case last == nil || last.ContainerID != remotebackend.RuntimeName+"://"+first.ID || last.ExitCode != 3 || last.Reason != "Error":
		t.Errorf("restarted app: last termination %+v; want the first run, exit 3, Error", last)
	case !app.Ready || app.Started == nil || !*app.Started:
		t.Errorf("restarted app: ready %v, started %v; want both", app.Ready, app.Started)
	}
	if s := apiStatus(t, ps.InitContainerStatuses, "setup"); s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 || !s.Ready {
		t.Errorf("completed init container setup: %+v; want Terminated 0 and ready", s)
	}
	if len(ps.ContainerStatuses) != 2 || len(ps.InitContainerStatuses) != 1 {
		t.Errorf("RefreshPodStatus reports %d app and %d init statuses, want 2 and 1", len(ps.ContainerStatuses), len(ps.InitContainerStatuses))
	}
}

func TestRefreshPodStatusKeepsWhatItDoesNotOwn(t *testing.T) {
	p, svc, _ := newFakeProvider(t)
	pod := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	apply(t, svc, pod)
	ps := v1.PodStatus{
		Phase:   v1.PodRunning,
		Message: "set by the agent",
		ContainerStatuses: []v1.ContainerStatus{
			{Name: "ghost", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
			{Name: "app", ImageID: "sha256:abc", VolumeMounts: []v1.VolumeMountStatus{{Name: "data", MountPath: "/data"}}},
		},
	}
	p.RefreshPodStatus(pod, &ps)
	if ps.Phase != v1.PodRunning || ps.Message != "set by the agent" {
		t.Errorf("RefreshPodStatus changed the pod's phase or message: %+v", ps)
	}
	if len(ps.ContainerStatuses) != 1 || ps.ContainerStatuses[0].Name != "app" {
		t.Fatalf("RefreshPodStatus kept statuses %+v; want app only (ghost is not in the spec)", ps.ContainerStatuses)
	}
	app := ps.ContainerStatuses[0]
	if app.ImageID != "sha256:abc" || len(app.VolumeMounts) != 1 || app.State.Running == nil {
		t.Errorf("app after RefreshPodStatus: %+v; want the handed ImageID and mounts kept and the Service's state", app)
	}

	unknown := newPod(v1.RestartPolicyAlways, ctr("app"))
	in := v1.PodStatus{Message: "untouched", ContainerStatuses: []v1.ContainerStatus{{Name: "app"}}}
	want := in.DeepCopy()
	p.RefreshPodStatus(unknown, &in)
	if in.Message != want.Message || len(in.ContainerStatuses) != 1 || in.ContainerStatuses[0].State != want.ContainerStatuses[0].State {
		t.Errorf("RefreshPodStatus of an unknown pod changed its status to %+v", in)
	}
	p.RefreshPodStatus(nil, &in)
	p.RefreshPodStatus(pod, nil)
}

func TestGetPods(t *testing.T) {
	p, svc, fc := newFakeProvider(t)
	mixed := newPod(v1.RestartPolicyNever, ctr("run", "sleep", "infinity"), sh("done", "exit 0"))
	stopped := newPod(v1.RestartPolicyNever, ctr("app", "sleep", "infinity"))
	apply(t, svc, mixed)
	apply(t, svc, stopped)
	if err := svc.Stop(context.Background(), stopped.UID, nil); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	fc.SetTime(at(100))
	names := func(all bool) map[types.UID][]string {
		pods, err := p.GetPods(context.Background(), all)
		if err != nil {
			t.Fatalf("GetPods(%v): %v", all, err)
		}
		out := map[types.UID][]string{}
		for _, pod := range pods {
			out[pod.ID] = []string{}
			for _, c := range pod.Containers {
				if c.ID.Type != remotebackend.RuntimeName || c.ID.ID == "" {
					t.Errorf("GetPods(%v) lists container %s with ID %+v", all, c.Name, c.ID)
				}
				out[pod.ID] = append(out[pod.ID], c.Name+"="+string(c.State))
			}
		}
		return out
	}
	running := names(false)
	if _, ok := running[stopped.UID]; ok || len(running) != 1 || strings.Join(running[mixed.UID], ",") != "run=running" {
		t.Errorf("GetPods(false) = %v; want only pod %s with its running container", running, mixed.Name)
	}
	all := names(true)
	if len(all) != 2 || strings.Join(all[mixed.UID], ",") != "run=running,done=exited" || strings.Join(all[stopped.UID], ",") != "app=exited" {
		t.Errorf("GetPods(true) = %v; want both pods with every container", all)
	}
}

// killAsync runs KillPod in a goroutine and waits until it waits on the
// clock or has returned.
func killAsync(t *testing.T, p *remotebackend.Provider, fc *testingclock.FakeClock, pod *v1.Pod, rp pkgcontainer.Pod, override *int64) chan error {
	t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- p.KillPod(context.Background(), pod, rp, override) }()
	deadline := time.Now().Add(10 * time.Second)
	for !fc.HasWaiters() && !returned(ch) {
		if time.Now().After(deadline) {
			t.Fatal("KillPod neither returned nor waited on the clock within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	return ch
}

func TestKillPodGrace(t *testing.T) {
	one, two, three := int64(1), int64(2), int64(3)
	for _, tt := range []struct {
		name      string
		override  *int64
		deletion  *int64
		nilPod    bool
		wantAfter time.Duration
	}{
		{"override first", &one, &two, false, time.Second},
		{"then DeletionGracePeriodSeconds", nil, &two, false, 2 * time.Second},
		{"then TerminationGracePeriodSeconds", nil, nil, false, 3 * time.Second},
		{"a nil pod: the submitted pod's", nil, nil, true, 5 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, svc, fc := newFakeProvider(t)
			pod := newPod(v1.RestartPolicyAlways, sh("stubborn", "trap '' TERM; sleep infinity"))
			apply(t, svc, pod) // submitted with 5s
			killed := pod.DeepCopy()
			killed.Spec.TerminationGracePeriodSeconds = &three
			if tt.deletion != nil {
				now := metav1.NewTime(t0)
				killed.DeletionTimestamp, killed.DeletionGracePeriodSeconds = &now, tt.deletion
			}
			if tt.nilPod {
				killed = nil
			}
			rp := pkgcontainer.ConvertPodStatusToRunningPod(remotebackend.RuntimeName, status(t, p, pod))
			ch := killAsync(t, p, fc, killed, rp, tt.override)
			fc.SetTime(at(60_000))
			if err := result(t, "KillPod", ch); err != nil {
				t.Fatalf("KillPod: %v", err)
			}
			if c := container(t, svc, pod, "stubborn"); !c.Current.FinishedAt.Equal(t0.Add(tt.wantAfter)) || c.Current.ExitCode != workload.ExitCodeSIGKILL {
				t.Errorf("%s: %s; want it killed after %s", tt.name, describe(c), tt.wantAfter)
			}
		})
	}
}

func TestKillPodWithoutPod(t *testing.T) {
	p, _, _ := newFakeProvider(t)
	if err := p.KillPod(context.Background(), nil, pkgcontainer.Pod{}, nil); err == nil {
		t.Error("KillPod naming no pod returned nil")
	}
	if err := p.KillPod(context.Background(), nil, pkgcontainer.Pod{ID: "unknown"}, nil); err != nil {
		t.Errorf("KillPod of an unknown pod: %v, want nil", err)
	}
}

func TestCleanupPods(t *testing.T) {
	p, svc, _ := newFakeProvider(t)
	desired := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	running := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	possibly := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	orphan := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	for _, pod := range []*v1.Pod{desired, running, possibly, orphan} {
		apply(t, svc, pod)
	}
	rp := pkgcontainer.ConvertPodStatusToRunningPod(remotebackend.RuntimeName, status(t, p, running))
	err := p.CleanupPods(context.Background(), []*v1.Pod{desired, nil}, []*pkgcontainer.Pod{&rp, nil}, map[types.UID]sets.Empty{possibly.UID: {}})
	if err != nil {
		t.Fatalf("CleanupPods: %v", err)
	}
	for _, pod := range []*v1.Pod{desired, running, possibly} {
		if c := container(t, svc, pod, "app"); c.Current.State != remotebackend.RunRunning || c.RestartCount != 0 {
			t.Errorf("pod %s named by CleanupPods: %s; want it untouched", pod.Name, describe(c))
		}
	}
	if _, ok, _ := svc.Pod(context.Background(), orphan.UID); ok {
		t.Error("CleanupPods left the orphan pod on the Service")
	}
}

func TestLifecycle(t *testing.T) {
	t.Run("Stop without Start", func(t *testing.T) {
		p, _, _ := newFakeProvider(t)
		p.Stop()
		p.Stop()
		if err := p.Start(context.Background()); err != nil {
			t.Errorf("Start after Stop = %v, want nil at once", err)
		}
	})
	t.Run("Stop ends Start", func(t *testing.T) {
		p, _, _ := newFakeProvider(t)
		a, b := make(chan error, 1), make(chan error, 1)
		go func() { a <- p.Start(context.Background()) }()
		go func() { b <- p.Start(context.Background()) }()
		// One of the two Starts is refused at once; the other runs
		// until Stop.
		var refused error
		var running chan error
		select {
		case refused = <-a:
			running = b
		case refused = <-b:
			running = a
		case <-time.After(10 * time.Second):
			t.Fatal("neither of two Starts returned within 10s")
		}
		if refused == nil {
			t.Error("a second Start returned nil, want an error")
		}
		if returned(running) {
			t.Fatal("Start returned before Stop")
		}
		p.Stop()
		if !returned(running) {
			t.Error("Stop returned before Start did")
		}
		if err := result(t, "Start", running); err != nil {
			t.Errorf("Start ended by Stop = %v, want nil", err)
		}
		p.Stop()
	})
	t.Run("Start returns when ctx is done", func(t *testing.T) {
		p, _, _ := newFakeProvider(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Start(ctx) }()
		cancel()
		if err := result(t, "Start", done); err != nil {
			t.Errorf("Start after its context was cancelled = %v, want nil", err)
		}
		p.Stop()
	})
}
