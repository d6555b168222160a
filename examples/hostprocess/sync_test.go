package hostprocess

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

func TestNewRejectsBadRootDir(t *testing.T) {
	t.Chdir(t.TempDir()) // a buggy New must not litter the package directory
	for _, dir := range []string{"", "relative/dir", "./x"} {
		if _, err := New(Options{RootDir: dir}); err == nil {
			t.Errorf("New(RootDir %q) succeeded, want an error", dir)
		}
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{RootDir: file}); err == nil {
		t.Errorf("New(RootDir is a file) succeeded, want an error")
	}
	root := t.TempDir()
	p, err := New(Options{RootDir: root + "/./sub/"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if got, want := p.RootDir(), filepath.Join(root, "sub"); got != want {
		t.Errorf("RootDir() = %q, want %q", got, want)
	}
	if fi, err := os.Stat(filepath.Join(root, "sub", "pods")); err != nil || !fi.IsDir() {
		t.Errorf("RootDir/pods not created: %v", err)
	}
}

func TestSyncPodRejectsBadInput(t *testing.T) {
	valid := func() *v1.Pod { return makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity")) }
	cases := map[string]func() (*v1.Pod, *kri.ReasonCache){
		"nil pod":          func() (*v1.Pod, *kri.ReasonCache) { return nil, kri.NewReasonCache() },
		"nil reason cache": func() (*v1.Pod, *kri.ReasonCache) { return valid(), nil },
		"no UID": func() (*v1.Pod, *kri.ReasonCache) {
			p := valid()
			p.UID = ""
			return p, kri.NewReasonCache()
		},
	}
	for _, uid := range []string{"../escape", "a/b", "..", ".", `a\b`, "x/../../y", "a..b", "nul\x00"} {
		cases["UID "+uid] = func() (*v1.Pod, *kri.ReasonCache) {
			p := valid()
			p.UID = types.UID(uid)
			return p, kri.NewReasonCache()
		}
	}
	specCases := map[string]func(*v1.Pod){
		"duplicate app names":      func(p *v1.Pod) { p.Spec.Containers = append(p.Spec.Containers, ctr("app", "true")) },
		"duplicate init/app names": func(p *v1.Pod) { p.Spec.InitContainers = []v1.Container{ctr("app", "true")} },
		"no command":               func(p *v1.Pod) { p.Spec.Containers[0].Command = nil },
		"empty executable":         func(p *v1.Pod) { p.Spec.Containers[0].Command = []string{""} },
		"init without command":     func(p *v1.Pod) { p.Spec.InitContainers = []v1.Container{{Name: "init"}} },
		"env valueFrom": func(p *v1.Pod) {
			p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "NODE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
		},
		"envFrom": func(p *v1.Pod) {
			p.Spec.Containers[0].EnvFrom = []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{}}}
		},
		"relative workingDir":  func(p *v1.Pod) { p.Spec.Containers[0].WorkingDir = "tmp" },
		"container name slash": func(p *v1.Pod) { p.Spec.Containers[0].Name = "../x" },
		"no container name":    func(p *v1.Pod) { p.Spec.Containers[0].Name = "" },
	}
	for name, mutate := range specCases {
		cases[name] = func() (*v1.Pod, *kri.ReasonCache) {
			p := valid()
			mutate(p)
			return p, kri.NewReasonCache()
		}
	}

	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			p := newProvider(t)
			pod, rc := build()
			err := syncPod(t, p, pod, rc)
			if err == nil {
				t.Fatal("SyncPod succeeded, want an error")
			}
			if !errors.Is(err, ErrInvalidPod) {
				t.Errorf("error %q does not wrap ErrInvalidPod", err)
			}
			pods, _ := p.GetPods(context.Background(), true)
			if len(pods) != 0 {
				t.Errorf("GetPods(true) = %d pods after a rejected SyncPod, want 0", len(pods))
			}
			if entries, _ := os.ReadDir(filepath.Join(p.RootDir(), "pods")); len(entries) != 0 {
				t.Errorf("RootDir/pods holds %d entries after a rejected SyncPod, want 0", len(entries))
			}
			if entries, _ := os.ReadDir(filepath.Dir(p.RootDir())); len(entries) != 1 {
				t.Errorf("the parent of RootDir holds %d entries, want 1 (nothing may escape RootDir)", len(entries))
			}
			if rc != nil && rc.Len() != 0 {
				t.Errorf("reason cache holds %d entries, want 0", rc.Len())
			}
		})
	}
}

func TestSyncPodRejectingAKnownPodKeepsItRunning(t *testing.T) {
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	mustSync(t, p, pod, kri.NewReasonCache())
	before := current(t, p, pod, "app")

	bad := pod.DeepCopy()
	bad.Spec.Containers = append(bad.Spec.Containers, ctr("other", "true"))
	bad.Spec.Containers[0].Env = []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{}}}
	err := syncPod(t, p, bad, kri.NewReasonCache())
	if !errors.Is(err, ErrInvalidPod) || !strings.Contains(err.Error(), "valueFrom") {
		t.Fatalf("SyncPod = %v, want an ErrInvalidPod error naming valueFrom", err)
	}
	st := podStatus(t, p, pod)
	if len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].ID != before.ID || st.ContainerStatuses[0].State != pkgcontainer.ContainerStateRunning {
		t.Errorf("after a rejected SyncPod the pod changed: %+v", st.ContainerStatuses)
	}
}

func TestContainerProcess(t *testing.T) {
	p := newProvider(t)
	work := t.TempDir()
	c := shell("app", `echo "$GREETING from $PWD"; echo "home=$HOME"; echo "$(GREETING)" >&2`)
	c.Env = []v1.EnvVar{{Name: "NAME", Value: "world"}, {Name: "GREETING", Value: "hello $(NAME)"}}
	c.WorkingDir = work
	pod := makePod("uid-1", v1.RestartPolicyNever, c)
	rc := kri.NewReasonCache()
	mustSync(t, p, pod, rc)
	s := waitContainerExited(t, p, pod, "app")

	if s.ExitCode != 0 || s.Reason != "Completed" {
		t.Errorf("exit code %d reason %q, want 0 Completed", s.ExitCode, s.Reason)
	}
	if s.ID.Type != RuntimeName || len(s.ID.ID) != 64 {
		t.Errorf("container ID %v, want type %q and 64 hex digits", s.ID, RuntimeName)
	}
	if s.Hash != pkgcontainer.HashContainer(&pod.Spec.Containers[0]) {
		t.Errorf("hash %d, want HashContainer", s.Hash)
	}
	if s.Image != "busybox:stable" {
		t.Errorf("image %q", s.Image)
	}
	if s.StartedAt.IsZero() || s.FinishedAt.Before(s.StartedAt) || s.StartedAt.Before(s.CreatedAt) {
		t.Errorf("timestamps created %v started %v finished %v out of order", s.CreatedAt, s.StartedAt, s.FinishedAt)
	}
	dir, err := p.PodDir(pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(dir, "app", "0.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := "hello world from " + work + "\nhome=\nhello world\n"
	if string(log) != want {
		t.Errorf("log = %q, want %q", log, want)
	}
}

func TestDefaultWorkingDirIsTheContainerDir(t *testing.T) {
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyNever, shell("app", `echo "$PWD"`), ctr("args-only"))
	pod.Spec.Containers[1].Args = []string{"sh", "-c", "exit 4"} // no Command: Args are the command line
	mustSync(t, p, pod, kri.NewReasonCache())
	waitContainerExited(t, p, pod, "app")
	dir, _ := p.PodDir(pod.UID)
	log, _ := os.ReadFile(filepath.Join(dir, "app", "0.log"))
	if got, want := strings.TrimSpace(string(log)), filepath.Join(dir, "app"); got != want {
		t.Errorf("working dir %q, want %q", got, want)
	}
	if s := waitContainerExited(t, p, pod, "args-only"); s.ExitCode != 4 {
		t.Errorf("args-only container exit code %d, want 4", s.ExitCode)
	}
}

func TestExitCodes(t *testing.T) {
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyNever,
		shell("exit3", "exit 3"),
		ctr("true", "true"),
		ctr("false", "false"),
		shell("sleep-exit", "sleep 0.1; exit 0"),
		shell("killed", "kill -KILL $$$$"), // $$ is an escaped $, as in the kubelet
		shell("terminated", "kill -TERM $$$$; sleep 1"),
	)
	mustSync(t, p, pod, kri.NewReasonCache())
	want := map[string]int{"exit3": 3, "true": 0, "false": 1, "sleep-exit": 0, "killed": 137, "terminated": 143}
	for name, code := range want {
		s := waitContainerExited(t, p, pod, name)
		if s.ExitCode != code {
			t.Errorf("%s: exit code %d, want %d", name, s.ExitCode, code)
		}
		wantReason := "Error"
		if code == 0 {
			wantReason = "Completed"
		}
		if s.Reason != wantReason {
			t.Errorf("%s: reason %q, want %q", name, s.Reason, wantReason)
		}
	}
}

func TestStartFailure(t *testing.T) {
	p := newProvider(t)
	rc := kri.NewReasonCache()
	pod := makePod("uid-1", v1.RestartPolicyNever,
		ctr("missing", "/nonexistent/server", "--flag"),
		ctr("notinpath", "no-such-command-hostprocess"),
		ctr("ok", "sleep", "infinity"),
	)
	err := syncPod(t, p, pod, rc)
	if err == nil || !errors.Is(err, pkgcontainer.ErrRunContainer) {
		t.Fatalf("SyncPod = %v, want an error wrapping ErrRunContainer", err)
	}
	for _, name := range []string{"missing", "notinpath"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("SyncPod error %q does not name container %q", err, name)
		}
		item, ok := rc.Get(pod.UID, name)
		if !ok {
			t.Fatalf("no reason cache entry for %q", name)
		}
		if !errors.Is(item.Err, pkgcontainer.ErrRunContainer) {
			t.Errorf("%s: reason %v, want ErrRunContainer", name, item.Err)
		}
		t.Logf("%s: %s", name, item.Message)
	}
	if item, _ := rc.Get(pod.UID, "missing"); !strings.Contains(item.Message, "/nonexistent/server") {
		t.Errorf("message %q does not carry the exec error", item.Message)
	}
	if item, _ := rc.Get(pod.UID, "notinpath"); !strings.Contains(item.Message, "executable file not found") {
		t.Errorf("message %q does not carry the exec error", item.Message)
	}
	if _, ok := rc.Get(pod.UID, "ok"); ok {
		t.Error("reason cache entry for the container that started")
	}

	// A failed start creates no container instance; the others started.
	st := podStatus(t, p, pod)
	if len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].Name != "ok" {
		t.Errorf("container statuses %+v, want only the started container", st.ContainerStatuses)
	}
	var api v1.PodStatus
	p.RefreshPodStatus(pod, &api)
	for _, cs := range api.ContainerStatuses {
		if cs.Name == "ok" {
			continue
		}
		if cs.State.Waiting == nil || cs.State.Waiting.Reason != "RunContainerError" || cs.State.Waiting.Message == "" {
			t.Errorf("%s: state %+v, want Waiting RunContainerError with a message", cs.Name, cs.State)
		}
	}

	// Fails on every attempt, also under RestartPolicy Never (it never ran).
	rc2 := kri.NewReasonCache()
	if err := syncPod(t, p, pod, rc2); !errors.Is(err, pkgcontainer.ErrRunContainer) {
		t.Fatalf("second SyncPod = %v, want ErrRunContainer", err)
	}
	if rc2.Len() != 2 {
		t.Errorf("second SyncPod recorded %d failures, want 2", rc2.Len())
	}

	// The command is fixed: the next start succeeds and clears the reason.
	fixed := pod.DeepCopy()
	fixed.Spec.Containers[0].Command = []string{"sleep", "infinity"}
	fixed.Spec.Containers[1].Command = []string{"sleep", "infinity"}
	mustSync(t, p, fixed, rc)
	if rc.Len() != 0 {
		t.Errorf("reason cache holds %d entries after the successful starts, want 0", rc.Len())
	}
	p.RefreshPodStatus(fixed, &api)
	for _, cs := range api.ContainerStatuses {
		if cs.State.Running == nil {
			t.Errorf("%s: state %+v, want Running", cs.Name, cs.State)
		}
	}
}

func TestSyncPodIsIdempotent(t *testing.T) {
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyAlways, ctr("a", "sleep", "infinity"), ctr("b", "sleep", "infinity"))
	mustSync(t, p, pod, kri.NewReasonCache())
	first := podStatus(t, p, pod)

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := p.SyncPod(context.Background(), pod, first, kri.NewReasonCache()); err != nil {
				t.Errorf("SyncPod: %v", err)
			}
		})
	}
	wg.Wait()
	mustSync(t, p, pod, kri.NewReasonCache())

	st := podStatus(t, p, pod)
	if len(st.ContainerStatuses) != 2 {
		t.Fatalf("%d container statuses, want 2: %+v", len(st.ContainerStatuses), st.ContainerStatuses)
	}
	for _, name := range []string{"a", "b"} {
		was, is := first.FindContainerStatusByName(name), st.FindContainerStatusByName(name)
		if is.ID != was.ID || is.State != pkgcontainer.ContainerStateRunning || is.RestartCount != 0 {
			t.Errorf("%s: %v %s restarts %d, want the first instance %v still running", name, is.ID, is.State, is.RestartCount, was.ID)
		}
		if !alive(p.h.pidOf(is.ID)) {
			t.Errorf("%s: process not alive", name)
		}
	}
	if len(st.SandboxStatuses) != 1 || st.SandboxStatuses[0].Id != first.SandboxStatuses[0].Id {
		t.Errorf("sandboxes changed: %v", st.SandboxStatuses)
	}
	running, _ := p.GetPods(context.Background(), false)
	if len(running) != 1 || len(running[0].Containers) != 2 {
		t.Errorf("GetPods(false) = %+v, want 1 pod with 2 containers", running)
	}
}

func TestRestartPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy      v1.RestartPolicy
		exit        string
		wantRestart bool
	}{
		{v1.RestartPolicyAlways, "0", true},
		{v1.RestartPolicyAlways, "3", true},
		{"", "0", true}, // the API default is Always
		{v1.RestartPolicyOnFailure, "0", false},
		{v1.RestartPolicyOnFailure, "3", true},
		{v1.RestartPolicyNever, "0", false},
		{v1.RestartPolicyNever, "3", false},
	} {
		t.Run(string(tc.policy)+"/exit"+tc.exit, func(t *testing.T) {
			t.Parallel()
			p := newProvider(t)
			pod := makePod("uid-1", tc.policy, shell("app", "exit "+tc.exit), ctr("steady", "sleep", "infinity"))
			mustSync(t, p, pod, kri.NewReasonCache())
			first := waitContainerExited(t, p, pod, "app")
			steady := current(t, p, pod, "steady")
			mustSync(t, p, pod, kri.NewReasonCache())

			st := podStatus(t, p, pod)
			app := statusesOf(st, "app")
			if !tc.wantRestart {
				if len(app) != 1 || app[0].ID != first.ID {
					t.Fatalf("app restarted: %+v", app)
				}
				return
			}
			if len(app) != 2 {
				t.Fatalf("%d app instances, want 2 (new and previous)", len(app))
			}
			if app[0].ID == first.ID || app[1].ID != first.ID {
				t.Errorf("instances %v, %v: want a new ID first, then %v", app[0].ID, app[1].ID, first.ID)
			}
			if app[0].RestartCount != 1 || app[1].RestartCount != 0 {
				t.Errorf("restart counts %d, %d, want 1, 0", app[0].RestartCount, app[1].RestartCount)
			}
			if s := st.FindContainerStatusByName("steady"); s.ID != steady.ID {
				t.Errorf("the running container was restarted: %v -> %v", steady.ID, s.ID)
			}
		})
	}
}

func TestCrashLoopKeepsCurrentAndPreviousInstance(t *testing.T) {
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyAlways, shell("app", "echo run; exit 3"))
	seen := map[pkgcontainer.ContainerID]bool{}
	for i := range 4 {
		mustSync(t, p, pod, kri.NewReasonCache())
		s := waitContainerExited(t, p, pod, "app")
		if s.RestartCount != i {
			t.Errorf("start %d: restart count %d", i, s.RestartCount)
		}
		if seen[s.ID] {
			t.Errorf("start %d: container ID %v reused", i, s.ID)
		}
		seen[s.ID] = true
	}
	st := podStatus(t, p, pod)
	app := statusesOf(st, "app")
	if len(app) != 2 || app[0].RestartCount != 3 || app[1].RestartCount != 2 {
		t.Fatalf("statuses %+v, want restart counts 3 then 2", app)
	}
	if !app[0].CreatedAt.After(app[1].CreatedAt) {
		t.Errorf("newest first: %v is not after %v", app[0].CreatedAt, app[1].CreatedAt)
	}
	dir, _ := p.PodDir(pod.UID)
	entries, _ := os.ReadDir(filepath.Join(dir, "app"))
	var logs []string
	for _, e := range entries {
		logs = append(logs, e.Name())
	}
	if strings.Join(logs, ",") != "2.log,3.log" {
		t.Errorf("log files %v, want those of the two kept instances", logs)
	}
}

func TestInitContainersRunInOrder(t *testing.T) {
	p := newProvider(t)
	pod := withInit(makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity")),
		shell("init-1", "sleep 0.2; exit 0"),
		ctr("init-2", "true"),
	)
	rc := kri.NewReasonCache()
	mustSync(t, p, pod, rc)
	mustSync(t, p, pod, rc) // init-1 still runs: nothing else starts
	st := podStatus(t, p, pod)
	if len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].Name != "init-1" {
		t.Fatalf("statuses %+v, want only init-1", st.ContainerStatuses)
	}
	var api v1.PodStatus
	p.RefreshPodStatus(pod, &api)
	if w := api.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Errorf("app state %+v, want Waiting PodInitializing", api.ContainerStatuses[0].State)
	}
	if api.InitContainerStatuses[0].State.Running == nil {
		t.Errorf("init-1 state %+v, want Running", api.InitContainerStatuses[0].State)
	}

	init1 := waitContainerExited(t, p, pod, "init-1")
	mustSync(t, p, pod, rc)
	init2 := waitContainerExited(t, p, pod, "init-2")
	if current(t, p, pod, "init-2").ID != init2.ID || podStatus(t, p, pod).FindContainerStatusByName("app") != nil {
		t.Fatal("app started together with init-2")
	}
	mustSync(t, p, pod, rc)
	app := current(t, p, pod, "app")
	if app.State != pkgcontainer.ContainerStateRunning {
		t.Fatalf("app %s, want running", app.State)
	}
	if init2.StartedAt.Before(init1.FinishedAt) || app.StartedAt.Before(init2.FinishedAt) {
		t.Errorf("out of order: init-1 finished %v, init-2 %v-%v, app started %v", init1.FinishedAt, init2.StartedAt, init2.FinishedAt, app.StartedAt)
	}
	// Completed init containers are not run again.
	mustSync(t, p, pod, rc)
	st = podStatus(t, p, pod)
	if len(st.ContainerStatuses) != 3 {
		t.Errorf("%d statuses after a further SyncPod, want 3", len(st.ContainerStatuses))
	}
	p.RefreshPodStatus(pod, &api)
	for _, ics := range api.InitContainerStatuses {
		if ics.State.Terminated == nil || ics.State.Terminated.ExitCode != 0 || !ics.Ready {
			t.Errorf("%s: %+v ready %v, want Terminated 0 and ready", ics.Name, ics.State, ics.Ready)
		}
	}
}

func TestFailedInitContainer(t *testing.T) {
	for _, tc := range []struct {
		policy      v1.RestartPolicy
		wantRestart bool
	}{
		{v1.RestartPolicyAlways, true},
		{v1.RestartPolicyOnFailure, true},
		{v1.RestartPolicyNever, false},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			t.Parallel()
			p := newProvider(t)
			pod := withInit(makePod("uid-1", tc.policy, ctr("app", "sleep", "infinity")), shell("init", "exit 3"))
			mustSync(t, p, pod, kri.NewReasonCache())
			first := waitContainerExited(t, p, pod, "init")
			if first.ExitCode != 3 {
				t.Fatalf("init exit code %d", first.ExitCode)
			}
			for range 2 {
				mustSync(t, p, pod, kri.NewReasonCache())
				waitContainerExited(t, p, pod, "init")
			}
			st := podStatus(t, p, pod)
			if st.FindContainerStatusByName("app") != nil {
				t.Fatal("app container started after a failed init container")
			}
			s := st.FindContainerStatusByName("init")
			if tc.wantRestart && s.RestartCount != 2 {
				t.Errorf("init restart count %d, want 2", s.RestartCount)
			}
			if !tc.wantRestart && s.ID != first.ID {
				t.Errorf("init restarted under RestartPolicy Never")
			}
		})
	}
}

func TestInitContainerStartFailureBlocksApps(t *testing.T) {
	p := newProvider(t)
	rc := kri.NewReasonCache()
	pod := withInit(makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity")), ctr("init", "/nonexistent/init"))
	if err := syncPod(t, p, pod, rc); !errors.Is(err, pkgcontainer.ErrRunContainer) {
		t.Fatalf("SyncPod = %v, want ErrRunContainer", err)
	}
	if _, ok := rc.Get(pod.UID, "init"); !ok {
		t.Error("no reason recorded for the init container")
	}
	if st := podStatus(t, p, pod); len(st.ContainerStatuses) != 0 {
		t.Errorf("statuses %+v, want none", st.ContainerStatuses)
	}
}

func TestSidecarInitContainer(t *testing.T) {
	p := newProvider(t)
	always := v1.ContainerRestartPolicyAlways
	sidecar := ctr("sidecar", "sleep", "infinity")
	sidecar.RestartPolicy = &always
	pod := withInit(makePod("uid-1", v1.RestartPolicyNever, ctr("app", "sleep", "infinity")), sidecar, ctr("init", "true"))
	rc := kri.NewReasonCache()
	mustSync(t, p, pod, rc) // sidecar, then init
	waitContainerExited(t, p, pod, "init")
	mustSync(t, p, pod, rc) // app
	st := podStatus(t, p, pod)
	for _, name := range []string{"sidecar", "app"} {
		if s := st.FindContainerStatusByName(name); s == nil || s.State != pkgcontainer.ContainerStateRunning {
			t.Errorf("%s: %+v, want running", name, s)
		}
	}
	var api v1.PodStatus
	p.RefreshPodStatus(pod, &api)
	if !api.InitContainerStatuses[0].Ready || api.InitContainerStatuses[0].State.Running == nil {
		t.Errorf("sidecar status %+v, want running and ready", api.InitContainerStatuses[0])
	}
}

func TestSyncPodAfterKillPod(t *testing.T) {
	for _, tc := range []struct {
		policy      v1.RestartPolicy
		wantRestart bool
	}{
		{v1.RestartPolicyAlways, true},
		{v1.RestartPolicyNever, false},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			t.Parallel()
			p := newProvider(t)
			pod := withInit(makePod("uid-1", tc.policy, ctr("app", "sleep", "infinity")), ctr("init", "true"))
			rc := kri.NewReasonCache()
			mustSync(t, p, pod, rc)
			waitContainerExited(t, p, pod, "init")
			mustSync(t, p, pod, rc)
			before := podStatus(t, p, pod)
			if err := p.KillPod(testCtx(t), pod, pkgcontainer.ConvertPodStatusToRunningPod(RuntimeName, before), int64p(0)); err != nil {
				t.Fatal(err)
			}
			mustSync(t, p, pod, rc)
			st := podStatus(t, p, pod)
			if !tc.wantRestart {
				if len(st.SandboxStatuses) != 1 || len(st.GetRunningContainerStatuses()) != 0 {
					t.Errorf("a killed RestartPolicy Never pod was started again: %+v", st)
				}
				return
			}
			if len(st.SandboxStatuses) != 2 || st.SandboxStatuses[0].Metadata.Attempt != 1 || st.SandboxStatuses[0].Id == before.SandboxStatuses[0].Id {
				t.Fatalf("sandboxes %v, want a new one (attempt 1) before the old one", st.SandboxStatuses)
			}
			// The new sandbox runs the init containers again first.
			if s := st.FindContainerStatusByName("init"); s.RestartCount != 1 {
				t.Errorf("init restart count %d, want 1 (run again in the new sandbox)", s.RestartCount)
			}
			waitContainerExited(t, p, pod, "init")
			mustSync(t, p, pod, rc)
			if s := current(t, p, pod, "app"); s.State != pkgcontainer.ContainerStateRunning || s.RestartCount != 1 {
				t.Errorf("app %s restarts %d, want running, 1", s.State, s.RestartCount)
			}
		})
	}
}

func TestSyncPodHonoursContext(t *testing.T) {
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.SyncPod(ctx, pod, nil, kri.NewReasonCache()); !errors.Is(err, context.Canceled) {
		t.Fatalf("SyncPod(cancelled ctx) = %v, want context.Canceled", err)
	}
	if pods, _ := p.GetPods(context.Background(), true); len(pods) != 0 {
		t.Errorf("SyncPod with a cancelled ctx started something: %+v", pods)
	}

	// A SyncPod waiting for another operation on the same pod (a KillPod
	// in its grace period, say) gives up with its ctx.
	mustSync(t, p, pod, kri.NewReasonCache())
	_, release, err := p.h.lockPod(context.Background(), pod.UID, nil)
	if err != nil {
		t.Fatal(err)
	}
	release = sync.OnceFunc(release)
	t.Cleanup(release)
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.SyncPod(ctx, pod, nil, kri.NewReasonCache()) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("SyncPod while the pod is busy = %v, want DeadlineExceeded", err)
		}
	case <-time.After(time.Second):
		release()
		t.Fatal("SyncPod while the pod is busy did not return with its ctx")
	}
}

func TestContainerPathLookup(t *testing.T) {
	bin := t.TempDir()
	script := filepath.Join(bin, "hello-hostprocess")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := lookPath("hello-hostprocess", "relative:"+bin); err != nil || got != script {
		t.Errorf("lookPath = %q, %v; want %q", got, err, script)
	}
	if _, err := lookPath("hello-hostprocess", "relative:"); err == nil {
		t.Error("lookPath resolved against a relative PATH entry")
	}
	if got, _ := lookPath("/nonexistent/x", ""); got != "/nonexistent/x" {
		t.Errorf("lookPath of a path = %q", got)
	}

	// The container's own PATH is used to find its command.
	p := newProvider(t)
	c := ctr("app", "hello-hostprocess")
	c.Env = []v1.EnvVar{{Name: "PATH", Value: bin}}
	pod := makePod("uid-1", v1.RestartPolicyNever, c)
	mustSync(t, p, pod, kri.NewReasonCache())
	if s := waitContainerExited(t, p, pod, "app"); s.ExitCode != 7 {
		t.Errorf("exit code %d, want 7", s.ExitCode)
	}
}
