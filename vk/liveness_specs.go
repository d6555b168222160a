package vk

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The spec of liveness probes (CapLivenessProbes with
// CapContainerRestarts).

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-024", Level: Must, Capabilities: []Capability{CapLivenessProbes, CapContainerRestarts},
			Title: "a container whose liveness probe fails is restarted, the restart counted, the pod Running (never Succeeded or Failed) meanwhile",
			VK: "node/pod.go updatePodStatus (publishes the provider's restart counts and phase as they are; VK runs no probe itself), " +
				"shouldSkipPodStatusUpdate (a terminal pod is never published again); node/sync.go syncProviderWrapper.updatePodStatus"},
			run: failedLivenessRestarts},
	)
}

// failedLivenessRestarts runs a container whose liveness probe passes for
// 10s after its start, then fails, and waits for VK to publish it
// restarted.
func failedLivenessRestarts(e *env) {
	const alive = 10 * time.Second
	p := e.createPod(podRunning("liveness", corev1.RestartPolicyAlways, e.w.FailsLiveness(alive)))
	key := podKey(p)
	c := p.Spec.Containers[0]
	probe := describeProbe(c.LivenessProbe)
	var last *corev1.Pod
	restarted := func() bool {
		last = e.livePod(p)
		if ph := last.Status.Phase; ph == corev1.PodSucceeded || ph == corev1.PodFailed {
			e.failf("VK published pod %s (restartPolicy Always), whose container's liveness probe (%s, %q) fails from %v after its start, as %s: "+
				"the kubelet kills and restarts such a container, the pod Running meanwhile; VK never publishes a status of a terminal pod again "+
				"(node/pod.go shouldSkipPodStatusUpdate), so it would stay %s for good; %s", key, probe, argv(c), alive, ph, ph, describeStatus(last))
		}
		return len(last.Status.ContainerStatuses) > 0 && last.Status.ContainerStatuses[0].RestartCount > 0
	}
	// The kill once the probe fails, the kubelet's back-off of 10s, and VK.
	bound := alive + 10*time.Second + statusBound
	if !e.await(bound, restarted) {
		e.failf("VK did not publish the container of pod %s (restartPolicy Always), whose liveness probe (%s, %q) fails from %v after its start, "+
			"restarted within %v: it published %s. The kubelet kills a container whose liveness probe fails (failureThreshold times in a row) and "+
			"restarts it, counting the restart; VK runs no probe and publishes the provider's restart count as it is%s; %s",
			key, probe, argv(c), alive, bound, describeStatus(last), publishedAsReported, e.providerCallsOf(key))
	}
}
