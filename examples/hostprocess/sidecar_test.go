package hostprocess

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

func asSidecar(c v1.Container) v1.Container {
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// waitRunning waits until every named container of pod runs.
func waitRunning(t *testing.T, p *Provider, pod *v1.Pod, rc *kri.ReasonCache, names ...string) {
	t.Helper()
	eventually(t, 10*time.Second, func() bool {
		mustSync(t, p, pod, rc)
		for _, name := range names {
			if s := current(t, p, pod, name); s == nil || s.State != pkgcontainer.ContainerStateRunning {
				return false
			}
		}
		return true
	}, "containers %v of pod %s not all running", names, pod.Name)
}

func TestSidecarsStopAfterTheAppContainersOnKillPod(t *testing.T) {
	p := newProvider(t)
	// Each shell marks in dir that its trap is set: a SIGTERM before that
	// (a loaded machine) would end it with 143, not its handler's code.
	dir := t.TempDir()
	trapped := func(name, handler string) string {
		return fmt.Sprintf("trap '%s' TERM; touch %s; sleep infinity & wait", handler, filepath.Join(dir, name))
	}
	pod := withInit(makePod("uid-1", v1.RestartPolicyAlways, shell("app", trapped("app", "sleep 0.3; exit 64"))),
		asSidecar(shell("first", trapped("first", "exit 143"))),
		asSidecar(shell("second", trapped("second", "sleep 0.3; exit 64"))))
	rc := kri.NewReasonCache()
	waitRunning(t, p, pod, rc, "first", "second", "app")
	eventually(t, 30*time.Second, func() bool {
		for _, name := range []string{"app", "first", "second"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				return false
			}
		}
		return true
	}, "the shells to set their traps (each touches its file once it has)")
	before := podStatus(t, p, pod)
	if err := p.KillPod(testCtx(t), pod, pkgcontainer.ConvertPodStatusToRunningPod(RuntimeName, before), int64p(5)); err != nil {
		t.Fatal(err)
	}
	st := podStatus(t, p, pod)
	app, first, second := st.FindContainerStatusByName("app"), st.FindContainerStatusByName("first"), st.FindContainerStatusByName("second")
	if app.ExitCode != 64 || second.ExitCode != 64 {
		t.Fatalf("the slow containers exited %d (app) and %d (second), want 64 from their handlers: %+v", app.ExitCode, second.ExitCode, st.ContainerStatuses)
	}
	if second.FinishedAt.Sub(app.FinishedAt) < 250*time.Millisecond || first.FinishedAt.Before(second.FinishedAt) {
		t.Errorf("finished: app %s, second %s, first %s; want app, then second (whose handler takes 0.3s after its SIGTERM), then first",
			app.FinishedAt.Format(time.RFC3339Nano), second.FinishedAt.Format(time.RFC3339Nano), first.FinishedAt.Format(time.RFC3339Nano))
	}
}

func TestSidecarStopsOnceTheAppContainersAreDone(t *testing.T) {
	for _, policy := range []v1.RestartPolicy{v1.RestartPolicyNever, v1.RestartPolicyOnFailure} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			p := newProvider(t)
			pod := withInit(makePod("uid-1", policy, ctr("app", "true")), asSidecar(ctr("sidecar", "sleep", "infinity")))
			rc := kri.NewReasonCache()
			eventually(t, 10*time.Second, func() bool {
				mustSync(t, p, pod, rc)
				s := current(t, p, pod, "sidecar")
				return s != nil && s.State == pkgcontainer.ContainerStateExited
			}, "sidecar never stopped after app exited 0")
			for range 3 {
				mustSync(t, p, pod, rc)
			}
			st := podStatus(t, p, pod)
			if n := len(statusesOf(st, "sidecar")); n != 1 || st.SandboxStatuses[0].State.String() != "SANDBOX_NOTREADY" {
				t.Errorf("after the pod is done: %d sidecar instances, sandbox %s; want 1 and NOTREADY: %+v", n, st.SandboxStatuses[0].State, st.ContainerStatuses)
			}
		})
	}
}
