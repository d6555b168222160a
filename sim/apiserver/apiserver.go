package apiserver

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

var (
	podsResource = corev1.SchemeGroupVersion.WithResource("pods")
	podKind      = corev1.SchemeGroupVersion.WithKind("Pod")
)

// Server is a fake clientset whose pods behave as the API server's do (see
// the package documentation for what it adds to fake.Clientset, and what
// it does not do), and a record of every status written to a pod. Use it
// where a kubernetes.Interface is wanted; its Clientset is the
// *fake.Clientset itself, for reactors and the action log.
type Server struct {
	*fake.Clientset

	mu       sync.Mutex
	rv       int64
	statuses map[string][]corev1.PodStatus // by namespace/name, in order written
	// history holds the latest writes of pods (at most keep, maxHistory
	// but in tests), oldest first, for a watch to resume from a
	// resourceVersion (watchPods).
	history []podEvent
	keep    int
}

// podEvent is one write of a pod: its event type, the pod after it (its
// resourceVersion the write's), and the pod before it (nil for a create),
// so that a filtered watch resumed over it knows whether the pod matched.
type podEvent struct {
	typ       watch.EventType
	pod, prev *corev1.Pod
	rv        int64
}

// maxHistory is how many writes of pods a Server keeps for watches to
// resume from; a watch from a resourceVersion older than those fails with
// 410 Gone (Expired), as the API server's watch cache does, and an informer
// lists again.
const maxHistory = 10000

// record keeps a write of a pod in the history. The caller is a reactor:
// the fake clientset runs them one at a time, watches' included.
func (s *Server) record(typ watch.EventType, pod, prev *corev1.Pod) {
	rv, _ := strconv.ParseInt(pod.ResourceVersion, 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.history) >= s.keep {
		s.history = s.history[1:] // append moves the rest when it grows
	}
	s.history = append(s.history, podEvent{typ: typ, pod: pod.DeepCopy(), prev: prev, rv: rv})
}

// New returns a Server holding objects (stored as given, as
// fake.NewClientset stores them).
func New(objects ...runtime.Object) *Server {
	s := &Server{Clientset: fake.NewClientset(objects...), statuses: map[string][]corev1.PodStatus{}, keep: maxHistory}
	s.PrependReactor("create", "*", s.stampCreate)
	s.PrependReactor("create", "pods", s.createPod)
	s.PrependReactor("update", "pods", s.updatePod)
	s.PrependReactor("delete", "pods", s.deletePod)
	s.PrependReactor("list", "pods", s.listPods)
	s.PrependWatchReactor("pods", s.watchPods)
	return s
}

// StatusHistory returns the statuses written to the pod namespace/name
// through UpdateStatus, oldest first (also those of earlier pods of the
// same name). It returns copies.
func (s *Server) StatusHistory(namespace, name string) []corev1.PodStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.statuses[namespace+"/"+name]
	out := make([]corev1.PodStatus, len(h))
	for i := range h {
		h[i].DeepCopyInto(&out[i])
	}
	return out
}

func (s *Server) nextRV() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	return strconv.FormatInt(s.rv, 10)
}

func (s *Server) stored(namespace, name string) (*corev1.Pod, error) {
	obj, err := s.Tracker().Get(podsResource, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod).DeepCopy(), nil
}

// stampCreate gives any object created (but a pod, which createPod
// handles) a UID and a creationTimestamp where it has none, and lets the
// fake's reaction store it.
func (s *Server) stampCreate(action clienttesting.Action) (bool, runtime.Object, error) {
	create, ok := action.(clienttesting.CreateAction)
	if !ok || action.GetSubresource() != "" {
		return false, nil, nil
	}
	m, err := meta.Accessor(create.GetObject())
	if err != nil {
		return false, nil, nil
	}
	if m.GetUID() == "" {
		m.SetUID(uuid.NewUUID())
	}
	if ts := m.GetCreationTimestamp(); ts.IsZero() {
		m.SetCreationTimestamp(metav1.Now())
	}
	return false, nil, nil
}

// namespaceOf returns the namespace a write of obj goes to: the request's,
// else the object's; a request and an object that name two fails as the
// API server fails it.
func namespaceOf(action clienttesting.Action, objNamespace, name string) (string, error) {
	ns := action.GetNamespace()
	switch {
	case ns == "":
		return objNamespace, nil
	case objNamespace != "" && objNamespace != ns:
		return "", apierrors.NewBadRequest(fmt.Sprintf("the namespace of the provided object (%q) does not match the namespace sent on the request (%q) for pod %q", objNamespace, ns, name))
	}
	return ns, nil
}

func (s *Server) createPod(action clienttesting.Action) (bool, runtime.Object, error) {
	create, ok := action.(clienttesting.CreateAction)
	if !ok || action.GetSubresource() != "" {
		return false, nil, nil
	}
	pod, ok := create.GetObject().(*corev1.Pod)
	if !ok {
		return false, nil, nil
	}
	ns, err := namespaceOf(action, pod.Namespace, pod.Name)
	if err != nil {
		return true, nil, err
	}
	pod = pod.DeepCopy()
	pod.Namespace = ns
	pod.UID = uuid.NewUUID()
	pod.CreationTimestamp = metav1.Now()
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = nil, nil
	pod.ResourceVersion = s.nextRV()
	if err := s.Tracker().Create(podsResource, pod, ns); err != nil {
		return true, nil, err
	}
	s.record(watch.Added, pod, nil)
	return true, pod.DeepCopy(), nil
}

func (s *Server) updatePod(action clienttesting.Action) (bool, runtime.Object, error) {
	update, ok := action.(clienttesting.UpdateAction)
	if !ok {
		return false, nil, nil
	}
	in, ok := update.GetObject().(*corev1.Pod)
	if !ok {
		return false, nil, nil
	}
	sub := action.GetSubresource()
	if sub != "" && sub != "status" {
		return false, nil, nil
	}
	ns, err := namespaceOf(action, in.Namespace, in.Name)
	if err != nil {
		return true, nil, err
	}
	cur, err := s.stored(ns, in.Name)
	if err != nil {
		return true, nil, err
	}
	if in.ResourceVersion != "" && in.ResourceVersion != cur.ResourceVersion {
		return true, nil, apierrors.NewConflict(podsResource.GroupResource(), in.Name,
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again (resourceVersion %s, stored %s)", in.ResourceVersion, cur.ResourceVersion))
	}
	if in.UID != "" && in.UID != cur.UID {
		return true, nil, apierrors.NewConflict(podsResource.GroupResource(), in.Name,
			fmt.Errorf("precondition failed: UID in object meta: %s, stored: %s", in.UID, cur.UID))
	}
	prev := cur.DeepCopy()
	var next *corev1.Pod
	if sub == "status" {
		next = cur
		in.Status.DeepCopyInto(&next.Status)
	} else {
		next = in.DeepCopy()
		next.Status = cur.Status
		next.UID, next.CreationTimestamp = cur.UID, cur.CreationTimestamp
		next.DeletionTimestamp, next.DeletionGracePeriodSeconds = cur.DeletionTimestamp, cur.DeletionGracePeriodSeconds
	}
	next.Namespace = ns
	next.ResourceVersion = s.nextRV()
	if err := s.Tracker().Update(podsResource, next, ns); err != nil {
		return true, nil, err
	}
	s.record(watch.Modified, next, prev)
	if sub == "status" {
		s.mu.Lock()
		k := ns + "/" + next.Name
		s.statuses[k] = append(s.statuses[k], *next.Status.DeepCopy())
		s.mu.Unlock()
	}
	return true, next.DeepCopy(), nil
}

// gracePeriod is the grace period a delete with opts gives pod, as the API
// server's pod strategy decides it: the options', else the pod's, else the
// default; none for a pod on no node or in a terminal phase.
func gracePeriod(pod *corev1.Pod, opts metav1.DeleteOptions) int64 {
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0
	}
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	if g := opts.GracePeriodSeconds; g != nil {
		grace = *g
	}
	return grace
}

func (s *Server) deletePod(action clienttesting.Action) (bool, runtime.Object, error) {
	del, ok := action.(clienttesting.DeleteAction)
	if !ok || action.GetSubresource() != "" {
		return false, nil, nil
	}
	pod, err := s.stored(del.GetNamespace(), del.GetName())
	if err != nil {
		return true, nil, err
	}
	opts := del.GetDeleteOptions()
	if pre := opts.Preconditions; pre != nil && pre.UID != nil && *pre.UID != pod.UID {
		return true, nil, apierrors.NewConflict(podsResource.GroupResource(), pod.Name,
			fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.UID, pod.UID))
	}
	grace := gracePeriod(pod, opts)
	prev := pod.DeepCopy()
	if grace <= 0 {
		if err := s.Tracker().Delete(podsResource, pod.Namespace, pod.Name); err != nil {
			return true, nil, err
		}
		gone := pod.DeepCopy()
		gone.ResourceVersion = s.nextRV() // the deletion's, as the API server gives it
		s.record(watch.Deleted, gone, prev)
		return true, pod, nil
	}
	deadline := metav1.NewTime(time.Now().Add(time.Duration(grace) * time.Second))
	if pod.DeletionTimestamp != nil && !deadline.Before(pod.DeletionTimestamp) {
		return true, pod, nil // only shortened, never extended
	}
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &deadline, &grace
	pod.ResourceVersion = s.nextRV()
	if err := s.Tracker().Update(podsResource, pod, pod.Namespace); err != nil {
		return true, nil, err
	}
	s.record(watch.Modified, pod, prev)
	return true, pod, nil
}

// podFields returns the field labels of pod that field selectors may name,
// those the API server's pod strategy makes selectable.
func podFields(p *corev1.Pod) fields.Set {
	return fields.Set{
		"metadata.name":            p.Name,
		"metadata.namespace":       p.Namespace,
		"spec.nodeName":            p.Spec.NodeName,
		"spec.restartPolicy":       string(p.Spec.RestartPolicy),
		"spec.schedulerName":       p.Spec.SchedulerName,
		"spec.serviceAccountName":  p.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(p.Spec.HostNetwork),
		"status.phase":             string(p.Status.Phase),
		"status.podIP":             p.Status.PodIP,
		"status.nominatedNodeName": p.Status.NominatedNodeName,
	}
}

// matcher returns whether a pod matches the label and field selectors of
// a list or watch. A field selector on a field label pods do not have
// fails as the API server fails it (BadRequest).
func matcher(ls labels.Selector, fs fields.Selector) (func(*corev1.Pod) bool, error) {
	if fs != nil {
		supported := podFields(&corev1.Pod{})
		for _, req := range fs.Requirements() {
			if _, ok := supported[req.Field]; !ok {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s (field selector %q)", req.Field, fs.String()))
			}
		}
	}
	return func(p *corev1.Pod) bool {
		if ls != nil && !ls.Matches(labels.Set(p.Labels)) {
			return false
		}
		return fs == nil || fs.Matches(podFields(p))
	}, nil
}

func (s *Server) listPods(action clienttesting.Action) (bool, runtime.Object, error) {
	list, ok := action.(clienttesting.ListAction)
	if !ok {
		return false, nil, nil
	}
	r := list.GetListRestrictions()
	match, err := matcher(r.Labels, r.Fields)
	if err != nil {
		return true, nil, err
	}
	obj, err := s.Tracker().List(podsResource, podKind, action.GetNamespace())
	if err != nil {
		return true, nil, err
	}
	all := obj.(*corev1.PodList)
	out := &corev1.PodList{ListMeta: all.ListMeta}
	s.mu.Lock()
	out.ResourceVersion = strconv.FormatInt(s.rv, 10) // the list is as of the latest write
	s.mu.Unlock()
	for _, p := range all.Items {
		if match(&p) {
			out.Items = append(out.Items, p)
		}
	}
	return true, out, nil
}

func (s *Server) watchPods(action clienttesting.Action) (bool, watch.Interface, error) {
	wa, ok := action.(clienttesting.WatchAction)
	if !ok {
		return false, nil, nil
	}
	r := wa.GetWatchRestrictions()
	match, err := matcher(r.Labels, r.Fields)
	if err != nil {
		return true, nil, err
	}
	// No write comes between the steps below: the fake clientset runs its
	// reactors (this one and the writes') one at a time.
	var replay []watch.Event
	if rv := r.ResourceVersion; rv != "" && rv != "0" {
		replay, err = s.since(rv, action.GetNamespace(), match)
		if err != nil {
			return true, nil, err
		}
	}
	w, err := s.Tracker().Watch(podsResource, action.GetNamespace())
	if err != nil {
		return true, nil, err
	}
	obj, err := s.Tracker().List(podsResource, podKind, action.GetNamespace())
	if err != nil {
		w.Stop()
		return true, nil, err
	}
	current := obj.(*corev1.PodList).Items
	shown := map[string]bool{}
	for i := range current {
		if match(&current[i]) {
			shown[key(&current[i])] = true
		}
	}
	if r.ResourceVersion == "" || r.ResourceVersion == "0" {
		// From now on, with the pods there are as Added first.
		for i := range current {
			if match(&current[i]) {
				replay = append(replay, watch.Event{Type: watch.Added, Object: &current[i]})
			}
		}
	}
	return true, replayThenForward(replay, w, match, shown), nil
}

// since returns the events a watch of namespace ("" for all) filtered by
// match reports for the writes after resourceVersion rv, oldest first: a
// pod that comes to match is added, one that stops matching is deleted.
// An rv older than the history fails with 410 Gone (Expired), one that is
// no number with BadRequest.
func (s *Server) since(rv, namespace string, match func(*corev1.Pod) bool) ([]watch.Event, error) {
	from, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q: %v", rv, err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.history) > 0 && from < s.history[0].rv-1 {
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, s.history[0].rv-1))
	}
	var out []watch.Event
	for _, e := range s.history {
		if e.rv <= from || (namespace != "" && e.pod.Namespace != namespace) {
			continue
		}
		was, is := e.prev != nil && match(e.prev), match(e.pod)
		switch {
		case e.typ == watch.Deleted && was:
			out = append(out, watch.Event{Type: watch.Deleted, Object: e.pod.DeepCopy()})
		case e.typ == watch.Deleted:
		case is && !was:
			out = append(out, watch.Event{Type: watch.Added, Object: e.pod.DeepCopy()})
		case is:
			out = append(out, watch.Event{Type: watch.Modified, Object: e.pod.DeepCopy()})
		case was:
			out = append(out, watch.Event{Type: watch.Deleted, Object: e.pod.DeepCopy()})
		}
	}
	return out, nil
}

// replayThenForward returns a watch that reports the events of replay,
// then those of w as a watch filtered by match reports them, shown being
// the pods (namespace/name) the watch has reported as there once replay
// is sent: a pod that comes to match is added, one that stops matching is
// deleted, the others' events are dropped. Its goroutine ends when the
// watch is stopped or w ends.
func replayThenForward(replay []watch.Event, w watch.Interface, match func(*corev1.Pod) bool, shown map[string]bool) watch.Interface {
	out := make(chan watch.Event)
	proxy := watch.NewProxyWatcher(out)
	go func() {
		defer close(out)
		defer w.Stop()
		send := func(e watch.Event) bool {
			select {
			case out <- e:
				return true
			case <-proxy.StopChan():
				return false
			}
		}
		for _, e := range replay {
			if !send(e) {
				return
			}
		}
		for {
			select {
			case e, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if e, ok = filtered(e, match, shown); ok && !send(e) {
					return
				}
			case <-proxy.StopChan():
				return
			}
		}
	}()
	return proxy
}

func key(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// filtered turns e, an event of an unfiltered watch, into the event a
// watch filtered by match reports, if any, and keeps shown up to date. A
// pod deleted that matches is reported even when this watch has not shown
// it: the client may have it from the list it made before the watch.
func filtered(e watch.Event, match func(*corev1.Pod) bool, shown map[string]bool) (watch.Event, bool) {
	p, ok := e.Object.(*corev1.Pod)
	if !ok {
		return e, true // an error or a bookmark
	}
	k := key(p)
	was, is := shown[k], match(p)
	switch {
	case e.Type == watch.Deleted:
		delete(shown, k)
		return e, was || is
	case is && !was:
		shown[k] = true
		return watch.Event{Type: watch.Added, Object: p}, true
	case !is && was:
		delete(shown, k)
		return watch.Event{Type: watch.Deleted, Object: p}, true
	}
	return e, is
}
