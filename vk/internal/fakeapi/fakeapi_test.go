package fakeapi

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

func pod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: new(int64(30))},
	}
}

func TestCreateStampsUIDTimestampAndResourceVersion(t *testing.T) {
	a := New()
	ctx := context.Background()
	p, err := a.CoreV1().Pods("default").Create(ctx, pod("a", "n1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.UID == "" || p.CreationTimestamp.IsZero() || p.ResourceVersion == "" || p.ResourceVersion == "0" {
		t.Fatalf("created pod has UID %q, creationTimestamp %v, resourceVersion %q", p.UID, p.CreationTimestamp, p.ResourceVersion)
	}
	n, err := a.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
	if err != nil || n.UID == "" {
		t.Fatalf("created node has UID %q (error %v)", n.UID, err)
	}
}

func TestUpdateStatusChangesOnlyTheStatus(t *testing.T) {
	a := New()
	ctx := context.Background()
	pods := a.CoreV1().Pods("default")
	p, _ := pods.Create(ctx, pod("a", "n1"), metav1.CreateOptions{})
	stale := p.DeepCopy()
	if err := pods.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A status written from the pod as it was before the delete (VK's
	// updatePodStatus sets the stored resourceVersion on it).
	cur, _ := pods.Get(ctx, "a", metav1.GetOptions{})
	stale.ResourceVersion = cur.ResourceVersion
	stale.Status.Phase = corev1.PodRunning
	stale.Labels = map[string]string{"changed": "by a status write"}
	if _, err := pods.UpdateStatus(ctx, stale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ := pods.Get(ctx, "a", metav1.GetOptions{})
	if got.DeletionTimestamp == nil || got.Labels != nil || got.Status.Phase != corev1.PodRunning {
		t.Fatalf("after a status update from a stale pod: deletionTimestamp %v, labels %v, phase %q; want the deletion kept, no labels, Running",
			got.DeletionTimestamp, got.Labels, got.Status.Phase)
	}
	if h := a.StatusHistory("default", "a"); len(h) != 1 || h[0].Phase != corev1.PodRunning {
		t.Fatalf("status history %v", h)
	}
	stale.ResourceVersion = p.ResourceVersion
	if _, err := pods.UpdateStatus(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("a status update with an old resourceVersion answered %v, want a conflict", err)
	}
}

func TestDeleteIsGraceful(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := New()
		ctx := context.Background()
		pods := a.CoreV1().Pods("default")
		p, _ := pods.Create(ctx, pod("a", "n1"), metav1.CreateOptions{})
		if err := pods.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := pods.Get(ctx, "a", metav1.GetOptions{})
		if err != nil || got.DeletionTimestamp == nil || *got.DeletionGracePeriodSeconds != 30 ||
			!got.DeletionTimestamp.Time.Equal(time.Now().Add(30*time.Second)) {
			t.Fatalf("after a delete: %v, error %v; want the pod kept, Terminating with 30s of grace", got, err)
		}
		if err := pods.Delete(ctx, "a", *metav1.NewDeleteOptions(60)); err != nil {
			t.Fatal(err)
		}
		if got, _ := pods.Get(ctx, "a", metav1.GetOptions{}); *got.DeletionGracePeriodSeconds != 30 {
			t.Fatalf("a later delete with more grace extended it to %ds", *got.DeletionGracePeriodSeconds)
		}
		wrong := metav1.NewDeleteOptions(0)
		wrong.Preconditions = metav1.NewUIDPreconditions("another-uid")
		if err := pods.Delete(ctx, "a", *wrong); !apierrors.IsConflict(err) {
			t.Fatalf("a delete with another UID's precondition answered %v, want a conflict", err)
		}
		right := metav1.NewDeleteOptions(0)
		right.Preconditions = metav1.NewUIDPreconditions(string(p.UID))
		if err := pods.Delete(ctx, "a", *right); err != nil {
			t.Fatal(err)
		}
		if _, err := pods.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("after a delete with grace 0 the pod is still there (%v)", err)
		}
	})
}

func TestListAndWatchHonourTheNodeNameFieldSelector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := New()
		ctx := context.Background()
		pods := a.CoreV1().Pods("")
		for _, p := range []*corev1.Pod{pod("mine", "n1"), pod("other", "n2")} {
			if _, err := a.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "n1").String()}
		list, err := pods.List(ctx, opts)
		if err != nil || len(list.Items) != 1 || list.Items[0].Name != "mine" {
			t.Fatalf("list on node n1: %v (error %v), want only pod mine", list, err)
		}
		w, err := pods.Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if _, err := a.CoreV1().Pods("default").Create(ctx, pod("later-other", "n2"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.CoreV1().Pods("default").Create(ctx, pod("later-mine", "n1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var seen []string
		for len(seen) < 2 {
			e := <-w.ResultChan()
			if e.Type != watch.Added {
				t.Fatalf("event %v", e.Type)
			}
			seen = append(seen, e.Object.(*corev1.Pod).Name)
		}
		if seen[0] != "mine" || seen[1] != "later-mine" {
			t.Fatalf("watch on node n1 reported %v, want [mine later-mine]", seen)
		}
	})
}
