package fake_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

// withHooks returns c with exec hooks running the given sh scripts ("" for
// none).
func withHooks(c v1.Container, postStart, preStop string) v1.Container {
	c.Lifecycle = &v1.Lifecycle{}
	if postStart != "" {
		c.Lifecycle.PostStart = &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", postStart}}}
	}
	if preStop != "" {
		c.Lifecycle.PreStop = &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", preStop}}}
	}
	return c
}

const untilKilled = "trap 'exit 143' TERM; sleep infinity & wait"

// The next container of the pod runs only once the postStart hook of the
// one before has ended, as the kubelet starts them one after another.
func TestPostStartHookDelaysTheNextContainer(t *testing.T) {
	f := newFixture(t)
	pod := newPod("poststart", v1.RestartPolicyAlways,
		withHooks(container("first", "sh", "-c", untilKilled), "sleep 2", ""),
		container("second", "sh", "-c", untilKilled))
	f.mustSync(pod)
	if c := f.current(pod, "first"); !running(c) {
		t.Fatalf("first does not run once SyncPod returned: %s", describe(f.status(pod)))
	}
	if c := f.current(pod, "second"); c == nil || c.State != pkgcontainer.ContainerStateCreated {
		t.Fatalf("second is %v while the postStart hook of first runs, want created: %s", c, describe(f.status(pod)))
	}
	f.clock.Step(2 * time.Second)
	first, second := f.current(pod, "first"), f.current(pod, "second")
	if !running(second) {
		t.Fatalf("second does not run once the hook of first has ended: %s", describe(f.status(pod)))
	}
	if gap := second.StartedAt.Sub(first.StartedAt); gap != 2*time.Second {
		t.Errorf("second started %s after first, want 2s, the time of first's postStart hook", gap)
	}
}

// A postStart hook that fails kills the container: at once, reported to the
// ReasonCache by the SyncPod that started it; after it ran a while, reported
// by the first SyncPod after its end. The container is restarted as the
// restart policy says.
func TestFailingPostStartHookKillsTheContainer(t *testing.T) {
	f := newFixture(t)
	now := newPod("fails-now", v1.RestartPolicyNever, withHooks(container("app", "sh", "-c", untilKilled), "exit 3", ""))
	err := f.sync(now)
	if !errors.Is(err, workload.ErrPostStartHook) {
		t.Errorf("SyncPod of a pod whose postStart hook fails at once = %v, want PostStartHookError", err)
	}
	if c := f.current(now, "app"); c == nil || c.State != pkgcontainer.ContainerStateExited || c.ExitCode != 143 {
		t.Fatalf("app after its hook failed: %s, want exited 143 (SIGTERM)", describe(f.status(now)))
	}
	if item, ok := f.rc.Get(now.UID, "app"); !ok || !errors.Is(item.Err, fake.ErrPostStartHook) {
		t.Errorf("ReasonCache entry of app = %+v, %v; want PostStartHookError", item, ok)
	}
	f.mustSync(now) // Never: nothing more
	if n := len(f.status(now).ContainerStatuses); n != 1 {
		t.Errorf("app was started again under restartPolicy Never: %s", describe(f.status(now)))
	}

	later := newPod("fails-later", v1.RestartPolicyAlways, withHooks(container("app", "sh", "-c", untilKilled), "sleep 1; exit 2", ""))
	f.mustSync(later)
	if c := f.current(later, "app"); !running(c) {
		t.Fatalf("app does not run while its hook runs: %s", describe(f.status(later)))
	}
	f.clock.Step(time.Second)
	if c := f.current(later, "app"); c == nil || c.State != pkgcontainer.ContainerStateExited {
		t.Fatalf("app still runs after its hook failed: %s", describe(f.status(later)))
	}
	if err := f.sync(later); !errors.Is(err, workload.ErrPostStartHook) {
		t.Errorf("the SyncPod after the hook failed = %v, want PostStartHookError", err)
	}
	if n := len(f.status(later).ContainerStatuses); n != 1 {
		t.Errorf("app was restarted by the SyncPod that reported its failure: %s", describe(f.status(later)))
	}
	f.mustSync(later)
	if c := f.current(later, "app"); !running(c) || c.RestartCount != 1 {
		t.Errorf("app was not restarted under restartPolicy Always: %s", describe(f.status(later)))
	}
}

// KillPod runs the preStop hook before SIGTERM and takes its time from the
// grace period: a hook longer than the grace period is cut short.
func TestPreStopHookRunsBeforeSIGTERM(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stubborn := container("app", "sh", "-c", "trap '' TERM; sleep infinity")
		for _, tc := range []struct {
			name  string
			c     v1.Container
			hook  string
			grace int64
			opts  []fake.Option
			took  time.Duration
			code  int
		}{
			{"exits-on-sigterm", container("app", "sh", "-c", untilKilled), "sleep 3", 10, nil, 3 * time.Second, 143},
			{"hook-outlasts-grace", container("app", "sleep", "infinity"), "sleep 30", 2, nil, 2 * time.Second, 143},
			{"ignores-sigterm", stubborn, "sleep 30", 2, nil, 2 * time.Second, 137},
			{"ignores-sigterm-minimum", stubborn, "sleep 30", 2, []fake.Option{fake.WithMinimumGracePeriod()}, 4 * time.Second, 137},
			{"ignores-sigterm-rest-of-grace", stubborn, "sleep 1", 5, nil, 5 * time.Second, 137},
		} {
			p := fake.NewPodProvider(tc.opts...)
			pod := newPod(tc.name, v1.RestartPolicyAlways, withHooks(tc.c, "", tc.hook))
			rc := kri.NewReasonCache()
			if err := p.SyncPod(t.Context(), pod, nil, rc); err != nil {
				t.Fatal(err)
			}
			st, _ := p.GetPodStatus(t.Context(), pod)
			start := time.Now()
			if err := p.KillPod(t.Context(), pod, pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, st), &tc.grace); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took != tc.took {
				t.Errorf("%s: KillPod (grace %ds, preStop %q) took %s, want %s", tc.name, tc.grace, tc.hook, took, tc.took)
			}
			st, _ = p.GetPodStatus(t.Context(), pod)
			if app := st.FindContainerStatusByName("app"); app == nil || app.State != pkgcontainer.ContainerStateExited || app.ExitCode != tc.code {
				t.Errorf("%s: after KillPod: %s, want app exited %d", tc.name, describe(st), tc.code)
			}
			p.Stop()
		}
	})
}

// Scripts give a container hooks its spec does not have, and the events
// show each hook run.
func TestScriptedHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := fake.NewPodProvider()
		defer p.Stop()
		sub := p.Subscribe(64)
		defer sub.Close()
		pod := newPod("scripted", v1.RestartPolicyNever, container("app", "sh", "-c", untilKilled))
		p.Container("default/scripted", "app").PostStartHook(time.Second, 0).PreStopHook(3 * time.Second)
		rc := kri.NewReasonCache()
		if err := p.SyncPod(t.Context(), pod, nil, rc); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		st, _ := p.GetPodStatus(t.Context(), pod)
		start := time.Now()
		grace := int64(10)
		if err := p.KillPod(context.Background(), pod, pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, st), &grace); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 3*time.Second {
			t.Errorf("KillPod with a scripted 3s preStop hook took %s", took)
		}
		seen := map[fake.EventType]bool{}
		for len(sub.C) > 0 {
			seen[(<-sub.C).Type] = true
		}
		if !seen[fake.EventPostStartHook] || !seen[fake.EventPreStopHook] {
			t.Errorf("events %v: want PostStartHook and PreStopHook", seen)
		}

		failing := newPod("scripted-fails", v1.RestartPolicyNever, container("app", "sh", "-c", untilKilled))
		p.Container("default/scripted-fails", "app").PostStartHook(0, 5)
		if err := p.SyncPod(t.Context(), failing, nil, rc); !errors.Is(err, fake.ErrPostStartHook) {
			t.Errorf("SyncPod with a scripted failing postStart hook = %v, want PostStartHookError", err)
		}
	})
}

// A scenario scripts the hooks of a container with postStartHook and
// preStopHook.
func TestScenarioHooks(t *testing.T) {
	base := "name: hooks\npods:\n- metadata: {name: web, uid: u}\n  spec:\n    containers:\n    - {name: app, command: [sleep, infinity]}\nscripts:\n- pod: web\n  container:\n    name: app\n"
	s, err := fake.ParseScenario("hooks.yaml", []byte(base+"    postStartHook: {after: 1s, code: 3}\n    preStopHook: 5s\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	if err := s.Apply(f.p); err != nil {
		t.Fatal(err)
	}
	pod := s.Pods()[0]
	f.mustSync(pod)
	f.clock.Step(time.Second)
	if err := f.sync(pod); !errors.Is(err, fake.ErrPostStartHook) {
		t.Errorf("SyncPod after the scripted postStart hook failed = %v, want PostStartHookError", err)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"    postStartHook: {code: 1}\n", "x.yaml:11: scripts[0].container.postStartHook.after: required"},
		{"    postStartHook: {after: 1s, code: 300}\n", "x.yaml:11: scripts[0].container.postStartHook.code: exit code 300 out of range 0 to 255"},
		{"    preStopHook: -1s\n", `x.yaml:11: scripts[0].container.preStopHook: invalid duration "-1s": must not be negative`},
	} {
		_, err := fake.ParseScenario("x.yaml", []byte(base+tc.yaml))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// What the hooks write goes to the container's files: the killed instance's
// termination message holds the postStart hook's write, then the preStop
// hook's.
func TestHookWritesReachTheTerminationMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := fake.NewPodProvider()
		defer p.Stop()
		c := withHooks(container("app", "sh", "-c", untilKilled),
			"echo -n A >> /dev/termination-log", "sleep 1; echo -n B >> /dev/termination-log; echo -n C")
		c.TerminationMessagePath = "/dev/termination-log"
		pod := newPod("hook-writes", v1.RestartPolicyNever, c)
		if err := p.SyncPod(t.Context(), pod, nil, kri.NewReasonCache()); err != nil {
			t.Fatal(err)
		}
		st, _ := p.GetPodStatus(t.Context(), pod)
		grace := int64(5)
		if err := p.KillPod(t.Context(), pod, pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, st), &grace); err != nil {
			t.Fatal(err)
		}
		st, _ = p.GetPodStatus(t.Context(), pod)
		if app := st.FindContainerStatusByName("app"); app == nil || app.Message != "AB" {
			t.Errorf("killed instance: %+v, want message %q (the hooks' writes; what a hook prints is not the container's)", app, "AB")
		}
	})
}

// An HTTP postStart hook is answered by the container's own server: it
// succeeds while httpd listens on its port, whatever the status, and kills
// the container when nothing listens there.
func TestHTTPPostStartHookNeedsAListener(t *testing.T) {
	httpHook := func(c v1.Container, port int32) v1.Container {
		c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/started", Port: intstr.FromInt32(port)}}}
		return c
	}
	f := newFixture(t)
	serves := newPod("serves", v1.RestartPolicyNever, httpHook(container("web", "sh", "-c", "trap 'exit 143' TERM; httpd -f -p 8080 -h /tmp & sleep infinity & wait"), 8080))
	if err := f.sync(serves); err != nil {
		t.Fatalf("SyncPod of a pod whose HTTP postStart hook reaches httpd (404 for /started) = %v, want nil: any answer is a success", err)
	}
	if c := f.current(serves, "web"); !running(c) {
		t.Errorf("web after its HTTP hook was answered: %s, want running", describe(f.status(serves)))
	}
	silent := newPod("silent", v1.RestartPolicyNever, httpHook(container("web", "sh", "-c", "trap 'exit 143' TERM; httpd -f -p 8080 -h /tmp & sleep infinity & wait"), 9090))
	if err := f.sync(silent); !errors.Is(err, workload.ErrPostStartHook) {
		t.Errorf("SyncPod of a pod whose HTTP postStart hook reaches no listener (port 9090) = %v, want PostStartHookError", err)
	}
	if c := f.current(silent, "web"); c == nil || c.State != pkgcontainer.ContainerStateExited {
		t.Errorf("web after its HTTP hook found no listener: %s, want killed", describe(f.status(silent)))
	}
}

// A postStart hook the kubelet's hook runner cannot run fails, and kills
// the container: a tcpSocket action (the runner runs exec, httpGet and
// sleep only) and an exec command whose executable is missing.
func TestPostStartHookThatCannotRunFails(t *testing.T) {
	tcp := container("web", "sh", "-c", "trap 'exit 143' TERM; httpd -f -p 8080 -h /tmp & sleep infinity & wait")
	tcp.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(8080)}}}
	missing := container("web", "sh", "-c", "trap 'exit 143' TERM; sleep infinity & wait")
	missing.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{workload.MissingExecutableDir + "notify"}}}}
	f := newFixture(t)
	for _, pod := range []*v1.Pod{newPod("tcp-hook", v1.RestartPolicyNever, tcp), newPod("missing-hook", v1.RestartPolicyNever, missing)} {
		if err := f.sync(pod); !errors.Is(err, workload.ErrPostStartHook) {
			t.Errorf("SyncPod of pod %s = %v, want PostStartHookError", pod.Name, err)
		}
		if c := f.current(pod, "web"); c == nil || c.State != pkgcontainer.ContainerStateExited {
			t.Errorf("pod %s after its postStart hook failed: %s, want web killed", pod.Name, describe(f.status(pod)))
		}
	}
}
