package fake_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

// syncCall is one call of the agent's HandlePodSyncByUID, with what the
// handler read from the fake during the call.
type syncCall struct {
	uid types.UID
	at  time.Duration // since the rig's start
	// app is the state of container "app" in the GetPodStatus the handler
	// made inside the call ("" when the pod has no such instance); ready
	// is its Ready in a Snapshot made inside the call too.
	app   pkgcontainer.State
	ready bool
}

func (c syncCall) String() string {
	return fmt.Sprintf("%v %s %s ready=%v", c.at, c.uid, c.app, c.ready)
}

// notifyRig is a fake with a recording PodSyncHandler, its Start loop
// running, in a testing/synctest bubble on the bubble's clock. The handler
// calls GetPodStatus and Snapshot inside HandlePodSyncByUID, as an agent's
// handler may, so a fake that called it under its own lock would deadlock
// the bubble. With agent set, a pod worker syncs the pod (GetPodStatus,
// SyncPod) after each call, and only then: kuscia's agent has no resync.
type notifyRig struct {
	t     *testing.T
	p     *fake.PodProvider
	pod   *v1.Pod
	rc    *kri.ReasonCache
	start time.Time
	kick  chan struct{}

	mu    sync.Mutex
	calls []syncCall
	// backOffEnds are the ends of the back-offs the worker's syncs met
	// (the BackoffError of the ReasonCache), since start.
	backOffEnds []time.Duration
	// published are the Waiting reasons of app the worker published
	// (RefreshPodStatus before SyncPod, as kuscia's pod worker does), with
	// the time: "10s CrashLoopBackOff".
	published []string
}

func (r *notifyRig) HandlePodSyncByUID(uid types.UID) {
	c := syncCall{uid: uid, at: time.Since(r.start)}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid, Namespace: r.pod.Namespace, Name: r.pod.Name}}
	st, err := r.p.GetPodStatus(context.Background(), pod)
	if err != nil {
		r.t.Errorf("GetPodStatus in HandlePodSyncByUID: %v", err)
	}
	if s := st.FindContainerStatusByName("app"); s != nil {
		c.app = s.State
	}
	if snap, ok := r.p.Snapshot(r.pod.Namespace + "/" + r.pod.Name); ok {
		app, _ := snap.Container("app")
		c.ready = app.Ready
	}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// runNotified runs fn in a bubble with a rig for pod; the fake is made
// with opts and WithPodSyncHandler. With agent, a worker syncs pod after
// each call of the handler.
func runNotified(t *testing.T, pod *v1.Pod, agent bool, opts []fake.Option, fn func(r *notifyRig)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		r := &notifyRig{t: t, pod: pod, rc: kri.NewReasonCache(), start: time.Now(), kick: make(chan struct{}, 1)}
		r.p = fake.NewPodProvider(append(slices.Clone(opts), fake.WithPodSyncHandler(r))...)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer func() { cancel(); r.p.Stop(); wg.Wait() }()
		wg.Go(func() { _ = r.p.Start(ctx) })
		if agent {
			wg.Go(func() { r.worker(ctx) })
		}
		fn(r)
	})
}

// worker syncs the pod after each call of the handler, as kuscia's pod
// worker does, and only then; it gives up after 1000 syncs, a loop.
func (r *notifyRig) worker(ctx context.Context) {
	for range 1000 {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
		st, err := r.p.GetPodStatus(ctx, r.pod)
		if err != nil {
			continue
		}
		var api v1.PodStatus
		r.p.RefreshPodStatus(r.pod, &api)
		for _, s := range api.ContainerStatuses {
			if s.Name == "app" && s.State.Waiting != nil {
				r.mu.Lock()
				r.published = append(r.published, fmt.Sprintf("%v %s", r.now(), s.State.Waiting.Reason))
				r.mu.Unlock()
			}
		}
		_ = r.p.SyncPod(ctx, r.pod, st, r.rc)
		for _, c := range slices.Concat(r.pod.Spec.InitContainers, r.pod.Spec.Containers) {
			var be *pkgcontainer.BackoffError
			if item, ok := r.rc.Get(r.pod.UID, c.Name); ok && errors.As(item.Err, &be) {
				end := be.BackoffTime().Sub(r.start)
				r.mu.Lock()
				if !slices.Contains(r.backOffEnds, end) {
					r.backOffEnds = append(r.backOffEnds, end)
				}
				r.mu.Unlock()
			}
		}
	}
}

// sync is one SyncPod of the pod by the test itself, as an agent's first
// sync of a new pod.
func (r *notifyRig) sync() {
	r.t.Helper()
	st, err := r.p.GetPodStatus(context.Background(), r.pod)
	if err != nil {
		r.t.Fatal(err)
	}
	_ = r.p.SyncPod(context.Background(), r.pod, st, r.rc)
}

// idle lets d of the bubble's time pass, then waits for every goroutine
// (the fake's Start loop, the worker) to be idle.
func (r *notifyRig) idle(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// since returns the calls made from the rig's time from on.
func (r *notifyRig) since(from time.Duration) []syncCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []syncCall
	for _, c := range r.calls {
		if c.at >= from {
			out = append(out, c)
		}
	}
	return out
}

// callsAt returns the calls made at rig time at.
func (r *notifyRig) callsAt(at time.Duration) []syncCall {
	return slices.DeleteFunc(r.since(at), func(c syncCall) bool { return c.at != at })
}

func (r *notifyRig) now() time.Duration { return time.Since(r.start) }

func (r *notifyRig) app() fake.ContainerSnapshot {
	snap, _ := r.p.Snapshot(r.pod.Namespace + "/" + r.pod.Name)
	c, _ := snap.Container("app")
	return c
}

func (r *notifyRig) dump() string {
	var b strings.Builder
	for _, c := range r.since(0) {
		fmt.Fprintf(&b, "\n  %s", c)
	}
	return b.String()
}

// notifyModes are the fake's two modes.
var notifyModes = []struct {
	name string
	opts []fake.Option
}{
	{"default", nil},
	{"kubelet", []fake.Option{fake.WithKubeletSemantics()}},
}

func appPod(policy v1.RestartPolicy, script string) *v1.Pod {
	grace := int64(5)
	pod := newPod("web", policy, container("app", "sh", "-c", script))
	pod.Spec.TerminationGracePeriodSeconds = &grace
	return pod
}

// A container that exits by itself, while nobody calls the fake: a call at
// its exit time, from the Start loop, in which the handler's GetPodStatus
// already shows it exited; none before, none after.
func TestPodSyncNotifiesContainerExitAtItsTime(t *testing.T) {
	for _, m := range notifyModes {
		t.Run(m.name, func(t *testing.T) {
			runNotified(t, appPod(v1.RestartPolicyNever, "sleep 5; exit 3"), false, m.opts, func(r *notifyRig) {
				r.sync()
				synctest.Wait()
				if len(r.since(0)) == 0 {
					t.Fatal("SyncPod created the sandbox and started app: no call")
				}
				r.idle(time.Minute)
				got := r.since(time.Nanosecond)
				if len(got) != 1 || got[0].at != 5*time.Second || got[0].app != pkgcontainer.ContainerStateExited {
					t.Fatalf("after SyncPod at 0s, calls %v; want one at 5s, when app exits, reading it exited:%s", got, r.dump())
				}
			})
		})
	}
}

// A restart: each exit notifies the worker, whose SyncPod restarts app and
// notifies again. Without the calls the worker would never sync again.
func TestPodSyncNotifiesRestarts(t *testing.T) {
	runNotified(t, appPod(v1.RestartPolicyAlways, "sleep 5; exit 1"), true, nil, func(r *notifyRig) {
		r.sync()
		r.idle(17 * time.Second)
		if got := r.app().RestartCount; got != 3 {
			t.Fatalf("after 17s app has restarted %d times, want 3 (exits at 5s, 10s, 15s, each restarted by a sync the fake asked for):%s", got, r.dump())
		}
		for _, at := range []time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second} {
			calls := r.callsAt(at)
			if len(calls) < 2 || calls[0].app != pkgcontainer.ContainerStateExited || calls[len(calls)-1].app != pkgcontainer.ContainerStateRunning {
				t.Errorf("at %v: calls %v; want the exit's, then the restart's:%s", at, calls, r.dump())
			}
		}
	})
}

// A readiness probe: a call at each flip of Ready, at the probe that flips
// it, and none at the probes that change nothing.
func TestPodSyncNotifiesReadinessFlips(t *testing.T) {
	pod := appPod(v1.RestartPolicyAlways, "echo ok > /tmp/ready; sleep 10; rm -f /tmp/ready; sleep 10; echo ok > /tmp/ready; sleep infinity")
	pod.Spec.Containers[0].ReadinessProbe = probe("cat /tmp/ready", 1)
	pod.Spec.Containers[0].ReadinessProbe.InitialDelaySeconds = 3
	for _, m := range notifyModes {
		t.Run(m.name, func(t *testing.T) {
			runNotified(t, pod, false, m.opts, func(r *notifyRig) {
				r.sync()
				r.idle(time.Minute)
				// Probes at 3s, 4s, ...: ready at 3s, not ready at 10s (the
				// file is gone), ready again at 20s.
				want := []syncCall{{at: 3 * time.Second, ready: true}, {at: 10 * time.Second}, {at: 20 * time.Second, ready: true}}
				got := r.since(time.Nanosecond)
				if len(got) != len(want) {
					t.Fatalf("calls after SyncPod %v, want %v:%s", got, want, r.dump())
				}
				for i := range want {
					if got[i].at != want[i].at || got[i].ready != want[i].ready {
						t.Errorf("call %d: %v, want at %v ready=%v", i, got[i], want[i].at, want[i].ready)
					}
				}
			})
		})
	}
}

// Crash-loop back-off (kubelet mode): each refused restart's back-off end
// brings a call, at that moment, and the worker's sync then restarts app.
// Without it the pod would stop at restart count 1.
func TestPodSyncNotifiesCrashLoopBackOffEnd(t *testing.T) {
	runNotified(t, appPod(v1.RestartPolicyAlways, "sleep 1; exit 1"), true, notifyModes[1].opts, func(r *notifyRig) {
		r.sync()
		r.idle(2 * time.Minute)
		r.mu.Lock()
		ends := slices.Clone(r.backOffEnds)
		r.mu.Unlock()
		if len(ends) < 3 {
			t.Fatalf("the worker met %d back-offs in 2 minutes (%v), want at least 3:%s", len(ends), ends, r.dump())
		}
		for _, end := range ends {
			if end > r.now() {
				continue // still running
			}
			calls := r.callsAt(end)
			if len(calls) == 0 || calls[len(calls)-1].app != pkgcontainer.ContainerStateRunning {
				t.Errorf("back-off ended at %v: calls %v, want a call then and app restarted by the sync it brought:%s", end, calls, r.dump())
			}
		}
		if got := r.app().RestartCount; got < len(ends) {
			t.Errorf("app restarted %d times, want at least %d (one per back-off that ended)", got, len(ends))
		}
		// The refused restart changed the reason the agent publishes: a
		// call at once, so that CrashLoopBackOff is published (exits at
		// 1s, restarted at once, exits at 2s, refused until 12s).
		r.mu.Lock()
		published := slices.Clone(r.published)
		r.mu.Unlock()
		if !slices.Contains(published, "2s CrashLoopBackOff") {
			t.Errorf("the worker published %v; want CrashLoopBackOff at 2s, when the restart was refused:%s", published, r.dump())
		}
	})
}

// An image that cannot be pulled: with the image back-off (kubelet mode),
// calls when it ends, at 10s, 30s, 70s, each bringing a pull; in the
// default mode, which pulls at every sync, a call every 10s (the kubelet's
// pod worker back-off). Either way a bounded number of calls, not a loop.
func TestPodSyncNotifiesImagePullBackOffEnd(t *testing.T) {
	for _, m := range notifyModes {
		t.Run(m.name, func(t *testing.T) {
			pod := appPod(v1.RestartPolicyAlways, "sleep infinity")
			pod.Spec.Containers[0].Image = workload.MissingImageDomain + "/nope:1"
			runNotified(t, pod, true, m.opts, func(r *notifyRig) {
				events := r.p.Subscribe(1000)
				defer events.Close()
				r.sync()
				r.idle(75 * time.Second)
				pulls := []time.Duration{10 * time.Second, 30 * time.Second, 70 * time.Second}
				if m.name == "default" {
					pulls = []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second, 40 * time.Second, 50 * time.Second, 60 * time.Second, 70 * time.Second}
				}
				// When starts pulled and failed (the default pulls again in
				// the sync the first failure's call brings, at 0s).
				var pulled []time.Duration
				for len(events.C) > 0 {
					if e := <-events.C; e.Type == fake.EventContainerStartFailed && !slices.Contains(pulled, e.At.Sub(r.start)) {
						pulled = append(pulled, e.At.Sub(r.start))
					}
				}
				if want := append([]time.Duration{0}, pulls...); !slices.Equal(pulled, want) {
					t.Errorf("pulls failed at %v, want %v:%s", pulled, want, r.dump())
				}
				for _, at := range pulls {
					if len(r.callsAt(at)) == 0 {
						t.Errorf("no call at %v, when a pull is due", at)
					}
				}
				// Each failure's new reason is published at once.
				want := "0s ErrImagePull"
				if m.name == "kubelet" {
					want = "0s ImagePullBackOff"
				}
				r.mu.Lock()
				published := slices.Clone(r.published)
				r.mu.Unlock()
				if !slices.Contains(published, want) {
					t.Errorf("the worker published %v, want %q", published, want)
				}
				if n, limit := len(r.since(0)), 4*len(pulls)+4; n > limit {
					t.Errorf("%d calls in 75s, want at most %d:%s", n, limit, r.dump())
				}
			})
		})
	}
}

// Without crash-loop back-off (the default) every sync restarts a
// container that exits as it starts: the changes of a pod's SyncPods that
// restarted a container notify at most once a second (the PLEG's relist
// period), so an agent that syncs on every call restarts it once a second
// (after a first restart at once), not in a loop that keeps time from
// passing.
func TestPodSyncPacesRestartsWithoutBackOff(t *testing.T) {
	runNotified(t, appPod(v1.RestartPolicyAlways, "exit 1"), true, nil, func(r *notifyRig) {
		r.sync()
		r.idle(10*time.Second + time.Millisecond)
		if got := r.app().RestartCount; got < 10 || got > 12 {
			t.Errorf("app restarted %d times in 10s, want 10 to 12 (once a second):%s", got, r.dump())
		}
		if n := len(r.since(0)); n > 2*12 {
			t.Errorf("%d calls in 10s, want at most 24:%s", n, r.dump())
		}
	})
}

// KillPod: calls when it sends SIGTERM, when a container that ignores it is
// killed at the end of the grace period (kubelet mode: PID 1 ignores
// SIGTERM), and once KillPod has seen every container stop.
func TestPodSyncNotifiesKillPod(t *testing.T) {
	for _, m := range notifyModes {
		t.Run(m.name, func(t *testing.T) {
			runNotified(t, appPod(v1.RestartPolicyAlways, "sleep infinity"), false, m.opts, func(r *notifyRig) {
				r.sync()
				r.idle(time.Second)
				st, _ := r.p.GetPodStatus(context.Background(), r.pod)
				if err := r.p.KillPod(context.Background(), r.pod, *kubeRunningPod(st), nil); err != nil {
					t.Fatal(err)
				}
				returned := r.now()
				synctest.Wait()
				stopAt := time.Second // SIGTERM ends it at once
				if m.name == "kubelet" {
					stopAt += 5 * time.Second // SIGKILL when the grace period ends
				}
				if returned != stopAt {
					t.Fatalf("KillPod returned at %v, want %v", returned, stopAt)
				}
				if len(r.callsAt(time.Second)) == 0 {
					t.Errorf("no call when KillPod began (SIGTERM, sandbox stopped):%s", r.dump())
				}
				last := r.callsAt(stopAt)
				if len(last) == 0 || last[len(last)-1].app != pkgcontainer.ContainerStateExited {
					t.Errorf("at %v, when app stopped: calls %v, want one that reads it exited:%s", stopAt, last, r.dump())
				}
				n := len(r.since(0))
				r.idle(time.Minute)
				if got := len(r.since(0)); got != n {
					t.Errorf("%d calls in the idle minute after the kill, want none:%s", got-n, r.dump())
				}
			})
		})
	}
}

// kubeRunningPod is the running pod an agent hands KillPod, from status.
func kubeRunningPod(st *pkgcontainer.PodStatus) *pkgcontainer.Pod {
	rp := &pkgcontainer.Pod{ID: st.ID, Name: st.Name, Namespace: st.Namespace}
	for _, c := range st.ContainerStatuses {
		if c.State == pkgcontainer.ContainerStateRunning {
			rp.Containers = append(rp.Containers, &pkgcontainer.Container{ID: c.ID, Name: c.Name, State: c.State})
		}
	}
	for _, sb := range st.SandboxStatuses {
		rp.Sandboxes = append(rp.Sandboxes, &pkgcontainer.Container{ID: pkgcontainer.ContainerID{Type: fake.RuntimeName, ID: sb.Id}})
	}
	return rp
}

// Stop ends the calls, the back-off ends already armed included.
func TestPodSyncNoCallsAfterStop(t *testing.T) {
	runNotified(t, appPod(v1.RestartPolicyAlways, "sleep 1; exit 1"), true, notifyModes[1].opts, func(r *notifyRig) {
		r.sync()
		r.idle(3 * time.Second) // exited at 1s, restarted, exited at 2s: in back-off until 12s
		r.mu.Lock()
		armed := len(r.backOffEnds)
		r.mu.Unlock()
		if armed == 0 {
			t.Fatalf("no back-off met in 3s:%s", r.dump())
		}
		r.p.Stop()
		n := len(r.since(0))
		r.idle(time.Minute)
		if got := len(r.since(0)); got != n {
			t.Errorf("%d calls after Stop:%s", got-n, r.dump())
		}
	})
}

// DeletePod forgets the pod: no call for it afterwards, though its
// container would have exited and its back-off would have ended.
func TestPodSyncNoCallsAfterDeletePod(t *testing.T) {
	for _, m := range notifyModes {
		t.Run(m.name, func(t *testing.T) {
			pod := appPod(v1.RestartPolicyAlways, "sleep 1; exit 1")
			runNotified(t, pod, false, m.opts, func(r *notifyRig) {
				r.sync()
				r.idle(1500 * time.Millisecond) // exited at 1s
				r.sync()                        // default: restarted; kubelet: restarted (the first restart is immediate)
				r.idle(time.Second)             // exited again at 2s
				r.sync()                        // default: restarted; kubelet: refused, back-off until 12s
				if err := r.p.DeletePod(context.Background(), pod); err != nil {
					t.Fatal(err)
				}
				n := len(r.since(0))
				r.idle(time.Minute)
				if got := len(r.since(0)); got != n {
					t.Errorf("%d calls after DeletePod:%s", got-n, r.dump())
				}
			})
		})
	}
}

// No busy loop: a pod that just runs, probed every second, brings no call
// in an idle minute once it is ready.
func TestPodSyncIdlePodBringsNoCalls(t *testing.T) {
	for _, m := range notifyModes {
		t.Run(m.name, func(t *testing.T) {
			pod := appPod(v1.RestartPolicyAlways, "echo ok > /tmp/ready; sleep infinity")
			pod.Spec.Containers[0].ReadinessProbe = probe("cat /tmp/ready", 1)
			pod.Spec.Containers[0].LivenessProbe = probe("cat /tmp/ready", 1)
			runNotified(t, pod, true, m.opts, func(r *notifyRig) {
				r.sync()
				r.idle(5 * time.Second)
				if !r.app().Ready {
					t.Fatalf("app not ready after 5s:%s", r.dump())
				}
				n := len(r.since(0))
				r.idle(time.Minute)
				if got := len(r.since(0)); got != n {
					t.Errorf("%d calls in an idle minute, want 0:%s", got-n, r.dump())
				}
			})
		})
	}
}

// On a FakeClock, the calls that time brings come from the Start loop
// after Step, not from the clock's callbacks under its lock: the handler
// reads the clock (GetPodStatus does) without deadlock.
func TestPodSyncHandlerOnFakeClockReadsTheFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clocktesting.NewFakeClock(t0)
		pod := appPod(v1.RestartPolicyAlways, "sleep 5; exit 1")
		var (
			mu    sync.Mutex
			times []time.Duration
			p     *fake.PodProvider
		)
		p = fake.NewPodProvider(fake.WithClock(clk), fake.WithKubeletSemantics(), fake.WithPodSyncHandler(kri.PodSyncHandlerFunc(func(uid types.UID) {
			if _, err := p.GetPodStatus(context.Background(), pod); err != nil {
				t.Errorf("GetPodStatus: %v", err)
			}
			mu.Lock()
			times = append(times, clk.Since(t0))
			mu.Unlock()
		})))
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer func() { cancel(); p.Stop(); wg.Wait() }()
		wg.Go(func() { _ = p.Start(ctx) })
		rc := kri.NewReasonCache()
		syncPod := func() {
			st, _ := p.GetPodStatus(ctx, pod)
			_ = p.SyncPod(ctx, pod, st, rc)
		}
		syncPod()
		clk.Step(5 * time.Second) // exits
		synctest.Wait()
		syncPod()                 // first restart: at once
		clk.Step(5 * time.Second) // exits again at 10s
		synctest.Wait()
		syncPod() // refused: back-off until 20s
		mu.Lock()
		n := len(times)
		mu.Unlock()
		clk.Step(10 * time.Second)
		synctest.Wait()
		mu.Lock()
		got := slices.Clone(times)
		mu.Unlock()
		if len(got) != n+1 || got[n] != 20*time.Second {
			t.Fatalf("calls at %v; want one more at 20s, when the back-off ends", got)
		}
		for _, at := range []time.Duration{0, 5 * time.Second, 10 * time.Second} {
			if !slices.Contains(got, at) {
				t.Errorf("calls at %v: none at %v", got, at)
			}
		}
		// DeletePod disarms what the fake was to tell of the pod.
		syncPod()                 // restarted at 20s
		clk.Step(5 * time.Second) // exits at 25s
		synctest.Wait()
		syncPod() // refused until 45s
		if !clk.HasWaiters() {
			t.Fatal("no timer armed for the end of the back-off")
		}
		if err := p.DeletePod(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if clk.HasWaiters() {
			t.Error("a timer of the deleted pod is still armed")
		}
	})
}

// A postStart hook that fails after the container's start latency: the
// sync that reports PostStartHookError starts nothing, so the fake asks for
// the next, which restarts app (once a second without back-off).
func TestPodSyncAsksForRestartAfterLatePostStartFailure(t *testing.T) {
	pod := appPod(v1.RestartPolicyAlways, "sleep infinity")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "exit 3"}}}}
	runNotified(t, pod, true, nil, func(r *notifyRig) {
		r.p.Container(pod.Namespace+"/"+pod.Name, "app").StartLatency(30 * time.Millisecond)
		r.sync()
		r.idle(5 * time.Second)
		if got := r.app().RestartCount; got < 2 {
			t.Fatalf("after 5s app, whose postStart hook fails 30ms after its start, has restarted %d times, want at least 2 (a sync the fake asked for after each failure):%s", got, r.dump())
		}
	})
}
