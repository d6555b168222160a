package apiserver_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kri-kit/testkit/sim/apiserver"
)

// A pod bound to a node is deleted gracefully, as by an API server: it
// gets a deletionTimestamp, a status written from a stale copy keeps it,
// and the node's delete with grace 0 removes it.
func ExampleNew() {
	ctx := context.Background()
	s := apiserver.New()
	pods := s.CoreV1().Pods("default")
	p, _ := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.PodSpec{NodeName: "node-a"},
	}, metav1.CreateOptions{})
	fmt.Println("created:", p.UID != "", p.ResourceVersion)

	grace := int64(5)
	_ = pods.Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: &grace})
	p, _ = pods.Get(ctx, "web", metav1.GetOptions{})
	fmt.Println("terminating:", p.DeletionTimestamp != nil, *p.DeletionGracePeriodSeconds)

	stale := p.DeepCopy()
	stale.DeletionTimestamp = nil
	stale.Status.Phase = corev1.PodSucceeded
	_, _ = pods.UpdateStatus(ctx, stale, metav1.UpdateOptions{})
	p, _ = pods.Get(ctx, "web", metav1.GetOptions{})
	fmt.Println("after a status update:", p.Status.Phase, p.DeletionTimestamp != nil, len(s.StatusHistory("default", "web")))

	_, err := pods.UpdateStatus(ctx, stale, metav1.UpdateOptions{})
	fmt.Println("again from the stale copy:", err)

	zero := int64(0)
	_ = pods.Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: &zero})
	_, err = pods.Get(ctx, "web", metav1.GetOptions{})
	fmt.Println(err)
	// Output:
	// created: true 1
	// terminating: true 5
	// after a status update: Succeeded true 1
	// again from the stale copy: Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes to the latest version and try again (resourceVersion 2, stored 3)
	// pods "web" not found
}
