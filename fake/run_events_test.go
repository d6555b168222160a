package fake_test

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
)

// pending returns the events sub holds now.
func pending(sub *fake.Subscription) []fake.Event {
	var es []fake.Event
	for {
		select {
		case e := <-sub.C:
			es = append(es, e)
		default:
			return es
		}
	}
}

// ofType returns the events of es of type typ.
func ofType(es []fake.Event, typ fake.EventType) []fake.Event {
	var out []fake.Event
	for _, e := range es {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// A postStart hook that fails after a while kills its container at the
// hook's end, as the kubelet's startContainer calls killContainer once the
// hook has returned: the preStop hook of that kill runs from the end, and
// EventPreStopHook is published then, at the end, not at the sync that
// started the container.
func TestLatePostStartFailurePublishesPreStopAtItsEnd(t *testing.T) {
	f := newFixture(t)
	sub := f.p.Subscribe(64)
	defer sub.Close()
	pod := newPod("late-poststart", v1.RestartPolicyNever, withHooks(container("app", "sh", "-c", untilKilled), "sleep 1; exit 2", "sleep 3"))
	_ = f.sync(pod)
	if got := ofType(pending(sub), fake.EventPreStopHook); len(got) != 0 {
		t.Fatalf("at the sync, before the postStart hook's end: %d EventPreStopHook, first at %s; want none yet", len(got), got[0].At.Sub(t0))
	}
	f.clock.Step(500 * time.Millisecond)
	_ = f.status(pod)
	if got := ofType(pending(sub), fake.EventPreStopHook); len(got) != 0 {
		t.Fatalf("0.5s after the start: %d EventPreStopHook; want none before the hook's end at 1s", len(got))
	}
	f.clock.Step(time.Second)
	_ = f.status(pod)
	got := ofType(pending(sub), fake.EventPreStopHook)
	end := t0.Add(time.Second)
	if len(got) != 1 || !got[0].At.Equal(end) || !strings.Contains(got[0].Message, end.Format(time.RFC3339Nano)) {
		t.Fatalf("1.5s after the start: EventPreStopHook %+v; want one at the postStart hook's end (1s), its hook running from then", got)
	}
}

// Events of the pod's runs due at the same instant are published in the
// order of the pod's containers in the spec, whatever the order they were
// started in: here b runs from the first sync, a from its restart a second
// later, and both exit 2s after the first sync.
func TestSameInstantExitsInSpecOrder(t *testing.T) {
	f := newFixture(t)
	sub := f.p.Subscribe(64)
	defer sub.Close()
	pod := newPod("same-instant", v1.RestartPolicyAlways,
		container("a", "sh", "-c", "sleep 1"),
		container("b", "sh", "-c", "sleep 2"))
	f.mustSync(pod)
	f.clock.Step(time.Second)
	f.mustSync(pod) // a exited at 1s: started again, to exit at 2s
	if a := f.current(pod, "a"); !running(a) || a.RestartCount != 1 {
		t.Fatalf("a after its restart at 1s: %s, restart count %d; want running, 1", a.State, a.RestartCount)
	}
	pending(sub)
	f.clock.Step(time.Second)
	_ = f.status(pod)
	var order []string
	for _, e := range ofType(pending(sub), fake.EventContainerExited) {
		if !e.At.Equal(t0.Add(2 * time.Second)) {
			t.Errorf("%s exited at %s; want 2s", e.Container, e.At.Sub(t0))
		}
		order = append(order, e.Container)
	}
	if !equalStrings(order, []string{"a", "b"}) {
		t.Fatalf("EventContainerExited at the same instant: %v; want [a b], the spec's order (a started last)", order)
	}
}

// Events of the pod's runs that fall between two reads of the fake are
// published in the order they happened, across containers: b's exit at 1s
// before a's at 1.5s, though a comes first in the spec.
func TestRunEventsInTimeOrderAcrossContainers(t *testing.T) {
	f := newFixture(t)
	sub := f.p.Subscribe(64)
	defer sub.Close()
	pod := newPod("time-order", v1.RestartPolicyNever,
		container("a", "sh", "-c", "sleep 1.5"),
		container("b", "sh", "-c", "sleep 1"))
	f.mustSync(pod)
	pending(sub)
	f.clock.Step(2 * time.Second)
	_ = f.status(pod)
	var order []string
	for _, e := range ofType(pending(sub), fake.EventContainerExited) {
		order = append(order, e.Container+"@"+e.At.Sub(t0).String())
	}
	if !equalStrings(order, []string{"b@1s", "a@1.5s"}) {
		t.Fatalf("EventContainerExited over one step of 2s: %v; want [b@1s a@1.5s], in time order", order)
	}
}

// A plain init container is not probed, as the kubelet's prober manager
// probes only app containers and restartable init containers (and the API
// server rejects probes on other init containers): its startup probe,
// which would fail, neither kills nor delays it.
func TestPlainInitContainerIsNotProbed(t *testing.T) {
	f := newFixture(t)
	sub := f.p.Subscribe(64)
	defer sub.Close()
	initC := container("init", "sh", "-c", "sleep 3")
	initC.StartupProbe = &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "exit 1"}}},
		PeriodSeconds: 1, FailureThreshold: 1,
	}
	pod := newPod("init-probe", v1.RestartPolicyAlways, container("app", "sh", "-c", untilKilled))
	pod.Spec.InitContainers = []v1.Container{initC}
	f.mustSync(pod)
	for range 4 {
		f.clock.Step(time.Second)
		_ = f.status(pod)
	}
	if got := ofType(pending(sub), fake.EventContainerKilling); len(got) != 0 {
		t.Fatalf("init container with a failing startup probe: %d EventContainerKilling (first of %q); want none: not probed", len(got), got[0].Container)
	}
	c := f.current(pod, "init")
	if c.State != pkgcontainer.ContainerStateExited || c.ExitCode != 0 || c.FinishedAt.Sub(c.StartedAt) != 3*time.Second {
		t.Fatalf("init container: %s with %d after %s; want exited with 0 after its 3s", c.State, c.ExitCode, c.FinishedAt.Sub(c.StartedAt))
	}
}
