package hostprocess

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

func TestStartBlocksUntilStop(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p := newProvider(t)

	// Calls before Start work.
	pod := makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"), ignoresTerm("stubborn"))
	mustSync(t, p, pod, kri.NewReasonCache())
	pids := p.h.allPIDs()

	started := make(chan error, 1)
	go func() { started <- p.Start(context.Background()) }()
	eventually(t, time.Second, func() bool { p.h.mu.Lock(); defer p.h.mu.Unlock(); return p.h.running }, "Start to run")
	if err := p.Start(context.Background()); err == nil {
		t.Error("a second concurrent Start succeeded")
	}
	select {
	case err := <-started:
		t.Fatalf("Start returned %v before Stop", err)
	case <-time.After(50 * time.Millisecond):
	}
	waitLog(t, p, pod, "stubborn", "ready")

	stopped := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for range 3 { // concurrent Stops all return once Start has
			wg.Go(p.Stop)
		}
		wg.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return")
	}
	select {
	case err := <-started:
		if err != nil {
			t.Errorf("Start = %v, want nil", err)
		}
	default:
		t.Fatal("Stop returned before Start")
	}
	p.Stop() // idempotent

	// Everything was SIGKILLed (even the container ignoring SIGTERM) and
	// reaped: no child of this process is left.
	for _, pid := range pids {
		if alive(pid) || len(waitGroupGone(pid, time.Second)) > 0 {
			t.Errorf("process %d alive after Stop", pid)
		}
	}
	if kids := livingChildren(os.Getpid()); len(kids) > 0 {
		t.Errorf("children of the test process left after Stop: %v", kids)
	}
	for _, s := range podStatus(t, p, pod).ContainerStatuses {
		if s.State != pkgcontainer.ContainerStateExited || s.ExitCode != 137 {
			t.Errorf("%s: %s %d after Stop, want exited 137", s.Name, s.State, s.ExitCode)
		}
	}

	// A stopped provider starts nothing, but still answers.
	other := makePod("uid-2", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	if err := syncPod(t, p, other, kri.NewReasonCache()); !errors.Is(err, ErrStopped) {
		t.Errorf("SyncPod after Stop = %v, want ErrStopped", err)
	}
	if err := syncPod(t, p, pod, kri.NewReasonCache()); !errors.Is(err, ErrStopped) {
		t.Errorf("SyncPod of a known pod after Stop = %v, want ErrStopped", err)
	}
	if pods, err := p.GetPods(context.Background(), false); err != nil || len(pods) != 0 {
		t.Errorf("GetPods(false) after Stop = %v, %v", pods, err)
	}
	if err := p.KillPod(testCtx(t), pod, pkgcontainer.Pod{}, nil); err != nil {
		t.Errorf("KillPod after Stop = %v", err)
	}
	if err := p.DeletePod(testCtx(t), pod); err != nil {
		t.Errorf("DeletePod after Stop = %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Start(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Start after Stop = %v, want nil", err)
		}
	case <-time.After(time.Second):
		t.Error("Start after Stop blocked")
	}
}

func TestStopWithoutStart(t *testing.T) {
	p, err := New(Options{RootDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	pod := makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	mustSync(t, p, pod, kri.NewReasonCache())
	pids := p.h.allPIDs()
	done := make(chan struct{})
	go func() { p.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Stop without Start did not return")
	}
	assertNoProcesses(t, pids)
}

func TestStartReturnsWhenContextEnds(t *testing.T) {
	p := newProvider(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Start = %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Start did not return when ctx ended")
	}
	// Start may run again, and Stop ends it.
	go func() { done <- p.Start(context.Background()) }()
	var startDone chan struct{} // closed as Start returns, before its caller gets the result
	eventually(t, time.Second, func() bool {
		p.h.mu.Lock()
		defer p.h.mu.Unlock()
		startDone = p.h.startDone
		return p.h.running
	}, "Start to run")
	p.Stop()
	select {
	case <-startDone:
	default:
		t.Error("Stop returned before Start")
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return to its caller after Stop")
	}
}

// A provider dropped without Stop kills its processes once it is collected.
func TestDroppedProviderKillsItsProcesses(t *testing.T) {
	pids := func() []int {
		p, err := New(Options{RootDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		pod := makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"), shell("sh", "sleep 30 & sleep infinity"))
		mustSync(t, p, pod, kri.NewReasonCache())
		return p.h.allPIDs()
	}()
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("process %d not running", pid)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		left := 0
		for _, pid := range pids {
			left += len(groupMembers(pid))
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes of a dropped provider still alive", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestConcurrentUse(t *testing.T) {
	p := newProvider(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Start(ctx)

	rc := kri.NewReasonCache()
	var pods []*v1.Pod
	for i := range 4 {
		pods = append(pods, makePod(fmt.Sprintf("uid-%d", i), v1.RestartPolicyAlways,
			ctr("app", "sleep", "infinity"), shell("crash", "exit 1"), ctr("broken", "/nonexistent/x")))
	}
	var wg sync.WaitGroup
	for i := range 16 {
		pod := pods[i%len(pods)]
		wg.Go(func() {
			for j := range 10 {
				switch (i + j) % 6 {
				case 0, 1:
					_ = p.SyncPod(ctx, pod, nil, rc)
				case 2:
					st, err := p.GetPodStatus(ctx, pod)
					if err == nil && j == 7 {
						_ = p.KillPod(ctx, pod, pkgcontainer.ConvertPodStatusToRunningPod(RuntimeName, st), int64p(0))
					}
				case 3:
					_, _ = p.GetPods(ctx, j%2 == 0)
				case 4:
					var api v1.PodStatus
					p.RefreshPodStatus(pod, &api)
				case 5:
					if j == 9 && i == 5 {
						_ = p.DeletePod(ctx, pod)
					}
					_ = p.CleanupPods(ctx, pods, nil, nil)
				}
			}
		})
	}
	wg.Wait()

	// Whatever happened, each pod has at most one running instance per
	// container and consistent records.
	for _, pod := range pods {
		st := podStatus(t, p, pod)
		running := map[string]int{}
		for _, s := range st.ContainerStatuses {
			if s.State == pkgcontainer.ContainerStateRunning {
				running[s.Name]++
			}
		}
		for name, n := range running {
			if n > 1 {
				t.Errorf("%s/%s: %d running instances", pod.UID, name, n)
			}
		}
	}
}

// helperEnv makes the test binary run runHelper instead of the tests.
const helperEnv = "HOSTPROCESS_TEST_HELPER_ROOT"

// runHelper starts containers with a provider rooted in root, prints their
// PIDs and waits to be killed.
func runHelper(root string) {
	p, err := New(Options{RootDir: root})
	if err != nil {
		panic(err)
	}
	pod := makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"), shell("shell", "exec sleep infinity"))
	if err := p.SyncPod(context.Background(), pod, nil, kri.NewReasonCache()); err != nil {
		panic(err)
	}
	fmt.Println(p.h.allPIDs())
	time.Sleep(time.Minute)
	os.Exit(1)
}

// When the process running a provider dies without Stop (a test binary
// killed mid-spec), the containers die with it.
func TestContainersDieWithTheProviderProcess(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+t.TempDir())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("reading the helper's PIDs: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(strings.Trim(line, "[]\n")) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("bad helper output %q", line)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 2 {
		t.Fatalf("helper started %v, want 2 processes", pids)
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("container process %d not running", pid)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	assertNoProcesses(t, pids)
}
