package remotebackend_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/examples/remotebackend"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at is t0 plus ms milliseconds.
func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// newFakeService returns a Service on a fake clock at t0 with a back-off of
// 200ms doubling to 2s.
func newFakeService(t testing.TB) (*remotebackend.Service, *testingclock.FakeClock) {
	t.Helper()
	fc := testingclock.NewFakeClock(t0)
	svc, err := remotebackend.NewService(remotebackend.ServiceOptions{
		Clock:   fc,
		BackOff: remotebackend.BackOff{Initial: 200 * time.Millisecond, Max: 2 * time.Second},
	})
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	return svc, fc
}

// ctr returns a container named name running command in busybox:1.36.
func ctr(name string, command ...string) v1.Container {
	return v1.Container{Name: name, Image: "busybox:1.36", Command: command}
}

// sh is the container running sh -c script.
func sh(name, script string) v1.Container { return ctr(name, "sh", "-c", script) }

var podSeq int

// newPod returns a pod with a unique UID, policy and containers, and a grace
// period of 5s.
func newPod(policy v1.RestartPolicy, containers ...v1.Container) *v1.Pod {
	podSeq++
	grace := int64(5)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("pod-%d", podSeq), UID: types.UID(fmt.Sprintf("uid-%d", podSeq))},
		Spec:       v1.PodSpec{RestartPolicy: policy, Containers: containers, TerminationGracePeriodSeconds: &grace},
	}
}

// apply submits pod and fails the test on an error.
func apply(t *testing.T, svc *remotebackend.Service, pod *v1.Pod) remotebackend.PodView {
	t.Helper()
	v, err := svc.Apply(context.Background(), pod)
	if err != nil {
		t.Fatalf("Apply of pod %s: %v", pod.Name, err)
	}
	return v
}

// view returns the Service's view of pod.
func view(t *testing.T, svc *remotebackend.Service, pod *v1.Pod) remotebackend.PodView {
	t.Helper()
	v, ok, err := svc.Pod(context.Background(), pod.UID)
	if err != nil || !ok {
		t.Fatalf("Pod(%s) = %v, %v; want the pod", pod.UID, ok, err)
	}
	return v
}

// container returns the view of container name of pod.
func container(t *testing.T, svc *remotebackend.Service, pod *v1.Pod, name string) remotebackend.ContainerView {
	t.Helper()
	v := view(t, svc, pod)
	for _, c := range append(v.InitContainers, v.Containers...) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("pod %s has no container %s: %+v", pod.Name, name, v)
	return remotebackend.ContainerView{}
}

// describe renders a container view for failure messages.
func describe(c remotebackend.ContainerView) string {
	s := fmt.Sprintf("%s restarts=%d", c.Name, c.RestartCount)
	if r := c.Current; r != nil {
		s += fmt.Sprintf(" current=[%s %s started=%s", r.ID[:8], r.State, r.StartedAt.Sub(t0))
		if r.State == remotebackend.RunExited {
			s += fmt.Sprintf(" finished=%s code=%d %s", r.FinishedAt.Sub(t0), r.ExitCode, r.Reason)
		}
		s += "]"
	}
	if l := c.LastTermination; l != nil {
		s += fmt.Sprintf(" last=[%s code=%d %s %s..%s]", l.RunID[:8], l.ExitCode, l.Reason, l.StartedAt.Sub(t0), l.FinishedAt.Sub(t0))
	}
	if w := c.Waiting; w != nil {
		s += fmt.Sprintf(" waiting=[%s until %s: %s]", w.Reason, w.Until.Sub(t0), w.Message)
	}
	return s
}

// waitForWaiters waits until a goroutine waits on fc.
func waitForWaiters(t *testing.T, fc *testingclock.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !fc.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("nothing started waiting on the fake clock within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// result waits for the error of a call running in another goroutine.
func result(t *testing.T, what string, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return within 10s", what)
		return nil
	}
}

// returned reports whether the call behind ch has returned, without
// waiting; it puts the result back.
func returned(ch chan error) bool {
	select {
	case err := <-ch:
		ch <- err
		return true
	default:
		return false
	}
}
