package apiserver

import (
	"context"
	"fmt"
	"strings"
	"sync"
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

// TestWatchReportsPodsCreatedBeforeIt: an informer lists, then watches; a
// pod created between the two must still reach it. client-go's fake
// tracker cannot resume a watch at the list's resource version, so a
// watch first reports the pods that exist when it starts.
func TestWatchReportsPodsCreatedBeforeIt(t *testing.T) {
	ctx := context.Background()
	pods := New().CoreV1().Pods("ns")
	if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "early"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	timeout := time.After(10 * time.Second)
	for !seen["early"] || !seen["late"] {
		select {
		case e := <-w.ResultChan():
			if p, ok := e.Object.(*corev1.Pod); ok && e.Type == watch.Added {
				seen[p.Name] = true
			}
		case <-timeout:
			t.Fatalf("the watch reported as added only %v, want the pod created before it (early) and the one after (late)", seen)
		}
	}
}

func TestDeleteOfAnUnboundOrFinishedPodIsImmediate(t *testing.T) {
	ctx := context.Background()
	a := New()
	pods := a.CoreV1().Pods("default")
	unbound := pod("unbound", "")
	finished := pod("finished", "n1")
	for _, p := range []*corev1.Pod{unbound, finished} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := pods.Get(ctx, "finished", metav1.GetOptions{})
	got.Status.Phase = corev1.PodSucceeded
	if _, err := pods.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"unbound", "finished"} {
		if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if p, err := pods.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("after a delete pod %s (node %q, phase %q) is still there (%v, error %v); want it gone at once",
				name, p.Spec.NodeName, p.Status.Phase, p.DeletionTimestamp, err)
		}
	}
	if err := pods.Delete(ctx, "never-was", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("deleting a pod that does not exist answered %v, want NotFound", err)
	}
}

func TestCreateTakesTheRequestsNamespaceAndRefusesAnother(t *testing.T) {
	ctx := context.Background()
	a := New()
	p, err := a.CoreV1().Pods("ns1").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "client-uid"}}, metav1.CreateOptions{})
	if err != nil || p.Namespace != "ns1" {
		t.Fatalf("create without a namespace in ns1: %v in %q, want it in ns1", err, p.Namespace)
	}
	if p.UID == "client-uid" {
		t.Errorf("create kept the UID the client sent; the API server sets its own")
	}
	_, err = a.CoreV1().Pods("ns1").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns2"}}, metav1.CreateOptions{})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `"ns2"`) {
		t.Errorf("create of a pod of ns2 in ns1 answered %v, want BadRequest naming ns2", err)
	}
}

func TestUpdateKeepsTheStatusAndWhatTheServerSet(t *testing.T) {
	ctx := context.Background()
	a := New()
	pods := a.CoreV1().Pods("default")
	p, _ := pods.Create(ctx, pod("a", "n1"), metav1.CreateOptions{})
	p.Status.Phase = corev1.PodRunning
	if p, _ = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); p.Status.Phase != corev1.PodRunning {
		t.Fatalf("UpdateStatus gave phase %q", p.Status.Phase)
	}
	rv := p.ResourceVersion
	in := p.DeepCopy()
	in.Status = corev1.PodStatus{Phase: corev1.PodFailed}
	in.Labels = map[string]string{"k": "v"}
	in.UID, in.ResourceVersion = "", ""
	got, err := pods.Update(ctx, in, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != corev1.PodRunning || got.Labels["k"] != "v" || got.UID != p.UID || got.ResourceVersion == rv {
		t.Errorf("after an update of labels and status: phase %q, labels %v, UID %q (was %q), resourceVersion %s (was %s); want the status kept, the labels changed, the UID kept, a new resourceVersion",
			got.Status.Phase, got.Labels, got.UID, p.UID, got.ResourceVersion, rv)
	}
	in.UID = "another"
	if _, err := pods.Update(ctx, in, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("an update with another UID answered %v, want a conflict", err)
	}
}

func TestListAndWatchHonourLabelAndFieldSelectors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := New()
		ctx := context.Background()
		pods := a.CoreV1().Pods("default")
		mine := pod("mine", "n1")
		mine.Labels = map[string]string{"agent": "a1"}
		other := pod("other", "n1")
		other.Labels = map[string]string{"agent": "a2"}
		for _, p := range []*corev1.Pod{mine, other} {
			if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		opts := metav1.ListOptions{LabelSelector: "agent=a1", FieldSelector: "status.phase!=Failed"}
		list, err := pods.List(ctx, opts)
		if err != nil || len(list.Items) != 1 || list.Items[0].Name != "mine" {
			t.Fatalf("list of agent a1: %v (error %v), want only pod mine", list, err)
		}
		w, err := pods.Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		next := func() (watch.EventType, string) {
			t.Helper()
			select {
			case e := <-w.ResultChan():
				return e.Type, e.Object.(*corev1.Pod).Name
			case <-time.After(time.Minute): // of the bubble's clock
				t.Fatal("no event from the watch")
				return "", ""
			}
		}
		if typ, name := next(); typ != watch.Added || name != "mine" {
			t.Fatalf("first event %s %s, want ADDED mine", typ, name)
		}
		// other comes to match: added; mine fails: deleted, as the API
		// server's filtered watch reports them.
		got, _ := pods.Get(ctx, "other", metav1.GetOptions{})
		got.Labels["agent"] = "a1"
		if _, err := pods.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if typ, name := next(); typ != watch.Added || name != "other" {
			t.Fatalf("after other's label changed to a1: %s %s, want ADDED other", typ, name)
		}
		got, _ = pods.Get(ctx, "mine", metav1.GetOptions{})
		got.Status.Phase = corev1.PodFailed
		if _, err := pods.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if typ, name := next(); typ != watch.Deleted || name != "mine" {
			t.Fatalf("after mine failed: %s %s, want DELETED mine", typ, name)
		}
		// A change of a pod that matches before and after is a change; a
		// delete of one no longer shown reports nothing.
		if err := pods.Delete(ctx, "mine", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		got, _ = pods.Get(ctx, "other", metav1.GetOptions{})
		got.Annotations = map[string]string{"x": "y"}
		if _, err := pods.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if typ, name := next(); typ != watch.Modified || name != "other" {
			t.Fatalf("after mine was deleted and other annotated: %s %s, want MODIFIED other only", typ, name)
		}
	})
}

func TestAFieldLabelPodsDoNotHaveIsRefused(t *testing.T) {
	pods := New().CoreV1().Pods("default")
	opts := metav1.ListOptions{FieldSelector: "spec.nodeName=n1,spec.color=blue"}
	if _, err := pods.List(context.Background(), opts); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "spec.color") {
		t.Errorf("list with field selector %q answered %v, want BadRequest naming spec.color", opts.FieldSelector, err)
	}
	if _, err := pods.Watch(context.Background(), opts); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "spec.color") {
		t.Errorf("watch with field selector %q answered %v, want BadRequest naming spec.color", opts.FieldSelector, err)
	}
}

// TestAStoppedWatchLeavesNothingRunning: synctest.Test fails when a
// goroutine of the bubble is still blocked at its end.
func TestAStoppedWatchLeavesNothingRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pods := New().CoreV1().Pods("default")
		if _, err := pods.Create(context.Background(), pod("a", "n1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		w, err := pods.Watch(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w.Stop() // before the replayed pod is read
		for range w.ResultChan() {
		}
		synctest.Wait()
	})
}

// TestConcurrentWritesTakeDistinctResourceVersions: under -race, writers
// of many goroutines each get a resourceVersion of their own, and the
// history records every status written.
func TestConcurrentWritesTakeDistinctResourceVersions(t *testing.T) {
	ctx := context.Background()
	a := New()
	pods := a.CoreV1().Pods("default")
	const n = 8
	rvs := make(chan string, 2*n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			p, err := pods.Create(ctx, pod(fmt.Sprintf("p%d", i), "n1"), metav1.CreateOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			rvs <- p.ResourceVersion
			p.Status.Phase = corev1.PodRunning
			if p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
				t.Error(err)
				return
			}
			rvs <- p.ResourceVersion
			_ = a.StatusHistory("default", p.Name)
		})
	}
	wg.Wait()
	close(rvs)
	seen := map[string]bool{}
	for rv := range rvs {
		if seen[rv] {
			t.Errorf("resourceVersion %s given twice", rv)
		}
		seen[rv] = true
	}
	if len(seen) != 2*n {
		t.Errorf("%d resourceVersions, want %d", len(seen), 2*n)
	}
	for i := range n {
		if h := a.StatusHistory("default", fmt.Sprintf("p%d", i)); len(h) != 1 {
			t.Errorf("status history of p%d: %v, want one status", i, h)
		}
	}
}

// nextEvents reads n events of w, failing t after 10s without one.
func nextEvents(t *testing.T, w watch.Interface, n int) []string {
	t.Helper()
	var got []string
	for range n {
		select {
		case e := <-w.ResultChan():
			p, _ := e.Object.(*corev1.Pod)
			if p == nil {
				t.Fatalf("after %v the watch sent %s %T, want a pod", got, e.Type, e.Object)
			}
			got = append(got, fmt.Sprintf("%s %s rv=%s phase=%s", e.Type, p.Name, p.ResourceVersion, p.Status.Phase))
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch sent %v, then nothing for 10s; want %d events", got, n)
		}
	}
	return got
}

// TestWatchResumesFromTheListsResourceVersion: an informer lists, then
// watches from the list's resourceVersion. A pod created and written
// twice in between must reach it as those three events, as the API server
// sends them, not folded into one Added of its latest version: an informer
// that had not listed the pod then calls its add handler only, and a
// provider that relays only updates (kuscia's K8sProvider) never tells its
// agent of the pod.
func TestWatchResumesFromTheListsResourceVersion(t *testing.T) {
	ctx := context.Background()
	s := New()
	pods := s.CoreV1().Pods("ns")
	if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if list.ResourceVersion != "1" {
		t.Fatalf("List after one write has resourceVersion %q, want 1", list.ResourceVersion)
	}
	p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, phase := range []corev1.PodPhase{corev1.PodPending, corev1.PodRunning} {
		p.Status.Phase = phase
		if p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	p.Status.Phase = corev1.PodSucceeded
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(nextEvents(t, w, 4), "; ")
	want := "ADDED app rv=2 phase=; MODIFIED app rv=3 phase=Pending; MODIFIED app rv=4 phase=Running; MODIFIED app rv=5 phase=Succeeded"
	if got != want {
		t.Errorf("watch from the list's resourceVersion 1 sent\n\t%s\nwant\n\t%s", got, want)
	}
}

// TestAResumedFilteredWatchReportsPodsComingAndGoing: resumed from a
// resourceVersion, a label-selected watch reports the writes since as the
// API server's filtered watch does: a pod that comes to match is added,
// one that stops matching is deleted, one that never matched is not shown.
func TestAResumedFilteredWatchReportsPodsComingAndGoing(t *testing.T) {
	ctx := context.Background()
	s := New()
	pods := s.CoreV1().Pods("ns")
	a, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a.Labels = map[string]string{"app": "x"}
	if a, err = pods.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	a.Labels = nil
	if _, err = pods.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: "1", LabelSelector: "app=x"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	got := strings.Join(nextEvents(t, w, 2), "; ")
	if want := "ADDED a rv=3 phase=; DELETED a rv=4 phase="; got != want {
		t.Errorf("watch of app=x from resourceVersion 1 sent\n\t%s\nwant\n\t%s", got, want)
	}
}

// TestAWatchFromBeforeTheHistoryIsGone: a resourceVersion older than the
// writes the Server keeps fails with 410 Gone (Expired), on which an
// informer lists again; one that is no number is a bad request.
func TestAWatchFromBeforeTheHistoryIsGone(t *testing.T) {
	ctx := context.Background()
	s := New()
	s.keep = 10 // maxHistory, made small
	pods := s.CoreV1().Pods("ns")
	p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "busy"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range s.keep + 1 { // the Server keeps writes 3 to keep+2
		if p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"}); !apierrors.IsResourceExpired(err) {
		t.Errorf("watch from resourceVersion 1 after %d writes: err %v, want 410 Gone (Expired)", s.keep+2, err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: "2"})
	if err != nil {
		t.Fatalf("watch from resourceVersion 2, just before the oldest write kept: %v", err)
	}
	w.Stop()
	if _, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: "x"}); !apierrors.IsBadRequest(err) {
		t.Errorf("watch from resourceVersion x: err %v, want BadRequest", err)
	}
}
