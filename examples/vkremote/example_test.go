package vkremote_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kri-kit/testkit/examples/vkremote"
)

// A provider in front of the remote service, here served on a loopback
// socket: VK registers its callback with NotifyPods, and the provider
// notifies each status the service reports: Pending on CreatePod, Running
// once the poll loop sees the containers run, Succeeded on DeletePod.
func ExampleNew() {
	srv := httptest.NewServer(vkremote.NewService(vkremote.ServiceConfig{StartDelay: 20 * time.Millisecond}))
	defer srv.Close()
	p := vkremote.New(vkremote.Config{
		Client:       &vkremote.Client{BaseURL: srv.URL, HTTP: srv.Client()},
		NodeName:     "vk-1",
		PollInterval: 10 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer p.Wait()
	defer cancel()
	phases := make(chan corev1.PodPhase, 10)
	p.NotifyPods(ctx, func(pod *corev1.Pod) { phases <- pod.Status.Phase })
	next := func() any {
		select {
		case phase := <-phases:
			return phase
		case <-time.After(5 * time.Second):
			return "no notification within 5s"
		}
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
	_ = p.CreatePod(ctx, pod)
	fmt.Println(next())
	fmt.Println(next())
	_ = p.DeletePod(ctx, pod)
	fmt.Println(next())
	_, err := p.GetPod(ctx, "default", "web")
	fmt.Println(err)
	// Output:
	// Pending
	// Running
	// Succeeded
	// pod default/web is not running here
}
