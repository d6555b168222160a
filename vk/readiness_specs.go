package vk

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The spec of readiness probes (CapReadinessProbes).

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-022", Level: Must, Capabilities: []Capability{CapReadinessProbes},
			Title: "a container with a readiness probe is published Ready, and the pod's Ready condition True, only once its probe passes, then both are",
			VK: "node/pod.go updatePodStatus (publishes the provider's container Ready and pod conditions as they are; VK runs no probe itself); " +
				"node/sync.go syncProviderWrapper.updatePodStatus"},
			run: readinessFollowsTheProbe},
	)
}

// readinessFollowsTheProbe runs a container whose readiness probe passes
// from 10s after its start on, and watches what VK publishes of its
// readiness until both the container and the pod are Ready.
func readinessFollowsTheProbe(e *env) {
	const after = 10 * time.Second
	p := e.createPod(podRunning("readiness", corev1.RestartPolicyAlways, e.w.BecomesReady(after)))
	key := podKey(p)
	c := p.Spec.Containers[0]
	probe := describeProbe(c.ReadinessProbe)
	var last *corev1.Pod
	ready := func() bool {
		last = e.livePod(p)
		if len(last.Status.ContainerStatuses) == 0 {
			return false
		}
		cs := last.Status.ContainerStatuses[0]
		r := cs.State.Running
		if (cs.Ready || podReady(last.Status)) && (r == nil || time.Since(r.StartedAt.Time) < after-time.Second) {
			since := "it is not running"
			if r != nil {
				since = "it started " + time.Since(r.StartedAt.Time).Round(time.Second).String() + " ago"
			}
			e.failf("VK published pod %s Ready (container %s ready=%t, pod Ready condition %t) while %s, but its readiness probe (%s, %q) "+
				"passes only from %v after its start: the endpoints controller sends a Service's traffic to a pod whose Ready condition is True, "+
				"and a rollout counts it available; VK runs no probe and publishes the provider's readiness as it is (node/pod.go updatePodStatus); %s",
				key, cs.Name, cs.Ready, podReady(last.Status), since, probe, argv(c), after, describeStatus(last))
		}
		return cs.Ready && podReady(last.Status)
	}
	bound := after + statusBound
	if !e.await(bound, ready) {
		e.failf("VK did not publish pod %s, whose container's readiness probe (%s, %q) passes from %v after its start, with the container Ready and "+
			"the pod's Ready condition True within %v: it published %s (pod Ready condition %t)%s; %s",
			key, probe, argv(c), after, bound, describeStatus(last), podReady(statusOf(last)), publishedAsReported, e.providerCallsOf(key))
	}
}
