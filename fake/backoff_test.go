package fake_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
)

// expectBackOff syncs pod and checks that the restart of app is refused in
// crash-loop back-off ending at until, as the kubelet's runtime reports it.
func (f *fixture) expectBackOff(pod *v1.Pod, delay time.Duration, until time.Time) {
	f.t.Helper()
	err := f.sync(pod)
	if !errors.Is(err, pkgcontainer.ErrCrashLoopBackOff) {
		f.t.Fatalf("at t0+%s: SyncPod = %v, want an error wrapping ErrCrashLoopBackOff", f.clock.Now().Sub(t0), err)
	}
	if end, ok := pkgcontainer.MinBackoffExpiration(err); !ok || !end.Equal(until) {
		f.t.Fatalf("at t0+%s: the back-off in SyncPod's error ends at %v (found %v), want t0+%s", f.clock.Now().Sub(t0), end.Sub(t0), ok, until.Sub(t0))
	}
	item, ok := f.rc.Get(pod.UID, "app")
	if !ok || !errors.Is(item.Err, pkgcontainer.ErrCrashLoopBackOff) || item.Err.Error() != "CrashLoopBackOff" ||
		!strings.HasPrefix(item.Message, "back-off "+delay.String()+" restarting failed container=app pod=web_default(uid-web)") {
		f.t.Fatalf("at t0+%s: ReasonCache entry of app %+v (found %v), want CrashLoopBackOff with the kubelet's message for a %s back-off", f.clock.Now().Sub(t0), item, ok, delay)
	}
	var ps v1.PodStatus
	f.p.RefreshPodStatus(pod, &ps)
	if w := ps.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "CrashLoopBackOff" {
		f.t.Fatalf("at t0+%s: RefreshPodStatus state of app %+v, want Waiting CrashLoopBackOff", f.clock.Now().Sub(t0), ps.ContainerStatuses[0].State)
	}
}

func TestCrashLoopBackOffDoublesUpTo300s(t *testing.T) {
	f := newFixture(t, fake.WithCrashLoopBackOff())
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "false")) // exits at once
	sub := f.p.Subscribe(64)
	defer sub.Close()
	f.mustSync(pod)
	f.mustSync(pod) // the first restart after an exit is immediate
	if c := f.current(pod, "app"); c.RestartCount != 1 {
		t.Fatalf("after the second sync app has restart count %d, want 1", c.RestartCount)
	}
	for i, delay := range []time.Duration{10, 20, 40, 80, 160, 300, 300} {
		delay *= time.Second
		exited := f.clock.Now()
		f.expectBackOff(pod, delay, exited.Add(delay))
		f.clock.Step(delay - time.Second)
		f.expectBackOff(pod, delay, exited.Add(delay))
		f.clock.Step(time.Second)
		f.mustSync(pod)
		if c := f.current(pod, "app"); c.RestartCount != i+2 || !c.CreatedAt.Equal(exited.Add(delay)) {
			t.Fatalf("restart %d: app %+v, want restart count %d, created when the %s back-off ended", i+2, c, i+2, delay)
		}
	}
	backOffs := 0
	for _, e := range drain(sub) {
		if strings.HasPrefix(e, string(fake.EventContainerBackOff)+" app") {
			backOffs++
		}
	}
	if backOffs != 14 {
		t.Errorf("%d %s events, want one per refused restart (14)", backOffs, fake.EventContainerBackOff)
	}
}

func TestCrashLoopBackOffStartsOverAfterALongRun(t *testing.T) {
	f := newFixture(t, fake.WithCrashLoopBackOff())
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sh", "-c", "sleep 700; exit 1"))
	f.mustSync(pod)
	f.clock.Step(700 * time.Second)
	f.mustSync(pod) // first restart: immediate
	f.clock.Step(700 * time.Second)
	// It ran more than 10 minutes since that restart: no back-off.
	f.mustSync(pod)
	if c := f.current(pod, "app"); !running(c) || c.RestartCount != 2 {
		t.Fatalf("app %+v, want running with restart count 2", c)
	}
}

func TestSetCrashLoopBackOff(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "false"))
	for range 3 {
		f.mustSync(pod) // no back-off by default: a restart at every sync
	}
	f.p.SetCrashLoopBackOff(true)
	f.mustSync(pod) // a fresh start for the back-off: first restart immediate
	f.expectBackOff(pod, 10*time.Second, t0.Add(10*time.Second))
	f.p.SetCrashLoopBackOff(false)
	f.mustSync(pod)
	if c := f.current(pod, "app"); c.RestartCount != 4 {
		t.Fatalf("after turning back-off off, app has restart count %d, want 4", c.RestartCount)
	}
}

func TestCrashLoopBackOffOfFailedStarts(t *testing.T) {
	// With start-error instances a container that cannot start crash-loops
	// like one that exits, as under containerd.
	f := newFixture(t, fake.WithCrashLoopBackOff(), fake.WithStartErrorInstances())
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "/nonexistent/app"))
	for range 2 {
		if err := f.sync(pod); !errors.Is(err, pkgcontainer.ErrRunContainer) {
			t.Fatalf("SyncPod = %v, want ErrRunContainer", err)
		}
	}
	f.expectBackOff(pod, 10*time.Second, t0.Add(10*time.Second))
}
