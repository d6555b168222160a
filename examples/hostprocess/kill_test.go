package hostprocess

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

// ignoresTerm is a container that ignores SIGTERM; it prints "ready" once
// the trap is set.
func ignoresTerm(name string) v1.Container {
	return shell(name, "trap '' TERM; echo ready; sleep infinity")
}

// runningPodOf builds the running pod the agent hands KillPod.
func runningPodOf(t *testing.T, p *Provider, pod *v1.Pod) pkgcontainer.Pod {
	t.Helper()
	return pkgcontainer.ConvertPodStatusToRunningPod(RuntimeName, podStatus(t, p, pod))
}

func TestKillPodGracePeriod(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		override *int64
		podGrace *int64
		wantMin  time.Duration
		wantMax  time.Duration
		wantTerm int // exit code of the container that honours SIGTERM
	}{
		{name: "override", override: int64p(1), podGrace: int64p(30), wantMin: time.Second, wantMax: 3 * time.Second, wantTerm: 143},
		{name: "pod grace", podGrace: int64p(1), wantMin: time.Second, wantMax: 3 * time.Second, wantTerm: 143},
		{name: "zero kills at once", override: int64p(0), podGrace: int64p(30), wantMax: 700 * time.Millisecond, wantTerm: 137},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newProvider(t)
			pod := makePod("uid-1", v1.RestartPolicyAlways, ignoresTerm("stubborn"), ctr("polite", "sleep", "infinity"))
			pod.Spec.TerminationGracePeriodSeconds = tc.podGrace
			mustSync(t, p, pod, kri.NewReasonCache())
			waitLog(t, p, pod, "stubborn", "ready")
			stubborn := p.h.pidOf(current(t, p, pod, "stubborn").ID)

			start := time.Now()
			if err := p.KillPod(testCtx(t), pod, runningPodOf(t, p, pod), tc.override); err != nil {
				t.Fatalf("KillPod: %v", err)
			}
			took := time.Since(start)
			if took < tc.wantMin || took > tc.wantMax {
				t.Errorf("KillPod took %v, want between %v and %v", took, tc.wantMin, tc.wantMax)
			}
			st := podStatus(t, p, pod)
			if running := st.GetRunningContainerStatuses(); len(running) != 0 {
				t.Errorf("running after KillPod: %+v", running)
			}
			if s := st.FindContainerStatusByName("stubborn"); s.ExitCode != 137 {
				t.Errorf("stubborn exit code %d, want 137", s.ExitCode)
			}
			if s := st.FindContainerStatusByName("polite"); s.ExitCode != tc.wantTerm {
				t.Errorf("polite exit code %d, want %d", s.ExitCode, tc.wantTerm)
			}
			if members := waitGroupGone(stubborn, time.Second); len(members) > 0 {
				t.Errorf("processes of the killed container left: %v", members)
			}
			if st.SandboxStatuses[0].State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
				t.Errorf("sandbox %s after KillPod, want NOTREADY", st.SandboxStatuses[0].State)
			}
		})
	}
}

// deleting sets pod's DeletionGracePeriodSeconds, as the API server does on
// a graceful delete.
func deleting(pod *v1.Pod, secs int64) *v1.Pod {
	pod.DeletionGracePeriodSeconds = &secs
	return pod
}

func TestGracePeriod(t *testing.T) {
	withGrace := func(g *int64) *v1.Pod {
		pod := makePod("x", "", ctr("x", "true"))
		pod.Spec.TerminationGracePeriodSeconds = g
		return pod
	}
	for _, tc := range []struct {
		name     string
		pod      *v1.Pod
		override *int64
		want     time.Duration
	}{
		{"default", nil, nil, 30 * time.Second},
		{"pod without grace", withGrace(nil), nil, 30 * time.Second},
		{"pod grace", withGrace(int64p(5)), nil, 5 * time.Second},
		{"pod grace zero", withGrace(int64p(0)), nil, 0},
		{"override wins", withGrace(int64p(5)), int64p(2), 2 * time.Second},
		{"override zero", withGrace(int64p(5)), int64p(0), 0},
		{"override without pod", nil, int64p(3), 3 * time.Second},
		{"deletion grace outranks the pod's", deleting(withGrace(int64p(5)), 1), nil, time.Second},
		{"override outranks deletion grace", deleting(withGrace(int64p(5)), 1), int64p(2), 2 * time.Second},
	} {
		if got := gracePeriod(tc.pod, tc.override); got != tc.want {
			t.Errorf("%s: grace %v, want %v", tc.name, got, tc.want)
		}
	}
}

// With neither an override nor a pod grace period, the 30s default
// applies: the container ignoring SIGTERM is not killed early.
func TestKillPodDefaultGrace(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyAlways, ignoresTerm("stubborn"))
	mustSync(t, p, pod, kri.NewReasonCache())
	waitLog(t, p, pod, "stubborn", "ready")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := p.KillPod(ctx, nil, runningPodOf(t, p, pod), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("KillPod = %v, want DeadlineExceeded (30s grace not over)", err)
	}
	if s := current(t, p, pod, "stubborn"); s.State != pkgcontainer.ContainerStateRunning {
		t.Errorf("stubborn %s before the grace period is over", s.State)
	}
}

func TestKillPodHonoursContext(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyAlways, ignoresTerm("stubborn"))
	mustSync(t, p, pod, kri.NewReasonCache())
	waitLog(t, p, pod, "stubborn", "ready")

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := p.KillPod(ctx, pod, runningPodOf(t, p, pod), int64p(30))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("KillPod = %v after %v, want DeadlineExceeded promptly", err, time.Since(start))
	}
	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := p.KillPod(cancelled, pod, runningPodOf(t, p, pod), int64p(0)); !errors.Is(err, context.Canceled) {
		t.Errorf("KillPod(cancelled ctx) = %v, want context.Canceled", err)
	}
	// A later KillPod finishes the job.
	if err := p.KillPod(testCtx(t), pod, runningPodOf(t, p, pod), int64p(0)); err != nil {
		t.Fatal(err)
	}
	if s := current(t, p, pod, "stubborn"); s.State != pkgcontainer.ContainerStateExited || s.ExitCode != 137 {
		t.Errorf("stubborn %s %d, want exited 137", s.State, s.ExitCode)
	}
}

func TestKillPodIdentifiesThePod(t *testing.T) {
	p := newProvider(t)
	a := makePod("uid-a", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	b := makePod("uid-b", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	mustSync(t, p, a, kri.NewReasonCache())
	mustSync(t, p, b, kri.NewReasonCache())

	// By runningPod.ID, with no pod; a runningPod listing no container
	// still stops them all.
	if err := p.KillPod(testCtx(t), nil, pkgcontainer.Pod{ID: a.UID}, int64p(1)); err != nil {
		t.Fatal(err)
	}
	if n := len(podStatus(t, p, a).GetRunningContainerStatuses()); n != 0 {
		t.Errorf("pod a: %d running after KillPod by runningPod.ID", n)
	}
	if n := len(podStatus(t, p, b).GetRunningContainerStatuses()); n != 1 {
		t.Errorf("pod b: %d running, want 1 (not killed)", n)
	}
	// By pod.UID, with an empty runningPod.
	if err := p.KillPod(testCtx(t), b, pkgcontainer.Pod{}, int64p(1)); err != nil {
		t.Fatal(err)
	}
	if n := len(podStatus(t, p, b).GetRunningContainerStatuses()); n != 0 {
		t.Errorf("pod b: %d running after KillPod by pod.UID", n)
	}
	// Already stopped, unknown, unidentified: nil.
	for name, kill := range map[string]func() error{
		"stopped": func() error { return p.KillPod(testCtx(t), a, runningPodOf(t, p, a), nil) },
		"unknown": func() error {
			return p.KillPod(testCtx(t), makePod("nope", "", ctr("x", "true")), pkgcontainer.Pod{}, nil)
		},
		"nil pod":   func() error { return p.KillPod(testCtx(t), nil, pkgcontainer.Pod{}, nil) },
		"bad UID":   func() error { return p.KillPod(testCtx(t), nil, pkgcontainer.Pod{ID: "../x"}, nil) },
		"unknown 2": func() error { return p.KillPod(testCtx(t), nil, pkgcontainer.Pod{ID: "nope"}, int64p(0)) },
	} {
		if err := kill(); err != nil {
			t.Errorf("KillPod(%s) = %v, want nil", name, err)
		}
	}
	if pods, _ := p.GetPods(context.Background(), false); len(pods) != 0 {
		t.Errorf("GetPods(false) after KillPod = %+v, want none", pods)
	}
}

func TestContainerChildrenDieWithIt(t *testing.T) {
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyNever,
		shell("leaves-child", "sleep 30 & exit 0"),
		shell("has-children", "sleep 30 & sleep 30 & echo ready; sleep infinity"),
	)
	mustSync(t, p, pod, kri.NewReasonCache())
	leaver := waitContainerExited(t, p, pod, "leaves-child")
	if members := waitGroupGone(p.h.pidOf(leaver.ID), 2*time.Second); len(members) > 0 {
		t.Errorf("the exited container left processes behind: %v", members)
	}
	waitLog(t, p, pod, "has-children", "ready")
	pgid := p.h.pidOf(current(t, p, pod, "has-children").ID)
	if n := len(groupMembers(pgid)); n < 3 {
		t.Fatalf("%d processes in the container's group, want 3", n)
	}
	if err := p.KillPod(testCtx(t), pod, runningPodOf(t, p, pod), int64p(1)); err != nil {
		t.Fatal(err)
	}
	if members := waitGroupGone(pgid, 2*time.Second); len(members) > 0 {
		t.Errorf("processes left after KillPod: %v", members)
	}
}

func TestDeletePod(t *testing.T) {
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyAlways, shell("sh", "sleep infinity & sleep infinity"), ctr("app", "sleep", "infinity"))
	other := makePod("uid-2", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	mustSync(t, p, pod, kri.NewReasonCache())
	mustSync(t, p, other, kri.NewReasonCache())
	pids := p.h.allPIDs()
	dir, _ := p.PodDir(pod.UID)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("pod dir: %v", err)
	}

	if err := p.DeletePod(testCtx(t), pod); err != nil {
		t.Fatalf("DeletePod: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("pod dir still there after DeletePod: %v", err)
	}
	st := podStatus(t, p, pod)
	if st.ID != pod.UID || len(st.ContainerStatuses) != 0 || len(st.SandboxStatuses) != 0 {
		t.Errorf("status after DeletePod %+v, want an empty status", st)
	}
	pods, _ := p.GetPods(context.Background(), true)
	if len(pods) != 1 || pods[0].ID != other.UID {
		t.Errorf("GetPods(true) after DeletePod = %+v, want only the other pod", pods)
	}
	var api v1.PodStatus
	p.RefreshPodStatus(pod, &api)
	if len(api.ContainerStatuses) != 0 {
		t.Errorf("RefreshPodStatus of a deleted pod changed the status")
	}
	alive := 0
	for _, pid := range pids {
		// SIGKILL is delivered asynchronously to the children left behind.
		if len(waitGroupGone(pid, 500*time.Millisecond)) > 0 {
			alive++
		}
	}
	if alive != 1 {
		t.Errorf("%d container process groups alive after DeletePod, want 1 (the other pod)", alive)
	}

	// Deleting again, or a pod never seen: nil.
	if err := p.DeletePod(testCtx(t), pod); err != nil {
		t.Errorf("second DeletePod = %v", err)
	}
	if err := p.DeletePod(testCtx(t), makePod("never", "", ctr("x", "true"))); err != nil {
		t.Errorf("DeletePod(unknown) = %v", err)
	}
	// The pod can come back.
	mustSync(t, p, pod, kri.NewReasonCache())
	if s := current(t, p, pod, "app"); s.RestartCount != 0 || s.State != pkgcontainer.ContainerStateRunning {
		t.Errorf("re-created pod: %+v", s)
	}
}

func TestDeletePodRejectsBadInput(t *testing.T) {
	p := newProvider(t)
	victim := filepath.Join(filepath.Dir(p.RootDir()), "victim")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := p.DeletePod(testCtx(t), nil); !errors.Is(err, ErrInvalidPod) {
		t.Errorf("DeletePod(nil) = %v, want ErrInvalidPod", err)
	}
	for _, uid := range []types.UID{"", "../../victim", "../victim", "a/b", ".."} {
		pod := makePod("x", "", ctr("x", "true"))
		pod.UID = uid
		if err := p.DeletePod(testCtx(t), pod); !errors.Is(err, ErrInvalidPod) {
			t.Errorf("DeletePod(UID %q) = %v, want ErrInvalidPod", uid, err)
		}
		if _, err := p.PodDir(uid); !errors.Is(err, ErrInvalidPod) {
			t.Errorf("PodDir(%q) = %v, want ErrInvalidPod", uid, err)
		}
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("a directory outside RootDir was removed: %v", err)
	}
}

func TestCleanupPods(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	desired := makePod("desired", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	running := makePod("running", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	possibly := makePod("possibly", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	orphan := makePod("orphan", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"), ignoresTerm("stubborn"))
	orphan2 := makePod("orphan2", v1.RestartPolicyNever, ctr("app", "true"))
	for _, pod := range []*v1.Pod{desired, running, possibly, orphan, orphan2} {
		mustSync(t, p, pod, kri.NewReasonCache())
	}
	waitLog(t, p, orphan, "stubborn", "ready")
	waitContainerExited(t, p, orphan2, "app")
	before := map[types.UID]pkgcontainer.ContainerID{}
	for _, pod := range []*v1.Pod{desired, running, possibly} {
		before[pod.UID] = current(t, p, pod, "app").ID
	}
	orphanPIDs := []int{p.h.pidOf(current(t, p, orphan, "app").ID), p.h.pidOf(current(t, p, orphan, "stubborn").ID)}
	runningPod := runningPodOf(t, p, running)

	start := time.Now()
	err := p.CleanupPods(testCtx(t), []*v1.Pod{desired, nil}, []*pkgcontainer.Pod{&runningPod, nil},
		map[types.UID]sets.Empty{possibly.UID: {}})
	if err != nil {
		t.Fatalf("CleanupPods: %v", err)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("CleanupPods took %v", took)
	}
	for _, pod := range []*v1.Pod{desired, running, possibly} {
		s := current(t, p, pod, "app")
		if s.ID != before[pod.UID] || s.State != pkgcontainer.ContainerStateRunning {
			t.Errorf("%s was touched: %v %s", pod.UID, s.ID, s.State)
		}
	}
	for _, pod := range []*v1.Pod{orphan, orphan2} {
		if st := podStatus(t, p, pod); len(st.ContainerStatuses) != 0 || len(st.SandboxStatuses) != 0 {
			t.Errorf("orphan %s still known: %+v", pod.UID, st)
		}
		dir, _ := p.PodDir(pod.UID)
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("orphan %s dir still there: %v", pod.UID, err)
		}
	}
	assertNoProcesses(t, orphanPIDs)
	pods, _ := p.GetPods(context.Background(), true)
	if len(pods) != 3 {
		t.Errorf("GetPods(true) lists %d pods after CleanupPods, want 3", len(pods))
	}

	// Nothing desired: everything goes.
	if err := p.CleanupPods(testCtx(t), nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if pods, _ := p.GetPods(context.Background(), true); len(pods) != 0 {
		t.Errorf("GetPods(true) = %d pods after cleaning up everything", len(pods))
	}
	if entries, _ := os.ReadDir(filepath.Join(p.RootDir(), "pods")); len(entries) != 0 {
		t.Errorf("RootDir/pods holds %d entries, want 0", len(entries))
	}
}

func TestMethodsHonourDoneContext(t *testing.T) {
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	mustSync(t, p, pod, kri.NewReasonCache())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := map[string]func() error{
		"SyncPod":      func() error { return p.SyncPod(ctx, pod, nil, kri.NewReasonCache()) },
		"KillPod":      func() error { return p.KillPod(ctx, pod, runningPodOf(t, p, pod), nil) },
		"DeletePod":    func() error { return p.DeletePod(ctx, pod) },
		"CleanupPods":  func() error { return p.CleanupPods(ctx, nil, nil, nil) },
		"GetPodStatus": func() error { _, err := p.GetPodStatus(ctx, pod); return err },
		"GetPods":      func() error { _, err := p.GetPods(ctx, true); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s(cancelled ctx) = %v, want context.Canceled", name, err)
		}
	}
	if s := current(t, p, pod, "app"); s.State != pkgcontainer.ContainerStateRunning {
		t.Errorf("a call with a cancelled ctx stopped the container")
	}
}
