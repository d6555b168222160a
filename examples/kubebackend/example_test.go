package kubebackend_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/examples/kubebackend"
	"github.com/kri-kit/testkit/kri"
)

// A provider in front of a backend cluster whose API server is the fake
// clientset and whose node is a simulated kubelet: SyncPod creates the
// mirror, the backend's kubelet starts the container, GetPodStatus converts
// the mirror's status, KillPod deletes the mirror and forgets the pod.
func ExampleNewBackend() {
	ctx := context.Background()
	b, err := kubebackend.NewBackend(ctx, kubebackend.NewFakeClientset(),
		kubebackend.Options{Namespace: "backend", NodeName: "sim-node"}, kubebackend.KubeletOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	go func() { _ = b.Start(ctx) }()
	defer b.Stop()

	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{
			{Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}},
		}},
	}
	reasons := kri.NewReasonCache()
	var status *pkgcontainer.PodStatus
	for range 500 {
		_ = b.SyncPod(ctx, pod, status, reasons)
		status, _ = b.GetPodStatus(ctx, pod)
		if len(status.ContainerStatuses) > 0 && status.ContainerStatuses[0].State == pkgcontainer.ContainerStateRunning {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	app := status.ContainerStatuses[0]
	fmt.Println(app.Name, app.State, app.ID.Type, app.RestartCount)

	grace := int64(1)
	if err := b.KillPod(ctx, pod, pkgcontainer.ConvertPodStatusToRunningPod(kubebackend.RuntimeType, status), &grace); err != nil {
		fmt.Println(err)
		return
	}
	status, _ = b.GetPodStatus(ctx, pod)
	fmt.Println(len(status.ContainerStatuses), "instances after KillPod")
	// Output:
	// app running sim 0
	// 0 instances after KillPod
}

// The mirror of a pod is named after it, with a hash of its namespace, name
// and UID: a pod created again under the same name gets another mirror.
func ExampleMirrorName() {
	fmt.Println(kubebackend.MirrorName("default", "web", "uid-1"))
	fmt.Println(kubebackend.MirrorName("default", "web", "uid-2"))
	// Output:
	// web-e4c20490d5eb4f4f
	// web-6347a0cdc49db04a
}

// New makes a provider for any backend cluster; here nothing plays the
// pods, so SyncPod only creates the mirror, bound to the backend node.
func ExampleNew() {
	ctx := context.Background()
	client := kubebackend.NewFakeClientset()
	p, err := kubebackend.New(kubebackend.Options{Client: client, Namespace: "backend", NodeName: "node-a", Agent: "agent-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Stop()
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "busybox:1.36"}}},
	}
	if err := p.SyncPod(ctx, pod, nil, kri.NewReasonCache()); err != nil {
		fmt.Println(err)
		return
	}
	mirror, _ := client.CoreV1().Pods("backend").Get(ctx, kubebackend.MirrorName("default", "web", "uid-1"), metav1.GetOptions{})
	fmt.Println(mirror.Spec.NodeName, mirror.Labels[kubebackend.LabelAgent], mirror.Annotations[kubebackend.AnnotationPodUID])
	// Output:
	// node-a agent-1 uid-1
}

// The fake clientset of NewFakeClientset deletes a bound pod gracefully, as
// an API server does: it gets a deletionTimestamp, and a delete with grace
// 0 (the node's kubelet's) removes it.
func ExampleNewFakeClientset() {
	ctx := context.Background()
	client := kubebackend.NewFakeClientset()
	pods := client.CoreV1().Pods("backend")
	_, _ = pods.Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1.PodSpec{NodeName: "node-a"}}, metav1.CreateOptions{})
	grace, zero := int64(5), int64(0)
	_ = pods.Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: &grace})
	p, _ := pods.Get(ctx, "p", metav1.GetOptions{})
	fmt.Println(p.DeletionTimestamp != nil, *p.DeletionGracePeriodSeconds, p.UID != "")
	_ = pods.Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: &zero})
	_, err := pods.Get(ctx, "p", metav1.GetOptions{})
	fmt.Println(err)
	// Output:
	// true 5 true
	// pods "p" not found
}

// A simulated kubelet plays the pods bound to its node and writes their
// status through the API.
func ExampleNewKubelet() {
	client := kubebackend.NewFakeClientset()
	k, err := kubebackend.NewKubelet(client, kubebackend.KubeletOptions{Namespace: "backend", NodeName: "node-a"})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = k.Run(ctx) }()
	defer func() { cancel(); <-done }()

	pods := client.CoreV1().Pods("backend")
	_, _ = pods.Create(ctx, &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: v1.PodSpec{NodeName: "node-a", RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{
			{Name: "app", Image: "busybox:1.36", Command: []string{"sh", "-c", "exit 3"}},
		}},
	}, metav1.CreateOptions{})
	for range 500 {
		if p, _ := pods.Get(ctx, "p", metav1.GetOptions{}); p.Status.Phase == v1.PodFailed {
			t := p.Status.ContainerStatuses[0].State.Terminated
			fmt.Println(p.Status.Phase, t.ExitCode, t.Reason)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Output:
	// Failed 3 Error
}
