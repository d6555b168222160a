package podstatus

import (
	v1 "k8s.io/api/core/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// reasonRestartingAllContainers is the reason the kubelet gives a container
// it stopped to restart all the pod's containers in place
// (RestartingAllContainers in kubelet_pods.go). Generate does not perform
// such restarts but, like the kubelet's getPhase, counts a container
// terminated for that reason as one that will restart.
const reasonRestartingAllContainers = "RestartingAllContainers"

// willRestart reports whether c, having exited with exitCode, is restarted:
// its container-level restart rules and restart policy first, then the pod's
// restart policy (Always when unset or unknown). It is the decision of
// podutil.ContainerShouldRestart with the ContainerRestartRules and
// RestartAllContainersOnContainerExits features on, as they are by default in
// Kubernetes 1.37; it is written out here so that the outcome does not depend
// on the process's feature gates.
func willRestart(c *v1.Container, spec *v1.PodSpec, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if rule, ok := podutil.FindMatchingContainerRestartRule(*c, exitCode); ok {
			switch rule.Action {
			case v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers:
				return true
			}
		}
		switch *c.RestartPolicy {
		case v1.ContainerRestartPolicyAlways:
			return true
		case v1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case v1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch spec.RestartPolicy {
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	case v1.RestartPolicyNever:
		return false
	default:
		return true
	}
}

// terminationRestarts reports whether a container that terminated as t is
// restarted (the restartable test of the kubelet's getPhase).
func terminationRestarts(c *v1.Container, spec *v1.PodSpec, t *v1.ContainerStateTerminated) bool {
	return willRestart(c, spec, t.ExitCode) || t.Reason == reasonRestartingAllContainers
}

// shouldStartAgain reports whether the node agent's next SyncPod starts
// container c again, given its newest instance (nil when it has none): the
// kubelet's pkgcontainer.ShouldContainerBeRestarted. A pod marked for
// deletion is never restarted; a container without an instance, or whose
// newest instance is created or in an unknown state, is started; a running
// one is not; an exited one as its restart policy says.
func shouldStartAgain(c *v1.Container, pod *v1.Pod, newest *pkgcontainer.Status) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	if newest == nil {
		return true
	}
	switch newest.State {
	case pkgcontainer.ContainerStateRunning:
		return false
	case pkgcontainer.ContainerStateUnknown, pkgcontainer.ContainerStateCreated:
		return true
	}
	return willRestart(c, &pod.Spec, clampInt32(newest.ExitCode))
}
