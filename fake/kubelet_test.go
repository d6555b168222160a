package fake_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/sim/workload"
)

// A mode is a way of making the fake: the default, one option that removes
// one difference from a node, or WithKubeletSemantics, which removes them
// all. Each test below pins one difference of the README's list ("Where the
// default fake differs from a node") in every mode: kubelet says whether the
// mode removes it.
type mode struct {
	name    string
	opts    []fake.Option
	kubelet bool
}

// modes returns the default, the option alone and WithKubeletSemantics.
func modes(option fake.Option) []mode {
	return []mode{
		{name: "default"},
		{name: "option", opts: []fake.Option{option}, kubelet: true},
		{name: "WithKubeletSemantics", opts: []fake.Option{fake.WithKubeletSemantics()}, kubelet: true},
	}
}

// exitsOnSIGTERM runs until killed and exits 143 on SIGTERM, as a host
// process and as PID 1 (the conformance suite's RunsUntilKilled).
const exitsOnSIGTERM = "trap 'exit 143' TERM; sleep infinity & wait"

func forEachMode(t *testing.T, option fake.Option, test func(t *testing.T, f *fixture, kubelet bool)) {
	for _, m := range modes(option) {
		t.Run(m.name, func(t *testing.T) { test(t, newFixture(t, m.opts...), m.kubelet) })
	}
}

// Difference 1: SyncPod ignores the podStatus it is handed.
func TestDifferenceStaleStatus(t *testing.T) {
	forEachMode(t, fake.WithStatusDrivenSync(), func(t *testing.T, f *fixture, kubelet bool) {
		pod := newPod("stale", v1.RestartPolicyAlways, container("app", "sh", "-c", "sleep 5; exit 1"))
		f.mustSync(pod)
		stale := f.status(pod)
		f.clock.Step(6 * time.Second) // app has exited; stale still shows it running
		f.syncWith(pod, stale)
		got := running(f.current(pod, "app"))
		if want := !kubelet; got != want {
			t.Errorf("after SyncPod with a status taken before app exited: app running = %v, want %v (the kubelet's runtime acts on the status it is handed: a stale one delays the restart); status: %s", got, want, describe(f.status(pod)))
		}
	})
}

// Difference 2: no crash-loop back-off.
func TestDifferenceCrashLoopBackOff(t *testing.T) {
	forEachMode(t, fake.WithCrashLoopBackOff(), func(t *testing.T, f *fixture, kubelet bool) {
		pod := newPod("crash", v1.RestartPolicyAlways, container("app", "sh", "-c", "exit 1"))
		var refused int
		for range 5 { // a sync a second: the first restart is immediate, the next waits 10s
			if err := f.sync(pod); errors.Is(err, pkgcontainer.ErrCrashLoopBackOff) {
				refused++
			} else if err != nil {
				t.Fatalf("SyncPod: %v", err)
			}
			f.clock.Step(time.Second)
		}
		if got := refused > 0; got != kubelet {
			t.Errorf("5 syncs a second apart of a container that exits 1 at once: %d restarts refused with CrashLoopBackOff, want refusals: %v; status: %s", refused, kubelet, describe(f.status(pod)))
		}
	})
}

// Difference 3: a container that cannot run leaves no instance.
func TestDifferenceStartErrorInstances(t *testing.T) {
	forEachMode(t, fake.WithStartErrorInstances(), func(t *testing.T, f *fixture, kubelet bool) {
		pod := newPod("noexec", v1.RestartPolicyAlways, container("app", "/nonexistent/app"))
		if err := f.sync(pod); !errors.Is(err, pkgcontainer.ErrRunContainer) {
			t.Fatalf("SyncPod = %v, want ErrRunContainer", err)
		}
		cur := f.current(pod, "app")
		if got := cur != nil; got != kubelet {
			t.Fatalf("after a start that could not run the executable: an instance of app exists = %v, want %v (containerd leaves an exited instance); status: %s", got, kubelet, describe(f.status(pod)))
		}
		if kubelet && (cur.State != pkgcontainer.ContainerStateExited || cur.ExitCode != 128 || cur.Reason != "StartError") {
			t.Errorf("instance left by the failed start: %s exit %d reason %q, want exited, 128, StartError", cur.State, cur.ExitCode, cur.Reason)
		}
	})
}

// Difference 4: KillPod stops every container of the pod, whatever running
// pod it is handed.
func TestDifferenceRunningPodKill(t *testing.T) {
	forEachMode(t, fake.WithRunningPodKill(), func(t *testing.T, f *fixture, kubelet bool) {
		pod := newPod("partial", v1.RestartPolicyAlways, container("a", "sh", "-c", exitsOnSIGTERM), container("b", "sh", "-c", exitsOnSIGTERM))
		f.mustSync(pod)
		rp := pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, f.status(pod))
		a := rp.FindContainerByName("a")
		only := rp
		only.Containers, only.Sandboxes = []*pkgcontainer.Container{a}, nil
		if err := f.p.KillPod(context.Background(), pod, only, nil); err != nil {
			t.Fatalf("KillPod: %v", err)
		}
		if st := f.current(pod, "a"); st.State != pkgcontainer.ContainerStateExited {
			t.Errorf("container a, listed in the running pod, is %s after KillPod, want exited", st.State)
		}
		st := f.status(pod)
		bRuns, sandboxReady := running(st.FindContainerStatusByName("b")), readySandboxes(st) == 1
		if bRuns != kubelet || sandboxReady != kubelet {
			t.Errorf("KillPod with a running pod listing container a and no sandbox: b running = %v, sandbox ready = %v, want %v and %v (the kubelet's runtime stops what the running pod lists); status: %s", bRuns, sandboxReady, kubelet, kubelet, describe(st))
		}
		// Empty running pod: the kubelet's runtime stops nothing.
		f.mustSync(pod)
		if err := f.p.KillPod(context.Background(), pod, pkgcontainer.Pod{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}, nil); err != nil {
			t.Fatalf("KillPod: %v", err)
		}
		if got := runningCount(f.status(pod), "b") == 1; got != kubelet {
			t.Errorf("KillPod with an empty running pod: b still running = %v, want %v", got, kubelet)
		}
		// The call log records the running pod's IDs in every mode.
		kills := f.p.Calls(fake.ForMethod(fake.MethodKillPod))
		if len(kills) != 2 || !slices.Equal(kills[0].RunningContainers, []string{a.ID.ID}) || kills[0].RunningSandboxes != nil || kills[1].RunningContainers != nil {
			t.Errorf("KillPod calls logged %+v, want the first with RunningContainers [%s] and no sandboxes, the second with none", kills, a.ID.ID)
		}
	})
}

// Difference 5: no image-pull back-off.
func TestDifferenceImagePullBackOff(t *testing.T) {
	forEachMode(t, fake.WithImagePullBackOff(), func(t *testing.T, f *fixture, kubelet bool) {
		image := workload.MissingImageDomain + "/app:1"
		c := container("app", "sleep", "infinity")
		c.Image = image
		pod := newPod("pull", v1.RestartPolicyAlways, c)
		var pulls []time.Duration
		var backOff error
		for i := range 31 { // a sync a second for 30s
			err := f.sync(pod)
			switch {
			case errors.Is(err, fake.ErrImagePull):
				pulls = append(pulls, time.Duration(i)*time.Second)
			case errors.Is(err, fake.ErrImagePullBackOff):
				backOff = err
			default:
				t.Fatalf("sync %d: SyncPod = %v, want ErrImagePull or ErrImagePullBackOff", i, err)
			}
			f.clock.Step(time.Second)
		}
		want := 31
		if kubelet {
			want = 3 // at 0s, 10s and 30s
		}
		if len(pulls) != want {
			t.Errorf("31 syncs a second apart of a container whose image cannot be pulled: pulls at %v, want %d (a kubelet pulls at 0s, 10s, 30s)", pulls, want)
		}
		if kubelet && !slices.Equal(pulls, []time.Duration{0, 10 * time.Second, 30 * time.Second}) {
			t.Errorf("pulls at %v, want at 0s, 10s, 30s", pulls)
		}
		if (backOff != nil) != kubelet {
			t.Fatalf("a sync failed with ImagePullBackOff: %v, want %v", backOff != nil, kubelet)
		}
		if kubelet {
			if err := f.sync(pod); !errors.Is(err, fake.ErrImagePullBackOff) { // at 31s
				t.Fatalf("SyncPod 1s after the pull at 30s: %v, want ImagePullBackOff", err)
			}
			msg, _ := f.rc.Get(pod.UID, "app")
			if wantMsg := `Back-off pulling image "` + image + `": ErrImagePull: failed to pull image`; !strings.HasPrefix(msg.Message, wantMsg) || msg.Err.Error() != "ImagePullBackOff" {
				t.Errorf("ReasonCache holds %v %q, want ImagePullBackOff with a message starting %q", msg.Err, msg.Message, wantMsg)
			}
		}
	})
}

// Difference 6: no pod IPs.
func TestDifferencePodIPs(t *testing.T) {
	forEachMode(t, fake.WithPodIPs(), func(t *testing.T, f *fixture, kubelet bool) {
		pod := newPod("net", v1.RestartPolicyAlways, container("app", "sh", "-c", exitsOnSIGTERM))
		host := newPod("host", v1.RestartPolicyAlways, container("app", "sh", "-c", exitsOnSIGTERM))
		host.Spec.HostNetwork = true
		host.Status.HostIPs = []v1.HostIP{{IP: "192.0.2.7"}}
		f.mustSync(host)
		f.mustSync(pod)
		st := f.status(pod)
		var want []string
		if kubelet {
			want = []string{"10.88.0.2"} // the host-network pod took none
		}
		if !slices.Equal(st.IPs, want) {
			t.Errorf("GetPodStatus(%s).IPs = %v, want %v", pod.Name, st.IPs, want)
		}
		if got := st.SandboxStatuses[0].GetNetwork().GetIp(); kubelet && got != "10.88.0.2" {
			t.Errorf("sandbox network IP %q, want 10.88.0.2", got)
		}
		api, err := f.p.APIPodStatus(context.Background(), pod, f.rc)
		if err != nil {
			t.Fatal(err)
		}
		if kubelet != (api.PodIP == "10.88.0.2") {
			t.Errorf("APIPodStatus PodIP %q (kubelet semantics: %v)", api.PodIP, kubelet)
		}
		if hs := f.status(host); len(hs.IPs) != 0 {
			t.Errorf("host-network pod: IPs %v, want none", hs.IPs)
		}
		hapi, err := f.p.APIPodStatus(context.Background(), host, f.rc)
		if err != nil {
			t.Fatal(err)
		}
		if hapi.PodIP != "192.0.2.7" {
			t.Errorf("host-network pod: PodIP %q, want the node's 192.0.2.7", hapi.PodIP)
		}
		// A killed pod's sandbox is not ready: no IP.
		if err := f.kill(pod, nil); err != nil {
			t.Fatalf("KillPod: %v", err)
		}
		if ips := f.status(pod).IPs; len(ips) != 0 {
			t.Errorf("after KillPod: IPs %v, want none", ips)
		}
	})
}

// Difference 7: a container without a SIGTERM handler exits on SIGTERM.
func TestDifferencePID1Signals(t *testing.T) {
	forEachMode(t, fake.WithPID1Signals(), func(t *testing.T, f *fixture, kubelet bool) {
		pod := newPod("pid1", v1.RestartPolicyAlways,
			container("sleeper", "sleep", "infinity"),
			container("trapper", "sh", "-c", exitsOnSIGTERM))
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(10))
		f.mustSync(pod)
		done := f.killAsync(pod, nil)
		if kubelet {
			f.waitTerminating(pod, "sleeper")
			if st := f.current(pod, "trapper"); st.State != pkgcontainer.ContainerStateExited || st.ExitCode != 143 {
				t.Errorf("trapper (trap 'exit 143' TERM; sleep infinity & wait) is %s exit %d after SIGTERM, want exited 143 at once", st.State, st.ExitCode)
			}
			f.clock.Step(10 * time.Second)
		}
		if err := recv(t, "KillPod", done); err != nil {
			t.Fatal(err)
		}
		want := 143
		if kubelet {
			want = 137 // PID 1 without a handler ignores SIGTERM: SIGKILL at the end of the grace period
		}
		if st := f.current(pod, "sleeper"); st.ExitCode != want {
			t.Errorf("sleep infinity killed with a 10s grace period: exit code %d, want %d; status: %s", st.ExitCode, want, describe(f.status(pod)))
		}
	})
}

// Difference 8: no 2-second grace floor.
func TestDifferenceMinimumGracePeriod(t *testing.T) {
	forEachMode(t, fake.WithMinimumGracePeriod(), func(t *testing.T, f *fixture, kubelet bool) {
		pod := newPod("floor", v1.RestartPolicyAlways, container("app", "sh", "-c", "trap '' TERM; sleep infinity"))
		f.mustSync(pod)
		done := f.killAsync(pod, ptr(int64(0)))
		if kubelet {
			f.waitTerminating(pod, "app")
			f.clock.Step(1999 * time.Millisecond)
			if st := f.current(pod, "app"); !running(st) {
				t.Errorf("1.999s after KillPod with override 0: app is %s, want running (the kubelet's runtime gives at least 2s)", st.State)
			}
			f.clock.Step(time.Millisecond)
		}
		if err := recv(t, "KillPod", done); err != nil {
			t.Fatal(err)
		}
		st := f.current(pod, "app")
		if got, want := st.FinishedAt.Sub(st.StartedAt), map[bool]time.Duration{false: 0, true: 2 * time.Second}[kubelet]; got != want || st.ExitCode != 137 {
			t.Errorf("KillPod with override 0 of a container ignoring SIGTERM: exit %d after %s, want 137 after %s", st.ExitCode, got, want)
		}
	})
}

// TestKubeletSemanticsSandboxNetworkStatus checks the CRI shape of the
// sandbox status: a network status with the IP, empty for a host-network
// pod, only with pod IPs on.
func TestKubeletSemanticsSandboxNetworkStatus(t *testing.T) {
	f := newFixture(t, fake.WithKubeletSemantics())
	host := newPod("host", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	host.Spec.HostNetwork = true
	f.mustSync(host)
	st := f.status(host)
	if n := st.SandboxStatuses[0].GetNetwork(); n == nil || n.Ip != "" {
		t.Errorf("host-network sandbox network status %v, want one with no IP", n)
	}
	if st.SandboxStatuses[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("sandbox %s, want ready", st.SandboxStatuses[0].State)
	}
	snap, _ := f.p.Snapshot("default/host")
	if snap.Sandboxes[0].IP != "" {
		t.Errorf("snapshot IP %q, want none", snap.Sandboxes[0].IP)
	}
}

// A container stopped while still created exits 143 whatever its SIGTERM
// handling: it never ran to install or lack a handler.
func TestKillOfACreatedContainer(t *testing.T) {
	for _, m := range modes(fake.WithPID1Signals()) {
		t.Run(m.name, func(t *testing.T) {
			f := newFixture(t, m.opts...)
			pod := newPod("created", v1.RestartPolicyAlways, container("app", "sh", "-c", "trap '' TERM; sleep infinity"), container("plain", "sleep", "infinity"))
			f.p.Container("default/created", "app").StartLatency(5 * time.Second)
			f.p.Container("default/created", "plain").StartLatency(5 * time.Second)
			f.mustSync(pod)
			st := f.status(pod)
			rp := pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, st)
			rp.Containers = nil // list the created containers too (WithRunningPodKill stops what is listed)
			for _, cs := range st.ContainerStatuses {
				rp.Containers = append(rp.Containers, &pkgcontainer.Container{ID: cs.ID, Name: cs.Name, State: cs.State})
			}
			if err := f.p.KillPod(context.Background(), pod, rp, nil); err != nil {
				t.Fatalf("KillPod: %v", err)
			}
			for _, name := range []string{"app", "plain"} {
				if st := f.current(pod, name); st.State != pkgcontainer.ContainerStateExited || st.ExitCode != 143 {
					t.Errorf("container %s killed while created: %s exit %d, want exited 143", name, st.State, st.ExitCode)
				}
			}
		})
	}
}
