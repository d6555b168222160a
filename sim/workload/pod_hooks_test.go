package workload_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kri-kit/testkit/sim/workload"
)

func execHook(script string) *v1.LifecycleHandler {
	return &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", script}}}
}

// A postStart hook takes its time: the next container starts once it has
// ended, and what it writes is in the container's files (its termination
// message, and what its exec probes read).
func TestPodPostStartHook(t *testing.T) {
	first := shc("first", "sleep 5")
	first.TerminationMessagePath = "/dev/termination-log"
	first.Lifecycle = &v1.Lifecycle{PostStart: execHook("sleep 2; echo -n hooked > /dev/termination-log")}
	first.ReadinessProbe = execProbe("test -e /dev/termination-log", 0, 1, 1, 1)
	second := shc("second", "sleep infinity")
	p := newSimPod(v1.RestartPolicyNever, nil, []v1.Container{first, second})
	p.Advance(sec(1.5))
	if c := p.Container("second"); c.Current != nil || p.Container("first").Ready() {
		t.Fatalf("at 1.5s, during the 2s postStart hook of first: %s; want second not started and first not ready", describe(p))
	}
	p.Advance(sec(6))
	got, want := describe(p), "first: run 0 exited 0 at 5s started=false ready=false; second: run 0 running since 2s started=true ready=true"
	if got != want {
		t.Errorf("at 6s: %q, want %q", got, want)
	}
	r := p.Container("first").Current
	if msg := r.TerminationMessage(p.Container("first").Spec); msg != "hooked" || r.HookError != nil {
		t.Errorf("first's termination message %q, hook error %v; want %q, which its postStart hook wrote, and no error", msg, r.HookError, "hooked")
	}
}

// A failed postStart hook kills the container when it ends, with the pod's
// grace period, and holds the next start until the container has exited;
// under Never it is not started again.
func TestPodPostStartHookFails(t *testing.T) {
	app := shc("app", "trap 'sleep 1; exit 64' TERM; sleep infinity & wait")
	app.Lifecycle = &v1.Lifecycle{PostStart: execHook("sleep 2; exit 3")}
	next := shc("next", "sleep infinity")
	p := newSimPod(v1.RestartPolicyNever, nil, []v1.Container{app, next})
	p.Advance(sec(10))
	got, want := describe(p), "app: run 0 exited 64 at 3s started=false ready=false; next: run 0 running since 3s started=true ready=true"
	if got != want {
		t.Errorf("a postStart hook failing at 2s, a shutdown of 1s: %q, want %q", got, want)
	}
	if r := p.Container("app").Current; !errors.Is(r.HookError, workload.ErrPostStartHook) || r.HookMessage == "" {
		t.Errorf("app's hook error %v (%q), want ErrPostStartHook with a message", r.HookError, r.HookMessage)
	}
}

// An HTTP postStart hook succeeds when something listens on its port, and
// fails otherwise; a tcpSocket one fails (the kubelet runs none).
func TestPodHTTPHooks(t *testing.T) {
	get := func(port int32) *v1.LifecycleHandler {
		return &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(port)}}
	}
	served := shc("served", "httpd -f -p 8080 -h /www")
	served.Lifecycle = &v1.Lifecycle{PostStart: get(8080)}
	unserved := shc("unserved", "sleep infinity")
	unserved.Lifecycle = &v1.Lifecycle{PostStart: get(8080)}
	tcp := shc("tcp", "httpd -f -p 8080 -h /www")
	tcp.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(8080)}}}
	p := newSimPod(v1.RestartPolicyNever, nil, []v1.Container{served, unserved, tcp})
	for _, tt := range []struct {
		name   string
		failed bool
	}{{"served", false}, {"unserved", true}, {"tcp", true}} {
		r := p.Container(tt.name).Current
		if failed := errors.Is(r.HookError, workload.ErrPostStartHook); failed != tt.failed || r.Running() == tt.failed {
			t.Errorf("container %s: hook error %v (%s), running %v; want failed %v", tt.name, r.HookError, r.HookMessage, r.Running(), tt.failed)
		}
	}
}

// Stop runs the preStop hook before SIGTERM, its time taken from the grace
// period, and what it writes is in the container's files.
func TestPodPreStopHook(t *testing.T) {
	for _, tt := range []struct {
		name      string
		container string
		hook      string
		grace     time.Duration
		wantCode  int
		wantAt    float64
		wantMsg   string
	}{
		// SIGTERM once the hook has ended: 143 at 1+2s.
		{"exits on SIGTERM", "sleep infinity", "sleep 2; echo -n bye > /dev/termination-log", 10 * time.Second, workload.ExitCodeSIGTERM, 3, "bye"},
		// A hook longer than the grace period: SIGTERM with nothing left.
		{"ignores SIGTERM", "trap '' TERM; sleep infinity", "sleep 100", 4 * time.Second, workload.ExitCodeSIGKILL, 5, ""},
		// The hook takes 2s of the 4s: the 2s left end in SIGKILL.
		{"hook then grace", "trap '' TERM; sleep infinity", "sleep 2", 4 * time.Second, workload.ExitCodeSIGKILL, 5, ""},
		// No grace period: no hook (not even its first write).
		{"grace 0", "sleep infinity", "echo -n bye > /dev/termination-log; sleep 2", 0, workload.ExitCodeSIGTERM, 1, ""},
	} {
		app := shc("app", tt.container)
		app.TerminationMessagePath = "/dev/termination-log"
		app.Lifecycle = &v1.Lifecycle{PreStop: execHook(tt.hook)}
		p := newSimPod(v1.RestartPolicyAlways, nil, []v1.Container{app})
		p.Advance(sec(1))
		p.Stop(sec(1), tt.grace)
		if tt.wantAt > 1 {
			p.Advance(sec(tt.wantAt - 0.1))
			if c := p.Container("app"); !c.Running() {
				t.Errorf("%s: the container exited at %v, want it running until %vs", tt.name, c.Current.FinishedAt().Sub(t0), tt.wantAt)
			}
		}
		p.Advance(sec(100))
		r := p.Container("app").Current
		if r.Running() || r.ExitCode() != tt.wantCode || !r.FinishedAt().Equal(sec(tt.wantAt)) {
			t.Errorf("%s: after Stop at 1s with grace %s: %s; want exited %d at %vs", tt.name, tt.grace, describe(p), tt.wantCode, tt.wantAt)
		}
		if msg := r.TerminationMessage(p.Container("app").Spec); msg != tt.wantMsg {
			t.Errorf("%s: termination message %q, want %q", tt.name, msg, tt.wantMsg)
		}
	}
}

// The GET of an HTTP postStart hook reaches the container's server, which
// logs it as it logs any request (httpd -vv): the hook's request is in the
// container's output, as a probe's is.
func TestPodHTTPHookRequestIsInTheServersLog(t *testing.T) {
	web := shc("web", "httpd -f -vv -p 8080 -h /www")
	web.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/started", Port: intstr.FromInt32(8080)}}}
	p := newSimPod(v1.RestartPolicyNever, nil, []v1.Container{web})
	r := p.Container("web").Current
	out, _ := r.FilesAt(sec(1))(workload.Stdout)
	if want := workload.ProberAddr + ": url:/started\n" + workload.ProberAddr + ": response:404\n"; !strings.Contains(out, want) {
		t.Errorf("web's output after its HTTP postStart hook: %q, want it to hold the server's log of the GET, %q", out, want)
	}
}

// GracePeriod takes the override, else the pod's deletion grace period,
// else its terminationGracePeriodSeconds, else 30s; negative counts as 0.
func TestGracePeriodOrder(t *testing.T) {
	n := func(s int64) *int64 { return &s }
	pod := func(deletion, termination *int64) *v1.Pod {
		p := &v1.Pod{}
		p.DeletionGracePeriodSeconds, p.Spec.TerminationGracePeriodSeconds = deletion, termination
		return p
	}
	for _, tt := range []struct {
		name     string
		pod      *v1.Pod
		override *int64
		want     time.Duration
	}{
		{"override first", pod(n(5), n(7)), n(1), time.Second},
		{"then deletion", pod(n(5), n(7)), nil, 5 * time.Second},
		{"then termination", pod(nil, n(7)), nil, 7 * time.Second},
		{"else 30s", pod(nil, nil), nil, 30 * time.Second},
		{"nil pod", nil, nil, 30 * time.Second},
		{"negative is 0", pod(nil, n(-3)), nil, 0},
	} {
		if got := workload.GracePeriod(tt.pod, tt.override); got != tt.want {
			t.Errorf("%s: GracePeriod = %s, want %s", tt.name, got, tt.want)
		}
	}
}
