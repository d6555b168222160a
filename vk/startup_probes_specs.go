package vk

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The specs of startup probes (CapStartupProbes, with CapReadinessProbes
// or CapContainerRestarts).

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-028", Level: Must, Capabilities: []Capability{CapStartupProbes, CapReadinessProbes},
			Title: "a container with a startup probe is published neither Started nor Ready before the startup probe passes, and both once it has (its readiness probe passing)",
			VK: "node/pod.go updatePodStatus (publishes the provider's container Started and Ready and the pod conditions as they are; VK runs no probe itself); " +
				"node/sync.go syncProviderWrapper.updatePodStatus"},
			run: startupProbeHoldsReadiness},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-029", Level: Must, Capabilities: []Capability{CapStartupProbes, CapContainerRestarts},
			Title: "a container whose startup probe fails failureThreshold times in a row is restarted, the restart counted, the pod Running (never Succeeded or Failed) meanwhile",
			VK: "node/pod.go updatePodStatus (publishes the provider's restart counts and phase as they are; VK runs no probe itself), " +
				"shouldSkipPodStatusUpdate (a terminal pod is never published again); node/sync.go syncProviderWrapper.updatePodStatus"},
			run: failedStartupProbeRestarts},
	)
}

// startupProbeHoldsReadiness runs a container whose readiness probe passes
// from its start but whose startup probe passes only about 10s after it
// (as the node e2e test "should be ready immediately after startupProbe
// succeeds", test/e2e/common/node/container_probe.go): the kubelet runs no
// readiness probe before the startup probe passed (prober/worker.go
// doProbe), so the container is neither Started nor Ready before then.
func startupProbeHoldsReadiness(e *env) {
	const startsAfter = 10 * time.Second
	c := e.w.StartsAfter(startsAfter)
	p := e.createPod(podRunning("startup", corev1.RestartPolicyAlways, c))
	created := time.Now()
	key := podKey(p)
	startup, readiness := describeProbe(p.Spec.Containers[0].StartupProbe), describeProbe(p.Spec.Containers[0].ReadinessProbe)
	var last *corev1.Pod
	started := func() bool {
		last = e.apiPod(p.Namespace, p.Name)
		if last == nil || len(last.Status.ContainerStatuses) == 0 {
			return false
		}
		cs := last.Status.ContainerStatuses[0]
		isStarted := cs.Started != nil && *cs.Started
		if early := time.Since(created); early < startsAfter-time.Second && (cs.Ready || isStarted) {
			e.failf("VK published the container of pod %s (%q; startup probe %s, readiness probe %s) Ready=%v Started=%v %v after the pod was created, "+
				"before its startup probe could pass (it writes the file the probe tests about %v after it starts): the kubelet runs no readiness "+
				"or liveness probe before the startup probe has passed and reports the container not Started and not Ready meanwhile "+
				"(prober/worker.go doProbe); a Service would send it traffic before it can serve%s; %s",
				key, argv(c), startup, readiness, cs.Ready, isStarted, early.Round(time.Millisecond), startsAfter, publishedAsReported, describeStatus(last))
		}
		return cs.Ready && isStarted && podReady(last.Status)
	}
	bound := startsAfter + statusBound
	if !e.await(bound, started) {
		e.failf("VK did not publish the container of pod %s (%q; startup probe %s, readiness probe %s) Started and Ready, and the pod Ready, within %v: "+
			"it published %s. Its startup probe passes about %v after it starts and its readiness probe from then on: the kubelet reports it "+
			"Started once the startup probe passes and Ready at the readiness probe's next run (prober/worker.go doProbe)%s; %s",
			key, argv(c), startup, readiness, bound, describeStatus(last), startsAfter, publishedAsReported, e.providerCallsOf(key))
	}
}

// failedStartupProbeRestarts runs, under restartPolicy Always, a container
// whose startup probe never passes (failureThreshold 3, every second), and
// waits for VK to publish it restarted (the node e2e test "should be
// restarted startup probe fails").
func failedStartupProbeRestarts(e *env) {
	p := e.createPod(podRunning("startup-fails", corev1.RestartPolicyAlways, e.w.NeverStarts()))
	key := podKey(p)
	c := p.Spec.Containers[0]
	probe := describeProbe(c.StartupProbe)
	var last *corev1.Pod
	restarted := func() bool {
		last = e.livePod(p)
		if ph := last.Status.Phase; ph == corev1.PodSucceeded || ph == corev1.PodFailed {
			e.failf("VK published pod %s (restartPolicy Always), whose container's startup probe (%s) never passes, as %s: the kubelet kills "+
				"such a container and restarts it, the pod Running meanwhile; VK never publishes a status of a terminal pod again "+
				"(node/pod.go shouldSkipPodStatusUpdate), so it would stay %s for good; %s", key, probe, ph, ph, describeStatus(last))
		}
		return len(last.Status.ContainerStatuses) > 0 && last.Status.ContainerStatuses[0].RestartCount > 0
	}
	// failureThreshold failures a period apart, the kill, the kubelet's
	// back-off of 10s, and VK.
	threshold := time.Duration(max(c.StartupProbe.FailureThreshold, 1)) * time.Duration(max(c.StartupProbe.PeriodSeconds, 1)) * time.Second
	bound := time.Duration(c.StartupProbe.InitialDelaySeconds)*time.Second + threshold + 10*time.Second + statusBound
	if !e.await(bound, restarted) {
		e.failf("VK did not publish the container of pod %s (restartPolicy Always; %q), whose startup probe (%s, failureThreshold %d) never passes, "+
			"restarted within %v: it published %s. The kubelet kills a container whose startup probe fails failureThreshold times in a row "+
			"and restarts it as the restart policy says, counting the restart (prober/worker.go doProbe; kuberuntime_manager.go computePodActions); "+
			"VK runs no probe and publishes the provider's restart count as it is%s; %s",
			key, argv(c), probe, c.StartupProbe.FailureThreshold, bound, describeStatus(last), publishedAsReported, e.providerCallsOf(key))
	}
}
