package kri

import v1 "k8s.io/api/core/v1"

// RuntimeMinimumGracePeriodSeconds is the least time the kubelet's runtime
// gives a container between SIGTERM and SIGKILL, whatever grace period it
// is asked for (minimumGracePeriodInSeconds in
// k8s.io/kubernetes/pkg/kubelet/kuberuntime).
const RuntimeMinimumGracePeriodSeconds = 2

// EffectiveGracePeriod returns the grace period, in seconds, a node agent
// passes to KillPod for pod, computed as the kubelet's pod workers compute
// it each time a kill of the pod is requested (calculateEffectiveGracePeriod
// in k8s.io/kubernetes/pkg/kubelet/pod_workers.go):
//
//   - previous is the value this function returned for the pod's previous
//     kill request, 0 for the first: a grace period only ever shortens;
//   - the pod's DeletionGracePeriodSeconds (set by the API server when the
//     pod is deleted), then override (the agent's own request, such as an
//     eviction's; nil for none) replace the value so far when there is none
//     yet or when they are shorter;
//   - when neither was taken and there is no previous value, the pod's
//     spec.terminationGracePeriodSeconds (the API server defaults it to 30;
//     a pod without it gets 1);
//   - the result is never less than 1: a deletion or override of 0 gives 1.
//
// shortened reports that the result cuts a previous grace period short: the
// kubelet then cancels the kill in progress and kills again with the new
// value.
//
// The result is the agent's; the runtime adds its own floor on top: the
// kubelet's runtime gives each container at least
// RuntimeMinimumGracePeriodSeconds after its preStop hook (RuntimeGracePeriod),
// so a pod killed with 1 gets 2 seconds on a kubelet's node. KillPod's
// contract lets a provider do the same; an agent does not add it.
//
// A nil pod counts as one without deletion or termination grace period.
func EffectiveGracePeriod(previous int64, pod *v1.Pod, override *int64) (gracePeriod int64, shortened bool) {
	gracePeriod = previous
	overridden := false
	shorten := func(to *int64) {
		if to != nil && (gracePeriod == 0 || *to < gracePeriod) {
			gracePeriod, overridden = *to, true
		}
	}
	if pod != nil {
		shorten(pod.DeletionGracePeriodSeconds)
	}
	shorten(override)
	if !overridden && gracePeriod == 0 && pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil {
		gracePeriod = *pod.Spec.TerminationGracePeriodSeconds
	}
	gracePeriod = max(gracePeriod, 1)
	return gracePeriod, previous != 0 && previous != gracePeriod
}

// RuntimeGracePeriod returns the grace period, in seconds, the kubelet's
// runtime gives a container of pod when it is asked to kill the pod with
// gracePeriodOverride (killContainer and setTerminationGracePeriod in
// k8s.io/kubernetes/pkg/kubelet/kuberuntime/kuberuntime_container.go): the
// override, else the pod's DeletionGracePeriodSeconds, else its
// spec.terminationGracePeriodSeconds, else 2, and never less than
// RuntimeMinimumGracePeriodSeconds. It is for providers that want to give
// what the kubelet's runtime gives; the agent side is EffectiveGracePeriod.
//
// The kubelet applies the floor to what is left once a container's preStop
// hook has run (the hook's time is taken from the grace period first), and
// takes the period from a probe's terminationGracePeriodSeconds when a
// failed liveness or startup probe is the reason of the kill; neither is a
// KillPod of KRI's, and neither is computed here. A nil pod counts as one
// without deletion or termination grace period.
func RuntimeGracePeriod(pod *v1.Pod, gracePeriodOverride *int64) int64 {
	gracePeriod := int64(RuntimeMinimumGracePeriodSeconds)
	switch {
	case gracePeriodOverride != nil:
		gracePeriod = *gracePeriodOverride
	case pod != nil && pod.DeletionGracePeriodSeconds != nil:
		gracePeriod = *pod.DeletionGracePeriodSeconds
	case pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil:
		gracePeriod = *pod.Spec.TerminationGracePeriodSeconds
	}
	return max(gracePeriod, RuntimeMinimumGracePeriodSeconds)
}
