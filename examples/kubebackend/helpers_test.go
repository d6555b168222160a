package kubebackend_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/examples/kubebackend"
)

const (
	testNS   = "backend"
	testNode = "node-1"
)

// t0 is not a whole second, so that truncation to whole seconds shows.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 700_000_000, time.UTC)

// simEnv is a fake clientset with a simulated kubelet on a fake clock.
type simEnv struct {
	t      *testing.T
	client *fake.Clientset
	clock  *clocktesting.FakeClock
	ctx    context.Context
}

// newSim starts a Kubelet on a fake clock at t0 and stops it when the test
// ends.
func newSim(t *testing.T) *simEnv {
	t.Helper()
	e := &simEnv{t: t, client: kubebackend.NewFakeClientset(), clock: clocktesting.NewFakeClock(t0), ctx: t.Context()}
	k, err := kubebackend.NewKubelet(e.client, kubebackend.KubeletOptions{Namespace: testNS, NodeName: testNode, Clock: e.clock, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := k.Run(ctx); err != nil {
			t.Errorf("Kubelet.Run: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return e
}

// pod is a pod bound to the test node with the given containers (name,
// command) and restart policy.
func pod(name string, policy v1.RestartPolicy, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name},
		Spec:       v1.PodSpec{NodeName: testNode, RestartPolicy: policy, Containers: containers, TerminationGracePeriodSeconds: ptr(int64(30))},
	}
}

func ctr(name string, command ...string) v1.Container {
	return v1.Container{Name: name, Image: "busybox:1.36", Command: command}
}

func ptr[T any](v T) *T { return &v }

func (e *simEnv) create(p *v1.Pod) *v1.Pod {
	e.t.Helper()
	got, err := e.client.CoreV1().Pods(p.Namespace).Create(e.ctx, p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("creating pod %s: %v", p.Name, err)
	}
	return got
}

// get returns the pod as the API server has it now (nil when gone).
func (e *simEnv) get(name string) *v1.Pod {
	p, err := e.client.CoreV1().Pods(testNS).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return p
}

// waitFor waits (real time, the simulated kubelet reacts within
// milliseconds) until cond holds for the pod, failing the test with what
// was last seen after 10s.
func (e *simEnv) waitFor(name, what string, cond func(*v1.Pod) bool) *v1.Pod {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := e.get(name)
		if cond(p) {
			return p
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("pod %s: waited 10s for %s; last seen: %s", name, what, describe(p))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// step moves the fake clock on by d once the Kubelet waits for it.
func (e *simEnv) step(d time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !e.clock.HasWaiters() {
		if time.Now().After(deadline) {
			e.t.Fatalf("the Kubelet armed no timer within 10s, so stepping the clock by %s would do nothing", d)
		}
		time.Sleep(time.Millisecond)
	}
	e.clock.Step(d)
}

func status(p *v1.Pod, name string) *v1.ContainerStatus {
	if p == nil {
		return nil
	}
	for _, list := range [][]v1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

func running(p *v1.Pod, name string) bool {
	cs := status(p, name)
	return cs != nil && cs.State.Running != nil
}

func terminated(p *v1.Pod, name string, code int32) bool {
	cs := status(p, name)
	return cs != nil && cs.State.Terminated != nil && cs.State.Terminated.ExitCode == code
}

func waiting(p *v1.Pod, name, reason string) bool {
	cs := status(p, name)
	return cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == reason
}

func describe(p *v1.Pod) string {
	if p == nil {
		return "<gone>"
	}
	b, _ := json.Marshal(struct {
		Deletion *metav1.Time
		Status   v1.PodStatus
	}{p.DeletionTimestamp, p.Status})
	return string(b)
}
