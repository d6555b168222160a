package vk

import (
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod deleted from the API server at once (grace period 0: kubectl delete
// --force --grace-period=0, a namespace's deletion of a pod that never
// ran): VK never sees it Terminating, and hands DeletePod the provider's
// own pod, which carries no deletionTimestamp nor deletionGracePeriodSeconds
// (the other specs always delete with the pod's grace period).

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-033", Level: Must,
			Title: "a pod deleted from the API server with grace period 0 is stopped by the provider: DeletePod of the provider's own pod, which has no deletionTimestamp, stops it",
			VK: "node/podcontroller.go PodController.Run (the informer's DeleteFunc enqueues the key), syncPodFromKubernetesHandler " +
				"(the pod missing from the lister: GetPod, then DeletePod of the pod GetPod answered; an error is retried, then dropped)"},
			run: forceDeletedPodStops},
	)
}

func forceDeletedPodStops(e *env) {
	p := e.runPod("force-deleted")
	key := podKey(p)
	if err := e.judge.api.CoreV1().Pods(p.Namespace).Delete(e.ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		e.failf("deleting pod %s in the API server with grace period 0: %v", key, err)
	}
	if !e.await(statusBound, func() bool { return len(e.calls.of("DeletePod", key)) > 0 }) {
		e.failf("VK did not call DeletePod within %v after pod %s was deleted from the API server with grace period 0: "+
			"syncPodFromKubernetesHandler (node/podcontroller.go) calls it with the pod GetPod answers, and not when GetPod answers nil (GetPod answered %s)",
			statusBound, key, describeGets(e.calls.of("GetPod", key)))
	}
	// The pod's own grace period (the provider's pod: its spec's
	// terminationGracePeriodSeconds) is the most it may take.
	bound := goneBound(p)
	var still *corev1.Pod
	stopped := func() bool {
		still, _ = e.pods.GetPod(e.ctx, p.Namespace, p.Name)
		return still == nil || still.Status.Phase == corev1.PodSucceeded || still.Status.Phase == corev1.PodFailed
	}
	if !e.await(bound, stopped) {
		deletes := e.calls.of("DeletePod", key)
		last := deletes[len(deletes)-1]
		e.failf("pod %s, deleted from the API server with grace period 0, still runs in the provider %v later: GetPod answers it %s. "+
			"VK handed DeletePod the provider's own pod (deletionTimestamp %v, deletionGracePeriodSeconds %v, terminationGracePeriodSeconds %v; "+
			"node/podcontroller.go syncPodFromKubernetesHandler) %d times, last answered %v, and will not call it again: "+
			"no pod in the API server, its containers still running in the backend until a VK starts again (deleteDanglingPods)",
			key, bound, describeStatus(still), last.Pod.DeletionTimestamp, ptrString(last.Pod.DeletionGracePeriodSeconds),
			ptrString(last.Pod.Spec.TerminationGracePeriodSeconds), len(deletes), last.Err)
	}
	for _, c := range e.calls.of("DeletePod", key) {
		if c.Err != nil && !errdefs.IsNotFound(c.Err) {
			e.notef("DeletePod of pod %s answered %v once (VK retries it)", key, c.Err)
		}
	}
}

// ptrString renders an *int64 for messages.
func ptrString(v *int64) string {
	if v == nil {
		return "unset"
	}
	return (time.Duration(*v) * time.Second).String()
}
