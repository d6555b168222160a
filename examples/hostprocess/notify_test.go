package hostprocess

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podsync/podsynctest"
)

// recorder is the agent's PodSyncHandler in these tests: it counts the
// calls per pod.
type recorder struct{ podsynctest.Recorder }

// waitCalls waits (generously: real processes on a loaded machine) until
// the pod of uid has had more than n calls and returns the count.
func (r *recorder) waitCalls(t *testing.T, uid types.UID, n int, what string) int {
	t.Helper()
	eventually(t, 20*time.Second, func() bool { return r.Count(uid) > n }, "a HandlePodSyncByUID(%s) call after %s (had %d)", uid, what, n)
	return r.Count(uid)
}

// notifiedProvider returns a provider whose handler is a recorder.
func notifiedProvider(t *testing.T) (*Provider, *recorder) {
	p := newProvider(t)
	r := &recorder{}
	p.SetPodSyncHandler(r)
	return p, r
}

// untilFile is a container that runs until the file name appears in its
// directory, then exits with code 3.
func untilFile(name, file string) v1.Container {
	return shell(name, "while [ ! -e "+file+" ]; do sleep 0.05; done; exit 3")
}

func touch(t *testing.T, p *Provider, uid types.UID, container, file string) {
	t.Helper()
	dir, err := p.PodDir(uid)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, container, file), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNotifiesStartAndExit(t *testing.T) {
	p, r := notifiedProvider(t)
	a := makePod("notify-a", v1.RestartPolicyNever, untilFile("app", "stop"))
	b := makePod("notify-b", v1.RestartPolicyNever, shell("app", "sleep infinity"))
	mustSync(t, p, a, kri.NewReasonCache())
	mustSync(t, p, b, kri.NewReasonCache())
	if got := r.Count(a.UID); got != 1 {
		t.Fatalf("after SyncPod started app: %d calls for the pod, want 1 (the start)", got)
	}
	if got := r.Count(b.UID); got != 1 {
		t.Fatalf("after SyncPod started pod b's app: %d calls, want 1", got)
	}
	if s := current(t, p, a, "app"); s.State != pkgcontainer.ContainerStateRunning {
		t.Fatalf("app is %s before it was told to exit", s.State)
	}
	touch(t, p, a.UID, "app", "stop")
	r.waitCalls(t, a.UID, 1, "app exited")
	// The call comes once the exit is recorded: the agent reads it.
	if s := current(t, p, a, "app"); s.State != pkgcontainer.ContainerStateExited || s.ExitCode != 3 {
		t.Errorf("at the exit's call app is %s exit %d, want exited 3", s.State, s.ExitCode)
	}
	if got := r.Count(b.UID); got != 1 {
		t.Errorf("pod a's exit made %d calls for pod b, want still 1", got)
	}
}

func TestNotifiesProbeResults(t *testing.T) {
	p, r := notifiedProvider(t)
	app := shell("app", "sleep infinity")
	app.StartupProbe = execProbe("test -e started")
	app.StartupProbe.FailureThreshold = 1000 // its failures must not kill app
	app.ReadinessProbe = execProbe("test -e ready")
	pod := makePod("notify-probe", v1.RestartPolicyAlways, app)
	mustSync(t, p, pod, kri.NewReasonCache())
	n := r.Count(pod.UID) // the start
	// Nothing changes while the startup probe fails.
	time.Sleep(1500 * time.Millisecond)
	if got := r.Count(pod.UID); got != n {
		t.Fatalf("failing probes that change nothing made %d calls, want none", got-n)
	}
	startedReady := func() (bool, bool) {
		var ps v1.PodStatus
		p.RefreshPodStatus(pod, &ps)
		cs := ps.ContainerStatuses[0]
		return cs.Started != nil && *cs.Started, cs.Ready
	}

	touch(t, p, pod.UID, "app", "started")
	n = r.waitCalls(t, pod.UID, n, "the startup probe succeeded")
	if started, ready := startedReady(); !started || ready {
		t.Errorf("at the startup probe's call: Started %v Ready %v, want true false", started, ready)
	}

	touch(t, p, pod.UID, "app", "ready")
	n = r.waitCalls(t, pod.UID, n, "the readiness probe succeeded")
	if started, ready := startedReady(); !started || !ready {
		t.Errorf("at the readiness probe's call: Started %v Ready %v, want true true", started, ready)
	}

	dir, _ := p.PodDir(pod.UID)
	if err := os.Remove(filepath.Join(dir, "app", "ready")); err != nil {
		t.Fatal(err)
	}
	r.waitCalls(t, pod.UID, n, "the readiness probe failed")
	if _, ready := startedReady(); ready {
		t.Errorf("at the readiness failure's call the container is still Ready")
	}
}

func execProbe(script string) *v1.Probe {
	return &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", script}}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
	}
}

func TestNotifiesTheRetryOfAFailedStart(t *testing.T) {
	p, r := notifiedProvider(t)
	pod := makePod("notify-retry", v1.RestartPolicyAlways, ctr("app", "/nonexistent/app"))
	rc := kri.NewReasonCache()
	if err := syncPod(t, p, pod, rc); err == nil {
		t.Fatal("SyncPod of a missing executable succeeded")
	}
	// A second failed sync (for another reason) adds no second retry.
	if err := syncPod(t, p, pod, rc); err == nil {
		t.Fatal("SyncPod of a missing executable succeeded")
	}
	if got := p.h.Pending(pod.UID); got != 1 {
		t.Errorf("after two failed syncs %d retries pending, want 1", got)
	}
	if got := r.Count(pod.UID); got != 0 {
		t.Fatalf("a failed start made %d calls at once, want none (nothing ran)", got)
	}
	start := time.Now()
	r.waitCalls(t, pod.UID, 0, "a failed start")
	if waited := time.Since(start); waited < startRetryDelay/2 {
		t.Errorf("the retry was asked for after %v, want about %v", waited, startRetryDelay)
	}
}

func TestNotifiesThePostStartHookKill(t *testing.T) {
	p, r := notifiedProvider(t)
	c := shell("app", "trap 'exit 143' TERM; sleep infinity & wait")
	c.Lifecycle = &v1.Lifecycle{PostStart: execHandler("exit 7")}
	pod := makePod("notify-poststart", v1.RestartPolicyAlways, c)
	if err := syncPod(t, p, pod, kri.NewReasonCache()); err == nil {
		t.Fatal("SyncPod with a failing postStart hook succeeded")
	}
	// The start and the exit of the killed run, both before SyncPod
	// returned; then the retry.
	if got := r.Count(pod.UID); got != 2 {
		t.Fatalf("after the hook killed app: %d calls, want 2 (start, exit)", got)
	}
	r.waitCalls(t, pod.UID, 2, "the failed start to retry")
}

func TestNotifiesKillPod(t *testing.T) {
	p, r := notifiedProvider(t)
	pod := makePod("notify-kill", v1.RestartPolicyNever, shell("app", "exit 0"))
	mustSync(t, p, pod, kri.NewReasonCache())
	waitContainerExited(t, p, pod, "app")
	n := r.waitCalls(t, pod.UID, 1, "app exited")
	// Nothing runs: KillPod stops only the sandbox, and says so.
	if err := p.KillPod(testCtx(t), pod, pkgcontainer.Pod{}, int64p(1)); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	if got := r.Count(pod.UID); got != n+1 {
		t.Errorf("KillPod made %d calls, want 1", got-n)
	}

	// With a container running: its exit, then KillPod's own, before
	// KillPod returns.
	pod2 := makePod("notify-kill2", v1.RestartPolicyAlways, shell("app", "sleep infinity"))
	mustSync(t, p, pod2, kri.NewReasonCache())
	if err := p.KillPod(testCtx(t), pod2, pkgcontainer.Pod{}, int64p(1)); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	if got := r.Count(pod2.UID); got != 3 {
		t.Errorf("start and KillPod made %d calls, want 3 (start, exit, kill)", got)
	}
}

func TestNoCallsAfterStop(t *testing.T) {
	p, r := notifiedProvider(t)
	failing := makePod("stop-failing", v1.RestartPolicyAlways, ctr("app", "/nonexistent/app"))
	running := makePod("stop-running", v1.RestartPolicyAlways, shell("app", "sleep infinity"))
	_ = syncPod(t, p, failing, kri.NewReasonCache())
	mustSync(t, p, running, kri.NewReasonCache())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Start(ctx)
	p.Stop() // kills app, cancels the pending retry
	nf, nr := r.Count(failing.UID), r.Count(running.UID)
	if p.h.Pending(failing.UID) != 0 {
		t.Error("Stop left a retry pending")
	}
	time.Sleep(startRetryDelay + 500*time.Millisecond)
	if r.Count(failing.UID) != nf || r.Count(running.UID) != nr {
		t.Errorf("calls after Stop: failing %d→%d, running %d→%d", nf, r.Count(failing.UID), nr, r.Count(running.UID))
	}
	if nr != 1 {
		t.Errorf("running pod: %d calls up to Stop, want 1 (its start; the kill of Stop is not reported)", nr)
	}
}
