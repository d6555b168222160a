package simprovider_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kri-kit/testkit/vk/simprovider"
)

// The async provider reports each change through the callback VK registers
// with NotifyPods; DeletePod ends with a terminal status.
func ExampleNewAsync() {
	p := simprovider.NewAsync()
	ctx := context.Background()
	p.NotifyPods(ctx, func(pod *corev1.Pod) { fmt.Println("notified:", pod.Name, pod.Status.Phase) })
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
	_ = p.CreatePod(ctx, pod)
	_ = p.DeletePod(ctx, pod)
	got, err := p.GetPod(ctx, "default", "web")
	fmt.Println(got == nil, err)
	// Output:
	// notified: web Running
	// notified: web Succeeded
	// true pod default/web is not known
}

// The sync provider answers GetPodStatus, which VK polls.
func ExampleNew() {
	p := simprovider.New()
	ctx := context.Background()
	_ = p.CreatePod(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	})
	st, _ := p.GetPodStatus(ctx, "default", "web")
	fmt.Println(st.Phase, st.ContainerStatuses[0].State.Running != nil, st.ContainerStatuses[0].Ready)
	// Output: Running true true
}

// A container's command says what it does: here one whose SIGTERM handler
// exits 3, and one the backend cannot start. WithContext stops the
// provider's timers once the context is done.
func ExampleWithContext() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := simprovider.NewAsync(simprovider.WithContext(ctx))
	p.NotifyPods(ctx, func(pod *corev1.Pod) {
		for _, cs := range pod.Status.ContainerStatuses {
			switch {
			case cs.State.Waiting != nil:
				fmt.Println(pod.Status.Phase, cs.Name, "waiting:", cs.State.Waiting.Reason)
			case cs.State.Terminated != nil:
				fmt.Println(pod.Status.Phase, cs.Name, "exit code", cs.State.Terminated.ExitCode)
			}
		}
	})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "job", UID: "uid-2"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Image: "busybox:1.36", Command: []string{"sh", "-c", "trap 'exit 3' TERM; sleep infinity & wait"}},
		}},
	}
	_ = p.CreatePod(ctx, pod)
	_ = p.DeletePod(ctx, pod)
	broken := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "broken", UID: "uid-3"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox:1.36", Command: []string{"/nonexistent/app"}}}},
	}
	_ = p.CreatePod(ctx, broken)
	// Output:
	// Failed app exit code 3
	// Pending app waiting: RunContainerError
}
