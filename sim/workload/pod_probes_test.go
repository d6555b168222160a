package workload_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kri-kit/testkit/sim/workload"
)

// shc is a container named name running sh -c script.
func shc(name, script string) v1.Container {
	return v1.Container{Name: name, Image: "busybox", Command: []string{"sh", "-c", script}}
}

// sidecarOf returns c as a restartable init container.
func sidecarOf(c v1.Container) v1.Container {
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// newSimPod returns the simulation of a pod with the given restart policy,
// init and app containers, a back-off of 1s doubling to 4s and a grace
// period of 5s, reconciled at t0.
func newSimPod(policy v1.RestartPolicy, init, app []v1.Container) *workload.Pod {
	pod := &v1.Pod{}
	pod.Name, pod.Namespace, pod.UID = "p", "ns", "u"
	pod.Spec.RestartPolicy, pod.Spec.InitContainers, pod.Spec.Containers = policy, init, app
	grace := int64(5)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	p := workload.NewPod(pod)
	p.BackOff = workload.BackOff{Initial: time.Second, Max: 4 * time.Second}
	p.Reconcile(t0)
	p.Advance(t0)
	return p
}

// describe is one line per container of p: its runs, state and
// Started/Ready.
func describe(p *workload.Pod) string {
	var out []string
	for _, c := range p.Containers() {
		s := c.Name + ":"
		switch r := c.Current; {
		case r == nil:
			s += " none"
		case r.Running():
			s += fmt.Sprintf(" run %d running since %v", r.Restarts, r.StartedAt().Sub(t0))
		default:
			s += fmt.Sprintf(" run %d exited %d at %v", r.Restarts, r.ExitCode(), r.FinishedAt().Sub(t0))
		}
		s += fmt.Sprintf(" started=%v ready=%v", c.Started(), c.Ready())
		if w := c.Waiting; w != nil {
			s += fmt.Sprintf(" waiting %v until %v", w.Err, w.Until.Sub(t0))
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// expectAt advances p to at seconds and fails unless describe(p) is want;
// why says what the expectation rests on.
func expectAt(t *testing.T, p *workload.Pod, at float64, want, why string) {
	t.Helper()
	p.Advance(sec(at))
	if got := describe(p); got != want {
		t.Errorf("at %vs (%s):\n got %s\nwant %s", at, why, got, want)
	}
}

// A readiness probe decides Ready, a startup probe Started (and holds the
// others off); the probe times are events of the pod's schedule.
func TestPodReadinessAndStartupProbes(t *testing.T) {
	web := shc("web", "sleep 2; echo ok > /tmp/ready; sleep infinity")
	web.StartupProbe = execProbe("test -e /tmp/ready", 0, 1, 1, 30)
	web.ReadinessProbe = execProbe("cat /tmp/ready", 0, 1, 1, 1)
	plain := shc("plain", "sleep infinity")
	p := newSimPod(v1.RestartPolicyAlways, nil, []v1.Container{web, plain})
	if next, ok := p.Next(); !ok || !next.Equal(sec(1)) {
		t.Fatalf("Next after the start and the first probes: %v %v, want the next probes at 1s", next.Sub(t0), ok)
	}
	for _, check := range []struct {
		at             float64
		started, ready bool
	}{
		{0, false, false}, {1.5, false, false}, {2, true, true}, {5, true, true},
	} {
		p.Advance(sec(check.at))
		c := p.Container("web")
		if c.Started() != check.started || c.Ready() != check.ready {
			t.Errorf("at %vs: web Started %v, Ready %v; want %v, %v (%s)", check.at, c.Started(), c.Ready(), check.started, check.ready, describe(p))
		}
		if pl := p.Container("plain"); !pl.Started() || !pl.Ready() {
			t.Errorf("at %vs: plain (no probes) Started %v, Ready %v; want both", check.at, pl.Started(), pl.Ready())
		}
	}
	if next, ok := p.Next(); !ok || !next.Equal(sec(6)) {
		t.Errorf("Next at 5s: %v %v, want the next readiness probe at 6s", next.Sub(t0), ok)
	}
}

// A failed liveness probe kills the run with the probe's grace period and
// the pod starts it again as the restart policy says; under Never it stays
// exited and its probes stop.
func TestPodLivenessKill(t *testing.T) {
	for _, tt := range []struct {
		policy   v1.RestartPolicy
		probeTGP *int64 // the probe's terminationGracePeriodSeconds
		want     string
	}{
		// The probe fails at 2s; the container ignores SIGTERM: killed
		// when the probe's 2s are over, restarted after the 1s back-off.
		{v1.RestartPolicyAlways, ptr(int64(2)), "web: run 1 running since 5s started=true ready=true"},
		// Without the probe's own, the pod's 5s.
		{v1.RestartPolicyOnFailure, nil, "web: run 0 exited 137 at 7s started=false ready=false waiting CrashLoopBackOff until 8s"},
		{v1.RestartPolicyNever, ptr(int64(2)), "web: run 0 exited 137 at 4s started=false ready=false"},
	} {
		web := shc("web", "trap '' TERM; echo ok > /tmp/alive; sleep 2; rm -f /tmp/alive; sleep infinity")
		web.LivenessProbe = execProbe("test -e /tmp/alive", 1, 1, 1, 1)
		web.LivenessProbe.TerminationGracePeriodSeconds = tt.probeTGP
		p := newSimPod(tt.policy, nil, []v1.Container{web})
		p.Advance(sec(7.5))
		if got := describe(p); got != tt.want {
			t.Errorf("%s, probe grace %s: at 7.5s got %q, want %q", tt.policy, fmt.Sprint(deref(tt.probeTGP)), got, tt.want)
		}
		if tt.policy == v1.RestartPolicyNever {
			if next, ok := p.Next(); ok {
				t.Errorf("Never: the killed container's pod has an event at %v, want none (its probes stopped)", next.Sub(t0))
			}
		}
	}
}

// deref is *v, or "unset".
func deref(v *int64) any {
	if v == nil {
		return "unset"
	}
	return *v
}

// Once the pod is stopped its liveness probe no longer runs, its
// readiness probe until the run exits; nothing starts again.
func TestPodProbesStopWithPod(t *testing.T) {
	web := shc("web", "trap '' TERM; echo ok > /tmp/f; sleep 1; rm -f /tmp/f; sleep infinity")
	web.LivenessProbe = execProbe("test -e /tmp/f", 0, 1, 1, 1)
	web.ReadinessProbe = execProbe("test -e /tmp/f", 0, 1, 1, 1)
	p := newSimPod(v1.RestartPolicyAlways, nil, []v1.Container{web})
	p.Advance(sec(0.5))
	p.Stop(sec(0.5), 3*time.Second)
	p.Advance(sec(1.5))
	c := p.Container("web")
	if !c.Running() || c.Ready() {
		t.Errorf("at 1.5s, stopped at 0.5s with 3s grace: %s; want web running (liveness no longer kills it) and not ready (readiness still runs)", describe(p))
	}
	p.Advance(sec(10))
	if got, want := describe(p), "web: run 0 exited 137 at 3.5s started=false ready=false"; got != want {
		t.Errorf("after the grace period: %q, want %q", got, want)
	}
	if next, ok := p.Next(); ok {
		t.Errorf("the stopped pod has an event at %v, want none", next.Sub(t0))
	}
}

// HTTP and TCP probes are answered by the server the command runs; a
// caller's ProbeFunc decides what it overrides.
func TestPodNetProbesAndProbeFunc(t *testing.T) {
	web := shc("web", "echo ok > /www/healthz; httpd -f -p 8080 -h /www & sleep 3; rm -f /www/healthz; sleep infinity & wait")
	web.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1}
	tcp := shc("tcp", "sleep 2; httpd -f -p 9090 -h /www")
	tcp.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(9090)}}, PeriodSeconds: 1}
	grpc := shc("grpc", "sleep infinity")
	grpc.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 9000}}, PeriodSeconds: 1}
	pod := &v1.Pod{}
	pod.Name, pod.UID, pod.Spec.Containers = "p", "u", []v1.Container{web, tcp, grpc}
	p := workload.NewPod(pod)
	var asked []string
	p.ProbeFunc = func(c *workload.PodContainer, r *workload.Run) workload.ProbeFunc {
		def := workload.DefaultProbeFunc(c, r)
		return func(kind workload.ProbeKind, probe *v1.Probe, at time.Time) bool {
			if c.Name == "grpc" {
				asked = append(asked, at.Sub(t0).String())
				return at.Before(sec(1))
			}
			return def(kind, probe, at)
		}
	}
	p.Reconcile(t0)
	ready := func() string {
		var s []string
		for _, c := range p.App {
			s = append(s, fmt.Sprintf("%s=%v", c.Name, c.Ready()))
		}
		return strings.Join(s, " ")
	}
	for _, tt := range []struct {
		at   float64
		want string
	}{
		{0, "web=true tcp=false grpc=true"},
		{2, "web=true tcp=true grpc=false"},
		{3, "web=false tcp=true grpc=false"},
	} {
		p.Advance(sec(tt.at))
		if got := ready(); got != tt.want {
			t.Errorf("at %vs: ready %s, want %s", tt.at, got, tt.want)
		}
	}
	if strings.Join(asked, " ") != "0s 1s 2s 3s" {
		t.Errorf("the caller's ProbeFunc was asked at %v, want 0s to 3s", asked)
	}
}

// A TCP liveness probe keeps probing: the run whose server its command
// kills (kill $!) is killed once the probe fails, though it runs on; an
// HTTP or TCP startup probe holds Started until the server listens.
func TestPodNetProbesServerStops(t *testing.T) {
	tcp := func(port int32, threshold int32) *v1.Probe {
		return &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(port)}}, PeriodSeconds: 1, FailureThreshold: threshold, SuccessThreshold: 1}
	}
	web := shc("web", "trap 'exit 143' TERM; httpd -f -p 8080 -h /www & sleep 3; kill $!; sleep infinity & wait")
	web.LivenessProbe = tcp(8080, 1)
	late := shc("late", "echo ok > /www/healthz; sleep 2; httpd -f -p 8081 -h /www & sleep infinity & wait")
	late.StartupProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8081)}}, PeriodSeconds: 1, FailureThreshold: 10, SuccessThreshold: 1}
	lateTCP := shc("latetcp", "sleep 2; httpd -f -p 8082 -h /www & sleep infinity & wait")
	lateTCP.StartupProbe = tcp(8082, 10)
	p := newSimPod(v1.RestartPolicyAlways, nil, []v1.Container{web, late, lateTCP})
	expectAt(t, p, 1.5, "web: run 0 running since 0s started=true ready=true; late: run 0 running since 0s started=false ready=false; latetcp: run 0 running since 0s started=false ready=false",
		"nothing listens on 8081 and 8082 before 2s")
	expectAt(t, p, 2.5, "web: run 0 running since 0s started=true ready=true; late: run 0 running since 0s started=true ready=true; latetcp: run 0 running since 0s started=true ready=true",
		"the startup probes succeed at 2s, when the servers listen; web's liveness passes while its server listens")
	rest := "; late: run 0 running since 0s started=true ready=true; latetcp: run 0 running since 0s started=true ready=true"
	expectAt(t, p, 3.5, "web: run 0 exited 143 at 3s started=false ready=false waiting CrashLoopBackOff until 4s"+rest,
		"web's server is killed at 3s, its command runs on: its liveness probe fails then, and SIGTERM ends it (exit 143)")
	expectAt(t, p, 4.5, "web: run 1 running since 4s started=true ready=true"+rest, "restarted after the 1s back-off")
}

// A failed postStart hook is the reason of the wait for the restart.
func TestPodWaitingAfterPostStartFailure(t *testing.T) {
	app := shc("app", "sleep infinity")
	app.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "sleep 1; exit 3"}}}}
	p := newSimPod(v1.RestartPolicyAlways, nil, []v1.Container{app})
	p.Advance(sec(1.5))
	c := p.Container("app")
	r := c.Current
	if r.Running() || r.ExitCode() != workload.ExitCodeSIGTERM || !r.FinishedAt().Equal(sec(1)) || !errors.Is(r.HookError, workload.ErrPostStartHook) {
		t.Fatalf("after a postStart hook that exits 3 at 1s: %s, hook error %v; want the run killed at 1s (143) with ErrPostStartHook", describe(p), r.HookError)
	}
	if w := c.Waiting; w == nil || !errors.Is(w.Err, workload.ErrPostStartHook) || !strings.Contains(w.Message, "exited with code 3") || !w.Until.Equal(sec(2)) {
		t.Errorf("waiting %+v, want ErrPostStartHook saying the hook exited with code 3, until 2s", w)
	}
	p.Advance(sec(2))
	if c.Current.Restarts != 1 || c.Current.HookError != nil || errors.Is(c.Current.HookError, workload.ErrCrashLoopBackOff) {
		t.Errorf("after the back-off: %s, want the second run started at 2s", describe(p))
	}
}

// The GET of an HTTP probe reaches the container's server, which logs each
// one as it logs any request (httpd -vv): the probes' requests are in the
// container's output.
func TestPodHTTPProbeRequestsAreInTheServersLog(t *testing.T) {
	web := shc("web", "httpd -f -vv -p 8080 -h /www")
	web.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1}
	p := newSimPod(v1.RestartPolicyNever, nil, []v1.Container{web})
	p.Advance(sec(2.5))
	out, _ := p.Container("web").Current.FilesAt(sec(2.5))(workload.Stdout)
	one := workload.ProberAddr + ": url:/healthz\n" + workload.ProberAddr + ": response:404\n"
	if got := strings.Count(out, one); got != 3 {
		t.Errorf("web's output after probes at 0s, 1s and 2s: %q, want the server's log of the 3 GETs, %q each", out, one)
	}
}
