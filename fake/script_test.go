package fake_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

var errBoom = errors.New("boom")

func TestExitAfterOverridesTheCommand(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.p.Container("default/web", "app").ExitAfter(5*time.Second, 3)
	f.mustSync(pod)
	f.clock.Step(4 * time.Second)
	if !running(f.current(pod, "app")) {
		t.Fatal("container exited before its scripted 5s")
	}
	f.clock.Step(time.Second)
	c := f.current(pod, "app")
	if c.State != pkgcontainer.ContainerStateExited || c.ExitCode != 3 || !c.FinishedAt.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("after 5s: %+v, want exited 3 at t0+5s", c)
	}
	// A crash loop: every run exits with 3 after 5s.
	f.mustSync(pod)
	f.clock.Step(5 * time.Second)
	if c := f.current(pod, "app"); c.RestartCount != 1 || c.ExitCode != 3 {
		t.Fatalf("second run: %+v, want restart 1 exiting 3", c)
	}
}

func TestStartLatencyKeepsTheContainerCreated(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "10"))
	f.p.Container("default/web", "app").StartLatency(2 * time.Second)
	f.mustSync(pod)
	if c := f.current(pod, "app"); c.State != pkgcontainer.ContainerStateCreated {
		t.Fatalf("during the start latency: %s, want created", c.State)
	}
	f.mustSync(pod) // must not start a second instance
	f.clock.Step(2 * time.Second)
	c := f.current(pod, "app")
	if c.State != pkgcontainer.ContainerStateRunning || !c.StartedAt.Equal(t0.Add(2*time.Second)) || len(f.status(pod).ContainerStatuses) != 1 {
		t.Fatalf("after the latency: %+v, want one instance running since t0+2s", c)
	}
	f.clock.Step(10 * time.Second)
	if c := f.current(pod, "app"); c.State != pkgcontainer.ContainerStateExited || !c.FinishedAt.Equal(t0.Add(12*time.Second)) {
		t.Fatalf("sleep 10 after a 2s latency: %+v, want exited at t0+12s", c)
	}
}

func TestMethodFaults(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	other := newPod("other", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(pod)
	f.mustSync(other)

	if err := f.p.Pod("default/web").Fail(fake.MethodKillPod, 1, errBoom); err != nil {
		t.Fatal(err)
	}
	if err := f.kill(other, nil); err != nil {
		t.Fatalf("a fault scripted for web made KillPod of other fail: %v", err)
	}
	if err := f.kill(pod, nil); !errors.Is(err, errBoom) {
		t.Fatalf("first KillPod = %v, want the scripted error", err)
	}
	if !running(f.current(pod, "app")) {
		t.Fatal("a failed KillPod stopped the container")
	}
	if err := f.kill(pod, nil); err != nil {
		t.Fatalf("second KillPod = %v, want the fault used up", err)
	}

	if err := f.p.Fail(fake.MethodGetPodStatus, fake.Always, errBoom); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := f.p.GetPodStatus(context.Background(), other); !errors.Is(err, errBoom) {
			t.Fatalf("GetPodStatus = %v, want the scripted error every time", err)
		}
	}
	if err := f.p.Fail(fake.MethodSyncPod, 2, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		err := f.p.SyncPod(context.Background(), other, nil, f.rc)
		if (i < 2) != (err != nil) {
			t.Fatalf("SyncPod #%d = %v; want an error for the first 2 only", i+1, err)
		}
	}
}

func TestFailedStartsComeInOrder(t *testing.T) {
	f := newFixture(t)
	errA, errB := errors.New("A"), errors.New("B")
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.p.Container("default/web", "app").FailStarts(1, errA, "").FailStarts(1, errB, "")
	for _, want := range []error{errA, errB, nil} {
		if err := f.sync(pod); !errors.Is(err, want) && (want != nil || err != nil) {
			t.Fatalf("SyncPod = %v, want %v", err, want)
		}
	}
}

func TestScriptsCanChangeWhilePodsRun(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(pod)
	f.p.Container("default/web", "app").IgnoreSIGTERM()
	done := f.killAsync(pod, ptr[int64](5))
	f.waitTerminating(pod, "app")
	f.clock.Step(5 * time.Second)
	if err := recv(t, "KillPod", done); err != nil {
		t.Fatal(err)
	}
	if c := f.current(pod, "app"); c.ExitCode != 137 {
		t.Fatalf("exit code %d: IgnoreSIGTERM scripted after the start must apply to the running container", c.ExitCode)
	}
}

func TestInterceptorsWrapTheFake(t *testing.T) {
	var seen []string
	f := newFixture(t, fake.WithInterceptors(interceptor.PodFuncs{
		SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
			seen = append(seen, "SyncPod "+pod.Name)
			if pod.Name == "blocked" {
				return errBoom
			}
			return next.SyncPod(ctx, pod, st, rc)
		},
	}))
	if err := f.sync(newPod("blocked", v1.RestartPolicyAlways, container("app"))); !errors.Is(err, errBoom) {
		t.Fatalf("SyncPod = %v, want the interceptor's error", err)
	}
	web := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(web)
	if !running(f.current(web, "app")) || len(seen) != 2 {
		t.Fatalf("the interceptor must wrap the real SyncPod: seen %v", seen)
	}
	if _, ok := f.p.Snapshot("default/blocked"); ok {
		t.Fatal("the intercepted call reached the fake")
	}
	// The call log shows what the caller saw.
	if failed := f.p.Calls(fake.ForMethod(fake.MethodSyncPod), fake.Failed()); len(failed) != 1 || failed[0].Pod.Name != "blocked" {
		t.Fatalf("failed SyncPod calls = %+v, want the intercepted one", failed)
	}

	// Interceptors can be replaced while calls are in flight.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				_, _ = f.p.GetPodStatus(context.Background(), web)
			}
		})
	}
	f.p.SetInterceptors(interceptor.PodFuncs{GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
		return nil, errBoom
	}})
	wg.Wait()
	if _, err := f.p.GetPodStatus(context.Background(), web); !errors.Is(err, errBoom) {
		t.Fatalf("GetPodStatus = %v after SetInterceptors, want the new interceptor's error", err)
	}
	f.p.SetInterceptors(interceptor.PodFuncs{})
	if _, err := f.p.GetPodStatus(context.Background(), web); err != nil {
		t.Fatalf("GetPodStatus = %v after clearing interceptors", err)
	}
}

func TestCallLog(t *testing.T) {
	f := newFixture(t, fake.WithCallLogSize(3))
	web := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(web) // GetPodStatus + SyncPod
	if err := f.kill(web, ptr[int64](7)); err != nil {
		t.Fatal(err)
	} // GetPodStatus + KillPod
	_, _ = f.p.GetPods(context.Background(), true)

	calls := f.p.Calls()
	if len(calls) != 3 {
		t.Fatalf("log holds %d calls, want the latest 3", len(calls))
	}
	if calls[0].Method != fake.MethodGetPodStatus || calls[1].Method != fake.MethodKillPod || calls[2].Method != fake.MethodGetPods {
		t.Fatalf("calls out of order: %+v", calls)
	}
	if kill := calls[1]; kill.Pod.Key() != "default/web" || kill.GracePeriodOverride == nil || *kill.GracePeriodOverride != 7 || kill.Seq != 4 {
		t.Errorf("KillPod call = %+v, want pod default/web, grace 7, seq 4", kill)
	}
	if !calls[2].All {
		t.Error("GetPods call does not record all=true")
	}
	if got := f.p.Calls(fake.ForPod("default/web")); len(got) != 2 {
		t.Errorf("ForPod filter kept %d calls, want 2", len(got))
	}
	f.p.ResetCalls()
	if got := f.p.Calls(); len(got) != 0 {
		t.Fatalf("after ResetCalls: %d calls", len(got))
	}
	_, _ = f.p.GetPods(context.Background(), false)
	if got := f.p.Calls(); len(got) != 1 || got[0].Seq != 6 {
		t.Fatalf("after reset, next call = %+v, want seq 6", got)
	}
}

func TestBadFaultScriptsAreErrors(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name   string
		script func() error
		want   string
	}{
		{"a count of 0", func() error { return f.p.Fail(fake.MethodKillPod, 0, errBoom) },
			"cannot script KillPod to fail 0 times: give a count of at least 1, or Always"},
		{"a count of 0 for a pod", func() error { return f.p.Pod("default/web").Fail(fake.MethodSyncPod, 0, errBoom) },
			"cannot script SyncPod to fail 0 times"},
		{"a method without error", func() error { return f.p.Fail(fake.MethodStop, 1, errBoom) },
			`cannot script "Stop" to fail`},
		{"GetPods for a pod", func() error { return f.p.Pod("default/web").Fail(fake.MethodGetPods, 1, errBoom) },
			`cannot script GetPods to fail for pod "default/web": it is not called for one pod; use PodProvider.Fail`},
		{"CleanupPods for a pod", func() error { return f.p.Pod("default/web").Fail(fake.MethodCleanupPods, fake.Always, errBoom) },
			`cannot script CleanupPods to fail for pod "default/web"`},
	} {
		if err := tc.script(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	// Nothing was scripted.
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(pod)
	if err := f.kill(pod, nil); err != nil {
		t.Errorf("KillPod = %v after rejected scripts, want nil", err)
	}
	if _, err := f.p.GetPods(context.Background(), true); err != nil {
		t.Errorf("GetPods = %v after rejected scripts, want nil", err)
	}
}

// TestInterceptorsWrapSetPodSyncHandler checks that the fake's
// SetPodSyncHandler goes through the interceptors too, also the one
// WithPodSyncHandler makes: here the interceptor hands the fake a handler
// that counts before the agent's.
func TestInterceptorsWrapSetPodSyncHandler(t *testing.T) {
	var agent, relayed atomic.Int64
	f := newFixture(t,
		fake.WithPodSyncHandler(kri.PodSyncHandlerFunc(func(types.UID) { agent.Add(1) })),
		fake.WithInterceptors(interceptor.PodFuncs{
			SetPodSyncHandler: func(next kri.PodSyncNotifier, h kri.PodSyncHandler) {
				next.SetPodSyncHandler(kri.PodSyncHandlerFunc(func(uid types.UID) {
					relayed.Add(1)
					h.HandlePodSyncByUID(uid)
				}))
			},
		}))
	f.mustSync(newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity")))
	if relayed.Load() == 0 || relayed.Load() != agent.Load() {
		t.Fatalf("the agent's handler was called %d times, the interceptor's %d: want every call through the interceptor", agent.Load(), relayed.Load())
	}
}
