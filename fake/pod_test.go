package fake_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

func TestSyncPodStartsEveryAppContainer(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"), container("sidecar", "sh", "-c", "sleep infinity"))
	f.mustSync(pod)

	st := f.status(pod)
	if st.ID != pod.UID || st.Name != "web" || st.Namespace != "default" {
		t.Errorf("status names pod %s %s/%s, want %s default/web", st.ID, st.Namespace, st.Name, pod.UID)
	}
	ids := map[string]bool{}
	for _, name := range []string{"app", "sidecar"} {
		c := st.FindContainerStatusByName(name)
		if !running(c) {
			t.Fatalf("container %s: %+v, want running", name, c)
		}
		if c.ID.Type != fake.RuntimeName || c.ID.ID == "" || ids[c.ID.ID] {
			t.Errorf("container %s has ID %v: want a unique non-empty %q ID", name, c.ID, fake.RuntimeName)
		}
		ids[c.ID.ID] = true
		if c.Hash != pkgcontainer.HashContainer(&pod.Spec.Containers[0]) && name == "app" {
			t.Errorf("container app hash = %d, want HashContainer of its spec", c.Hash)
		}
		if !c.StartedAt.Equal(t0) || !c.CreatedAt.Equal(t0) || c.Image != "busybox:1.36" {
			t.Errorf("container %s: created %v started %v image %q, want %v and busybox:1.36", name, c.CreatedAt, c.StartedAt, c.Image, t0)
		}
	}
	if len(st.ContainerStatuses) != 2 || len(st.ActiveContainerStatuses) != 2 {
		t.Errorf("got %d container statuses (%d active), want 2 (2)", len(st.ContainerStatuses), len(st.ActiveContainerStatuses))
	}
	rp := pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, st)
	if len(rp.Sandboxes) != 1 || rp.Sandboxes[0].State != pkgcontainer.ContainerStateRunning || ids[rp.Sandboxes[0].ID.ID] {
		t.Errorf("running pod sandboxes = %+v, want one running sandbox with its own ID", rp.Sandboxes)
	}
	if len(rp.Containers) != 2 {
		t.Errorf("running pod has %d containers, want 2", len(rp.Containers))
	}
}

func TestSyncPodIsIdempotent(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(pod)
	first := f.current(pod, "app")
	for range 3 {
		f.mustSync(pod)
		f.clock.Step(time.Second)
	}
	st := f.status(pod)
	if len(st.ContainerStatuses) != 1 || len(st.SandboxStatuses) != 1 {
		t.Fatalf("after 4 syncs: %d containers, %d sandboxes; want 1, 1", len(st.ContainerStatuses), len(st.SandboxStatuses))
	}
	if c := st.ContainerStatuses[0]; c.ID != first.ID || c.RestartCount != 0 || !running(c) {
		t.Errorf("running container became %+v, want it untouched (ID %v)", c, first.ID)
	}
}

func TestCommandVocabulary(t *testing.T) {
	tests := []struct {
		name    string
		command []string
		args    []string
		after   time.Duration // clock step after the start
		state   pkgcontainer.State
		code    int
	}{
		{name: "sleep N runs N seconds", command: []string{"sleep", "5"}, after: 4 * time.Second, state: pkgcontainer.ContainerStateRunning},
		{name: "sleep N then exits 0", command: []string{"sleep", "5"}, after: 5 * time.Second, state: pkgcontainer.ContainerStateExited, code: 0},
		{name: "sleep with decimals", command: []string{"/bin/sleep", "0.5"}, after: 500 * time.Millisecond, state: pkgcontainer.ContainerStateExited},
		{name: "sleep infinity runs on", command: []string{"sleep", "infinity"}, after: 1000 * time.Hour, state: pkgcontainer.ContainerStateRunning},
		{name: "true exits 0", command: []string{"true"}, state: pkgcontainer.ContainerStateExited, code: 0},
		{name: "false exits 1", command: []string{"false"}, state: pkgcontainer.ContainerStateExited, code: 1},
		{name: "sh -c exit N", command: []string{"sh", "-c", "exit 3"}, state: pkgcontainer.ContainerStateExited, code: 3},
		{name: "sh -c via args", command: []string{"/bin/sh"}, args: []string{"-c", "exit 7"}, state: pkgcontainer.ContainerStateExited, code: 7},
		{name: "sleep then exit, before", command: []string{"sh", "-c", "sleep 2; exit 4"}, after: time.Second, state: pkgcontainer.ContainerStateRunning},
		{name: "sleep then exit, after", command: []string{"sh", "-c", "sleep 2; exit 4"}, after: 2 * time.Second, state: pkgcontainer.ContainerStateExited, code: 4},
		{name: "sleeps add up", command: []string{"sh", "-c", "sleep 1\nsleep 2\nfalse"}, after: 3 * time.Second, state: pkgcontainer.ContainerStateExited, code: 1},
		{name: "exec prefix", command: []string{"sh", "-c", "exec sleep 1"}, after: time.Second, state: pkgcontainer.ContainerStateExited},
		{name: "unknown command runs on", command: []string{"nginx", "-g", "daemon off;"}, after: time.Hour, state: pkgcontainer.ContainerStateRunning},
		{name: "no command runs on", after: time.Hour, state: pkgcontainer.ContainerStateRunning},
		{name: "unknown script runs on", command: []string{"sh", "-c", "ls /etc; exit 1"}, after: time.Hour, state: pkgcontainer.ContainerStateRunning},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			c := container("app", tc.command...)
			c.Args = tc.args
			pod := newPod("web", v1.RestartPolicyNever, c)
			f.mustSync(pod)
			f.clock.Step(tc.after)
			got := f.current(pod, "app")
			if got.State != tc.state || got.ExitCode != tc.code {
				t.Fatalf("after %v: state %s exit code %d, want %s %d", tc.after, got.State, got.ExitCode, tc.state, tc.code)
			}
			if got.State == pkgcontainer.ContainerStateExited && got.FinishedAt.Before(got.StartedAt) {
				t.Errorf("FinishedAt %v before StartedAt %v", got.FinishedAt, got.StartedAt)
			}
		})
	}
}

func TestMissingExecutableFailsEveryStart(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "/nonexistent/serve"))
	for range 2 {
		err := f.sync(pod)
		if !errors.Is(err, pkgcontainer.ErrRunContainer) {
			t.Fatalf("SyncPod = %v, want an error wrapping ErrRunContainer", err)
		}
		item, ok := f.rc.Get(pod.UID, "app")
		if !ok || !errors.Is(item.Err, pkgcontainer.ErrRunContainer) || !strings.Contains(item.Message, "/nonexistent/serve") {
			t.Fatalf("ReasonCache entry = %+v, %v; want ErrRunContainer naming the executable", item, ok)
		}
	}
	if st := f.status(pod); len(st.ContainerStatuses) != 0 {
		t.Errorf("a container that never started has statuses %+v", st.ContainerStatuses)
	}
}

func TestRestartPolicy(t *testing.T) {
	tests := []struct {
		policy    v1.RestartPolicy
		command   []string
		restarted bool
	}{
		{v1.RestartPolicyAlways, []string{"true"}, true},
		{v1.RestartPolicyAlways, []string{"false"}, true},
		{v1.RestartPolicyOnFailure, []string{"true"}, false},
		{v1.RestartPolicyOnFailure, []string{"false"}, true},
		{v1.RestartPolicyNever, []string{"true"}, false},
		{v1.RestartPolicyNever, []string{"false"}, false},
		{"", []string{"true"}, true}, // the API default is Always
	}
	for _, tc := range tests {
		t.Run(string(tc.policy)+"/"+tc.command[0], func(t *testing.T) {
			f := newFixture(t)
			pod := newPod("web", tc.policy, container("app", tc.command...))
			f.mustSync(pod)
			first := f.current(pod, "app")
			f.clock.Step(time.Second)
			f.mustSync(pod)
			st := f.status(pod)
			cur := st.FindContainerStatusByName("app")
			if !tc.restarted {
				if cur.ID != first.ID || len(st.ContainerStatuses) != 1 {
					t.Fatalf("container was restarted (ID %v → %v), want it left exited", first.ID, cur.ID)
				}
				return
			}
			if cur.ID == first.ID || cur.RestartCount != 1 || len(st.ContainerStatuses) != 2 {
				t.Fatalf("after restart: ID %v (first %v), RestartCount %d, %d statuses; want a new ID, 1, 2", cur.ID, first.ID, cur.RestartCount, len(st.ContainerStatuses))
			}
			// The previous instance is kept, exited, after the new one.
			if prev := st.ContainerStatuses[1]; prev.ID != first.ID || prev.State != pkgcontainer.ContainerStateExited {
				t.Errorf("previous instance %+v, want %v exited", prev, first.ID)
			}
		})
	}
}

func TestRestartsKeepOnlyTwoInstances(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "false"))
	for range 5 {
		f.mustSync(pod)
	}
	st := f.status(pod)
	if len(st.ContainerStatuses) != 2 || st.ContainerStatuses[0].RestartCount != 4 {
		t.Fatalf("after 5 starts: %d statuses, RestartCount %d; want 2, 4", len(st.ContainerStatuses), st.ContainerStatuses[0].RestartCount)
	}
}

func TestInitContainersRunInOrderBeforeApps(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	pod.Spec.InitContainers = []v1.Container{container("init-1", "sleep", "5"), container("init-2", "sh", "-c", "sleep 2; exit 0")}

	for range 2 { // a sync while init-1 runs must not move on
		f.mustSync(pod)
		st := f.status(pod)
		if !running(st.FindContainerStatusByName("init-1")) || st.FindContainerStatusByName("init-2") != nil || st.FindContainerStatusByName("app") != nil {
			t.Fatalf("while init-1 runs nothing else may start: %s", describe(st))
		}
	}
	f.clock.Step(5 * time.Second)
	f.mustSync(pod)
	st := f.status(pod)
	if st.FindContainerStatusByName("init-1").ExitCode != 0 || !running(st.FindContainerStatusByName("init-2")) || st.FindContainerStatusByName("app") != nil {
		t.Fatalf("after init-1 completed, init-2 must run and app wait: %s", describe(st))
	}
	f.clock.Step(2 * time.Second)
	f.mustSync(pod)
	st = f.status(pod)
	app := st.FindContainerStatusByName("app")
	init2 := st.FindContainerStatusByName("init-2")
	if !running(app) || init2.State != pkgcontainer.ContainerStateExited || app.StartedAt.Before(init2.FinishedAt) {
		t.Fatalf("app must start after init-2 finished: %s", describe(st))
	}
}

func TestInstantInitContainersCompleteInOneSync(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	pod.Spec.InitContainers = []v1.Container{container("a", "true"), container("b", "true")}
	f.mustSync(pod)
	if !running(f.current(pod, "app")) {
		t.Fatalf("init containers that exit 0 at once must let app start in the same sync: %s", describe(f.status(pod)))
	}
}

func TestFailingInitContainerBlocksApps(t *testing.T) {
	for _, tc := range []struct {
		policy  v1.RestartPolicy
		retried bool
	}{{v1.RestartPolicyOnFailure, true}, {v1.RestartPolicyAlways, true}, {v1.RestartPolicyNever, false}} {
		t.Run(string(tc.policy), func(t *testing.T) {
			f := newFixture(t)
			pod := newPod("web", tc.policy, container("app", "sleep", "infinity"))
			pod.Spec.InitContainers = []v1.Container{container("init", "false")}
			for range 3 {
				f.mustSync(pod)
			}
			st := f.status(pod)
			if st.FindContainerStatusByName("app") != nil {
				t.Fatalf("app started although its init container failed: %s", describe(st))
			}
			restarts := st.FindContainerStatusByName("init").RestartCount
			if tc.retried != (restarts == 2) || (!tc.retried && restarts != 0) {
				t.Errorf("init RestartCount = %d after 3 syncs under %s", restarts, tc.policy)
			}
		})
	}
}

func TestInitContainerThatFailsToStartBlocksApps(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	pod.Spec.InitContainers = []v1.Container{container("init", "true"), container("later", "true")}
	f.p.Container("default/web", "init").FailStarts(1, nil, "no such image")
	if err := f.sync(pod); !errors.Is(err, pkgcontainer.ErrRunContainer) {
		t.Fatalf("SyncPod = %v, want ErrRunContainer", err)
	}
	st := f.status(pod)
	if len(st.ContainerStatuses) != 0 {
		t.Fatalf("containers started after an init container failed to start: %s", describe(st))
	}
	f.mustSync(pod)
	if !running(f.current(pod, "app")) {
		t.Fatalf("app did not start once init succeeded: %s", describe(f.status(pod)))
	}
}

func TestStartFailuresAreRecordedAndCleared(t *testing.T) {
	f := newFixture(t)
	errPull := errors.New("ErrImagePull")
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"), container("ok", "sleep", "infinity"))
	f.p.Container("default/web", "app").FailStarts(2, errPull, "pull access denied")

	for attempt := 1; attempt <= 2; attempt++ {
		err := f.sync(pod)
		if !errors.Is(err, errPull) {
			t.Fatalf("attempt %d: SyncPod = %v, want the scripted error", attempt, err)
		}
		item, ok := f.rc.Get(pod.UID, "app")
		if !ok || !errors.Is(item.Err, errPull) || item.Message != "pull access denied" {
			t.Fatalf("attempt %d: ReasonCache = %+v, %v; want the scripted failure", attempt, item, ok)
		}
		if _, ok := f.rc.Get(pod.UID, "ok"); ok {
			t.Fatalf("attempt %d: the container that started has a ReasonCache entry", attempt)
		}
		var ps v1.PodStatus
		f.p.RefreshPodStatus(pod, &ps)
		if w := ps.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ErrImagePull" || w.Message != "pull access denied" {
			t.Fatalf("attempt %d: RefreshPodStatus state %+v, want Waiting ErrImagePull", attempt, ps.ContainerStatuses[0].State)
		}
	}
	f.mustSync(pod)
	if _, ok := f.rc.Get(pod.UID, "app"); ok {
		t.Error("a successful start did not clear the ReasonCache entry")
	}
	var ps v1.PodStatus
	f.p.RefreshPodStatus(pod, &ps)
	if ps.ContainerStatuses[0].State.Running == nil {
		t.Errorf("RefreshPodStatus after the successful start: %+v, want Running", ps.ContainerStatuses[0].State)
	}
	if !running(f.current(pod, "app")) {
		t.Error("app is not running after the scripted failures ran out")
	}
}

func TestKillPod(t *testing.T) {
	t.Run("containers that honour SIGTERM exit 143 at once", func(t *testing.T) {
		f := newFixture(t)
		pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
		f.mustSync(pod)
		if err := f.kill(pod, nil); err != nil {
			t.Fatal(err)
		}
		c := f.current(pod, "app")
		if c.State != pkgcontainer.ContainerStateExited || c.ExitCode != 143 || !c.FinishedAt.Equal(t0) {
			t.Fatalf("after KillPod: %+v, want exited 143 at %v", c, t0)
		}
		if st := f.status(pod); st.SandboxStatuses[0].State != 1 /* NOTREADY */ {
			t.Errorf("sandbox state %v after KillPod, want NOTREADY", st.SandboxStatuses[0].State)
		}
	})
	for _, tc := range []struct {
		name     string
		override *int64
		podGrace *int64
		want     time.Duration
	}{
		{name: "override wins", override: ptr[int64](10), podGrace: ptr[int64](60), want: 10 * time.Second},
		{name: "pod grace period", podGrace: ptr[int64](20), want: 20 * time.Second},
		{name: "default 30s", want: 30 * time.Second},
	} {
		t.Run("SIGTERM ignored: "+tc.name, func(t *testing.T) {
			f := newFixture(t)
			pod := newPod("web", v1.RestartPolicyAlways, container("app", "sh", "-c", "trap '' TERM; sleep infinity"))
			pod.Spec.TerminationGracePeriodSeconds = tc.podGrace
			f.mustSync(pod)
			done := f.killAsync(pod, tc.override)
			f.waitTerminating(pod, "app")
			f.clock.Step(tc.want - time.Second)
			select {
			case err := <-done:
				t.Fatalf("KillPod returned %v one second before the grace period ended", err)
			default:
			}
			if !running(f.current(pod, "app")) {
				t.Fatal("a container ignoring SIGTERM stopped before the grace period ended")
			}
			f.clock.Step(time.Second)
			if err := recv(t, "KillPod", done); err != nil {
				t.Fatal(err)
			}
			c := f.current(pod, "app")
			if c.State != pkgcontainer.ContainerStateExited || c.ExitCode != 137 || !c.FinishedAt.Equal(t0.Add(tc.want)) {
				t.Fatalf("after the grace period: %+v, want exited 137 at %v", c, t0.Add(tc.want))
			}
		})
	}
	t.Run("grace 0 kills a SIGTERM-ignoring container at once", func(t *testing.T) {
		f := newFixture(t)
		pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
		f.p.Container("default/web", "app").IgnoreSIGTERM()
		f.mustSync(pod)
		if err := f.kill(pod, ptr[int64](0)); err != nil {
			t.Fatal(err)
		}
		if c := f.current(pod, "app"); c.ExitCode != 137 {
			t.Fatalf("exit code %d, want 137", c.ExitCode)
		}
	})
	t.Run("a cancelled context ends the wait with its error", func(t *testing.T) {
		f := newFixture(t)
		pod := newPod("web", v1.RestartPolicyAlways, container("app", "sh", "-c", "trap '' TERM; sleep infinity"))
		f.mustSync(pod)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		running := pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, f.status(pod))
		go func() { done <- f.p.KillPod(ctx, pod, running, nil) }()
		f.waitTerminating(pod, "app")
		cancel()
		if err := recv(t, "KillPod", done); !errors.Is(err, context.Canceled) {
			t.Fatalf("KillPod = %v, want context.Canceled", err)
		}
	})
	t.Run("unknown and stopped pods", func(t *testing.T) {
		f := newFixture(t)
		unknown := newPod("ghost", v1.RestartPolicyAlways, container("app"))
		if err := f.kill(unknown, nil); err != nil {
			t.Fatalf("KillPod of an unknown pod = %v, want nil", err)
		}
		pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
		f.mustSync(pod)
		for i := range 2 {
			if err := f.kill(pod, nil); err != nil {
				t.Fatalf("KillPod #%d = %v, want nil", i+1, err)
			}
		}
	})
	t.Run("a killed pod synced again gets a new sandbox", func(t *testing.T) {
		f := newFixture(t)
		pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
		f.mustSync(pod)
		if err := f.kill(pod, nil); err != nil {
			t.Fatal(err)
		}
		f.mustSync(pod)
		st := f.status(pod)
		if len(st.SandboxStatuses) != 2 || st.SandboxStatuses[0].Metadata.Attempt != 1 || !running(st.FindContainerStatusByName("app")) {
			t.Fatalf("after kill and sync: %s", describe(st))
		}
	})
}

func TestDeletePodForgetsThePod(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	other := newPod("other", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(pod)
	f.mustSync(other)
	if err := f.p.DeletePod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if err := f.p.DeletePod(context.Background(), pod); err != nil {
		t.Fatalf("deleting an unknown pod = %v, want nil", err)
	}
	if st := f.status(pod); len(st.ContainerStatuses) != 0 || len(st.SandboxStatuses) != 0 {
		t.Errorf("a deleted pod still has state: %s", describe(st))
	}
	pods, _ := f.p.GetPods(context.Background(), true)
	if len(pods) != 1 || pods[0].Name != "other" {
		t.Errorf("GetPods(true) after delete = %v, want only other", podNames(pods))
	}
}

func TestCleanupPodsKeepsEveryNamedPod(t *testing.T) {
	f := newFixture(t)
	names := []string{"desired", "running", "possibly", "orphan-1", "orphan-2"}
	pods := map[string]*v1.Pod{}
	for _, n := range names {
		pods[n] = newPod(n, v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
		f.mustSync(pods[n])
	}
	rp := pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, f.status(pods["running"]))
	err := f.p.CleanupPods(context.Background(),
		[]*v1.Pod{pods["desired"], nil},
		[]*pkgcontainer.Pod{&rp, nil},
		map[types.UID]sets.Empty{pods["possibly"].UID: {}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := f.p.GetPods(context.Background(), true)
	if want := []string{"desired", "possibly", "running"}; !equalStrings(podNames(got), want) {
		t.Fatalf("after CleanupPods: %v, want %v", podNames(got), want)
	}
	for _, n := range []string{"desired", "running", "possibly"} {
		if !running(f.current(pods[n], "app")) {
			t.Errorf("CleanupPods stopped kept pod %s", n)
		}
	}
}

func TestGetPods(t *testing.T) {
	f := newFixture(t)
	mixed := newPod("mixed", v1.RestartPolicyNever, container("up", "sleep", "infinity"), container("done", "true"))
	finished := newPod("finished", v1.RestartPolicyNever, container("done", "true"))
	f.mustSync(mixed)
	f.mustSync(finished)

	runningPods, err := f.p.GetPods(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	// finished runs no container but keeps its ready sandbox until
	// KillPod, as in the kubelet's runtime: it is listed, with no
	// container.
	if len(runningPods) != 2 || runningPods[0].Name != "finished" || len(runningPods[0].Containers) != 0 ||
		runningPods[1].Name != "mixed" || len(runningPods[1].Containers) != 1 || runningPods[1].Containers[0].Name != "up" {
		t.Fatalf("GetPods(false) = %s, want finished without containers and mixed with only container up", describePods(runningPods))
	}
	for _, p := range runningPods {
		if len(p.Sandboxes) != 1 {
			t.Errorf("GetPods(false) lists %d sandboxes for %s, want 1", len(p.Sandboxes), p.Name)
		}
	}
	all, err := f.p.GetPods(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || len(all[1].Containers) != 2 || all[0].Containers[0].State != pkgcontainer.ContainerStateExited {
		t.Fatalf("GetPods(true) = %s, want finished (exited) and mixed with 2 containers", describePods(all))
	}
	if err := f.p.KillPod(context.Background(), finished, pkgcontainer.Pod{ID: finished.UID, Name: finished.Name, Namespace: finished.Namespace}, nil); err != nil {
		t.Fatal(err)
	}
	runningPods, err = f.p.GetPods(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(runningPods) != 1 || runningPods[0].Name != "mixed" {
		t.Fatalf("GetPods(false) after KillPod of finished = %s, want only mixed", describePods(runningPods))
	}
}

func TestGetPodStatusOfUnknownPod(t *testing.T) {
	f := newFixture(t)
	pod := newPod("ghost", v1.RestartPolicyAlways, container("app"))
	st, err := f.p.GetPodStatus(context.Background(), pod)
	if err != nil || st == nil {
		t.Fatalf("GetPodStatus = %v, %v; want an empty status and no error", st, err)
	}
	if st.ID != pod.UID || st.Name != "ghost" || st.Namespace != "default" || len(st.ContainerStatuses)+len(st.SandboxStatuses) != 0 {
		t.Fatalf("status of an unknown pod = %+v", st)
	}
}

func TestRefreshPodStatus(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyNever, container("run", "sleep", "infinity"), container("done", "sh", "-c", "exit 2"), container("wait", "sleep", "1"))
	pod.Spec.InitContainers = []v1.Container{container("init", "true")}
	f.p.Container("default/web", "wait").StartLatency(time.Minute)
	f.mustSync(pod)

	ps := v1.PodStatus{Phase: v1.PodRunning, Message: "kept"}
	f.p.RefreshPodStatus(pod, &ps)
	if ps.Phase != v1.PodRunning || ps.Message != "kept" {
		t.Errorf("RefreshPodStatus changed fields other than container statuses: %+v", ps)
	}
	if len(ps.InitContainerStatuses) != 1 || ps.InitContainerStatuses[0].State.Terminated == nil {
		t.Fatalf("init container statuses = %+v, want init terminated", ps.InitContainerStatuses)
	}
	byName := map[string]v1.ContainerStatus{}
	for _, s := range ps.ContainerStatuses {
		byName[s.Name] = s
	}
	if len(byName) != 3 {
		t.Fatalf("container statuses name %d containers, want the 3 of the spec", len(byName))
	}
	if s := byName["run"]; s.State.Running == nil || !s.Ready || s.ContainerID == "" {
		t.Errorf("run: %+v, want Running and ready", s)
	}
	if s := byName["done"]; s.State.Terminated == nil || s.State.Terminated.ExitCode != 2 {
		t.Errorf("done: %+v, want Terminated with exit code 2", s.State)
	}
	if s := byName["wait"]; s.State.Waiting == nil || s.State.Waiting.Reason != "ContainerCreating" {
		t.Errorf("wait: %+v, want Waiting ContainerCreating during its start latency", s.State)
	}

	unknown := newPod("ghost", v1.RestartPolicyAlways, container("app"))
	before := v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{{Name: "app"}}}
	after := *before.DeepCopy()
	f.p.RefreshPodStatus(unknown, &after)
	if !equality.Semantic.DeepEqual(before, after) {
		t.Errorf("RefreshPodStatus changed the status of an unknown pod: %+v", after)
	}
}

func TestStartAndStop(t *testing.T) {
	t.Run("Stop ends Start and returns after it", func(t *testing.T) {
		f := newFixture(t)
		started := make(chan struct{})
		done := make(chan error, 1)
		go func() { close(started); done <- f.p.Start(context.Background()) }()
		<-started
		// Calls made while Start is starting work.
		f.mustSync(newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity")))
		f.p.Stop()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Start = %v, want nil", err)
			}
		default:
			// Stop returned, so Start must have returned already.
			if len(f.p.Calls(fake.ForMethod(fake.MethodStart), fake.Returned())) == 0 {
				t.Fatal("Stop returned before Start did")
			}
			if err := recv(t, "Start", done); err != nil {
				t.Fatal(err)
			}
		}
		f.p.Stop() // a second Stop is harmless
	})
	t.Run("Start returns nil once ctx is done", func(t *testing.T) {
		f := newFixture(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- f.p.Start(ctx) }()
		cancel()
		if err := recv(t, "Start after cancel", done); err != nil {
			t.Fatal(err)
		}
		f.p.Stop()
	})
	t.Run("Stop without Start returns", func(t *testing.T) {
		f := newFixture(t)
		f.p.Stop()
		if err := f.p.Start(context.Background()); err != nil {
			t.Fatalf("Start after Stop = %v, want nil at once", err)
		}
	})
}

func TestInputsAndOutputsAreCopies(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyNever, container("app", "sleep", "infinity"))
	f.mustSync(pod)
	// Changing the pod handed in must not change what the fake simulates.
	pod.Spec.RestartPolicy = v1.RestartPolicyAlways
	pod.Spec.Containers[0].Name = "renamed"
	snap, _ := f.p.Snapshot("default/web")
	if _, ok := snap.Container("app"); !ok {
		t.Fatal("mutating the pod after SyncPod changed the fake's copy")
	}
	st := f.status(pod)
	st.ContainerStatuses[0].State = pkgcontainer.ContainerStateExited
	st.ContainerStatuses[0].ID.ID = "changed"
	if again := f.status(pod); again.ContainerStatuses[0].ID.ID == "changed" || !running(again.ContainerStatuses[0]) {
		t.Fatal("mutating a returned status changed the fake's state")
	}
	pods, _ := f.p.GetPods(context.Background(), true)
	pods[0].Containers[0].ID.ID = "changed"
	if again, _ := f.p.GetPods(context.Background(), true); again[0].Containers[0].ID.ID == "changed" {
		t.Fatal("mutating GetPods output changed the fake's state")
	}
}

func TestBadInputIsRejectedAndLosesNothing(t *testing.T) {
	f := newFixture(t)
	good := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(good)
	before := f.status(good)

	noUID := newPod("nouid", v1.RestartPolicyAlways, container("app"))
	noUID.UID = ""
	dup := newPod("web", v1.RestartPolicyAlways, container("app"), container("app"))
	dup.UID = good.UID
	dupInit := newPod("web", v1.RestartPolicyAlways, container("app"))
	dupInit.UID = good.UID
	dupInit.Spec.InitContainers = []v1.Container{container("app")}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"nil pod", func() error { return f.p.SyncPod(context.Background(), nil, nil, f.rc) }, "pod is nil"},
		{"pod without UID", func() error { return f.p.SyncPod(context.Background(), noUID, nil, f.rc) }, "has no UID"},
		{"duplicate container names", func() error { return f.p.SyncPod(context.Background(), dup, nil, f.rc) }, `more than one container named "app"`},
		{"init and app container share a name", func() error { return f.p.SyncPod(context.Background(), dupInit, nil, f.rc) }, `more than one container named "app"`},
		{"nil ReasonCache", func() error { return f.p.SyncPod(context.Background(), good, nil, nil) }, "reasonCache is nil"},
		{"GetPodStatus of nil pod", func() error { _, err := f.p.GetPodStatus(context.Background(), nil); return err }, "pod is nil"},
		{"DeletePod of nil pod", func() error { return f.p.DeletePod(context.Background(), nil) }, "pod is nil"},
		{"scripting Start to fail", func() error { return f.p.Fail(fake.MethodStart, 1, nil) }, "cannot script"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	f.p.RefreshPodStatus(nil, nil) // must not panic
	if after := f.status(good); describe(before) != describe(after) {
		t.Fatalf("bad input changed stored state:\nbefore %s\nafter  %s", describe(before), describe(after))
	}
}

func TestDeterministicIDs(t *testing.T) {
	run := func() []string {
		f := newFixture(t)
		pod := newPod("web", v1.RestartPolicyAlways, container("a", "false"), container("b", "sleep", "infinity"))
		f.mustSync(pod)
		f.mustSync(pod)
		var ids []string
		for _, c := range f.status(pod).ContainerStatuses {
			ids = append(ids, c.ID.ID+"@"+c.CreatedAt.String())
		}
		return ids
	}
	first, second := run(), run()
	if len(first) != 3 || !equalStrings(first, second) {
		t.Fatalf("two identical runs gave IDs %v and %v", first, second)
	}
	f := newFixture(t, fake.WithIDSource(fake.SequentialIDs("web-")))
	pod := newPod("web", v1.RestartPolicyAlways, container("a", "sleep", "infinity"))
	f.mustSync(pod)
	if id := f.current(pod, "a").ID.ID; !strings.HasPrefix(id, "web-") {
		t.Errorf("container ID %q does not come from the injected source", id)
	}
}

func TestCancelledContextIsRespected(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.p.SyncPod(ctx, pod, nil, f.rc); !errors.Is(err, context.Canceled) {
		t.Errorf("SyncPod = %v, want context.Canceled", err)
	}
	if _, err := f.p.GetPodStatus(ctx, pod); !errors.Is(err, context.Canceled) {
		t.Errorf("GetPodStatus = %v, want context.Canceled", err)
	}
	if _, ok := f.p.Snapshot("default/web"); ok {
		t.Error("a SyncPod with a cancelled context created the pod")
	}
}

var _ = kri.NewReasonCache

// TestChangedSpecsAreSeen changes a synced pod in place, one field at a
// time, as a controller reusing its objects would: SyncPod must notice each
// change (it copies the spec only when it changed).
func TestChangedSpecsAreSeen(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sh", "-c", "exit 3"))
	f.mustSync(pod)
	pod.Spec.Containers[0].Command[2] = "exit 4" // in place: the same slice
	_ = f.sync(pod)
	if c := f.current(pod, "app"); c.ExitCode != 4 {
		t.Fatalf("after changing the command in place, the restarted app is %+v, want exit code 4", c)
	}
	pod.Spec.Containers[0].Image = "busybox:1.37"
	_ = f.sync(pod)
	if c := f.current(pod, "app"); c.Image != "busybox:1.37" {
		t.Fatalf("after changing the image, the restarted app is %+v, want image busybox:1.37", c)
	}
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	before := f.current(pod, "app").ID
	_ = f.sync(pod)
	if c := f.current(pod, "app"); c.ID != before {
		t.Fatalf("after changing the restart policy to Never, app was restarted: %+v", c)
	}
	pod.Spec.RestartPolicy = v1.RestartPolicyAlways
	pod.Spec.Containers[0].Command[2] = "sleep infinity"
	f.mustSync(pod)
	pod.Spec.TerminationGracePeriodSeconds = ptr[int64](7)
	f.mustSync(pod)
	f.p.Container("default/web", "app").IgnoreSIGTERM()
	done := make(chan error, 1)
	running := pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, f.status(pod))
	go func() { done <- f.p.KillPod(context.Background(), nil, running, nil) }()
	f.waitTerminating(pod, "app")
	f.clock.Step(7 * time.Second) // the grace period of the pod as last synced
	if err := recv(t, "KillPod", done); err != nil {
		t.Fatal(err)
	}
	if c := f.current(pod, "app"); c.ExitCode != 137 || !c.FinishedAt.Equal(t0.Add(7*time.Second)) {
		t.Fatalf("KillPod without pod: app %+v, want SIGKILL after the synced grace period of 7s", c)
	}
}
