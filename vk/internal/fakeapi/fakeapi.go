// Package fakeapi is client-go's fake clientset made faithful where
// virtual-kubelet's PodController and NodeController depend on the API
// server's handling of pods. New documents what it adds.
package fakeapi

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

var podsResource = corev1.SchemeGroupVersion.WithResource("pods")

// API is a fake clientset whose pods behave as the API server's do in the
// ways VK relies on, and a record of every status written to a pod.
type API struct {
	*fake.Clientset

	mu       sync.Mutex
	rv       int64
	statuses map[string][]corev1.PodStatus // by namespace/name, in order written
}

// New returns an API whose pods, unlike those of fake.NewClientset, get
// what the API server gives them and change as it changes them:
//
//   - create sets a UID, a creationTimestamp and a resourceVersion (every
//     write of a pod takes the next number of a counter, from 1 on);
//   - an update whose resourceVersion is set and is not the stored one fails
//     with a conflict; an update of the pod keeps the stored status, the
//     status subresource (UpdateStatus) changes only the status and keeps
//     the stored metadata and spec (the API server's pod strategies
//     PrepareForUpdate): a stale status update never undoes a deletion;
//   - delete is graceful (the pod strategy's CheckGracefulDelete): the grace
//     period is DeleteOptions.GracePeriodSeconds, else the pod's
//     terminationGracePeriodSeconds, else 30s, and 0 for a pod on no node or
//     in a terminal phase; with a grace period above 0 the pod stays, with
//     deletionTimestamp now+grace and deletionGracePeriodSeconds, which a
//     later delete may only shorten; a UID precondition that does not match
//     fails with a conflict;
//   - lists and watches of pods honour the field selector spec.nodeName
//     (the one VK's informer uses), and a watch first reports the pods that
//     exist, so no pod created between an informer's list and its watch is
//     lost (the tracker keeps no history to resume a watch from).
//
// Times come from the time package, so inside a testing/synctest bubble they
// are the bubble's.
func New(objects ...runtime.Object) *API {
	a := &API{Clientset: fake.NewClientset(objects...), statuses: map[string][]corev1.PodStatus{}}
	a.PrependReactor("create", "*", a.stampCreate)
	a.PrependReactor("create", "pods", a.createPod)
	a.PrependReactor("update", "pods", a.updatePod)
	a.PrependReactor("delete", "pods", a.deletePod)
	a.PrependReactor("list", "pods", a.listPods)
	a.PrependWatchReactor("pods", a.watchPods)
	return a
}

// StatusHistory returns the statuses written to the pod namespace/name
// through UpdateStatus, oldest first (also those of earlier pods of the
// same name).
func (a *API) StatusHistory(namespace, name string) []corev1.PodStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]corev1.PodStatus(nil), a.statuses[namespace+"/"+name]...)
}

func (a *API) nextRV() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rv++
	return strconv.FormatInt(a.rv, 10)
}

func (a *API) stored(namespace, name string) (*corev1.Pod, error) {
	obj, err := a.Tracker().Get(podsResource, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod).DeepCopy(), nil
}

// stampCreate gives any object created (but a pod, which createPod
// handles) a UID and a creationTimestamp, as the API server does: VK's lease
// controller names the node's UID as the lease's owner and creates no lease
// without it (node/lease_controller_v1.go, ensureLease).
func (a *API) stampCreate(action clienttesting.Action) (bool, runtime.Object, error) {
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

func (a *API) createPod(action clienttesting.Action) (bool, runtime.Object, error) {
	create, ok := action.(clienttesting.CreateAction)
	if !ok || action.GetSubresource() != "" {
		return false, nil, nil
	}
	pod, ok := create.GetObject().(*corev1.Pod)
	if !ok {
		return false, nil, nil
	}
	pod = pod.DeepCopy()
	if pod.Namespace == "" {
		pod.Namespace = action.GetNamespace()
	}
	pod.UID = uuid.NewUUID()
	pod.CreationTimestamp = metav1.Now()
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = nil, nil
	pod.ResourceVersion = a.nextRV()
	if err := a.Tracker().Create(podsResource, pod, pod.Namespace); err != nil {
		return true, nil, err
	}
	return true, pod.DeepCopy(), nil
}

func (a *API) updatePod(action clienttesting.Action) (bool, runtime.Object, error) {
	update, ok := action.(clienttesting.UpdateAction)
	if !ok {
		return false, nil, nil
	}
	in, ok := update.GetObject().(*corev1.Pod)
	if !ok {
		return false, nil, nil
	}
	ns := action.GetNamespace()
	if ns == "" {
		ns = in.Namespace
	}
	cur, err := a.stored(ns, in.Name)
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
	var next *corev1.Pod
	switch action.GetSubresource() {
	case "status":
		next = cur.DeepCopy()
		next.Status = *in.Status.DeepCopy()
	case "":
		next = in.DeepCopy()
		next.Status = cur.Status
		next.UID, next.CreationTimestamp = cur.UID, cur.CreationTimestamp
		next.DeletionTimestamp, next.DeletionGracePeriodSeconds = cur.DeletionTimestamp, cur.DeletionGracePeriodSeconds
	default:
		return false, nil, nil
	}
	next.Namespace = ns
	next.ResourceVersion = a.nextRV()
	if err := a.Tracker().Update(podsResource, next, ns); err != nil {
		return true, nil, err
	}
	if action.GetSubresource() == "status" {
		a.mu.Lock()
		k := ns + "/" + next.Name
		a.statuses[k] = append(a.statuses[k], *next.Status.DeepCopy())
		a.mu.Unlock()
	}
	return true, next.DeepCopy(), nil
}

func (a *API) deletePod(action clienttesting.Action) (bool, runtime.Object, error) {
	del, ok := action.(clienttesting.DeleteAction)
	if !ok {
		return false, nil, nil
	}
	pod, err := a.stored(del.GetNamespace(), del.GetName())
	if err != nil {
		return true, nil, err
	}
	opts := del.GetDeleteOptions()
	if pre := opts.Preconditions; pre != nil && pre.UID != nil && *pre.UID != pod.UID {
		return true, nil, apierrors.NewConflict(podsResource.GroupResource(), pod.Name,
			fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.UID, pod.UID))
	}
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	if g := opts.GracePeriodSeconds; g != nil {
		grace = *g
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		grace = 0
	}
	if grace <= 0 {
		if err := a.Tracker().Delete(podsResource, pod.Namespace, pod.Name); err != nil {
			return true, nil, err
		}
		return true, pod, nil
	}
	deadline := metav1.NewTime(time.Now().Add(time.Duration(grace) * time.Second))
	if pod.DeletionTimestamp != nil && !deadline.Before(pod.DeletionTimestamp) {
		return true, pod, nil // only shortened, never extended
	}
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &deadline, &grace
	pod.ResourceVersion = a.nextRV()
	if err := a.Tracker().Update(podsResource, pod, pod.Namespace); err != nil {
		return true, nil, err
	}
	return true, pod, nil
}

// nodeNameOf returns the spec.nodeName a field selector asks for, and
// whether it asks for one.
func nodeNameOf(sel fields.Selector) (string, bool) {
	if sel == nil || sel.Empty() {
		return "", false
	}
	return sel.RequiresExactMatch("spec.nodeName")
}

func (a *API) listPods(action clienttesting.Action) (bool, runtime.Object, error) {
	list, ok := action.(clienttesting.ListAction)
	if !ok {
		return false, nil, nil
	}
	node, filtered := nodeNameOf(list.GetListRestrictions().Fields)
	obj, err := a.Tracker().List(podsResource, corev1.SchemeGroupVersion.WithKind("Pod"), action.GetNamespace())
	if err != nil {
		return true, nil, err
	}
	all := obj.(*corev1.PodList)
	out := &corev1.PodList{ListMeta: all.ListMeta}
	sel := list.GetListRestrictions().Labels
	for _, p := range all.Items {
		if filtered && p.Spec.NodeName != node {
			continue
		}
		if sel != nil && !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		out.Items = append(out.Items, p)
	}
	return true, out, nil
}

func (a *API) watchPods(action clienttesting.Action) (bool, watch.Interface, error) {
	wa, ok := action.(clienttesting.WatchAction)
	if !ok {
		return false, nil, nil
	}
	node, filtered := nodeNameOf(wa.GetWatchRestrictions().Fields)
	w, err := a.Tracker().Watch(podsResource, action.GetNamespace())
	if err != nil {
		return true, nil, err
	}
	obj, err := a.Tracker().List(podsResource, corev1.SchemeGroupVersion.WithKind("Pod"), action.GetNamespace())
	if err != nil {
		w.Stop()
		return true, nil, err
	}
	keep := func(e watch.Event) bool {
		p, ok := e.Object.(*corev1.Pod)
		return !ok || !filtered || p.Spec.NodeName == node
	}
	return true, replayThenForward(obj.(*corev1.PodList).Items, w, keep), nil
}

// replayThenForward returns a watch that reports each pod of current as
// added, then the events of w that keep accepts. An informer takes a pod it
// already listed and is reported again as an update.
func replayThenForward(current []corev1.Pod, w watch.Interface, keep func(watch.Event) bool) watch.Interface {
	out := make(chan watch.Event)
	proxy := watch.NewProxyWatcher(out)
	go func() {
		defer close(out)
		defer w.Stop()
		send := func(e watch.Event) bool {
			if !keep(e) {
				return true
			}
			select {
			case out <- e:
				return true
			case <-proxy.StopChan():
				return false
			}
		}
		for i := range current {
			if !send(watch.Event{Type: watch.Added, Object: &current[i]}) {
				return
			}
		}
		for {
			select {
			case e, ok := <-w.ResultChan():
				if !ok || !send(e) {
					return
				}
			case <-proxy.StopChan():
				return
			}
		}
	}()
	return proxy
}
