package hostprocess

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/internal/httpd"
	"github.com/kri-kit/testkit/kri"
)

// TestPath is the PATH of the tests' containers: the default one behind a
// directory with the httpd stand-in (set by TestMain).
var TestPath string

// TestMain checks, once every test has run, that no goroutine leaked and
// that no child process of the test binary is left.
func TestMain(m *testing.M) {
	httpd.RunIfInvoked()
	if root := os.Getenv(helperEnv); root != "" {
		runHelper(root)
		return
	}
	// The containers of the tests find httpd (the workload vocabulary's
	// server) on their PATH: the kit's stand-in for busybox httpd.
	bin, err := os.MkdirTemp("", "hostprocess-bin-")
	if err == nil {
		err = httpd.Install(bin)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	TestPath = bin + string(os.PathListSeparator) + defaultPath
	code := m.Run()
	os.RemoveAll(bin)
	if code == 0 {
		if err := goleak.Find(
			// Ginkgo's RunSpecs (TestConformance) never stops its
			// interrupt handler.
			goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func1"),
			goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func2"),
		); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
		if kids := livingChildren(os.Getpid()); len(kids) > 0 {
			fmt.Fprintf(os.Stderr, "child processes left behind: %v\n", kids)
			code = 1
		}
	}
	os.Exit(code)
}

// newProvider returns a provider rooted in a fresh temporary directory. When
// the test ends it is stopped, and no process it started may be left.
func newProvider(t *testing.T) *Provider {
	t.Helper()
	p, err := New(Options{RootDir: t.TempDir(), Path: TestPath})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		stopped := make(chan struct{})
		go func() { p.Stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Error("Stop did not return within 5s")
		}
		assertNoProcesses(t, p.h.allPIDs())
	})
	return p
}

// allPIDs returns the PID (= process group ID) of every process the
// provider started and still records.
func (h *host) allPIDs() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var pids []int
	for _, ps := range h.pods {
		for _, cs := range ps.containers {
			for _, inst := range cs.instances {
				pids = append(pids, inst.pid)
			}
		}
	}
	return pids
}

// assertNoProcesses fails the test if any of the process groups is alive.
func assertNoProcesses(t *testing.T, pgids []int) {
	t.Helper()
	for _, pgid := range pgids {
		if members := waitGroupGone(pgid, 2*time.Second); len(members) > 0 {
			t.Errorf("process group %d still has living members %v", pgid, members)
		}
	}
}

// waitGroupGone waits until no living process is in group pgid and returns
// the members still alive after timeout.
func waitGroupGone(pgid int, timeout time.Duration) []int {
	deadline := time.Now().Add(timeout)
	for {
		members := groupMembers(pgid)
		if len(members) == 0 || time.Now().After(deadline) {
			return members
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// procStat is what the tests need of /proc/<pid>/stat.
type procStat struct {
	pid, ppid, pgrp int
	state           byte
}

func readProcStat(pid int) (procStat, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	return procStat{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0][0]}, true
}

// livingProcesses returns every process that is not a zombie.
func livingProcesses() []procStat {
	entries, _ := os.ReadDir("/proc")
	var out []procStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok && st.state != 'Z' && st.state != 'X' {
			out = append(out, st)
		}
	}
	return out
}

// groupMembers returns the living processes of process group pgid.
func groupMembers(pgid int) []int {
	var pids []int
	for _, st := range livingProcesses() {
		if st.pgrp == pgid {
			pids = append(pids, st.pid)
		}
	}
	return pids
}

// livingChildren returns the living children of pid.
func livingChildren(pid int) []int {
	var pids []int
	for _, st := range livingProcesses() {
		if st.ppid == pid {
			pids = append(pids, st.pid)
		}
	}
	return pids
}

// alive reports whether pid is a living (non-zombie) process.
func alive(pid int) bool {
	st, ok := readProcStat(pid)
	return ok && st.state != 'Z' && st.state != 'X'
}

func ctr(name string, command ...string) v1.Container {
	return v1.Container{Name: name, Image: "busybox:stable", Command: command}
}

func shell(name, script string) v1.Container {
	return ctr(name, "sh", "-c", script)
}

func makePod(uid string, policy v1.RestartPolicy, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-" + uid, Namespace: "ns", UID: types.UID(uid)},
		Spec:       v1.PodSpec{RestartPolicy: policy, Containers: containers},
	}
}

func withInit(pod *v1.Pod, containers ...v1.Container) *v1.Pod {
	pod.Spec.InitContainers = containers
	return pod
}

func syncPod(t *testing.T, p *Provider, pod *v1.Pod, rc *kri.ReasonCache) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.SyncPod(ctx, pod, nil, rc)
}

func mustSync(t *testing.T, p *Provider, pod *v1.Pod, rc *kri.ReasonCache) {
	t.Helper()
	if err := syncPod(t, p, pod, rc); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
}

func podStatus(t *testing.T, p *Provider, pod *v1.Pod) *pkgcontainer.PodStatus {
	t.Helper()
	st, err := p.GetPodStatus(context.Background(), pod)
	if err != nil {
		t.Fatalf("GetPodStatus: %v", err)
	}
	return st
}

// statusesOf returns the statuses of container name, newest first.
func statusesOf(st *pkgcontainer.PodStatus, name string) []*pkgcontainer.Status {
	var out []*pkgcontainer.Status
	for _, s := range st.ContainerStatuses {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// current returns the newest status of container name, failing if none.
func current(t *testing.T, p *Provider, pod *v1.Pod, name string) *pkgcontainer.Status {
	t.Helper()
	s := podStatus(t, p, pod).FindContainerStatusByName(name)
	if s == nil {
		t.Fatalf("no status for container %q", name)
	}
	return s
}

// waitExited waits until the newest instance of container name has exited
// and returns its status.
func waitContainerExited(t *testing.T, p *Provider, pod *v1.Pod, name string) *pkgcontainer.Status {
	t.Helper()
	var s *pkgcontainer.Status
	eventually(t, 5*time.Second, func() bool {
		s = podStatus(t, p, pod).FindContainerStatusByName(name)
		return s != nil && s.State == pkgcontainer.ContainerStateExited
	}, "container %q to exit", name)
	return s
}

func eventually(t *testing.T, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for "+format, append([]any{timeout}, args...)...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func int64p(v int64) *int64 { return &v }

// pidOf returns the process of a running container, by its ID.
func (h *host) pidOf(id pkgcontainer.ContainerID) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ps := range h.pods {
		for _, cs := range ps.containers {
			for _, inst := range cs.instances {
				if inst.id == id.ID {
					return inst.pid
				}
			}
		}
	}
	return 0
}

// waitLog waits until the log of the current instance of container name
// contains text (a script prints a marker once its traps are set).
func waitLog(t *testing.T, p *Provider, pod *v1.Pod, name, text string) {
	t.Helper()
	eventually(t, 5*time.Second, func() bool {
		s := podStatus(t, p, pod).FindContainerStatusByName(name)
		if s == nil {
			return false
		}
		dir, _ := p.PodDir(pod.UID)
		data, _ := os.ReadFile(filepath.Join(dir, name, strconv.Itoa(s.RestartCount)+".log"))
		return strings.Contains(string(data), text)
	}, "%q in the log of %q", text, name)
}

// testCtx bounds a call that waits for processes, so that a bug fails the
// test instead of hanging it.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
