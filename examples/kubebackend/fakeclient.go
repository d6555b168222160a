package kubebackend

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// NewFakeClientset returns client-go's fake clientset (fake.NewClientset)
// with the two things of an API server's pod handling that the Provider and
// the Kubelet rely on, which the fake lacks:
//
//   - create gives a pod a UID and a creationTimestamp, as the API server
//     does;
//   - delete is graceful, as the API server's pod strategy makes it
//     (pkg/registry/core/pod, CheckGracefulDelete): the grace period is
//     DeleteOptions.GracePeriodSeconds, else the pod's
//     TerminationGracePeriodSeconds, else 30s, and 0 for a pod not bound to
//     a node or in a terminal phase. With a grace period above 0 the pod is
//     not deleted but gets deletionTimestamp (now + grace) and
//     deletionGracePeriodSeconds (a later delete may only shorten them);
//     the node's kubelet — here the simulated Kubelet — deletes it with
//     grace 0 once its containers have stopped. A UID precondition that
//     does not match fails with a conflict.
//
// What it still does not do, and what the Provider and the Kubelet
// therefore do not rely on: it checks no resourceVersion (no update ever
// conflicts, so retry.RetryOnConflict never retries), UpdateStatus writes the
// whole object (the status subresource is not separate), field selectors are
// ignored (the Kubelet filters its pods again), nothing is validated or
// defaulted, and deletionTimestamp is taken from the real clock.
func NewFakeClientset(objects ...runtime.Object) *fake.Clientset {
	cs := fake.NewClientset(objects...)
	pods := v1.SchemeGroupVersion.WithResource("pods")
	cs.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		create, ok := action.(clienttesting.CreateAction)
		if !ok || action.GetSubresource() != "" {
			return false, nil, nil
		}
		pod, ok := create.GetObject().(*v1.Pod)
		if !ok {
			return false, nil, nil
		}
		pod = pod.DeepCopy()
		if pod.UID == "" {
			pod.UID = uuid.NewUUID()
		}
		if pod.CreationTimestamp.IsZero() {
			pod.CreationTimestamp = metav1.Now()
		}
		if err := cs.Tracker().Create(pods, pod, action.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, pod.DeepCopy(), nil
	})
	cs.PrependReactor("delete", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		del, ok := action.(clienttesting.DeleteAction)
		if !ok {
			return false, nil, nil
		}
		obj, err := cs.Tracker().Get(pods, del.GetNamespace(), del.GetName())
		if err != nil {
			return false, nil, nil // the default reaction reports it
		}
		pod := obj.(*v1.Pod).DeepCopy()
		opts := del.GetDeleteOptions()
		if pre := opts.Preconditions; pre != nil && pre.UID != nil && *pre.UID != pod.UID {
			return true, nil, apierrors.NewConflict(pods.GroupResource(), pod.Name,
				fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.UID, pod.UID))
		}
		grace := int64(v1.DefaultTerminationGracePeriodSeconds)
		if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
			grace = *g
		}
		if g := opts.GracePeriodSeconds; g != nil {
			grace = *g
		}
		if pod.Spec.NodeName == "" || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			grace = 0
		}
		if grace <= 0 {
			return false, nil, nil // deleted at once by the default reaction
		}
		deadline := metav1.NewTime(time.Now().Add(time.Duration(grace) * time.Second))
		if pod.DeletionTimestamp != nil && !deadline.Before(pod.DeletionTimestamp) {
			return true, pod, nil // only shortened, never extended
		}
		pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &deadline, &grace
		if err := cs.Tracker().Update(pods, pod, pod.Namespace); err != nil {
			return true, nil, err
		}
		return true, pod, nil
	})
	cs.PrependWatchReactor("pods", func(action clienttesting.Action) (bool, watch.Interface, error) {
		w, err := cs.Tracker().Watch(pods, action.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		list, err := cs.Tracker().List(pods, v1.SchemeGroupVersion.WithKind("Pod"), action.GetNamespace())
		if err != nil {
			w.Stop()
			return true, nil, err
		}
		return true, replayThenForward(list.(*v1.PodList).Items, w), nil
	})
	return cs
}

// replayThenForward returns a watch that first reports every pod of
// current as added, then the events of w. client-go's fake tracker before
// 1.36 keeps no resource versions, so a watch cannot resume where the
// informer's list ended and the pods created between the two would be
// lost: taking the list after the watch has started reports them (an
// informer takes a pod it already has as an update). From 1.36 on, the
// tracker starts the watch at the list's resource version itself, and the
// replay only repeats what the informer has.
func replayThenForward(current []v1.Pod, w watch.Interface) watch.Interface {
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
