package kubebackend_test

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kri-kit/testkit/examples/kubebackend"
)

// TestFakeClientsetWatchReportsPodsCreatedBeforeIt: an informer lists, then
// watches; a pod created between the two must still reach it. client-go's
// fake tracker before 1.36 cannot resume a watch at the list's resource
// version, so NewFakeClientset's watch first reports the pods that exist
// when it starts.
func TestFakeClientsetWatchReportsPodsCreatedBeforeIt(t *testing.T) {
	ctx := context.Background()
	cs := kubebackend.NewFakeClientset()
	pods := cs.CoreV1().Pods("ns")
	if _, err := pods.Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "early"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := pods.Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	timeout := time.After(10 * time.Second)
	for !seen["early"] || !seen["late"] {
		select {
		case e := <-w.ResultChan():
			if p, ok := e.Object.(*v1.Pod); ok && e.Type == watch.Added {
				seen[p.Name] = true
			}
		case <-timeout:
			t.Fatalf("the watch reported as added only %v, want the pod created before it (early) and the one after (late)", seen)
		}
	}
}
