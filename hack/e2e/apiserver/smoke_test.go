package apiserver_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// KubeconfigEnv names the kubeconfig of the API server TestSmokeAPIServer
// runs against ('make e2e' starts one and sets it).
const KubeconfigEnv = "KRI_E2E_KUBECONFIG"

// eventTimeout bounds the wait for one watch event.
const eventTimeout = 30 * time.Second

// TestSmokeAPIServer checks, against the API server at $KRI_E2E_KUBECONFIG,
// what a backend-cluster provider relies on and client-go's fake clientset
// does not do: a watch sees every change; the status subresource changes
// the status and nothing else, and an update of the pod leaves its status
// alone; an update from a stale resourceVersion is a conflict; deleting a
// pod bound to a node with a grace period only marks it (deletionTimestamp
// and deletionGracePeriodSeconds set: with no kubelet to confirm, it stays
// until deleted with grace 0), whereas an unbound pod goes at once whatever
// the grace period.
func TestSmokeAPIServer(t *testing.T) {
	path := os.Getenv(KubeconfigEnv)
	if path == "" {
		t.Skipf("%s is not set: this test needs a real API server ('make e2e' starts one); it is not part of 'make test'", KubeconfigEnv)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("loading %s=%s: %v", KubeconfigEnv, path, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	ns, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kri-smoke-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	// Without kube-controller-manager the namespace stays Terminating;
	// teardown removes etcd's data.
	t.Cleanup(func() {
		cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	pods := cs.CoreV1().Pods(ns.Name)

	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watching the pods of %s: %v", ns.Name, err)
	}
	defer w.Stop()

	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bound"},
		Spec: v1.PodSpec{
			NodeName:   "kri-smoke-node",
			Containers: []v1.Container{{Name: "c", Image: "busybox:1.36"}},
		},
	}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", ns.Name, pod.Name, err)
	}
	waitEvent(t, w, "ADDED of the new pod", func(e watch.Event, p *v1.Pod) bool {
		return e.Type == watch.Added && p.Name == "bound"
	})

	// The status subresource.
	started := metav1.NewTime(time.Now().Truncate(time.Second))
	st := created.DeepCopy()
	st.Status = v1.PodStatus{
		Phase:      v1.PodRunning,
		Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}},
		StartTime:  &started,
		ContainerStatuses: []v1.ContainerStatus{{
			Name: "c", Image: "busybox:1.36", ImageID: "kri-smoke", Ready: true, Started: ptr.To(true),
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: started}},
		}},
	}
	running, err := pods.UpdateStatus(ctx, st, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("UpdateStatus of %s/%s to Running: %v", ns.Name, pod.Name, err)
	}
	if running.Status.Phase != v1.PodRunning || len(running.Status.ContainerStatuses) != 1 || running.ResourceVersion == created.ResourceVersion {
		t.Fatalf("UpdateStatus to Running: got phase %q, %d container statuses, resourceVersion %s (was %s); want Running, 1, a new one",
			running.Status.Phase, len(running.Status.ContainerStatuses), running.ResourceVersion, created.ResourceVersion)
	}
	if c := running.Status.ContainerStatuses[0]; c.State.Running == nil || !c.State.Running.StartedAt.Equal(&started) {
		t.Errorf("UpdateStatus: got container state %+v, want running since %v (whole seconds are kept)", c.State, started)
	}
	waitEvent(t, w, "MODIFIED to phase Running", func(e watch.Event, p *v1.Pod) bool {
		return e.Type == watch.Modified && p.Status.Phase == v1.PodRunning && p.ResourceVersion == running.ResourceVersion
	})

	// An update of the pod itself keeps the status it carries out.
	u := running.DeepCopy()
	u.Labels = map[string]string{"smoke": "labelled"}
	u.Status.Phase = v1.PodFailed
	labelled, err := pods.Update(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update of %s/%s's labels: %v", ns.Name, pod.Name, err)
	}
	if labelled.Labels["smoke"] != "labelled" || labelled.Status.Phase != v1.PodRunning {
		t.Errorf("Update with a new label and phase Failed: got labels %v, phase %q; want the label set and the phase still Running (status changes only through the status subresource)",
			labelled.Labels, labelled.Status.Phase)
	}

	// Optimistic concurrency: writes from a stale resourceVersion conflict.
	stale := created.DeepCopy()
	stale.Labels = map[string]string{"smoke": "stale"}
	if _, err := pods.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("Update from the stale resourceVersion %s (now %s): got %v, want a Conflict", created.ResourceVersion, labelled.ResourceVersion, err)
	}
	stale = running.DeepCopy()
	stale.Status.Phase = v1.PodSucceeded
	if _, err := pods.UpdateStatus(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("UpdateStatus from the stale resourceVersion %s (now %s): got %v, want a Conflict", running.ResourceVersion, labelled.ResourceVersion, err)
	}

	// Graceful deletion of a pod bound to a node: marked, not removed.
	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
		t.Fatalf("Delete of %s/%s with grace period 30 s: %v", ns.Name, pod.Name, err)
	}
	marked, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get of %s/%s after a graceful delete: %v; want it still there, marked for deletion", ns.Name, pod.Name, err)
	}
	if marked.DeletionTimestamp == nil || ptr.Deref(marked.DeletionGracePeriodSeconds, -1) != 30 {
		t.Errorf("after Delete with grace period 30 s: got deletionTimestamp %v, deletionGracePeriodSeconds %v; want set, 30",
			marked.DeletionTimestamp, ptr.Deref(marked.DeletionGracePeriodSeconds, -1))
	}
	waitEvent(t, w, "MODIFIED with deletionTimestamp set", func(e watch.Event, p *v1.Pod) bool {
		return e.Type == watch.Modified && p.DeletionTimestamp != nil
	})
	// What a kubelet does once the containers are gone: delete with grace 0.
	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatalf("Delete of %s/%s with grace period 0: %v", ns.Name, pod.Name, err)
	}
	if _, err := pods.Get(ctx, pod.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get of %s/%s after Delete with grace period 0: got %v, want NotFound", ns.Name, pod.Name, err)
	}
	waitEvent(t, w, "DELETED of the pod", func(e watch.Event, p *v1.Pod) bool {
		return e.Type == watch.Deleted && p.Name == "bound"
	})

	// A pod bound to no node is removed at once, whatever the grace period.
	unbound := pod.DeepCopy()
	unbound.Name, unbound.Spec.NodeName = "unbound", ""
	if _, err := pods.Create(ctx, unbound, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s/%s: %v", ns.Name, unbound.Name, err)
	}
	if err := pods.Delete(ctx, unbound.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
		t.Fatalf("Delete of %s/%s with grace period 30 s: %v", ns.Name, unbound.Name, err)
	}
	if _, err := pods.Get(ctx, unbound.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get of the unbound pod %s/%s after Delete with grace period 30 s: got %v, want NotFound (only a pod bound to a node waits for its kubelet)", ns.Name, unbound.Name, err)
	}
}

// waitEvent reads w until a pod event matches, and fails naming the events
// seen when none does within eventTimeout.
func waitEvent(t *testing.T, w watch.Interface, what string, match func(watch.Event, *v1.Pod) bool) {
	t.Helper()
	var seen []string
	timeout := time.After(eventTimeout)
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("waiting for %s: the watch closed; saw %v", what, seen)
			}
			p, isPod := e.Object.(*v1.Pod)
			if !isPod {
				t.Fatalf("waiting for %s: got a %s event of %T: %+v", what, e.Type, e.Object, e.Object)
			}
			if match(e, p) {
				return
			}
			seen = append(seen, fmt.Sprintf("%s %s (phase %q, rv %s, deletionTimestamp %v)", e.Type, p.Name, p.Status.Phase, p.ResourceVersion, p.DeletionTimestamp))
		case <-timeout:
			t.Fatalf("waiting for %s: none within %v; saw [%s]", what, eventTimeout, strings.Join(seen, "; "))
		}
	}
}
