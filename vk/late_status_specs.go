package vk

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A status an async provider notifies for a pod after VK has deleted it
// (a poll loop's last round, a backend event that arrives late). VK keys
// the statuses it is notified by namespace/name (enqueuePodStatusUpdate):
// once a pod of the same name is created again (a StatefulSet's pod, a
// pod recreated by hand), a late status of its predecessor is taken for
// the new pod's, and only the UID the notified pod carries (the API
// server's precondition on a write that names one) keeps it off the new
// pod.

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-034", Level: Must, AsyncOnly: true,
			Title: "a status notified for a pod after VK deleted it never reaches the API server: a pod created again under its name is published with its own statuses only",
			VK: "node/pod.go enqueuePodStatusUpdate (keys a notified pod by namespace/name), updatePodStatus (writes the notified pod's status with UpdateStatus: " +
				"the API server refuses it only when the notified pod's UID is not the stored pod's; a terminal status is never followed by another, shouldSkipPodStatusUpdate)"},
			run: lateStatusOfDeletedPod},
	)
}

// lateWatch is how long KVK-POD-034 watches the pod created again: more
// than the deleted pod's grace period (VK removes it from the API server
// that long after DeletePod, node/podcontroller.go syncPodInProvider), so
// that what the provider notifies up to a minute and a half after
// DeletePod is seen.
const lateWatch = time.Minute

func lateStatusOfDeletedPod(e *env) {
	first := e.runPod("late")
	key := podKey(first)
	oldIDs := map[string]bool{}
	for _, cs := range first.Status.ContainerStatuses {
		if cs.ContainerID != "" {
			oldIDs[cs.ContainerID] = true
		}
	}
	e.deleteInAPI(first)
	if !e.await(goneBound(first), func() bool { return e.apiPod(first.Namespace, first.Name) == nil }) {
		e.failf("precondition: pod %s is still in the API server %v after it was deleted; %s", key, goneBound(first), e.providerCallsOf(key))
	}
	mark := len(e.judge.api.StatusHistory(first.Namespace, first.Name))
	second := newPod("late")
	second.Name = first.Name
	second = e.createPod(second)
	var last *corev1.Pod
	if !e.await(statusBound, func() bool { last = e.apiPod(second.Namespace, second.Name); return running(last) }) {
		e.failf("precondition: pod %s, created again (UID %s) after its predecessor (UID %s) was deleted, was not published Running within %v: it published %s; %s",
			key, second.UID, first.UID, statusBound, describeStatus(last), e.providerCallsOf(key))
	}
	e.watchPod(second, lateWatch, func(cur *corev1.Pod) {
		if cur == nil {
			e.goneUndeleted(second)
		}
	})
	for i, st := range e.judge.api.StatusHistory(first.Namespace, first.Name)[mark:] {
		at := fmt.Sprintf("status %d VK published for pod %s after it was created again (UID %s, its predecessor UID %s deleted): %s",
			i+1, key, second.UID, first.UID, describeStatus(&corev1.Pod{Status: st}))
		why := "a status the provider notified for the deleted pod: VK's enqueuePodStatusUpdate (node/pod.go) keys what it is notified by namespace/name, " +
			"and updatePodStatus writes it onto the pod of that name; the API server refuses the write only when the notified pod carries the deleted pod's UID " +
			"(the provider's notified pods carry no UID, or the new pod's)"
		if st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
			e.failf("%s, though the provider was never asked to stop it: %s; VK never publishes a status of a terminal pod again (shouldSkipPodStatusUpdate), "+
				"so the new pod stays %s for good; %s", at, why, st.Phase, e.providerCallsOf(key))
		}
		for _, cs := range st.ContainerStatuses {
			if oldIDs[cs.ContainerID] {
				e.failf("%s: container %s has ID %q, the deleted pod's: %s", at, cs.Name, cs.ContainerID, why)
			}
			if r := cs.State.Running; r != nil && startedBefore(r.StartedAt, second.CreationTimestamp) {
				e.failf("%s: container %s started at %v, before the pod was created (%v, to the second): %s", at, cs.Name, r.StartedAt.Time, second.CreationTimestamp.Time, why)
			}
		}
	}
}
