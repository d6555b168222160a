package remotebackend_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/examples/remotebackend"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

// What the Service runs of the pod spec itself: probes, lifecycle hooks
// and sidecars (workload.Pod), seen through its views and the provider.

func execProbe(path string, failureThreshold int32) *v1.Probe {
	return &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"test", "-e", path}}},
		PeriodSeconds: 1, FailureThreshold: failureThreshold,
	}
}

func sidecar(c v1.Container) v1.Container {
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// A readiness probe sets Ready, a failed liveness probe makes the Service
// kill the run and start it again.
func TestServiceProbes(t *testing.T) {
	svc, fc := newFakeService(t)
	web := sh("web", "trap 'exit 143' TERM; sleep 1; echo ok > /tmp/ready; sleep infinity & wait")
	web.ReadinessProbe = execProbe("/tmp/ready", 1)
	live := sh("live", "trap 'exit 143' TERM; echo ok > /tmp/alive; sleep 2; rm -f /tmp/alive; sleep infinity & wait")
	live.LivenessProbe = execProbe("/tmp/alive", 1)
	pod := newPod(v1.RestartPolicyAlways, web, live)
	apply(t, svc, pod)
	if c := container(t, svc, pod, "web"); !c.Started || c.Ready {
		t.Errorf("at 0s: %s started=%v ready=%v; want started, not ready", describe(c), c.Started, c.Ready)
	}
	fc.SetTime(at(1000))
	if c := container(t, svc, pod, "web"); !c.Ready {
		t.Errorf("at 1s, its file written: %s not ready", describe(c))
	}
	// live's probe fails at 2s: killed (143), started again 200ms later.
	fc.SetTime(at(2300))
	c := container(t, svc, pod, "live")
	if c.RestartCount != 1 || c.LastTermination == nil || c.LastTermination.ExitCode != workload.ExitCodeSIGTERM || !c.LastTermination.FinishedAt.Equal(at(2000)) || !c.Current.StartedAt.Equal(at(2200)) {
		t.Errorf("at 2.3s: %s; want the first run killed (143) at 2s by its liveness probe, the second started at 2.2s", describe(c))
	}
}

// A sidecar runs beside the app container, started before it; when the
// app container of a Never pod is done the sidecar is stopped; Stop stops
// it after the app container.
func TestServiceSidecars(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyNever, sh("app", "sleep 1"))
	pod.Spec.InitContainers = []v1.Container{sidecar(sh("proxy", "trap 'exit 143' TERM; sleep infinity & wait"))}
	apply(t, svc, pod)
	if c := container(t, svc, pod, "proxy"); c.Current == nil || c.Current.State != remotebackend.RunRunning || !c.Ready {
		t.Fatalf("at 0s: %s; want the sidecar running and ready", describe(c))
	}
	fc.SetTime(at(5000))
	if c := container(t, svc, pod, "proxy"); c.Current.State != remotebackend.RunExited || !c.Current.FinishedAt.Equal(at(1000)) || c.Waiting != nil {
		t.Errorf("after the app container exited 0 at 1s: %s; want the sidecar stopped then and not started again", describe(c))
	}

	p2 := newPod(v1.RestartPolicyAlways, sh("app", "trap 'sleep 2; exit 0' TERM; sleep infinity & wait"))
	p2.Spec.InitContainers = []v1.Container{sidecar(sh("proxy", "trap 'exit 143' TERM; sleep infinity & wait"))}
	apply(t, svc, p2)
	done := make(chan error, 1)
	go func() { done <- svc.Stop(context.Background(), p2.UID, nil) }()
	waitForWaiters(t, fc)
	if c := container(t, svc, p2, "proxy"); c.Current.State != remotebackend.RunRunning {
		t.Errorf("while the app container shuts down: %s; want the sidecar still running", describe(c))
	}
	fc.SetTime(at(7000))
	if err := result(t, "Stop", done); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if c := container(t, svc, p2, "app"); c.Current.ExitCode != 0 || !c.Current.FinishedAt.Equal(at(7000)) {
		t.Errorf("after Stop at 5s: %s; want the app container's handler to exit 0 at 7s", describe(c))
	}
	if c := container(t, svc, p2, "proxy"); !c.Current.FinishedAt.Equal(at(7000)) {
		t.Errorf("after Stop at 5s: %s; want the sidecar stopped at 7s, once the app container's 2s shutdown was over", describe(c))
	}
}

// A failed postStart hook kills the run; the provider reports
// ErrPostStartHook to the ReasonCache, and RefreshPodStatus shows the wait.
// A preStop hook runs before SIGTERM.
func TestProviderHooks(t *testing.T) {
	p, svc, fc := newFakeProvider(t)
	app := ctr("app", "sleep", "infinity")
	app.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "exit 3"}}}}
	pod := newPod(v1.RestartPolicyAlways, app)
	rc := kri.NewReasonCache()
	err := p.SyncPod(context.Background(), pod, nil, rc)
	if err == nil || !strings.Contains(err.Error(), remotebackend.ReasonPostStartHookError) {
		t.Errorf("SyncPod of a pod whose postStart hook fails: %v, want an error naming %s", err, remotebackend.ReasonPostStartHookError)
	}
	if item, ok := rc.Get(pod.UID, "app"); !ok || !errors.Is(item.Err, workload.ErrPostStartHook) {
		t.Errorf("ReasonCache of app: %+v %v, want ErrPostStartHook", item, ok)
	}
	if w := apiStatus(t, refresh(t, p, pod, rc).ContainerStatuses, "app").State.Waiting; w == nil || w.Reason != remotebackend.ReasonPostStartHookError {
		t.Errorf("RefreshPodStatus: app waiting %+v, want %s", w, remotebackend.ReasonPostStartHookError)
	}

	never := newPod(v1.RestartPolicyNever, app)
	_ = p.SyncPod(context.Background(), never, nil, rc)
	if err := p.SyncPod(context.Background(), never, nil, rc); err != nil {
		t.Errorf("second SyncPod of a Never pod whose hook failed: %v, want nil (nothing new failed)", err)
	}
	if item, ok := rc.Get(never.UID, "app"); !ok || !errors.Is(item.Err, workload.ErrPostStartHook) {
		t.Errorf("ReasonCache of app in a Never pod: %+v %v, want ErrPostStartHook", item, ok)
	}

	stopped := ctr("stopped", "sleep", "infinity")
	stopped.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 2}}}
	sp := newPod(v1.RestartPolicyAlways, stopped)
	apply(t, svc, sp)
	ch := killAsync(t, p, fc, sp, pkgcontainer.Pod{}, nil)
	fc.SetTime(at(1999))
	if returned(ch) {
		t.Errorf("KillPod returned before the 2s preStop hook ended")
	}
	fc.SetTime(at(2000))
	if err := result(t, "KillPod", ch); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	if c := container(t, svc, sp, "stopped"); !c.Current.FinishedAt.Equal(at(2000)) || c.Current.ExitCode != workload.ExitCodeSIGTERM {
		t.Errorf("after KillPod: %s; want SIGTERM at 2s, after the preStop hook", describe(c))
	}
}

// RefreshPodStatus reports Started and Ready from the probes, and a
// running sidecar in InitContainerStatuses started and ready.
func TestRefreshPodStatusProbesAndSidecar(t *testing.T) {
	p, svc, fc := newFakeProvider(t)
	web := sh("web", "sleep 1; echo ok > /tmp/up; sleep infinity")
	web.StartupProbe = execProbe("/tmp/up", 10)
	pod := newPod(v1.RestartPolicyAlways, web)
	pod.Spec.InitContainers = []v1.Container{sidecar(ctr("proxy", "sleep", "infinity"))}
	apply(t, svc, pod)
	rc := kri.NewReasonCache()
	check := func(when string, wantStarted bool) {
		t.Helper()
		ps := refresh(t, p, pod, rc)
		s := apiStatus(t, ps.ContainerStatuses, "web")
		if s.Started == nil || *s.Started != wantStarted || s.Ready != wantStarted {
			t.Errorf("%s: web Started %v, Ready %v; want both %v", when, ptrBool(s.Started), s.Ready, wantStarted)
		}
		if s := apiStatus(t, ps.InitContainerStatuses, "proxy"); s.State.Running == nil || s.Started == nil || !*s.Started || !s.Ready {
			t.Errorf("%s: sidecar proxy %+v, want running, started and ready", when, s)
		}
	}
	check("at 0s", false)
	fc.SetTime(at(1000))
	check("at 1s, once its startup probe succeeded", true)
}

func ptrBool(b *bool) string {
	if b == nil {
		return "nil"
	}
	if *b {
		return "true"
	}
	return "false"
}
