package remotebackend_test

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/examples/remotebackend"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podsync/podsynctest"
)

// recorder is the agent's PodSyncHandler in these tests: it counts the
// calls per pod.
type recorder struct{ podsynctest.Recorder }

// expectCalls waits until pod uid has had want calls (Run calls from its
// own goroutine once the fake clock fires its timer), and fails if it has
// more.
func (r *recorder) expectCalls(t *testing.T, uid types.UID, want int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for r.Count(uid) < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := r.Count(uid); got != want {
		t.Fatalf("%s: %d HandlePodSyncByUID(%s) calls, want %d", what, got, uid, want)
	}
}

// startedProvider returns a provider on a fake clock with a recorder as its
// handler, its Start running until the test ends.
func startedProvider(t *testing.T) (*remotebackend.Provider, *remotebackend.Service, *testingclock.FakeClock, *recorder) {
	t.Helper()
	p, svc, fc := newFakeProvider(t)
	r := &recorder{}
	p.SetPodSyncHandler(r)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		p.Stop()
		<-done
	})
	return p, svc, fc, r
}

// stepTo sets the fake clock to ms and, when Run had a timer due by then,
// waits until Run has carried the events out (it has set its next timer).
func stepTo(t *testing.T, fc *testingclock.FakeClock, ms int) {
	t.Helper()
	waitForWaiters(t, fc)
	fc.SetTime(at(ms))
	waitForWaiters(t, fc)
}

// The Service's changes of a pod each make one call for that pod, at the
// instant it carries them out: the start SyncPod asked for, the exit, the
// restart after the back-off.
func TestNotifiesTheServicesChanges(t *testing.T) {
	p, svc, fc, r := startedProvider(t)
	app := sh("app", "sleep 1; exit 3")
	app.ReadinessProbe = execProbe("/tmp/never", 1) // keeps a timer of Run armed
	pod := newPod(v1.RestartPolicyAlways, app)
	other := newPod(v1.RestartPolicyAlways, sh("app", "sleep infinity"))
	rc := kri.NewReasonCache()
	for _, pd := range []*v1.Pod{pod, other} {
		if err := p.SyncPod(context.Background(), pd, nil, rc); err != nil {
			t.Fatal(err)
		}
	}
	r.expectCalls(t, pod.UID, 1, "SyncPod started app")
	r.expectCalls(t, other.UID, 1, "SyncPod started the other pod's app")

	stepTo(t, fc, 999) // a probe that fails again: no change
	r.expectCalls(t, pod.UID, 1, "at 999ms, nothing changed")
	stepTo(t, fc, 1000)
	r.expectCalls(t, pod.UID, 2, "at 1s app exited")
	if c := container(t, svc, pod, "app"); c.Current.State != remotebackend.RunExited || c.Current.ExitCode != 3 {
		t.Errorf("at the exit's call: %s, want exited 3", describe(c))
	}
	stepTo(t, fc, 1199)
	r.expectCalls(t, pod.UID, 2, "during the back-off")
	stepTo(t, fc, 1200)
	r.expectCalls(t, pod.UID, 3, "at 1.2s app restarted")
	if c := container(t, svc, pod, "app"); c.RestartCount != 1 || c.Current.State != remotebackend.RunRunning {
		t.Errorf("at the restart's call: %s, want running, restarted once", describe(c))
	}
	r.expectCalls(t, other.UID, 1, "the other pod, which did not change")
}

// A probe result that flips Ready or Started makes a call; one that does
// not makes none.
func TestNotifiesProbeResults(t *testing.T) {
	p, _, fc, r := startedProvider(t)
	web := sh("web", "sleep 1.5; echo ok > /tmp/ready; sleep infinity")
	web.ReadinessProbe = execProbe("/tmp/ready", 1)
	slow := sh("slow", "sleep 2.5; echo ok > /tmp/started; sleep infinity")
	slow.StartupProbe = execProbe("/tmp/started", 100)
	pod := newPod(v1.RestartPolicyAlways, web, slow)
	rc := kri.NewReasonCache()
	if err := p.SyncPod(context.Background(), pod, nil, rc); err != nil {
		t.Fatal(err)
	}
	r.expectCalls(t, pod.UID, 1, "SyncPod started web and slow")
	stepTo(t, fc, 1000)
	r.expectCalls(t, pod.UID, 1, "at 1s both probes failed again")
	stepTo(t, fc, 2000)
	r.expectCalls(t, pod.UID, 2, "at 2s web's readiness probe succeeded")
	if cs := apiStatus(t, refresh(t, p, pod, rc).ContainerStatuses, "web"); !cs.Ready {
		t.Errorf("at the readiness call web is not Ready: %+v", cs)
	}
	stepTo(t, fc, 3000)
	r.expectCalls(t, pod.UID, 3, "at 3s slow's startup probe succeeded")
	if cs := apiStatus(t, refresh(t, p, pod, rc).ContainerStatuses, "slow"); cs.Started == nil || !*cs.Started {
		t.Errorf("at the startup call slow has not Started: %+v", cs)
	}
}

// KillPod's exits, a start failure retried after the back-off and
// DeletePod (an informer's delete event) are reported too.
func TestNotifiesKillRetryAndDelete(t *testing.T) {
	p, _, fc, r := startedProvider(t)
	pod := newPod(v1.RestartPolicyAlways, sh("app", "sleep infinity"))
	missing := newPod(v1.RestartPolicyAlways, ctr("app", "/nonexistent/app"))
	rc := kri.NewReasonCache()
	if err := p.SyncPod(context.Background(), pod, nil, rc); err != nil {
		t.Fatal(err)
	}
	r.expectCalls(t, pod.UID, 1, "SyncPod started app")
	if err := p.KillPod(context.Background(), pod, pkgcontainer.Pod{}, nil); err != nil {
		t.Fatal(err)
	}
	r.expectCalls(t, pod.UID, 2, "KillPod: app exited on SIGTERM")
	if err := p.DeletePod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	r.expectCalls(t, pod.UID, 3, "DeletePod")

	if err := p.SyncPod(context.Background(), missing, nil, rc); err == nil {
		t.Fatal("SyncPod of a missing executable returned no error")
	}
	r.expectCalls(t, missing.UID, 1, "the start failed")
	stepTo(t, fc, 200)
	r.expectCalls(t, missing.UID, 2, "at 200ms the back-off ended and the start failed again")
}

// After Stop the provider calls no more, though the Service goes on.
func TestNoCallsAfterStop(t *testing.T) {
	p, svc, fc := newFakeProvider(t)
	r := &recorder{}
	p.SetPodSyncHandler(r)
	pod := newPod(v1.RestartPolicyAlways, sh("app", "exit 1"))
	if err := p.SyncPod(context.Background(), pod, nil, kri.NewReasonCache()); err != nil {
		t.Fatal(err)
	}
	r.expectCalls(t, pod.UID, 1, "SyncPod started app")
	p.Stop()
	fc.SetTime(at(5000))
	if c := container(t, svc, pod, "app"); c.RestartCount == 0 {
		t.Fatalf("the Service did not go on: %s", describe(c))
	}
	if got := r.Count(pod.UID); got != 1 {
		t.Errorf("%d calls after Stop, want none", got-1)
	}
}
