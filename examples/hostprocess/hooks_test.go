package hostprocess

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

func execHandler(script string) *v1.LifecycleHandler {
	return &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", script}}}
}

// Hooks hostprocess cannot run are rejected before anything starts, naming
// the container and the hook.
func TestHooksRejected(t *testing.T) {
	p := newProvider(t)
	for _, tc := range []struct {
		name string
		l    *v1.Lifecycle
		want string
	}{
		{"tcp", &v1.Lifecycle{PostStart: &v1.LifecycleHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(80)}}}, `container "app": postStart hook has no exec, httpGet or sleep action`},
		{"empty-exec", &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{}}}, `container "app": preStop exec hook has no command`},
		{"negative-sleep", &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: -1}}}, `preStop sleep hook has negative seconds -1`},
	} {
		c := shell("app", "sleep 1")
		c.Lifecycle = tc.l
		pod := makePod("reject-"+tc.name, v1.RestartPolicyNever, c)
		err := syncPod(t, p, pod, kri.NewReasonCache())
		if !errors.Is(err, ErrInvalidPod) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: SyncPod = %v, want ErrInvalidPod naming %q", tc.name, err, tc.want)
		}
		if st := podStatus(t, p, pod); len(st.ContainerStatuses) != 0 {
			t.Errorf("%s: a container started: %+v", tc.name, st.ContainerStatuses)
		}
	}
}

// A failing postStart hook stops its container, and the start fails with
// PostStartHookError: RefreshPodStatus shows it Waiting with that reason when
// the container is to be restarted, Terminated when it is not.
func TestPostStartHookFailure(t *testing.T) {
	p := newProvider(t)
	for _, policy := range []v1.RestartPolicy{v1.RestartPolicyNever, v1.RestartPolicyAlways} {
		c := shell("app", "trap 'exit 143' TERM; sleep infinity & wait")
		c.Lifecycle = &v1.Lifecycle{PostStart: execHandler("echo broken; exit 7")}
		pod := makePod("poststart-"+strings.ToLower(string(policy)), policy, c)
		rc := kri.NewReasonCache()
		err := syncPod(t, p, pod, rc)
		if !errors.Is(err, workload.ErrPostStartHook) {
			t.Fatalf("%s: SyncPod = %v, want PostStartHookError", policy, err)
		}
		item, ok := rc.Get(pod.UID, "app")
		if !ok || !errors.Is(item.Err, workload.ErrPostStartHook) || !strings.Contains(item.Message, "exit status 7") || !strings.Contains(item.Message, "broken") {
			t.Errorf("%s: ReasonCache entry %+v, %v; want PostStartHookError with the hook's exit status and output", policy, item, ok)
		}
		if s := current(t, p, pod, "app"); s.State != pkgcontainer.ContainerStateExited || s.ExitCode != 143 {
			t.Errorf("%s: app after its hook failed: %s exit %d, want exited 143", policy, s.State, s.ExitCode)
		}
		ps := v1.PodStatus{}
		p.RefreshPodStatus(pod, &ps)
		st := ps.ContainerStatuses[0].State
		switch {
		case policy == v1.RestartPolicyNever && st.Terminated == nil:
			t.Errorf("Never: RefreshPodStatus reports %+v, want Terminated", st)
		case policy == v1.RestartPolicyAlways && (st.Waiting == nil || st.Waiting.Reason != "PostStartHookError"):
			t.Errorf("Always: RefreshPodStatus reports %+v, want Waiting PostStartHookError", st)
		}
	}
}

// The postStart hook runs in the container's environment and directory,
// before the next container starts; the preStop hook runs before SIGTERM,
// within the grace period; a sleep hook sleeps.
func TestHooksRunBeforeTheNextStepAndWithinGrace(t *testing.T) {
	p := newProvider(t)
	dir := t.TempDir()
	msg := filepath.Join(dir, "message")
	first := shell("first", "trap 'exit 143' TERM; sleep infinity & wait")
	first.Env = []v1.EnvVar{{Name: "WORD", Value: "hello"}}
	first.Lifecycle = &v1.Lifecycle{
		PostStart: execHandler("sleep 0.3; echo -n $WORD > " + msg + "; pwd >> " + msg),
		PreStop:   &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 1}},
	}
	first.TerminationMessagePath = msg
	pod := makePod("hooks-order", v1.RestartPolicyAlways, first, shell("second", "sleep infinity"))
	mustSync(t, p, pod, kri.NewReasonCache())
	a, b := current(t, p, pod, "first"), current(t, p, pod, "second")
	if gap := b.StartedAt.Sub(a.StartedAt); gap < 300*time.Millisecond {
		t.Errorf("second started %s after first, whose postStart hook sleeps 0.3s", gap)
	}
	data, _ := os.ReadFile(msg)
	if want := "hello" + filepath.Join(p.h.podsDir, string(pod.UID), "first") + "\n"; string(data) != want {
		t.Errorf("the postStart hook wrote %q, want %q (the container's env and directory)", data, want)
	}

	// The sleep hook runs first: SIGTERM comes no sooner than its 1s, and
	// first, which exits on SIGTERM, ends with 143, not with SIGKILL at the
	// end of the grace period of 10s.
	start := time.Now()
	grace := int64(10)
	if err := p.KillPod(context.Background(), pod, pkgcontainer.Pod{ID: pod.UID}, &grace); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("KillPod with a 1s preStop sleep hook took %s, want at least 1s (the hook runs before SIGTERM)", took)
	}
	if a := statusesOf(podStatus(t, p, pod), "first")[0]; a.ExitCode != 143 {
		t.Errorf("first exited %d after its preStop hook, want 143 (SIGTERM once the hook is over, not SIGKILL)", a.ExitCode)
	}

	// A hook that outlasts the grace period is cut short when the grace
	// period is over: it never gets to write hook-ended. SIGTERM comes
	// then, and SIGKILL after what is left of the grace period, here 1s
	// (the grace period, shorter than the 2s minimum).
	order := filepath.Join(dir, "order")
	stubborn := shell("stubborn", "trap 'echo term >> "+order+"' TERM; echo ready; while :; do sleep 0.1; done")
	stubborn.Lifecycle = &v1.Lifecycle{PreStop: execHandler("echo hook >> " + order + "; sleep 20; echo hook-ended >> " + order)}
	pod2 := makePod("hooks-grace", v1.RestartPolicyAlways, stubborn)
	mustSync(t, p, pod2, kri.NewReasonCache())
	waitLog(t, p, pod2, "stubborn", "ready") // its trap is set
	start = time.Now()
	grace = 1
	if err := p.KillPod(context.Background(), pod2, pkgcontainer.Pod{ID: pod2.UID}, &grace); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("KillPod (grace 1s) of a SIGTERM-ignoring container with a 20s preStop hook took %s, want at least 2s (the hook's 1s, then 1s before SIGKILL)", took)
	}
	if data, _ := os.ReadFile(order); strings.Contains(string(data), "hook-ended") {
		t.Errorf("the 20s preStop hook ran to its end (%q written by the hook and the container's SIGTERM trap), want it cut short at the end of the 1s grace period", data)
	}
	if s := statusesOf(podStatus(t, p, pod2), "stubborn")[0]; s.ExitCode != 137 {
		t.Errorf("stubborn exited %d, want 137 (SIGKILL)", s.ExitCode)
	}
}
