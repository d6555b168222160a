package vk

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The specs of what identifies a pod's network and a container's run in
// the statuses VK publishes: the pod IP and the container ID, judged on
// every status VK wrote (the API server's history of its status writes).

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-030", Level: Must,
			Title: "once a pod's IP is reported, every later status of the pod while it runs reports the same pod IP and pod IPs",
			VK: "node/pod.go updatePodStatus (publishes the provider's status, podIP and podIPs included, as it is, on every status the provider reports), " +
				"createOrUpdatePod (UpdatePod on a change of labels or annotations, podsEqual); node/sync.go syncProviderWrapper.updatePodStatus (a sync provider's status every 5s)"},
			run: podIPIsStable},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-032", Level: Should, Capabilities: []Capability{CapContainerRestarts},
			Title: "each run of a restarted container has a container ID of its own, and its LastTerminationState names the ID of the run that ended",
			VK:    "node/pod.go updatePodStatus (publishes the provider's container statuses, containerID and lastState included, as they are); node/sync.go syncProviderWrapper.updatePodStatus"},
			run: restartedContainerHasNewID},
	)
}

// relabelReached sets label k=v on pod p in the API server (relabel) and
// waits until VK has handed the change to the provider with UpdatePod
// (node/pod.go createOrUpdatePod: podsEqual compares labels).
func (e *env) relabelReached(p *corev1.Pod, k, v string) {
	e.relabel(p, k, v)
	got := func() bool {
		for _, c := range e.calls.of("UpdatePod", podKey(p)) {
			if c.Pod.Labels[k] == v && c.Err == nil {
				return true
			}
		}
		return false
	}
	if !e.await(statusBound, got) {
		e.failf("precondition: label %s=%s of pod %s did not reach the provider through UpdatePod within %v (node/pod.go createOrUpdatePod); %s",
			k, v, podKey(p), statusBound, e.providerCallsOf(podKey(p)))
	}
}

func podIPIsStable(e *env) {
	p := e.runPod("pod-ip")
	key := podKey(p)
	// Three changes of its labels reach the provider as UpdatePod: an async
	// provider reports the pod again after each (VK's enqueuePodStatusUpdate
	// sees a changed pod), and a sync one is polled twice in between.
	for i := range 3 {
		e.relabelReached(p, "revision", fmt.Sprint(i+1))
		e.sleep(2 * 5 * time.Second)
	}
	hist := e.judge.api.StatusHistory(p.Namespace, p.Name)
	var firstIP string
	var firstIPs []corev1.PodIP
	firstAt := 0
	for i, st := range hist {
		if st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
			continue
		}
		if firstIP == "" {
			firstIP, firstIPs, firstAt = st.PodIP, st.PodIPs, i+1
			continue
		}
		if st.PodIP != firstIP || !slices.Equal(st.PodIPs, firstIPs) {
			e.failf("status %d VK published for pod %s (%s) reports pod IP %q, pod IPs %v, but status %d, of the same running pod, reported %q, %v: "+
				"a pod keeps its IP while it runs (the kubelet sets it once, from its sandbox); Services and EndpointSlices send traffic to the address "+
				"VK published last, and VK publishes every status the provider reports as it is (node/pod.go updatePodStatus); "+
				"VK published %d statuses of the pod while its labels were changed three times (UpdatePod ×%d)",
				i+1, key, describeStatus(&corev1.Pod{Status: st}), st.PodIP, st.PodIPs, firstAt, firstIP, firstIPs,
				len(hist), len(e.calls.of("UpdatePod", key)))
		}
	}
	if firstIP == "" {
		e.notef("the provider reported no pod IP for pod %s in any of the %d statuses VK published", key, len(hist))
	}
}

func restartedContainerHasNewID(e *env) {
	p := e.createPod(podRunning("container-id", corev1.RestartPolicyAlways, e.w.ExitsAfter(6*time.Second, 1)))
	key := podKey(p)
	// Runs of 6s (longer than a sync provider's poll, so that VK publishes
	// each), back-off 10s, then 20s: the third run starts about 42s after
	// the first.
	const bound = time.Minute + statusBound
	var last *corev1.Pod
	twice := func() bool {
		last = e.apiPod(p.Namespace, p.Name)
		if last == nil {
			e.goneUndeleted(p)
		}
		cs := last.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 2 && cs[0].State.Running != nil
	}
	if !e.await(bound, twice) {
		e.failf("precondition: VK did not publish container app of pod %s (%q, restartPolicy Always) running after two restarts within %v: it published %s; %s",
			key, argv(p.Spec.Containers[0]), bound, describeStatus(last), e.providerCallsOf(key))
	}
	runs := map[string]int32{} // container ID -> the restart count of the run it was published for
	for i, st := range e.judge.api.StatusHistory(p.Namespace, p.Name) {
		for _, cs := range st.ContainerStatuses {
			at := fmt.Sprintf("status %d VK published for pod %s (%s)", i+1, key, describeStatus(&corev1.Pod{Status: st}))
			if cs.State.Running == nil || cs.ContainerID == "" {
				continue
			}
			if n, ok := runs[cs.ContainerID]; ok && n != cs.RestartCount {
				e.failf("%s reports run %d of container %s (restart count %d) with container ID %q, the ID it reported for run %d: "+
					"each run of a container is a container of its own, with an ID of its own (the kubelet's runtime creates a new one on every restart); "+
					"whoever reads the ID (log collectors, metrics, kubectl describe) takes two runs for one%s",
					at, cs.RestartCount+1, cs.Name, cs.RestartCount, cs.ContainerID, n+1, publishedAsReported)
			}
			runs[cs.ContainerID] = cs.RestartCount
			if t := cs.LastTerminationState.Terminated; t != nil && t.ContainerID == cs.ContainerID {
				e.failf("%s reports container %s running with container ID %q, and its LastTerminationState, the run that ended, with the same ID: "+
					"the run that ended and the one that runs are two containers%s", at, cs.Name, cs.ContainerID, publishedAsReported)
			}
		}
	}
	if len(runs) == 0 {
		e.notef("the provider reported no container ID for container app of pod %s", key)
	}
}
