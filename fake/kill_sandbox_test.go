package fake_test

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
)

// A sandbox the fake stops takes every container still running in it
// along (StopPodSandbox in the CRI: "they must be forcibly terminated";
// containerd kills them with SIGKILL, exit code 137, reason Error). With
// WithRunningPodKill a KillPod whose running pod lists the sandbox and
// leaves out a container stops that container with the sandbox, at once,
// while the listed containers get their grace period.
func TestKillPodStopsTheContainersOfTheSandboxesItStops(t *testing.T) {
	for _, m := range modes(fake.WithRunningPodKill()) {
		t.Run(m.name, func(t *testing.T) {
			f := newFixture(t, m.opts...)
			pod := newPod("leftout", v1.RestartPolicyAlways,
				container("listed", "sh", "-c", "trap '' TERM; sleep infinity"),
				container("unlisted", "sleep", "infinity"))
			pod.Spec.TerminationGracePeriodSeconds = ptr(int64(10))
			f.mustSync(pod)
			rp := pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, f.status(pod))
			rp.Containers = []*pkgcontainer.Container{rp.FindContainerByName("listed")} // the sandbox stays listed
			killedAt := f.clock.Now()
			done := make(chan error, 1)
			go func() { done <- f.p.KillPod(context.Background(), pod, rp, nil) }()
			f.waitTerminating(pod, "listed")

			f.clock.Step(8 * time.Second) // within listed's grace period of 10s
			st := f.status(pod)
			unlisted := st.FindContainerStatusByName("unlisted")
			wantCode := map[bool]int{false: 143, true: 137}[m.kubelet] // default: SIGTERM to every container
			if unlisted.State != pkgcontainer.ContainerStateExited || unlisted.ExitCode != wantCode || unlisted.Reason != "Error" || !unlisted.FinishedAt.Equal(killedAt) {
				t.Errorf("8s after KillPod with a running pod listing the sandbox and container listed only: unlisted is %s exit %d reason %q finished %s, want exited %d, reason Error, at the KillPod (%s): the sandbox it ran in is stopped; status: %s",
					unlisted.State, unlisted.ExitCode, unlisted.Reason, unlisted.FinishedAt.Format(time.RFC3339), wantCode, killedAt.Format(time.RFC3339), describe(st))
			}
			if sb := st.SandboxStatuses[0]; sb.State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
				t.Errorf("8s after KillPod listing the sandbox: sandbox %s, want not ready", sb.State)
			}
			if !running(st.FindContainerStatusByName("listed")) {
				t.Errorf("8s after KillPod with a 10s grace period: listed is %s, want running (it ignores SIGTERM)", st.FindContainerStatusByName("listed").State)
			}

			f.clock.Step(2 * time.Second)
			if err := recv(t, "KillPod", done); err != nil {
				t.Fatalf("KillPod: %v", err)
			}
			if st := f.current(pod, "listed"); st.State != pkgcontainer.ContainerStateExited || st.ExitCode != 137 {
				t.Errorf("listed after its 10s grace period: %s exit %d, want exited 137", st.State, st.ExitCode)
			}
		})
	}
}

// With WithStatusDrivenSync, a SyncPod that must kill the pod stops the
// sandboxes the status shows, and with them the containers the status left
// out: a stale status does not leave a container running in a stopped
// sandbox.
func TestStatusDrivenKillStopsTheContainersOfTheSandboxesItStops(t *testing.T) {
	for _, m := range modes(fake.WithStatusDrivenSync())[1:] { // the default ignores the status
		t.Run(m.name, func(t *testing.T) {
			f := newFixture(t, m.opts...)
			pod := newPod("stale", v1.RestartPolicyAlways, container("a", "sh", "-c", exitsOnSIGTERM), container("b", "sh", "-c", exitsOnSIGTERM))
			f.mustSync(pod)
			first := f.status(pod)
			oldSandbox, oldB := first.SandboxStatuses[0].Id, first.FindContainerStatusByName("b").ID.ID
			f.syncWith(pod, nil) // a second sandbox; the first keeps running a and b
			st := f.status(pod)
			shown := st.ContainerStatuses[:0]
			for _, cs := range st.ContainerStatuses {
				if cs.ID.ID != oldB {
					shown = append(shown, cs)
				}
			}
			st.ContainerStatuses = shown // both sandboxes, every container but the first b

			sub := f.p.Subscribe(64)
			defer sub.Close()
			f.syncWith(pod, st) // two ready sandboxes: kill what is shown, start over
			var exit, stopped *fake.Event
			for len(sub.C) > 0 {
				e := <-sub.C
				switch {
				case e.Type == fake.EventContainerExited && e.ContainerID == oldB:
					exit = &e
				case e.Type == fake.EventSandboxStopped && e.ContainerID == oldSandbox:
					stopped = &e
				}
			}
			switch {
			case stopped == nil:
				t.Fatalf("SyncPod with a status showing both sandboxes did not stop the first sandbox %s; status: %s", oldSandbox, describe(f.status(pod)))
			case exit == nil:
				t.Fatalf("SyncPod with a status showing both sandboxes and leaving out the first b (%s): it did not exit when its sandbox stopped; status: %s", oldB, describe(f.status(pod)))
			case exit.ExitCode != 137 || !exit.At.Equal(stopped.At) || exit.Seq > stopped.Seq:
				t.Errorf("the first b, left out of the status: exited %d at %s (event %d), its sandbox stopped at %s (event %d); want exit code 137 when the sandbox stops, before it", exit.ExitCode, exit.At, exit.Seq, stopped.At, stopped.Seq)
			}
		})
	}
}
