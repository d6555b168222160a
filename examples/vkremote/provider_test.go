package vkremote_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kri-kit/testkit/examples/vkremote"
)

func webPod(uid string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: k8stypes.UID("uid-" + uid)},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: new(int64(30)),
			Containers:                    []corev1.Container{{Name: "app", Image: "nginx", Env: []corev1.EnvVar{{Name: "MODE", Value: "web"}}}},
		},
	}
}

// notifications collects what the provider notified, in order.
type notifications struct {
	mu   sync.Mutex
	pods []*corev1.Pod
	more chan struct{}
}

func newNotifications() *notifications { return &notifications{more: make(chan struct{}, 100)} }

func (n *notifications) add(p *corev1.Pod) {
	n.mu.Lock()
	n.pods = append(n.pods, p)
	n.mu.Unlock()
	n.more <- struct{}{}
}

// await waits until a notification has the phase, and answers it.
func (n *notifications) await(t *testing.T, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		n.mu.Lock()
		for _, p := range n.pods {
			if p.Status.Phase == phase {
				n.mu.Unlock()
				return p
			}
		}
		n.mu.Unlock()
		select {
		case <-n.more:
		case <-deadline:
			t.Fatalf("no notification with phase %s within 10s (got %d notifications)", phase, len(n.pods))
		}
	}
}

// The same provider over a real loopback socket (httptest), on the real
// clock: a pod is notified Pending, then Running by the poll loop, then
// Succeeded by DeletePod, after which it is unknown.
func TestProviderOverLoopback(t *testing.T) {
	srv := httptest.NewServer(vkremote.NewService(vkremote.ServiceConfig{StartDelay: 50 * time.Millisecond, StopDelay: 20 * time.Millisecond}))
	defer srv.Close()
	c := &vkremote.Client{BaseURL: srv.URL, HTTP: srv.Client()}
	p := vkremote.New(vkremote.Config{Client: c, NodeName: "vk-1", PollInterval: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer p.Wait()
	defer cancel()
	got := newNotifications()
	p.NotifyPods(ctx, got.add)

	pod := webPod("1")
	if err := p.CreatePod(ctx, pod); err != nil {
		t.Fatalf("CreatePod: %v", err)
	}
	if cs := got.await(t, corev1.PodPending).Status.ContainerStatuses[0]; cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating" {
		t.Errorf("pending container status %+v, want waiting in ContainerCreating", cs.State)
	}
	running := got.await(t, corev1.PodRunning)
	if cs := running.Status.ContainerStatuses[0]; cs.State.Running == nil || !cs.Ready {
		t.Errorf("running container status %+v ready=%t, want running and ready", cs.State, cs.Ready)
	}
	if running.Status.PodIP == "" {
		t.Errorf("running pod has no IP")
	}
	// A retried CreatePod, by VK or after a restart of the provider, starts nothing again.
	again := vkremote.New(vkremote.Config{Client: c, NodeName: "vk-1"})
	if err := again.CreatePod(ctx, pod); err != nil {
		t.Fatalf("CreatePod by a new provider of a pod the service runs: %v", err)
	}
	st, err := again.GetPodStatus(ctx, "default", "web")
	if err != nil || st.ContainerStatuses[0].State.Running == nil ||
		!st.ContainerStatuses[0].State.Running.StartedAt.Equal(&running.Status.ContainerStatuses[0].State.Running.StartedAt) {
		t.Errorf("after CreatePod by a new provider GetPodStatus answered %+v, %v; want the running container started at %v",
			st, err, running.Status.ContainerStatuses[0].State.Running.StartedAt)
	}

	listed, err := p.GetPods(ctx)
	if err != nil || len(listed) != 1 || listed[0].UID != pod.UID {
		t.Fatalf("GetPods answered %d pods, %v; want pod %s", len(listed), err, pod.UID)
	}
	if err := p.DeletePod(ctx, pod); err != nil {
		t.Fatalf("DeletePod: %v", err)
	}
	end := got.await(t, corev1.PodSucceeded)
	if term := end.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 0 || term.Reason != "Completed" {
		t.Errorf("after DeletePod the container is %+v, want terminated with exit code 0, Completed", end.Status.ContainerStatuses[0].State)
	}
	if got, err := p.GetPod(ctx, "default", "web"); got != nil || !errdefs.IsNotFound(err) {
		t.Errorf("GetPod after DeletePod answered %v, %v; want nil and NotFound", got, err)
	}
	if err := p.DeletePod(ctx, pod); !errdefs.IsNotFound(err) {
		t.Errorf("a second DeletePod answered %v, want an error errdefs.IsNotFound reads as NotFound", err)
	}
	if pods, err := p.GetPods(ctx); err != nil || len(pods) != 0 {
		t.Errorf("GetPods after DeletePod answered %d pods, %v; want none", len(pods), err)
	}
}

// A grace period shorter than the containers take to exit after SIGTERM
// kills them: exit code 137, and the pod ends Failed.
func TestDeleteHonoursGracePeriod(t *testing.T) {
	srv := httptest.NewServer(vkremote.NewService(vkremote.ServiceConfig{StopDelay: time.Hour}))
	defer srv.Close()
	p := vkremote.New(vkremote.Config{Client: &vkremote.Client{BaseURL: srv.URL, HTTP: srv.Client()}, NodeName: "vk-1"})
	got := newNotifications()
	ctx, cancel := context.WithCancel(context.Background())
	defer p.Wait()
	defer cancel()
	p.NotifyPods(ctx, got.add)
	pod := webPod("2")
	if err := p.CreatePod(ctx, pod); err != nil {
		t.Fatalf("CreatePod: %v", err)
	}
	pod.DeletionGracePeriodSeconds = new(int64(0))
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	if err := p.DeletePod(dctx, pod); err != nil {
		t.Fatalf("DeletePod with a grace period of 0 of containers that take an hour to exit: %v", err)
	}
	end := got.await(t, corev1.PodFailed)
	if term := end.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 137 {
		t.Errorf("after DeletePod with a grace period of 0 the container is %+v, want killed (137)", end.Status.ContainerStatuses[0].State)
	}
}

// The client reads the service's 404 as NotFound, in the way VK's
// errdefs.IsNotFound finds it, also once the provider has wrapped it.
func TestClientNotFound(t *testing.T) {
	srv := httptest.NewServer(vkremote.NewService(vkremote.ServiceConfig{}))
	defer srv.Close()
	c := &vkremote.Client{BaseURL: srv.URL, HTTP: srv.Client()}
	if _, err := c.Get(context.Background(), "nope"); !errdefs.IsNotFound(err) {
		t.Errorf("Get of an unknown group answered %v, want NotFound", err)
	}
	p := vkremote.New(vkremote.Config{Client: c, NodeName: "vk-1"})
	if err := p.DeletePod(context.Background(), webPod("3")); !errdefs.IsNotFound(err) {
		t.Errorf("DeletePod of an unknown pod answered %v, want NotFound", err)
	}
	if _, err := c.Create(context.Background(), &vkremote.Group{ID: "x"}); err == nil || errdefs.IsNotFound(err) {
		t.Errorf("Create of a group without containers answered %v, want a BadRequest error", err)
	}
}
