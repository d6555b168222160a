package workload_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

// Sidecars start in order among the init containers, the next container
// once the sidecar runs and, with a startup probe, once it has started —
// the first time only; they run beside the app containers.
func TestPodSidecarStartOrder(t *testing.T) {
	proxy := sidecarOf(shc("proxy", "sleep 2; echo ok > /tmp/up; sleep infinity"))
	proxy.StartupProbe = execProbe("test -e /tmp/up", 0, 1, 1, 10)
	setup := shc("setup", "sleep 1")
	logger := sidecarOf(shc("logger", "sleep infinity"))
	app := shc("app", "sleep infinity")
	p := newSimPod(v1.RestartPolicyAlways, []v1.Container{proxy, setup, logger}, []v1.Container{app})
	expectAt(t, p, 10, "proxy: run 0 running since 0s started=true ready=true; setup: run 0 exited 0 at 3s started=false ready=true; "+
		"logger: run 0 running since 3s started=true ready=true; app: run 0 running since 3s started=true ready=true",
		"setup after proxy's startup probe succeeded at 2s")
}

// A sidecar that exits is started again whatever the pod's policy, and its
// restart holds nothing up once the pod was initialized past it: its
// startup probe gates the next container the first time only.
func TestPodSidecarRestart(t *testing.T) {
	helper := sidecarOf(shc("helper", "sleep 2; exit 1"))
	helper.StartupProbe = execProbe("true", 0, 1, 1, 1)
	app := shc("app", "sleep infinity")
	p := newSimPod(v1.RestartPolicyNever, []v1.Container{helper}, []v1.Container{app})
	expectAt(t, p, 3.5, "helper: run 1 running since 3s started=true ready=true; app: run 0 running since 0s started=true ready=true",
		"helper ran from 0s to 2s, again after its 1s back-off; its startup probe ran at 3s")
	if prev := p.Container("helper").Previous; prev == nil || prev.ExitCode() != 1 {
		t.Errorf("helper's previous run %+v, want one that exited 1", prev)
	}
}

// A sidecar's startup probe holds the next container the first time only:
// a later sidecar that exits while the first is started again (and its
// startup probe has not yet succeeded) is started again after its own
// back-off.
func TestPodSidecarStartupGateFirstTimeOnly(t *testing.T) {
	a := sidecarOf(shc("a", "sleep 1; echo ok > /tmp/up; sleep 3; exit 1"))
	a.StartupProbe = execProbe("test -e /tmp/up", 0, 1, 1, 10)
	b := sidecarOf(shc("b", "sleep 3.5; exit 2"))
	app := shc("app", "sleep infinity")
	p := newSimPod(v1.RestartPolicyAlways, []v1.Container{a, b}, []v1.Container{app})
	expectAt(t, p, 5.75, "a: run 1 running since 5s started=false ready=false; b: run 1 running since 5.5s started=true ready=true; "+
		"app: run 0 running since 1s started=true ready=true",
		"a ran from 0s to 4s, started at 1s, again from 5s; b from 1s to 4.5s, again after its 1s back-off")
}

// Once the app containers are done for good the sidecars are stopped, the
// last first, after their preStop hooks, and not started again.
func TestPodSidecarsStopWhenAppsDone(t *testing.T) {
	first := sidecarOf(shc("first", "trap 'exit 143' TERM; sleep infinity & wait"))
	second := sidecarOf(shc("second", "trap 'sleep 1; exit 64' TERM; sleep infinity & wait"))
	second.Lifecycle = &v1.Lifecycle{PreStop: execHook("sleep 1")}
	app := shc("app", "sleep 2")
	p := newSimPod(v1.RestartPolicyNever, []v1.Container{first, second}, []v1.Container{app})
	expectAt(t, p, 20, "first: run 0 exited 143 at 4s started=false ready=false; second: run 0 exited 64 at 4s started=false ready=false; "+
		"app: run 0 exited 0 at 2s started=false ready=false",
		"app exited at 2s; second's hook until 3s, its handler until 4s; first's turn then")
	if next, ok := p.Next(); ok {
		t.Errorf("a done pod has an event at %v, want none", next.Sub(t0))
	}
}

// Stop stops the sidecars after the app containers, the last first, each
// within the grace period.
func TestPodStopSidecarOrder(t *testing.T) {
	slow := func(name string, d string) v1.Container {
		return shc(name, "trap 'sleep "+d+"; exit 64' TERM; sleep infinity & wait")
	}
	for _, tt := range []struct {
		name  string
		grace time.Duration
		want  string
	}{
		// app until 3s, second's handler until 5s, first at once.
		{"enough grace", 10 * time.Second,
			"first: run 0 exited 64 at 5s started=false ready=false; second: run 0 exited 64 at 5s started=false ready=false; app: run 0 exited 64 at 3s started=false ready=false"},
		// Grace ends at 4s: second's turn at 3s with 1s left (killed at
		// 4s), first's turn at 4s with nothing left (its handler exits at
		// once).
		{"grace over", 3 * time.Second,
			"first: run 0 exited 64 at 4s started=false ready=false; second: run 0 exited 137 at 4s started=false ready=false; app: run 0 exited 64 at 3s started=false ready=false"},
	} {
		p := newSimPod(v1.RestartPolicyAlways,
			[]v1.Container{sidecarOf(slow("first", "0")), sidecarOf(slow("second", "2"))},
			[]v1.Container{slow("app", "2")})
		p.Advance(sec(1))
		p.Stop(sec(1), tt.grace)
		p.Advance(sec(2.5))
		if !p.Container("first").Running() || !p.Container("second").Running() {
			t.Errorf("%s: at 2.5s, while app stops: %s; want both sidecars running", tt.name, describe(p))
		}
		p.Advance(sec(20))
		if got := describe(p); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// A second Stop with a shorter grace period shortens that of a sidecar that
// has had its turn.
func TestPodStopAgainShortensSidecar(t *testing.T) {
	helper := sidecarOf(shc("helper", "trap 'sleep 5; exit 64' TERM; sleep infinity & wait"))
	p := newSimPod(v1.RestartPolicyAlways, []v1.Container{helper}, []v1.Container{shc("app", "sleep infinity")})
	p.Stop(sec(1), 10*time.Second) // app exits at once, helper's turn at 1s
	p.Advance(sec(2))
	p.Stop(sec(2), time.Second)
	p.Advance(sec(20))
	if r := p.Container("helper").Current; r.ExitCode() != workload.ExitCodeSIGKILL || !r.FinishedAt().Equal(sec(3)) {
		t.Errorf("helper, stopped at 1s with 10s and at 2s with 1s: %s; want killed at 3s (137)", describe(p))
	}
}

// Probes and hooks of a pod made from a spec the caller changes later are
// those of the spec handed in: NewPod keeps a copy.
func TestNewPodCopiesSpec(t *testing.T) {
	app := shc("app", "sleep infinity")
	pod := &v1.Pod{}
	pod.Name, pod.UID, pod.Spec.Containers = "p", "u", []v1.Container{app}
	p := workload.NewPod(pod)
	pod.Spec.Containers[0].ReadinessProbe = execProbe("false", 0, 1, 1, 1)
	p.Reconcile(t0)
	p.Advance(sec(2))
	if c := p.Container("app"); !c.Ready() || c.Current.Prober != nil {
		t.Errorf("a probe added to the pod after NewPod: ready %v, prober %v; want no probe", c.Ready(), c.Current.Prober)
	}
}

// A sidecar's preStop hook runs as soon as the pod is stopped, and the
// sidecar then waits for its turn (the kubelet's killContainer runs the
// hook before waitForTurn): its 3s hook ends before the app exits at 4s,
// and it gets SIGTERM then (the fake's TestSidecarPreStopHookRunsWhileItWaitsForItsTurn).
func TestPodSidecarPreStopHookRunsWhileItWaitsForItsTurn(t *testing.T) {
	proxy := sidecarOf(shc("proxy", "trap 'exit 143' TERM; sleep infinity & wait"))
	proxy.Lifecycle = &v1.Lifecycle{PreStop: execHook("sleep 3")}
	app := shc("app", "trap 'sleep 4; exit 0' TERM; sleep infinity & wait")
	p := newSimPod(v1.RestartPolicyAlways, []v1.Container{proxy}, []v1.Container{app})
	p.Advance(sec(1))
	p.Stop(sec(1), 10*time.Second)
	p.Advance(sec(20))
	if r := p.Container("proxy").Current; r.Running() || !r.FinishedAt().Equal(sec(5)) {
		t.Errorf("proxy after Stop at 1s (its preStop hook 3s, app exits 4s later): %s; want exited at 5s", describe(p))
	}
}
