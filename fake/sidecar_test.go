package fake_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// sidecarModes are the fakes that simulate native sidecars: the default
// and WithKubeletSemantics (status-driven, with crash-loop back-off).
func sidecarModes(t *testing.T, test func(t *testing.T, f *fixture)) {
	for _, m := range []mode{{name: "default"}, {name: "WithKubeletSemantics", opts: []fake.Option{fake.WithKubeletSemantics()}}} {
		t.Run(m.name, func(t *testing.T) { test(t, newFixture(t, m.opts...)) })
	}
}

// sidecarContainer is c as a restartable init container.
func sidecarContainer(c v1.Container) v1.Container {
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// syncFor syncs pod once a second of the fake clock for d; SyncPod may
// only fail with CrashLoopBackOff.
func (f *fixture) syncFor(pod *v1.Pod, d time.Duration) {
	f.t.Helper()
	for i := 0; ; i++ {
		if err := f.sync(pod); err != nil && !errors.Is(err, pkgcontainer.ErrCrashLoopBackOff) {
			f.t.Fatalf("SyncPod(%s): %v", pod.Name, err)
		}
		if i == int(d/time.Second) {
			return
		}
		f.clock.Step(time.Second)
	}
}

func TestSidecarRunsBesideTheAppAndStopsWhenItIsDone(t *testing.T) {
	sidecarModes(t, func(t *testing.T, f *fixture) {
		pod := newPod("job", v1.RestartPolicyNever, container("app", "sh", "-c", "sleep 5; exit 0"))
		pod.Spec.InitContainers = []v1.Container{
			sidecarContainer(container("proxy", "sh", "-c", exitsOnSIGTERM)),
			container("setup", "sh", "-c", "sleep 1; exit 0"),
		}
		f.mustSync(pod)
		if !running(f.current(pod, "proxy")) {
			t.Fatalf("after the first SyncPod: want sidecar proxy running; status: %s", describe(f.status(pod)))
		}
		f.mustSync(pod) // the kubelet starts one init container per sync
		if setup := f.current(pod, "setup"); setup == nil || setup.StartedAt.Before(f.current(pod, "proxy").StartedAt) {
			t.Fatalf("after the second SyncPod: want setup started after sidecar proxy; status: %s", describe(f.status(pod)))
		}
		f.syncFor(pod, 3*time.Second)
		st := f.status(pod)
		proxy, app := st.FindContainerStatusByName("proxy"), st.FindContainerStatusByName("app")
		if !running(proxy) || !running(app) || proxy.StartedAt.After(app.StartedAt) {
			t.Fatalf("after init: want proxy and app running, proxy started first; status: %s", describe(st))
		}
		api, err := f.p.APIPodStatus(context.Background(), pod, f.rc)
		if err != nil {
			t.Fatal(err)
		}
		if cs := api.InitContainerStatuses; len(cs) != 2 || cs[0].State.Running == nil || !cs[0].Ready || cs[0].Started == nil || !*cs[0].Started {
			t.Errorf("API status of the running sidecar: %+v, want running, started and ready", cs)
		}
		if api.Phase != v1.PodRunning {
			t.Errorf("API phase while app runs: %s, want Running", api.Phase)
		}

		f.syncFor(pod, 5*time.Second) // app exits 0 at 6s
		st = f.status(pod)
		proxy, app = st.FindContainerStatusByName("proxy"), st.FindContainerStatusByName("app")
		if app.State != pkgcontainer.ContainerStateExited || proxy.State != pkgcontainer.ContainerStateExited || proxy.FinishedAt.Before(app.FinishedAt) {
			t.Fatalf("after app exited under RestartPolicy Never: want app exited, then proxy stopped; status: %s", describe(st))
		}
		if proxy.ExitCode != 143 {
			t.Errorf("proxy exited %d, want 143 (stopped with SIGTERM)", proxy.ExitCode)
		}
		for _, sb := range st.SandboxStatuses {
			if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
				t.Errorf("sandbox %s still ready after the pod is done: %s", sb.Id, describe(st))
			}
		}
		f.syncFor(pod, 20*time.Second)
		if n := len(f.status(pod).ContainerStatuses); n != 3 {
			t.Errorf("syncing a done pod started something again: %s", describe(f.status(pod)))
		}
		api, err = f.p.APIPodStatus(context.Background(), pod, f.rc)
		if err != nil {
			t.Fatal(err)
		}
		if api.Phase != v1.PodSucceeded {
			t.Errorf("API phase once app exited 0 and the sidecar stopped: %s, want Succeeded", api.Phase)
		}
	})
}

func TestSidecarRestartsWhateverThePodPolicy(t *testing.T) {
	sidecarModes(t, func(t *testing.T, f *fixture) {
		pod := newPod("never", v1.RestartPolicyNever, container("app", "sh", "-c", exitsOnSIGTERM))
		pod.Spec.InitContainers = []v1.Container{sidecarContainer(container("helper", "sh", "-c", "sleep 3; exit 1"))}
		f.syncFor(pod, 15*time.Second) // past the kubelet's first back-off of 10s
		st := f.status(pod)
		helper, app := st.FindContainerStatusByName("helper"), st.FindContainerStatusByName("app")
		if helper == nil || helper.RestartCount < 1 {
			t.Fatalf("sidecar helper that exits 1 under RestartPolicy Never: want it started again; status: %s", describe(st))
		}
		if !running(app) || app.RestartCount != 0 {
			t.Errorf("app: want running, never restarted; status: %s", describe(st))
		}
	})
}

func TestSidecarsStopAfterTheAppContainersLastFirst(t *testing.T) {
	sidecarModes(t, func(t *testing.T, f *fixture) {
		pod := newPod("kill", v1.RestartPolicyAlways, container("app", "sh", "-c", "trap 'sleep 1; exit 0' TERM; sleep infinity & wait"))
		pod.Spec.InitContainers = []v1.Container{
			sidecarContainer(container("first", "sh", "-c", exitsOnSIGTERM)),
			sidecarContainer(container("second", "sh", "-c", "trap 'sleep 2; exit 0' TERM; sleep infinity & wait")),
		}
		f.syncFor(pod, 2*time.Second)
		for _, name := range []string{"first", "second", "app"} {
			if !running(f.current(pod, name)) {
				t.Fatalf("%s is not running: %s", name, describe(f.status(pod)))
			}
		}
		killed := f.clock.Now()
		done := f.killAsync(pod, ptr(int64(10)))
		f.waitTerminating(pod, "app")
		f.clock.Step(time.Second) // app's handler ends; second gets SIGTERM
		f.waitTerminating(pod, "second")
		f.clock.Step(2 * time.Second) // second's handler ends; first gets SIGTERM and exits
		if err := recv(t, "KillPod", done); err != nil {
			t.Fatalf("KillPod: %v", err)
		}
		st := f.status(pod)
		want := map[string]time.Duration{"app": time.Second, "second": 3 * time.Second, "first": 3 * time.Second}
		for name, after := range want {
			c := st.FindContainerStatusByName(name)
			if c.State != pkgcontainer.ContainerStateExited || !c.FinishedAt.Equal(killed.Add(after)) {
				t.Errorf("%s: %s finished %s after KillPod, want exited %s after (app first, then the sidecars, the last first); status: %s",
					name, c.State, c.FinishedAt.Sub(killed), after, describe(st))
			}
		}
	})
}

func TestSidecarTurnComesAtTheEndOfTheGracePeriod(t *testing.T) {
	sidecarModes(t, func(t *testing.T, f *fixture) {
		pod := newPod("stuck", v1.RestartPolicyAlways, container("app", "sh", "-c", "trap '' TERM; sleep infinity"))
		pod.Spec.InitContainers = []v1.Container{sidecarContainer(container("helper", "sh", "-c", exitsOnSIGTERM))}
		f.syncFor(pod, time.Second)
		killed := f.clock.Now()
		done := f.killAsync(pod, ptr(int64(3)))
		f.waitTerminating(pod, "app")
		f.clock.Step(3 * time.Second)
		if err := recv(t, "KillPod", done); err != nil {
			t.Fatalf("KillPod: %v", err)
		}
		st := f.status(pod)
		app, helper := st.FindContainerStatusByName("app"), st.FindContainerStatusByName("helper")
		if app.ExitCode != 137 || !app.FinishedAt.Equal(killed.Add(3*time.Second)) || helper.State != pkgcontainer.ContainerStateExited || helper.FinishedAt.Before(app.FinishedAt) {
			t.Errorf("app ignoring SIGTERM, grace 3s: want app killed (137) at 3s and helper stopped then; status: %s", describe(st))
		}
	})
}

// A scenario's pod with a native sidecar runs to completion on the fake
// clock: the Job-style pod of a controller test.
func TestScenarioJobWithSidecar(t *testing.T) {
	s, err := fake.ParseScenario("job-with-sidecar.yaml", []byte(`name: job-with-sidecar
pods:
- metadata: {name: job, uid: job-1}
  spec:
    restartPolicy: Never
    initContainers:
    - name: proxy
      restartPolicy: Always
      command: [sh, -c, "trap 'sleep 1; exit 0' TERM; sleep infinity & wait"]
    containers:
    - name: work
      command: [sh, -c, "sleep 5; exit 0"]
`))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	if err := s.Apply(f.p); err != nil {
		t.Fatal(err)
	}
	pod, ok := s.Pod("default/job")
	if !ok {
		t.Fatal("scenario has no pod default/job")
	}
	if c := pod.Spec.InitContainers[0]; c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
		t.Fatalf("init container proxy decoded with restartPolicy %v, want Always", c.RestartPolicy)
	}
	f.syncFor(pod, 10*time.Second)
	api, err := f.p.APIPodStatus(context.Background(), pod, f.rc)
	if err != nil {
		t.Fatal(err)
	}
	if api.Phase != v1.PodSucceeded {
		t.Fatalf("Job pod with a sidecar after 10s: phase %s, want Succeeded; status: %s", api.Phase, describe(f.status(pod)))
	}
	proxy := f.current(pod, "proxy")
	if proxy.State != pkgcontainer.ContainerStateExited || proxy.ExitCode != 0 {
		t.Errorf("sidecar proxy: %s exit %d, want exited 0 by its SIGTERM handler; status: %s", proxy.State, proxy.ExitCode, describe(f.status(pod)))
	}
}

// A Job-style pod with a native sidecar runs to completion in a
// testing/synctest bubble, synced by a pod worker on the real clock: the
// sidecar is stopped once the work is done and the pod reaches Succeeded.
func TestSidecarJobInASynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		provider := fake.NewPodProvider(fake.WithKubeletSemantics())
		rc := kri.NewReasonCache()
		pod := newPod("job", v1.RestartPolicyNever, container("work", "sh", "-c", "sleep 5; exit 0"))
		pod.Spec.InitContainers = []v1.Container{sidecarContainer(container("proxy", "sh", "-c", exitsOnSIGTERM))}
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer func() { cancel(); provider.Stop(); wg.Wait() }()
		wg.Go(func() { _ = provider.Start(ctx) })
		wg.Go(func() { resyncWorker(ctx, provider, pod, rc) })

		time.Sleep(20 * time.Second)
		synctest.Wait()
		api, err := provider.APIPodStatus(ctx, pod, rc)
		if err != nil {
			t.Fatal(err)
		}
		if api.Phase != v1.PodSucceeded {
			t.Fatalf("after 20s: phase %s, want Succeeded; init %+v app %+v", api.Phase, api.InitContainerStatuses, api.ContainerStatuses)
		}
		proxy := api.InitContainerStatuses[0]
		work := api.ContainerStatuses[0]
		if proxy.State.Terminated == nil || work.State.Terminated == nil || proxy.State.Terminated.FinishedAt.Before(&work.State.Terminated.FinishedAt) {
			t.Errorf("want the sidecar stopped after the work finished: sidecar %+v, work %+v", proxy.State, work.State)
		}
	})
}

func TestSidecarStartupProbeHoldsTheNextContainer(t *testing.T) {
	sidecarModes(t, func(t *testing.T, f *fixture) {
		pod := newPod("gated", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
		proxy := sidecarContainer(container("proxy", "sh", "-c", "sleep 3; echo ok > /tmp/started; sleep infinity"))
		proxy.StartupProbe = probe("test -e /tmp/started", 30)
		pod.Spec.InitContainers = []v1.Container{proxy, container("setup", "true")}
		f.syncFor(pod, 2*time.Second)
		if !running(f.current(pod, "proxy")) {
			t.Fatalf("at 2s: want sidecar proxy running; status: %s", describe(f.status(pod)))
		}
		if setup := f.current(pod, "setup"); setup != nil {
			t.Fatalf("at 2s, before proxy's startup probe succeeded (it writes its file at 3s): setup has an instance (%s); the kubelet starts the next init container only once a sidecar with a startup probe is Started", setup.State)
		}
		f.syncFor(pod, 4*time.Second)
		if app := f.current(pod, "app"); !running(app) {
			t.Fatalf("at 6s, after proxy started and setup ran: want app running; status: %s", describe(f.status(pod)))
		}
	})
}

// A sidecar's preStop hook runs as soon as the pod is killed, beside the
// app containers' hooks, and the sidecar then waits for its turn, as the
// kubelet's killContainer runs the hook before waitForTurn: here its 3s
// hook ends before the app exits at 4s, and it gets SIGTERM then.
func TestSidecarPreStopHookRunsWhileItWaitsForItsTurn(t *testing.T) {
	sidecarModes(t, func(t *testing.T, f *fixture) {
		pod := newPod("prestop", v1.RestartPolicyAlways, container("app", "sh", "-c", "trap 'sleep 4; exit 0' TERM; sleep infinity & wait"))
		pod.Spec.InitContainers = []v1.Container{sidecarContainer(withHooks(container("proxy", "sh", "-c", exitsOnSIGTERM), "", "sleep 3"))}
		f.syncFor(pod, 2*time.Second)
		killed := f.clock.Now()
		done := f.killAsync(pod, ptr(int64(10)))
		f.waitTerminating(pod, "app")
		f.clock.Step(4 * time.Second)
		f.clock.Step(6 * time.Second)
		if err := recv(t, "KillPod", done); err != nil {
			t.Fatalf("KillPod: %v", err)
		}
		st := f.status(pod)
		proxy := st.FindContainerStatusByName("proxy")
		if proxy.State != pkgcontainer.ContainerStateExited || !proxy.FinishedAt.Equal(killed.Add(4*time.Second)) {
			t.Errorf("proxy (preStop hook 3s) after app exits 4s into the kill: %s finished %s after KillPod, want exited 4s after; status: %s",
				proxy.State, proxy.FinishedAt.Sub(killed), describe(st))
		}
	})
}

// A sidecar's startup probe holds the containers after it the first time
// only (the kubelet's computeInitContainerActions): restarted once the app
// container has run, it holds up no restart of the app in the same sync.
func TestSidecarRestartHoldsNothingUp(t *testing.T) {
	f := newFixture(t)
	pod := newPod("restarts", v1.RestartPolicyAlways, container("app", "sh", "-c", "sleep 2; exit 1"))
	proxy := sidecarContainer(container("proxy", "sh", "-c", "sleep 1; echo ok > /tmp/started; sleep 3; exit 1"))
	proxy.StartupProbe = probe("test -e /tmp/started", 30)
	pod.Spec.InitContainers = []v1.Container{proxy}
	f.syncFor(pod, 2*time.Second)
	if app := f.current(pod, "app"); !running(app) {
		t.Fatalf("at 2s, once proxy's startup probe succeeded: want app running; status: %s", describe(f.status(pod)))
	}
	f.clock.Step(2 * time.Second)
	f.mustSync(pod)
	proxyNow, app := f.current(pod, "proxy"), f.current(pod, "app")
	if !running(proxyNow) || proxyNow.RestartCount != 1 {
		t.Fatalf("at 4s, after proxy exited 1: want proxy started again; status: %s", describe(f.status(pod)))
	}
	if !running(app) || app.RestartCount != 1 {
		t.Errorf("at 4s app (exited 1 at 4s) was not started again by the sync that restarted proxy, whose startup probe has not yet succeeded: "+
			"want it restarted, as the kubelet holds containers for a sidecar's startup probe only until a later container has run; status: %s", describe(f.status(pod)))
	}
}
