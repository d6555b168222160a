package workload_test

import (
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

// A failed start waits out a back-off that doubles; a changed image is
// tried at once and restarts a running container whatever the policy.
func TestPodStartFailureAndImageChange(t *testing.T) {
	pod := &v1.Pod{}
	pod.Name, pod.UID, pod.Spec.RestartPolicy = "p", "u", v1.RestartPolicyNever
	pod.Spec.Containers = []v1.Container{{Name: "app", Image: workload.MissingImageDomain + "/app:1", Command: []string{"sleep", "infinity"}}}
	p := workload.NewPod(pod)
	p.BackOff = workload.BackOff{Initial: time.Second, Max: 4 * time.Second}
	p.Reconcile(t0)
	p.Advance(sec(3.5))
	c := p.Container("app")
	if w := c.Waiting; w == nil || !errors.Is(w.Err, workload.ErrImagePull) || !w.Since.Equal(sec(3)) || !w.Until.Equal(sec(7)) {
		t.Fatalf("after failed pulls at 0s, 1s, 3s: Waiting %+v, want ErrImagePull from 3s until 7s", w)
	}
	p.SetImage(c, "busybox", sec(4), time.Second)
	p.Advance(sec(4))
	if c.Current == nil || !c.Current.Running() || !c.Current.StartedAt().Equal(sec(4)) || c.Waiting != nil {
		t.Fatalf("after the image changed at 4s: current %+v, waiting %+v; want running since 4s", c.Current, c.Waiting)
	}
	p.SetImage(c, "busybox:2", sec(5), time.Second)
	p.Reconcile(sec(5))
	p.Advance(sec(5))
	if c.Previous == nil || c.Previous.ExitCode() != workload.ExitCodeSIGTERM || c.Current.Image != "busybox:2" || c.Current.Restarts != 1 {
		t.Errorf("after a second change at 5s: previous %+v, current %+v; want the old run ended with 143 and busybox:2 started, 1 restart", c.Previous, c.Current)
	}
	if p.Stop(sec(6), 0); p.AnyRunning() || !p.Stopped {
		t.Errorf("after Stop: running %v, stopped %v; want nothing running", p.AnyRunning(), p.Stopped)
	}
	if _, ok := p.Next(); ok {
		t.Errorf("a stopped pod has events planned")
	}
}

// Restart policies: an init container that fails is restarted (not under
// Never) before any app container starts; app containers as the policy
// says.
func TestPodRestartPolicy(t *testing.T) {
	for _, tt := range []struct {
		policy       v1.RestartPolicy
		wantInitRuns int
		wantAppRuns  int
	}{
		{v1.RestartPolicyAlways, 2, 2}, // app: 1s to 2s, 3s to 4s
		{v1.RestartPolicyOnFailure, 2, 1},
		{v1.RestartPolicyNever, 1, 0},
	} {
		pod := &v1.Pod{}
		pod.Name, pod.UID, pod.Spec.RestartPolicy = "p", "u", tt.policy
		pod.Spec.InitContainers = []v1.Container{{Name: "init", Image: "i", Command: []string{"sh", "-c", "exit 1"}}}
		pod.Spec.Containers = []v1.Container{{Name: "app", Image: "a", Command: []string{"sh", "-c", "sleep 1"}}}
		p := workload.NewPod(pod)
		p.BackOff = workload.BackOff{Initial: time.Second, Max: time.Second}
		// The init container succeeds on its second run (a script would
		// say so; here its command is swapped once it failed).
		p.CheckStart = func(c *workload.PodContainer) (string, error) {
			if c.Name == "init" && c.Current != nil {
				c.Behaviour = workload.Parse([]string{"true"}, nil)
			}
			return "", nil
		}
		p.Reconcile(t0)
		p.Advance(sec(4.5))
		runs := func(c *workload.PodContainer) int {
			if c.Current == nil {
				return 0
			}
			return c.Current.Restarts + 1
		}
		init, app := p.Container("init"), p.Container("app")
		if runs(init) != tt.wantInitRuns || runs(app) != tt.wantAppRuns {
			t.Errorf("%s: init ran %d times, app %d; want %d and %d", tt.policy, runs(init), runs(app), tt.wantInitRuns, tt.wantAppRuns)
		}
		if w := app.Waiting; tt.policy == v1.RestartPolicyAlways && (w == nil || !errors.Is(w.Err, workload.ErrCrashLoopBackOff)) {
			t.Errorf("%s: app waits %+v, want CrashLoopBackOff", tt.policy, w)
		}
	}
}

// Restarts: a sidecar always, a plain init container on failure unless
// Never, an app container as the pod's policy says.
func TestRestartsFollowsThePolicy(t *testing.T) {
	type kind struct{ init, restartable bool }
	app, initC, sidecar := kind{}, kind{init: true}, kind{init: true, restartable: true}
	for _, tt := range []struct {
		policy v1.RestartPolicy
		k      kind
		code   int
		want   bool
	}{
		{v1.RestartPolicyAlways, app, 0, true}, {"", app, 0, true},
		{v1.RestartPolicyOnFailure, app, 0, false}, {v1.RestartPolicyOnFailure, app, 1, true},
		{v1.RestartPolicyNever, app, 1, false},
		{v1.RestartPolicyAlways, initC, 0, false}, {v1.RestartPolicyAlways, initC, 1, true},
		{v1.RestartPolicyOnFailure, initC, 1, true}, {v1.RestartPolicyNever, initC, 1, false},
		{v1.RestartPolicyNever, sidecar, 0, true}, {v1.RestartPolicyOnFailure, sidecar, 0, true},
	} {
		if got := workload.Restarts(tt.policy, tt.k.init, tt.k.restartable, tt.code); got != tt.want {
			t.Errorf("Restarts(%q, init %v, restartable %v, exit %d) = %v, want %v", tt.policy, tt.k.init, tt.k.restartable, tt.code, got, tt.want)
		}
	}
}

// StartFailure says why a start fails as the runtime says it: the image
// manager for a missing image under Never, containerd for a pull from a
// registry that does not resolve, the OCI runtime for a missing
// executable.
func TestStartFailure(t *testing.T) {
	missing := workload.MissingImageDomain + "/app:1"
	runs := workload.Behaviour{RunsUntilKilled: true}
	for _, tt := range []struct {
		image   string
		pull    v1.PullPolicy
		b       workload.Behaviour
		wantErr error
		wantMsg string
	}{
		{missing, v1.PullNever, runs, workload.ErrImageNeverPull, `Container image "kri.invalid/app:1" is not present with pull policy of Never`},
		{missing, v1.PullIfNotPresent, runs, workload.ErrImagePull, `failed to pull image "kri.invalid/app:1": dial tcp: lookup kri.invalid: no such host`},
		{"busybox", v1.PullIfNotPresent, workload.Behaviour{MissingExecutable: "/nonexistent/app"}, workload.ErrRunContainer, `exec: "/nonexistent/app": stat /nonexistent/app: no such file or directory`},
		{"busybox", v1.PullNever, runs, nil, ""},
	} {
		msg, err := workload.StartFailure(tt.image, tt.pull, tt.b)
		if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) || msg != tt.wantMsg {
			t.Errorf("StartFailure(%q, %s, %+v) = %q, %v; want %q, %v", tt.image, tt.pull, tt.b, msg, err, tt.wantMsg, tt.wantErr)
		}
	}
}
