package crisim_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	utilexec "k8s.io/utils/exec"

	"github.com/kri-kit/testkit/examples/kubeletruntime/crisim"
)

// An exec probe reads the container's files as they are when it runs: cat P
// prints what the container (or an earlier exec) wrote to P by then, and
// test -e P fails before the write, as the kubelet's exec probes see them
// through RunInContainer.
func TestExecSyncReadsTheContainersFiles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := crisim.NewRuntimeService(crisim.Options{})
		id, _ := hooked(t, r, "sh", "-c", "sleep 2; echo ok > /tmp/ready; sleep infinity")
		exitCode := func(cmd ...string) int {
			t.Helper()
			_, _, err := r.ExecSync(t.Context(), id, cmd, time.Second)
			var code utilexec.CodeExitError
			switch {
			case err == nil:
				return 0
			case errors.As(err, &code):
				return code.Code
			}
			t.Fatalf("ExecSync %q: %v", cmd, err)
			return -1
		}
		if c := exitCode("test", "-e", "/tmp/ready"); c == 0 {
			t.Errorf("test -e /tmp/ready exited 0 at once; the container writes it after 2s")
		}
		time.Sleep(2 * time.Second)
		if c := exitCode("test", "-e", "/tmp/ready"); c != 0 {
			t.Errorf("test -e /tmp/ready exited %d 2s after the container wrote it, want 0", c)
		}
		out, _, err := r.ExecSync(t.Context(), id, []string{"cat", "/tmp/ready"}, time.Second)
		if err != nil || string(out) != "ok\n" {
			t.Errorf("cat /tmp/ready = %q, %v; want %q", out, err, "ok\n")
		}
		if _, _, err := r.ExecSync(t.Context(), id, []string{"sh", "-c", "echo -n x > /tmp/exec"}, 0); err != nil {
			t.Fatal(err)
		}
		if out, _, err := r.ExecSync(t.Context(), id, []string{"cat", "/tmp/exec"}, 0); err != nil || string(out) != "x" {
			t.Errorf("cat /tmp/exec after an exec wrote x = %q, %v; want %q", out, err, "x")
		}
		if err := r.StopContainer(t.Context(), id, 0); err != nil {
			t.Fatal(err)
		}
	})
}
