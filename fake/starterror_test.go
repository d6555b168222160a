package fake_test

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
)

func TestStartErrorInstances(t *testing.T) {
	t.Run("a missing executable leaves an exited instance per attempt", func(t *testing.T) {
		f := newFixture(t, fake.WithStartErrorInstances())
		pod := newPod("web", v1.RestartPolicyAlways, container("app", "/nonexistent/app"))
		sub := f.p.Subscribe(16)
		defer sub.Close()
		for attempt := range 3 {
			if err := f.sync(pod); !errors.Is(err, pkgcontainer.ErrRunContainer) {
				t.Fatalf("attempt %d: SyncPod = %v, want ErrRunContainer", attempt+1, err)
			}
			c := f.current(pod, "app")
			if c == nil || c.State != pkgcontainer.ContainerStateExited || c.ExitCode != 128 || c.Reason != "StartError" ||
				c.Message == "" || c.RestartCount != attempt || !c.FinishedAt.Equal(t0) || !c.StartedAt.IsZero() {
				t.Fatalf("attempt %d: newest instance of app %+v; want exited with code 128, reason StartError, a message, restart count %d, finished at %s, never started",
					attempt+1, c, attempt, t0)
			}
		}
		if got, want := drain(sub)[:4], []string{"SandboxCreated  0", "ContainerCreated app 0", "ContainerStartFailed app 0", "ContainerExited app 128"}; !equalStrings(got, want) {
			t.Errorf("events of the first attempt: got %q, want %q", got, want)
		}
		snap, _ := f.p.Snapshot("default/web")
		if app := snap.Containers[0]; app.Reason != "StartError" || app.ExitCode != 128 || app.RestartCount != 2 || app.LastStartError == nil {
			t.Errorf("snapshot of app %+v, want reason StartError, exit code 128, restart count 2 and the start error", app)
		}
		var ps v1.PodStatus
		f.p.RefreshPodStatus(pod, &ps)
		app := ps.ContainerStatuses[0]
		if app.State.Waiting == nil || app.State.Waiting.Reason != "RunContainerError" ||
			app.LastTerminationState.Terminated == nil || app.LastTerminationState.Terminated.Reason != "StartError" || app.RestartCount != 2 {
			t.Errorf("RefreshPodStatus of app %+v; want Waiting RunContainerError, last terminated StartError, restart count 2", app)
		}
	})
	t.Run("under restartPolicy Never the failed start is final", func(t *testing.T) {
		f := newFixture(t, fake.WithStartErrorInstances())
		pod := newPod("job", v1.RestartPolicyNever, container("app", "/nonexistent/app"))
		if err := f.sync(pod); !errors.Is(err, pkgcontainer.ErrRunContainer) {
			t.Fatalf("SyncPod = %v, want ErrRunContainer", err)
		}
		first := f.current(pod, "app")
		if first == nil {
			t.Fatal("a failed start left no instance of app")
		}
		if err := f.sync(pod); err != nil {
			t.Fatalf("second SyncPod = %v, want nil: a Never pod whose container ran (and failed to start) is done", err)
		}
		if c := f.current(pod, "app"); c.ID != first.ID {
			t.Fatalf("the second sync started app again (%s, was %s) under restartPolicy Never", c.ID, first.ID)
		}
	})
	t.Run("a failure before the container exists leaves no instance", func(t *testing.T) {
		f := newFixture(t, fake.WithStartErrorInstances())
		pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
		f.p.Container("default/web", "app").FailStarts(1, errors.New("ErrImagePull"), "pull failed")
		_ = f.sync(pod)
		if st := f.status(pod); len(st.ContainerStatuses) != 0 {
			t.Fatalf("after an image pull failure: %s, want no container instance", describe(st))
		}
		f.mustSync(pod)
		if c := f.current(pod, "app"); !running(c) || c.RestartCount != 0 {
			t.Fatalf("after the pull succeeded app is %+v, want running with restart count 0", c)
		}
	})
	t.Run("without the option a failed start leaves nothing", func(t *testing.T) {
		f := newFixture(t)
		pod := newPod("web", v1.RestartPolicyAlways, container("app", "/nonexistent/app"))
		_ = f.sync(pod)
		if st := f.status(pod); len(st.ContainerStatuses) != 0 {
			t.Fatalf("default fake after a failed start: %s, want no instance", describe(st))
		}
	})
}

func TestSnapshotReportsExitReasons(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyNever, container("ok", "true"), container("bad", "false"), container("run", "sleep", "infinity"))
	f.mustSync(pod)
	if err := f.kill(pod, nil); err != nil {
		t.Fatal(err)
	}
	snap, _ := f.p.Snapshot("default/web")
	for i, want := range []string{"Completed", "Error", "Error"} {
		if c := snap.Containers[i]; c.Reason != want {
			t.Errorf("container %s exited %d has reason %q, want %q", c.Name, c.ExitCode, c.Reason, want)
		}
	}
}
