package crisim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kri-kit/testkit/examples/kubeletruntime/crisim"
)

// A container reads its environment, writes the file mounted at its
// termination message path and prints to stdout: once it has exited the
// host file holds what it wrote and its CRI log what it printed, where the
// kubelet reads them (getTerminationMessage, readLastStringFromContainerLogs).
func TestExitWritesMountedFilesAndLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := crisim.NewRuntimeService(crisim.Options{})
		dir := t.TempDir()
		sandboxConfig := &runtimeapi.PodSandboxConfig{
			Metadata:     &runtimeapi.PodSandboxMetadata{Name: "pod", Namespace: "ns", Uid: "uid-1"},
			LogDirectory: dir,
		}
		sb, err := r.RunPodSandbox(t.Context(), sandboxConfig, "")
		if err != nil {
			t.Fatal(err)
		}
		host := filepath.Join(dir, "termination")
		unmounted := filepath.Join(dir, "not-mounted")
		id, err := r.CreateContainer(t.Context(), sb, &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
			Image:    &runtimeapi.ImageSpec{Image: "busybox:1.36"},
			Command:  []string{"sh", "-c"},
			Args:     []string{"echo hello; sleep 1; echo -n bye; echo -n DONE > /dev/termination-log; echo x > " + unmounted + "; exit $CODE"},
			Envs:     []*runtimeapi.KeyValue{{Key: "CODE", Value: []byte("3")}},
			Mounts:   []*runtimeapi.Mount{{ContainerPath: "/dev/termination-log", HostPath: host}},
			LogPath:  "app/0.log",
		}, sandboxConfig)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "app"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := r.StartContainer(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		st := statusOf(t, r, id)
		if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 3 {
			t.Fatalf("after 1s: state %s, exit code %d; want exited with 3 (exit $CODE, CODE=3)", st.State, st.ExitCode)
		}
		if want := filepath.Join(dir, "app/0.log"); st.LogPath != want {
			t.Errorf("LogPath = %q, want the full path %q", st.LogPath, want)
		}
		if len(st.Mounts) != 1 || st.Mounts[0].HostPath != host {
			t.Errorf("Mounts = %v, want the termination message mount", st.Mounts)
		}
		if data, err := os.ReadFile(host); err != nil || string(data) != "DONE" {
			t.Errorf("termination message file: %q, %v; want \"DONE\"", data, err)
		}
		if _, err := os.Stat(unmounted); !os.IsNotExist(err) {
			t.Errorf("a write to a path under no mount reached the host: %v", err)
		}
		data, err := os.ReadFile(st.LogPath)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(lines) != 2 || !strings.HasSuffix(lines[0], " stdout F hello") || !strings.HasSuffix(lines[1], " stdout P bye") {
			t.Errorf("CRI log:\n%s\nwant a full line hello and a partial line bye", data)
		}
		if _, err := time.Parse(time.RFC3339Nano, strings.Fields(lines[0])[0]); err != nil {
			t.Errorf("CRI log line %q does not start with an RFC 3339 time: %v", lines[0], err)
		}
	})
}
