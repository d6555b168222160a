package crisim_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"

	"github.com/kri-kit/testkit/examples/kubeletruntime/crisim"
)

// hooked creates and starts a container running command with CODE=4 in its
// environment and its termination message path mounted at the returned
// host file.
func hooked(t *testing.T, r *crisim.RuntimeService, command ...string) (id, host string) {
	t.Helper()
	dir := t.TempDir()
	cfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "pod", Namespace: "ns", Uid: "uid-" + filepath.Base(dir)}}
	sb, err := r.RunPodSandbox(t.Context(), cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	host = filepath.Join(dir, "termination")
	id, err = r.CreateContainer(t.Context(), sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		Image:    &runtimeapi.ImageSpec{Image: "busybox:1.36"},
		Command:  command,
		Envs:     []*runtimeapi.KeyValue{{Key: "CODE", Value: []byte("4")}},
		Mounts:   []*runtimeapi.Mount{{ContainerPath: "/dev/termination-log", HostPath: host}},
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.StartContainer(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	return id, host
}

// A hook's command takes its time, writes to the container's files and
// prints; its writes reach the mounted host file when the container exits,
// after the container's own.
func TestExecSyncRunsTheCommandInTheContainer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := crisim.NewRuntimeService(crisim.Options{})
		id, host := hooked(t, r, "sh", "-c", "echo -n A > /dev/termination-log; sleep 3; exit 0")
		start := time.Now()
		out, _, err := r.ExecSync(t.Context(), id, []string{"sh", "-c", "sleep 1; echo -n B >> /dev/termination-log; echo hi"}, 0)
		if err != nil {
			t.Fatalf("ExecSync: %v", err)
		}
		if took := time.Since(start); took != time.Second {
			t.Errorf("ExecSync of a command that sleeps 1s took %s", took)
		}
		if string(out) != "hi\n" {
			t.Errorf("ExecSync printed %q, want %q", out, "hi\n")
		}
		if _, err := os.Stat(host); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the host file exists while the container runs (err %v): writes reach it at exit", err)
		}
		time.Sleep(3 * time.Second)
		wantExited(t, r, id, 0, "Completed", 3*time.Second)
		if data, err := os.ReadFile(host); err != nil || string(data) != "AB" {
			t.Errorf("termination message file = %q (%v), want %q: the container's write, then the hook's", data, err, "AB")
		}
	})
}

// A command that exits non-zero fails as the CRI client reports it, with
// its code; it reads the container's environment.
func TestExecSyncExitCode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := crisim.NewRuntimeService(crisim.Options{})
		id, _ := hooked(t, r, "sleep", "infinity")
		_, _, err := r.ExecSync(t.Context(), id, []string{"sh", "-c", "exit $CODE"}, 0)
		var code utilexec.CodeExitError
		if !errors.As(err, &code) || code.Code != 4 {
			t.Fatalf("ExecSync of exit $CODE (CODE=4) = %v, want a CodeExitError with code 4", err)
		}
		wantRunning(t, r, id)
	})
}

// A command is cut short by its timeout, by the container's exit and by
// StopContainer; its writes after the cut are lost.
func TestExecSyncIsCutShort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := crisim.NewRuntimeService(crisim.Options{})
		id, _ := hooked(t, r, "sleep", "infinity")
		_, _, err := r.ExecSync(t.Context(), id, []string{"sleep", "5"}, time.Second)
		if status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("ExecSync of sleep 5 with a 1s timeout = %v, want DeadlineExceeded", err)
		}

		// Cut by the container's exit: the command (5s) outlives its
		// container (2s), so the call fails, saying the container exited,
		// once it has; the command's write, due at 5s, is lost.
		id2, host := hooked(t, r, "sh", "-c", "sleep 2; exit 0")
		start := time.Now()
		_, _, err = r.ExecSync(t.Context(), id2, []string{"sh", "-c", "sleep 5; echo -n LATE > /dev/termination-log"}, 0)
		if returned := time.Since(start); returned < 2*time.Second {
			t.Errorf("ExecSync returned %s after it began, before its container exited (2s)", returned)
		}
		wantContainerExitedError(t, err, "a 5s command in a container that exits after 2s")
		wantExited(t, r, id2, 0, "Completed", 2*time.Second)
		if _, err := os.Stat(host); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the cut command's write reached the host file (stat: %v)", err)
		}

		// Cut by StopContainer: the container exits on SIGTERM after 1s,
		// and the command (30s) ends with it.
		id3, _ := hooked(t, r, "sh", "-c", "trap 'exit 143' TERM; sleep infinity & wait")
		errc := make(chan error, 1)
		go func() {
			_, _, err := r.ExecSync(t.Context(), id3, []string{"sleep", "30"}, 0)
			errc <- err
		}()
		time.Sleep(time.Second)
		if err := r.StopContainer(t.Context(), id3, 2); err != nil {
			t.Fatal(err)
		}
		wantExited(t, r, id3, 143, "Error", time.Second)
		wantContainerExitedError(t, <-errc, "sleep 30 in a container stopped after 1s")
	})
}

// wantContainerExitedError fails the test unless err is ExecSync's error
// for a command its container's exit cut short.
func wantContainerExitedError(t *testing.T, err error, what string) {
	t.Helper()
	if status.Code(err) != codes.Unknown || !strings.Contains(err.Error(), "exited") {
		t.Errorf("ExecSync of %s = %v, want an error saying the container exited", what, err)
	}
}

// Only a running container runs commands.
func TestExecSyncNeedsARunningContainer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := crisim.NewRuntimeService(crisim.Options{})
		if _, _, err := r.ExecSync(t.Context(), "nope", []string{"true"}, 0); status.Code(err) != codes.NotFound {
			t.Errorf("ExecSync in an unknown container = %v, want NotFound", err)
		}
		id, _ := hooked(t, r, "sh", "-c", "exit 0")
		time.Sleep(time.Millisecond)
		if _, _, err := r.ExecSync(t.Context(), id, []string{"true"}, 0); status.Code(err) != codes.FailedPrecondition {
			t.Errorf("ExecSync in an exited container = %v, want FailedPrecondition", err)
		}
		if _, _, err := r.ExecSync(t.Context(), id, nil, 0); status.Code(err) != codes.InvalidArgument {
			t.Errorf("ExecSync of an empty command = %v, want InvalidArgument", err)
		}
	})
}
