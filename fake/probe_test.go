package fake_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

var probeEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// probe is an exec probe of cmd (under sh -c) with a period of one second.
func probe(cmd string, failureThreshold int32) *v1.Probe {
	return &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", cmd}}},
		PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: failureThreshold,
	}
}

// probedPod is pod default/web with one container "web" running script.
func probedPod(script string, edit func(c *v1.Container)) *v1.Pod {
	c := v1.Container{Name: "web", Image: "busybox:1.36", Command: []string{"sh", "-c", script}}
	edit(&c)
	grace := int64(1)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec:       v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{c}, TerminationGracePeriodSeconds: &grace},
	}
}

// probeRig is a fake on a fake clock with one pod synced once.
type probeRig struct {
	t   *testing.T
	clk *clocktesting.FakeClock
	p   *fake.PodProvider
	pod *v1.Pod
	rc  *kri.ReasonCache
}

func newProbeRig(t *testing.T, pod *v1.Pod, opts ...fake.Option) *probeRig {
	t.Helper()
	clk := clocktesting.NewFakeClock(probeEpoch)
	r := &probeRig{t: t, clk: clk, p: fake.NewPodProvider(append([]fake.Option{fake.WithClock(clk)}, opts...)...), pod: pod, rc: kri.NewReasonCache()}
	r.sync()
	return r
}

func (r *probeRig) sync() {
	r.t.Helper()
	if err := r.p.SyncPod(context.Background(), r.pod, nil, r.rc); err != nil {
		r.t.Fatalf("SyncPod: %v", err)
	}
}

// web is the snapshot of container web at the clock's time.
func (r *probeRig) web() fake.ContainerSnapshot {
	r.t.Helper()
	snap, ok := r.p.Snapshot("default/web")
	if !ok {
		r.t.Fatal("the fake does not know pod default/web")
	}
	c, _ := snap.Container("web")
	return c
}

// at steps the clock to probeEpoch+d.
func (r *probeRig) at(d time.Duration) {
	r.clk.SetTime(probeEpoch.Add(d))
}

// refresh is the Ready and Started RefreshPodStatus reports for web.
func (r *probeRig) refresh() (ready, started bool) {
	var st v1.PodStatus
	r.p.RefreshPodStatus(r.pod, &st)
	cs := st.ContainerStatuses[0]
	return cs.Ready, cs.Started != nil && *cs.Started
}

// probeEvents lists the probe and kill events of web as "at type message".
func (r *probeRig) probeEvents(sub *fake.Subscription) []string {
	var out []string
	for {
		select {
		case e := <-sub.C:
			switch e.Type {
			case fake.EventProbeSucceeded, fake.EventProbeFailed, fake.EventContainerKilling, fake.EventContainerExited, fake.EventContainerStarted:
				out = append(out, strings.TrimSpace(fmt.Sprintf("%s %s %s", e.At.Sub(probeEpoch), e.Type, e.Message)))
			}
		default:
			return out
		}
	}
}

func TestReadinessFollowsItsProbe(t *testing.T) {
	pod := probedPod("sleep 3; echo ok > /tmp/ready; sleep 5; rm -f /tmp/ready; sleep infinity", func(c *v1.Container) {
		c.ReadinessProbe = probe("cat /tmp/ready", 2)
	})
	r := newProbeRig(t, pod)
	steps := []struct {
		at    time.Duration
		ready bool
	}{
		{0, false}, {2900 * time.Millisecond, false}, // no success yet
		{3 * time.Second, true},   // the probe at 3s finds the file
		{8 * time.Second, true},   // one failure (at 8s) is below failureThreshold
		{9 * time.Second, false},  // the second in a row
		{20 * time.Second, false}, // and it stays so
	}
	for _, s := range steps {
		r.at(s.at)
		if ready, started := r.refresh(); ready != s.ready || !started {
			t.Errorf("at %v: RefreshPodStatus Ready %v Started %v, want Ready %v Started true", s.at, ready, started, s.ready)
		}
		if w := r.web(); w.Ready != s.ready || w.State != pkgcontainer.ContainerStateRunning {
			t.Errorf("at %v: Snapshot Ready %v (state %s), want %v (running)", s.at, w.Ready, w.State, s.ready)
		}
	}
}

func TestLivenessFailureKillsAndSyncPodRestarts(t *testing.T) {
	pod := probedPod("echo ok > /tmp/health; sleep 2; rm -f /tmp/health; sleep infinity", func(c *v1.Container) {
		c.LivenessProbe = probe("test -e /tmp/health", 1)
	})
	r := newProbeRig(t, pod)
	sub := r.p.Subscribe(64)
	defer sub.Close()
	first := r.web().ID
	r.at(1999 * time.Millisecond)
	if w := r.web(); w.State != pkgcontainer.ContainerStateRunning {
		t.Fatalf("at 1.999s web is %s, want running (its liveness probe passes until 2s)", w.State)
	}
	r.at(2 * time.Second)
	w := r.web()
	if w.State != pkgcontainer.ContainerStateExited || w.ExitCode != 143 || !w.FinishedAt.Equal(probeEpoch.Add(2*time.Second)) {
		t.Fatalf("at 2s web is %s with exit code %d, finished %v; want exited 143 at 2s (SIGTERM after its liveness probe failed)", w.State, w.ExitCode, w.FinishedAt.Sub(probeEpoch))
	}
	want := []string{"2s ProbeFailed liveness", "2s ContainerKilling", "2s ContainerExited"}
	if got := r.probeEvents(sub); !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	r.at(5 * time.Second)
	r.sync()
	w = r.web()
	if w.ID == first || w.State != pkgcontainer.ContainerStateRunning || w.RestartCount != 1 {
		t.Errorf("after SyncPod web is %s %s with restart count %d, want a new instance running, restart count 1", w.ID, w.State, w.RestartCount)
	}
	// The new instance is probed from its own start.
	r.at(6999 * time.Millisecond)
	if w := r.web(); w.State != pkgcontainer.ContainerStateRunning {
		t.Errorf("at 6.999s the new instance is %s, want running", w.State)
	}
	r.at(7 * time.Second)
	if w := r.web(); w.State != pkgcontainer.ContainerStateExited {
		t.Errorf("at 7s the new instance is %s, want killed (2s after its start)", w.State)
	}
}

func TestStartupProbeHoldsOthersOff(t *testing.T) {
	pod := probedPod("sleep 5; echo ok > /tmp/started; sleep infinity", func(c *v1.Container) {
		c.StartupProbe = probe("test -e /tmp/started", 30)
		c.LivenessProbe = probe("test -e /tmp/started", 1)
		c.ReadinessProbe = probe("test -e /tmp/started", 1)
	})
	r := newProbeRig(t, pod)
	first := r.web().ID
	r.at(4999 * time.Millisecond)
	if ready, started := r.refresh(); ready || started {
		t.Errorf("at 4.999s Ready %v Started %v, want neither (the startup probe has not succeeded)", ready, started)
	}
	r.at(5 * time.Second)
	if ready, started := r.refresh(); !ready || !started {
		t.Errorf("at 5s Ready %v Started %v, want both", ready, started)
	}
	r.at(30 * time.Second)
	if w := r.web(); w.ID != first || w.State != pkgcontainer.ContainerStateRunning {
		t.Errorf("at 30s web is %s %s, want the first instance running (liveness held off until started)", w.ID, w.State)
	}
}

func TestStartupProbeFailureKills(t *testing.T) {
	pod := probedPod("sleep infinity", func(c *v1.Container) { c.StartupProbe = probe("false", 3) })
	r := newProbeRig(t, pod)
	r.at(1999 * time.Millisecond)
	if w := r.web(); w.State != pkgcontainer.ContainerStateRunning {
		t.Errorf("at 1.999s web is %s, want running (two failures of three)", w.State)
	}
	r.at(2 * time.Second)
	if w := r.web(); w.State != pkgcontainer.ContainerStateExited {
		t.Errorf("at 2s web is %s, want killed after the third startup failure", w.State)
	}
}

func TestInitialDelay(t *testing.T) {
	pod := probedPod("sleep infinity", func(c *v1.Container) {
		c.LivenessProbe = probe("false", 1)
		c.LivenessProbe.InitialDelaySeconds = 10
	})
	r := newProbeRig(t, pod)
	r.at(9999 * time.Millisecond)
	if w := r.web(); w.State != pkgcontainer.ContainerStateRunning {
		t.Errorf("at 9.999s web is %s, want running (initialDelaySeconds 10)", w.State)
	}
	r.at(10 * time.Second)
	if w := r.web(); w.State != pkgcontainer.ContainerStateExited {
		t.Errorf("at 10s web is %s, want killed by its first liveness probe", w.State)
	}
}

func TestScriptedProbes(t *testing.T) {
	pod := probedPod("sleep infinity", func(c *v1.Container) {
		c.ReadinessProbe = probe("true", 3)
		c.LivenessProbe = probe("false", 1)
		c.LivenessProbe.InitialDelaySeconds = 5
	})
	clk := clocktesting.NewFakeClock(probeEpoch)
	p := fake.NewPodProvider(fake.WithClock(clk))
	p.Container("default/web", "web").PassProbe(fake.LivenessProbe)
	r := &probeRig{t: t, clk: clk, p: p, pod: pod, rc: kri.NewReasonCache()}
	r.sync()
	r.at(10 * time.Second)
	if ready, _ := r.refresh(); !ready {
		t.Fatal("at 10s web is not ready, want ready (readiness true)")
	}
	p.Container("default/web", "web").FailProbe(fake.ReadinessProbe)
	r.at(12 * time.Second)
	if ready, _ := r.refresh(); !ready {
		t.Error("at 12s web is not ready, want ready (two scripted failures of three)")
	}
	r.at(13 * time.Second)
	if ready, _ := r.refresh(); ready {
		t.Error("at 13s web is ready, want not ready (three scripted failures)")
	}
	p.Container("default/web", "web").ResetProbe(fake.ReadinessProbe)
	r.at(14 * time.Second)
	if ready, _ := r.refresh(); !ready {
		t.Error("at 14s web is not ready after ResetProbe, want ready (its command, true, succeeds)")
	}
	if w := r.web(); w.State != pkgcontainer.ContainerStateRunning || w.RestartCount != 0 {
		t.Errorf("web is %s with %d restarts, want running, never restarted (liveness scripted to pass)", w.State, w.RestartCount)
	}
	p.Container("default/web", "web").ResetProbe(fake.LivenessProbe)
	r.at(15 * time.Second)
	if w := r.web(); w.State != pkgcontainer.ContainerStateExited {
		t.Errorf("at 15s web is %s, want killed: its liveness command (false) runs again", w.State)
	}
}

func TestProbesStopWhenKilled(t *testing.T) {
	pod := probedPod("trap '' TERM; echo ok > /tmp/health; sleep 2; rm -f /tmp/health; sleep infinity", func(c *v1.Container) {
		c.LivenessProbe = probe("test -e /tmp/health", 1)
		c.ReadinessProbe = probe("test -e /tmp/health", 1)
	})
	r := newProbeRig(t, pod, fake.WithMinimumGracePeriod())
	sub := r.p.Subscribe(64)
	defer sub.Close()
	r.at(time.Second)
	done := make(chan error)
	go func() { done <- r.p.KillPod(context.Background(), r.pod, pkgcontainer.Pod{ID: r.pod.UID}, nil) }()
	// KillPod waits out the 2s minimum grace period on the clock: the
	// liveness probe would fail at 2s, but it no longer runs.
	for !r.web().Terminating {
		time.Sleep(time.Millisecond)
	}
	r.at(10 * time.Second)
	if err := <-done; err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	for _, e := range r.probeEvents(sub) {
		if strings.Contains(e, "liveness") {
			t.Errorf("after KillPod: event %q; want no liveness result (the probes stop)", e)
		}
	}
	if w := r.web(); w.ExitCode != 137 || w.RestartCount != 0 {
		t.Errorf("web exited %d with %d restarts, want 137 (SIGKILL after the grace period), none", w.ExitCode, w.RestartCount)
	}
}

func TestProbesDoNotDependOnReads(t *testing.T) {
	pod := probedPod("echo ok > /tmp/health; sleep 3; rm -f /tmp/health; sleep 2; echo ok > /tmp/health; sleep infinity", func(c *v1.Container) {
		c.ReadinessProbe = probe("cat /tmp/health", 1)
	})
	run := func(read bool) []string {
		r := newProbeRig(t, pod)
		sub := r.p.Subscribe(64)
		defer sub.Close()
		for d := time.Duration(0); d <= 10*time.Second; d += 250 * time.Millisecond {
			r.at(d)
			if read {
				r.refresh()
			}
		}
		r.web()
		return r.probeEvents(sub)
	}
	often, once := run(true), run(false)
	want := []string{"3s ProbeFailed readiness", "5s ProbeSucceeded readiness"}
	if !slices.Equal(often, want) || !slices.Equal(once, want) {
		t.Errorf("probe events read every 250ms %q, read once %q; want both %q", often, once, want)
	}
}

// HTTP and TCP probes are answered by the server the container's command
// runs: an HTTP GET of a file under httpd's root succeeds while the file
// exists, a TCP probe while httpd listens.
func TestHTTPProbeFollowsTheServedFile(t *testing.T) {
	pod := probedPod("echo ok > /tmp/www/healthz; httpd -f -p 8080 -h /tmp/www & sleep 3; rm -f /tmp/www/healthz; sleep infinity & wait", func(c *v1.Container) {
		c.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
			PeriodSeconds: 1, FailureThreshold: 1}
	})
	r := newProbeRig(t, pod)
	r.at(1 * time.Second)
	if ready, _ := r.refresh(); !ready {
		t.Errorf("at 1s Ready is false, want true: httpd serves /healthz")
	}
	r.at(4 * time.Second)
	if ready, _ := r.refresh(); ready {
		t.Errorf("at 4s Ready is true, want false: the container removed /healthz at 3s, so the GET gets 404")
	}
}

func TestTCPLivenessProbeRestartsWhatDoesNotListen(t *testing.T) {
	pod := probedPod("sleep infinity", func(c *v1.Container) {
		c.LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
			PeriodSeconds: 1, FailureThreshold: 2}
	})
	r := newProbeRig(t, pod)
	first := r.web().ID
	r.at(5 * time.Second)
	if w := r.web(); w.ID == first && w.State == pkgcontainer.ContainerStateRunning {
		t.Errorf("at 5s web's first instance still runs, want it killed by its TCP liveness probe: nothing listens on 8080")
	}
}

func TestGRPCProbeSucceeds(t *testing.T) {
	pod := probedPod("sleep infinity", func(c *v1.Container) {
		c.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 9090}}, PeriodSeconds: 1}
	})
	r := newProbeRig(t, pod)
	r.at(1 * time.Second)
	if ready, _ := r.refresh(); !ready {
		t.Error("a container with a gRPC readiness probe is not ready, want ready (gRPC is outside the vocabulary: such probes succeed)")
	}
}

// A probe reads the container's files as the hooks left them too: a
// postStart hook that writes the file a readiness probe tests for makes
// the container Ready.
func TestProbeReadsWhatAHookWrote(t *testing.T) {
	pod := probedPod("sleep infinity", func(c *v1.Container) {
		c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "echo ok > /tmp/ready"}}}}
		c.ReadinessProbe = probe("test -e /tmp/ready", 1)
	})
	r := newProbeRig(t, pod)
	r.at(2 * time.Second)
	if ready, _ := r.refresh(); !ready {
		t.Errorf("at 2s Ready is false, want true: the postStart hook wrote /tmp/ready, which the readiness probe tests for")
	}
}
