package crisim_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kri-kit/testkit/examples/kubeletruntime/crisim"
	"github.com/kri-kit/testkit/sim/workload"
)

// The tests run in a synctest bubble: time.Now is the bubble's fake clock,
// which moves only when every goroutine of the bubble is blocked, so the
// times below are exact.

func newSandbox(t *testing.T, r *crisim.RuntimeService) string {
	t.Helper()
	id, err := r.RunPodSandbox(t.Context(), &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "pod", Namespace: "ns", Uid: "uid-1"},
	}, "")
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	return id
}

// create creates container name in sandbox with the given command and image.
func create(t *testing.T, r *crisim.RuntimeService, sandbox, name, image string, command ...string) string {
	t.Helper()
	id, err := r.CreateContainer(t.Context(), sandbox, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: image, UserSpecifiedImage: image},
		Command:  command[:1],
		Args:     command[1:],
	}, nil)
	if err != nil {
		t.Fatalf("CreateContainer %s %q: %v", name, command, err)
	}
	return id
}

func start(t *testing.T, r *crisim.RuntimeService, sandbox, name string, command ...string) string {
	t.Helper()
	id := create(t, r, sandbox, name, "busybox:1.36", command...)
	if err := r.StartContainer(t.Context(), id); err != nil {
		t.Fatalf("StartContainer %s %q: %v", name, command, err)
	}
	return id
}

func statusOf(t *testing.T, r *crisim.RuntimeService, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	resp, err := r.ContainerStatus(t.Context(), id, false)
	if err != nil {
		t.Fatalf("ContainerStatus %s: %v", id, err)
	}
	return resp.Status
}

// wantExited fails unless container id has exited with code and reason at
// the given time after it started.
func wantExited(t *testing.T, r *crisim.RuntimeService, id string, code int32, reason string, after time.Duration) {
	t.Helper()
	st := statusOf(t, r, id)
	if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != code || st.Reason != reason {
		t.Fatalf("container %s is %s with exit code %d, reason %q; want exited with %d, reason %q", id, st.State, st.ExitCode, st.Reason, code, reason)
	}
	if got := time.Duration(st.FinishedAt - st.StartedAt); got != after {
		t.Errorf("container %s finished %s after it started, want %s", id, got, after)
	}
}

func wantRunning(t *testing.T, r *crisim.RuntimeService, id string) {
	t.Helper()
	if st := statusOf(t, r, id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("container %s is %s with exit code %d, want running", id, st.State, st.ExitCode)
	}
}

func TestContainersExitWithTheirCodeAfterTheirRunTime(t *testing.T) {
	for _, tt := range []struct {
		name    string
		command []string
		run     time.Duration
		code    int32
		reason  string
	}{
		{"sleep then exit non-zero", []string{"sh", "-c", "sleep 2; exit 3"}, 2 * time.Second, 3, "Error"},
		{"sleep then exit 0", []string{"sh", "-c", "sleep 0.5; exit 0"}, 500 * time.Millisecond, 0, "Completed"},
		{"exit at once", []string{"sh", "-c", "exit 7"}, 0, 7, "Error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := crisim.NewRuntimeService(crisim.Options{})
				id := start(t, r, newSandbox(t, r), "c", tt.command...)
				if tt.run > 0 {
					time.Sleep(tt.run - time.Nanosecond)
					wantRunning(t, r, id)
				}
				// Looked at later, the exit is still dated at the end of
				// the run.
				time.Sleep(time.Second)
				wantExited(t, r, id, tt.code, tt.reason, tt.run)
				// ListContainers sees the exit too.
				list, err := r.ListContainers(t.Context(), &runtimeapi.ContainerFilter{Id: id})
				if err != nil || len(list) != 1 || list[0].State != runtimeapi.ContainerState_CONTAINER_EXITED {
					t.Errorf("ListContainers = %v, %v; want the container exited", list, err)
				}
			})
		})
	}
}

func TestRunsUntilKilledKeepsRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := crisim.NewRuntimeService(crisim.Options{})
		id := start(t, r, newSandbox(t, r), "c", "sleep", "infinity")
		time.Sleep(24 * time.Hour)
		wantRunning(t, r, id)
	})
}

func TestStopContainer(t *testing.T) {
	for _, tt := range []struct {
		name    string
		command []string
		timeout int64
		took    time.Duration // how long StopContainer blocks
		code    int32
	}{
		{"SIGTERM stops at once", []string{"sleep", "infinity"}, 30, 0, workload.ExitCodeSIGTERM},
		{"SIGTERM stops a short run at once", []string{"sh", "-c", "sleep 100; exit 0"}, 30, 0, workload.ExitCodeSIGTERM},
		{"SIGTERM ignored until the timeout", []string{"sh", "-c", "trap '' TERM; sleep infinity"}, 2, 2 * time.Second, workload.ExitCodeSIGKILL},
		{"SIGTERM ignored, own exit before the timeout", []string{"sh", "-c", "trap '' TERM; sleep 1; exit 4"}, 5, time.Second, 4},
		{"timeout 0 kills a SIGTERM-ignoring container at once", []string{"sh", "-c", "trap '' TERM; sleep infinity"}, 0, 0, workload.ExitCodeSIGKILL},
		{"timeout 0 kills at once", []string{"sleep", "infinity"}, 0, 0, workload.ExitCodeSIGKILL},
		{"a handler exits with its code after its delay", []string{"sh", "-c", "trap 'sleep 1; exit 64' TERM; sleep infinity & wait"}, 4, time.Second, 64},
		{"a handler longer than the timeout is killed", []string{"sh", "-c", "trap 'sleep 3; exit 64' TERM; sleep infinity & wait"}, 2, 2 * time.Second, workload.ExitCodeSIGKILL},
		{"a handler without delay exits with its code at once", []string{"sh", "-c", "trap 'exit 7' TERM; sleep infinity & wait"}, 30, 0, 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := crisim.NewRuntimeService(crisim.Options{})
				id := start(t, r, newSandbox(t, r), "c", tt.command...)
				begin := time.Now()
				checked := make(chan struct{})
				go func() {
					// The container runs on while StopContainer waits.
					defer close(checked)
					if tt.took == 0 {
						return
					}
					time.Sleep(tt.took - time.Nanosecond)
					resp, err := r.ContainerStatus(t.Context(), id, false)
					if err != nil || resp.Status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
						t.Errorf("%s after StopContainer began the container is %v (%v), want still running", tt.took-time.Nanosecond, resp, err)
					}
				}()
				err := r.StopContainer(t.Context(), id, tt.timeout)
				<-checked
				if err != nil {
					t.Fatalf("StopContainer(timeout %d): %v", tt.timeout, err)
				}
				if took := time.Since(begin); took != tt.took {
					t.Errorf("StopContainer(timeout %d) took %s, want %s", tt.timeout, took, tt.took)
				}
				st := statusOf(t, r, id)
				if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != tt.code {
					t.Fatalf("after StopContainer the container is %s with exit code %d, want exited with %d", st.State, st.ExitCode, tt.code)
				}
				if got := time.Unix(0, st.FinishedAt); !got.Equal(begin.Add(tt.took)) {
					t.Errorf("FinishedAt = %s, want %s", got, begin.Add(tt.took))
				}
				// Stopping it again does nothing.
				if err := r.StopContainer(t.Context(), id, 1); err != nil {
					t.Errorf("second StopContainer: %v", err)
				}
				if again := statusOf(t, r, id); again.ExitCode != tt.code || again.FinishedAt != st.FinishedAt {
					t.Errorf("a second StopContainer changed the exited container: code %d, finished %d", again.ExitCode, again.FinishedAt)
				}
			})
		})
	}
}

func TestStopContainerReturnsWhenTheContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := crisim.NewRuntimeService(crisim.Options{})
		id := start(t, r, newSandbox(t, r), "c", "sh", "-c", "trap '' TERM; sleep infinity")
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		begin := time.Now()
		err := r.StopContainer(ctx, id, 30)
		if status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("StopContainer with a context that ends after 1s = %v, want a DeadlineExceeded status", err)
		}
		if took := time.Since(begin); took != time.Second {
			t.Errorf("StopContainer returned after %s, want 1s (when its context ended)", took)
		}
		wantRunning(t, r, id)
	})
}

func TestMissingExecutableFailsStartAsContainerd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := crisim.NewRuntimeService(crisim.Options{})
		id := create(t, r, newSandbox(t, r), "broken", "busybox:1.36", "/nonexistent/app", "--flag")
		err := r.StartContainer(t.Context(), id)
		if err == nil || !strings.Contains(err.Error(), `"/nonexistent/app"`) {
			t.Fatalf("StartContainer of a missing executable = %v, want an error naming it", err)
		}
		st := statusOf(t, r, id)
		if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != crisim.StartErrorExitCode || st.Reason != crisim.StartErrorReason {
			t.Fatalf("after the failed start the container is %s, exit code %d, reason %q; want exited, %d, %q",
				st.State, st.ExitCode, st.Reason, crisim.StartErrorExitCode, crisim.StartErrorReason)
		}
		if st.StartedAt != 0 || st.FinishedAt == 0 || st.Message != status.Convert(err).Message() {
			t.Errorf("StartedAt %d, FinishedAt %d, message %q; want no StartedAt, a FinishedAt and the start error as message", st.StartedAt, st.FinishedAt, st.Message)
		}
		if err := r.StartContainer(t.Context(), id); status.Code(err) != codes.FailedPrecondition {
			t.Errorf("StartContainer of the exited container = %v, want FailedPrecondition", err)
		}
	})
}

func TestUnknownIDsAreNotFound(t *testing.T) {
	r := crisim.NewRuntimeService(crisim.Options{})
	ctx := t.Context()
	if _, err := r.ContainerStatus(ctx, "nope", false); status.Code(err) != codes.NotFound {
		t.Errorf("ContainerStatus of an unknown container = %v, want NotFound", err)
	}
	if err := r.StopContainer(ctx, "nope", 1); status.Code(err) != codes.NotFound {
		t.Errorf("StopContainer of an unknown container = %v, want NotFound", err)
	}
	if err := r.StartContainer(ctx, "nope"); status.Code(err) != codes.NotFound {
		t.Errorf("StartContainer of an unknown container = %v, want NotFound", err)
	}
	if _, err := r.PodSandboxStatus(ctx, "nope", false); status.Code(err) != codes.NotFound {
		t.Errorf("PodSandboxStatus of an unknown sandbox = %v, want NotFound", err)
	}
	if _, err := r.CreateContainer(ctx, "nope", &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "c"}, Image: &runtimeapi.ImageSpec{Image: "i"},
	}, nil); status.Code(err) != codes.NotFound {
		t.Errorf("CreateContainer in an unknown sandbox = %v, want NotFound", err)
	}
	for name, err := range map[string]error{
		"StopPodSandbox":   r.StopPodSandbox(ctx, "nope"),
		"RemovePodSandbox": r.RemovePodSandbox(ctx, "nope"),
		"RemoveContainer":  r.RemoveContainer(ctx, "nope"),
	} {
		if err != nil {
			t.Errorf("%s of an unknown ID = %v, want nil (the CRI makes it idempotent)", name, err)
		}
	}
}

func TestBadRequestsAreRejected(t *testing.T) {
	r := crisim.NewRuntimeService(crisim.Options{})
	sb := newSandbox(t, r)
	for name, cfg := range map[string]*runtimeapi.ContainerConfig{
		"nil config":    nil,
		"no metadata":   {Image: &runtimeapi.ImageSpec{Image: "i"}},
		"no image spec": {Metadata: &runtimeapi.ContainerMetadata{Name: "c"}},
	} {
		if _, err := r.CreateContainer(t.Context(), sb, cfg, nil); status.Code(err) != codes.InvalidArgument {
			t.Errorf("CreateContainer with %s = %v, want InvalidArgument", name, err)
		}
	}
	if _, err := r.RunPodSandbox(t.Context(), &runtimeapi.PodSandboxConfig{}, ""); status.Code(err) != codes.InvalidArgument {
		t.Errorf("RunPodSandbox without metadata = %v, want InvalidArgument", err)
	}
}

func TestSameNameAndAttemptIsRefused(t *testing.T) {
	r := crisim.NewRuntimeService(crisim.Options{})
	sb := newSandbox(t, r)
	first := create(t, r, sb, "c", "busybox:1.36", "sleep", "infinity")
	_, err := r.CreateContainer(t.Context(), sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "c"}, Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"},
	}, nil)
	if status.Code(err) != codes.AlreadyExists {
		t.Fatalf("a second CreateContainer of name c, attempt 0 = %v, want AlreadyExists", err)
	}
	if st := statusOf(t, r, first); st.State != runtimeapi.ContainerState_CONTAINER_CREATED {
		t.Errorf("the refused create changed the first container to %s", st.State)
	}
}

func TestSameSandboxAttemptIsRefused(t *testing.T) {
	r := crisim.NewRuntimeService(crisim.Options{})
	first := newSandbox(t, r)
	_, err := r.RunPodSandbox(t.Context(), &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "pod", Namespace: "ns", Uid: "uid-1"},
	}, "")
	if status.Code(err) != codes.AlreadyExists {
		t.Fatalf("a second RunPodSandbox of the same pod and attempt = %v, want AlreadyExists", err)
	}
	next, err := r.RunPodSandbox(t.Context(), &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "pod", Namespace: "ns", Uid: "uid-1", Attempt: 1},
	}, "")
	if err != nil || next == first {
		t.Errorf("RunPodSandbox of the next attempt = %q, %v; want a new sandbox", next, err)
	}
}

func TestStopPodSandboxKillsItsContainers(t *testing.T) {
	r := crisim.NewRuntimeService(crisim.Options{})
	sb := newSandbox(t, r)
	id := start(t, r, sb, "c", "sh", "-c", "trap '' TERM; sleep infinity")
	if err := r.StopPodSandbox(t.Context(), sb); err != nil {
		t.Fatalf("StopPodSandbox: %v", err)
	}
	if st := statusOf(t, r, id); st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != workload.ExitCodeSIGKILL {
		t.Errorf("after StopPodSandbox its container is %s with code %d, want exited with %d", st.State, st.ExitCode, workload.ExitCodeSIGKILL)
	}
	resp, err := r.PodSandboxStatus(t.Context(), sb, false)
	if err != nil || resp.Status.State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Errorf("PodSandboxStatus after StopPodSandbox = %v, %v; want not ready", resp, err)
	}
	if err := r.RemovePodSandbox(t.Context(), sb); err != nil {
		t.Fatalf("RemovePodSandbox: %v", err)
	}
	if _, err := r.ContainerStatus(t.Context(), id, false); status.Code(err) != codes.NotFound {
		t.Errorf("ContainerStatus after RemovePodSandbox = %v, want NotFound: the sandbox's containers go with it", err)
	}
}

func TestNormalizeImages(t *testing.T) {
	for _, tt := range []struct {
		normalize   bool
		image, want string
	}{
		{false, "busybox:1.36", "busybox:1.36"},
		{true, "busybox:1.36", "docker.io/library/busybox:1.36"},
		{true, "busybox", "docker.io/library/busybox:latest"},
		{true, "registry.example/team/app:v1", "registry.example/team/app:v1"},
		{true, "sha256:" + strings.Repeat("ab", 32), "sha256:" + strings.Repeat("ab", 32)}, // an image ID, not a name: kept
	} {
		r := crisim.NewRuntimeService(crisim.Options{NormalizeImages: tt.normalize})
		id := create(t, r, newSandbox(t, r), "c", tt.image, "sleep", "infinity")
		if got := statusOf(t, r, id).Image.Image; got != tt.want {
			t.Errorf("NormalizeImages=%v: the container of %q reports image %q, want %q", tt.normalize, tt.image, got, tt.want)
		}
		list, err := r.ListContainers(t.Context(), nil)
		if err != nil || len(list) != 1 || list[0].Image.Image != tt.want {
			t.Errorf("NormalizeImages=%v: ListContainers = %v, %v; want image %q", tt.normalize, list, err, tt.want)
		}
	}
}

func TestDoneContextFailsLikeAGRPCClient(t *testing.T) {
	r := crisim.NewRuntimeService(crisim.Options{})
	sb := newSandbox(t, r)
	id := start(t, r, sb, "c", "sleep", "infinity")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := map[string]error{
		"StopContainer":  r.StopContainer(ctx, id, 1),
		"StopPodSandbox": r.StopPodSandbox(ctx, sb),
	}
	_, calls["ContainerStatus"] = r.ContainerStatus(ctx, id, false)
	_, calls["ListContainers"] = r.ListContainers(ctx, nil)
	_, calls["Version"] = r.Version(ctx, "0.1.0")
	for name, err := range calls {
		if status.Code(err) != codes.Canceled {
			t.Errorf("%s with a cancelled context = %v, want a Canceled status", name, err)
		}
	}
	wantRunning(t, r, id)
}

func TestSetReady(t *testing.T) {
	r := crisim.NewRuntimeService(crisim.Options{})
	for _, ready := range []bool{true, false, true} {
		r.SetReady(ready)
		resp, err := r.Status(t.Context(), false)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range resp.Status.Conditions {
			if c.Status != ready {
				t.Errorf("after SetReady(%v) condition %s is %v", ready, c.Type, c.Status)
			}
		}
	}
}

func TestMissingImagesFailToPull(t *testing.T) {
	s := crisim.NewImageService()
	ctx := context.Background()
	if _, err := s.PullImage(ctx, &runtimeapi.ImageSpec{Image: workload.MissingImageDomain + "/app:1"}, nil, nil); err == nil || !strings.Contains(err.Error(), workload.MissingImageDomain) {
		t.Errorf("PullImage of an image under %s = %v, want an error naming the registry", workload.MissingImageDomain, err)
	}
	if _, err := s.PullImage(ctx, &runtimeapi.ImageSpec{Image: "busybox:1.36"}, nil, nil); err != nil {
		t.Errorf("PullImage of busybox:1.36 = %v, want it pulled", err)
	}
}
