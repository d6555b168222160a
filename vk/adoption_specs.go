package vk

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-012", Level: Must,
			Title: "a VK restarted over the pods the provider runs adopts them: no second CreatePod, no container started again, later changes and the deletion handled",
			VK: "node/podcontroller.go PodController.Run (a new VK syncs every pod of its node: informer AddFunc, NotifyPods registers its callback anew), deleteDanglingPods; " +
				"node/pod.go createOrUpdatePod (GetPod answering the pod means UpdatePod or nothing, podsEqual; nil means CreatePod)"},
			run: restartedVKAdoptsRunningPods},
	)
}

// restartedVKAdoptsRunningPods stops the spec's VK while a pod runs and
// starts another PodController over the same API server and provider, as
// when the virtual-kubelet process restarts and its provider reconnects to
// the backend that kept the pod running.
func restartedVKAdoptsRunningPods(e *env) {
	p := e.runPod("adopted")
	key := podKey(p)
	e.stopPods()
	mark := e.calls.len()
	stop, err := e.judge.startPods(e.ctx, e.pods)
	if err != nil {
		e.failf("precondition: the second PodController did not start: %v", err)
	}
	e.stopPods = stop
	// The new VK syncs the pod at once (its informer's add); give a sync
	// provider two polls.
	e.sleep(2 * 5 * time.Second)
	if creates := e.calls.since(mark, "CreatePod", key); len(creates) > 0 {
		e.failf("after VK restarted (a new PodController over the same API server and provider) it called CreatePod %d times for pod %s, "+
			"which the provider runs: createOrUpdatePod (node/pod.go) calls CreatePod when GetPod answers nil (GetPod answered %s); "+
			"the pod is then at the mercy of CreatePod's idempotence, and every later change of it reaches the provider as CreatePod, not UpdatePod",
			len(creates), key, describeGets(e.calls.since(mark, "GetPod", key)))
	}
	cur := e.apiPod(p.Namespace, p.Name)
	if !running(cur) {
		e.failf("after VK restarted it published pod %s, which the provider runs, as %s; %s", key, describeStatus(cur), e.providerCallsOf(key))
	}
	for i, cs := range cur.Status.ContainerStatuses {
		was := p.Status.ContainerStatuses[i]
		if cs.ContainerID != was.ContainerID || cs.RestartCount != was.RestartCount || !cs.State.Running.StartedAt.Equal(&was.State.Running.StartedAt) {
			e.failf("after VK restarted, container %s of pod %s was started again: VK published container ID %q (was %q), restart count %d (was %d), "+
				"started at %v (was %v)", cs.Name, key, cs.ContainerID, was.ContainerID, cs.RestartCount, was.RestartCount,
				cs.State.Running.StartedAt.Time, was.State.Running.StartedAt.Time)
		}
	}
	// A change made after the restart reaches the provider as UpdatePod.
	cur.Labels["adopted"] = "yes"
	if _, err := e.judge.api.CoreV1().Pods(p.Namespace).Update(e.ctx, cur, metav1.UpdateOptions{}); err != nil {
		e.failf("precondition: updating the labels of pod %s in the API server: %v", key, err)
	}
	updated := func() bool {
		for _, c := range e.calls.since(mark, "UpdatePod", key) {
			if c.Pod.Labels["adopted"] == "yes" && c.Err == nil {
				return true
			}
		}
		return false
	}
	if !e.await(statusBound, updated) {
		e.failf("after VK restarted, a label added to pod %s in the API server did not reach the provider through UpdatePod within %v: "+
			"createOrUpdatePod (node/pod.go) calls UpdatePod only when GetPod answers the pod and podsEqual finds it changed "+
			"(since the restart: GetPod answered %s; UpdatePod ×%d, CreatePod ×%d)", key, statusBound,
			describeGets(e.calls.since(mark, "GetPod", key)), len(e.calls.since(mark, "UpdatePod", key)), len(e.calls.since(mark, "CreatePod", key)))
	}
	// The deletion ends with a terminal status the new VK publishes.
	e.deleteInAPI(cur)
	if !e.await(goneBound(p), func() bool { return e.apiPod(p.Namespace, p.Name) == nil }) {
		e.failf("after VK restarted, pod %s is still in the API server %v after it was deleted; %s", key, goneBound(p), e.providerCallsOf(key))
	}
	hist := e.judge.api.StatusHistory(p.Namespace, p.Name)
	last := hist[len(hist)-1]
	if !terminal(last) {
		e.failf("after VK restarted, the last status it published for pod %s before it went away was %s, not terminal (%s): %s; %s",
			key, describeStatus(&corev1.Pod{Status: last}), nonTerminal(last), e.reachedAfterDelete(mark, key), e.providerCallsOf(key))
	}
}

// reachedAfterDelete says what of pod key reached VK after the first
// DeletePod since the call mark: through the callback the latest
// NotifyPods registered (an async provider), or an older one.
func (e *env) reachedAfterDelete(mark int, key string) string {
	deletes := e.calls.since(mark, "DeletePod", key)
	if len(deletes) == 0 {
		return "VK never called DeletePod"
	}
	del := deletes[0]
	if !e.async {
		return fmt.Sprintf("DeletePod answered %v; VK's syncProviderWrapper.DeletePod (node/sync.go) publishes the terminal status of a sync provider itself", del.Err)
	}
	latest := fmt.Sprintf("the NotifyPods callback #%d ", len(e.calls.of("NotifyPods", "")))
	var toLatest, toOlder []handedOver
	for _, h := range e.calls.handedOver() {
		pod, ok := h.Copy.(*corev1.Pod)
		if !ok || h.At.Before(del.At) || !strings.HasPrefix(h.What, "the NotifyPods callback") || podKey(pod) != key {
			continue
		}
		if strings.HasPrefix(h.What, latest) {
			toLatest = append(toLatest, h)
		} else {
			toOlder = append(toOlder, h)
		}
	}
	why := "the new VK hears of statuses only through the callback it registered with NotifyPods (node/podcontroller.go PodController.Run), " +
		"and DeletePod's contract (PodLifecycleHandler) asks for a terminal status there"
	var s string
	if len(toLatest) == 0 {
		s = fmt.Sprintf("after DeletePod (it answered %v) the provider notified nothing of the pod through the callback the new VK registered (%s)", del.Err, strings.TrimSpace(latest))
	} else {
		st := toLatest[len(toLatest)-1].Copy.(*corev1.Pod).Status
		s = fmt.Sprintf("after DeletePod (it answered %v) the provider notified the new VK's callback %d times, the last with %s, which is not terminal (%s)",
			del.Err, len(toLatest), describeStatus(&corev1.Pod{Status: st}), nonTerminal(st))
	}
	if n := len(toOlder); n > 0 {
		st := toOlder[n-1].Copy.(*corev1.Pod).Status
		s += fmt.Sprintf("; it notified %d statuses through a callback of a VK that had stopped (%s), the last %s",
			n, strings.SplitN(toOlder[n-1].What, " (", 2)[0], describeStatus(&corev1.Pod{Status: st}))
	}
	return s + ": " + why
}

// nonTerminal says why st is not terminal ("" when it is).
func nonTerminal(st corev1.PodStatus) string {
	var why []string
	if st.Phase != corev1.PodSucceeded && st.Phase != corev1.PodFailed {
		why = append(why, fmt.Sprintf("phase %q is neither Succeeded nor Failed", st.Phase))
	}
	for _, cs := range st.ContainerStatuses {
		if cs.State.Terminated == nil {
			why = append(why, "container "+cs.Name+" is not terminated")
		}
	}
	return strings.Join(why, "; ")
}

// terminal reports whether st is a terminal phase with every container
// terminated.
func terminal(st corev1.PodStatus) bool {
	ok := st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed
	for _, cs := range st.ContainerStatuses {
		ok = ok && cs.State.Terminated != nil
	}
	return ok
}

// describeGets sums up what GetPod answered in calls.
func describeGets(calls []call) string {
	if len(calls) == 0 {
		return "never (it was not called)"
	}
	found := 0
	for _, c := range calls {
		if c.Found {
			found++
		}
	}
	return fmt.Sprintf("a pod %d of %d times (last error: %v)", found, len(calls), calls[len(calls)-1].Err)
}
