package podstatus

import (
	v1 "k8s.io/api/core/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
)

// UpdateReadiness brings the ContainersReady and Ready conditions of s up to
// date with the Ready of its container statuses. A node agent calls it after
// RefreshPodStatus when the provider runs probes and so changes Ready:
// kuscia's generateAPIPodStatus (pkg/agent/framework/pod.go) generates these
// two conditions after the provider's RefreshPodStatus, as the kubelet
// generates them after its prober manager's UpdatePodStatus. Each keeps the
// LastTransitionTime of pod.Status's condition while its status is
// unchanged; a changed one has none, for StampTimes. Conditions of other
// types are left alone, and so is everything else of s. A nil pod or s
// changes nothing.
func UpdateReadiness(pod *v1.Pod, s *v1.PodStatus) {
	if pod == nil || s == nil {
		return
	}
	cr := containersReady(pod, s.ContainerStatuses, s.InitContainerStatuses, s.Phase)
	ready := podReady(pod, s.Conditions, cr)
	setCondition(pod, s, ready)
	setCondition(pod, s, cr)
}

// setCondition puts c in s.Conditions, in place of the condition of its
// type or after the others, with pod's generation and, while its status is
// that of pod.Status's condition, that condition's LastTransitionTime.
func setCondition(pod *v1.Pod, s *v1.PodStatus, c v1.PodCondition) {
	c.ObservedGeneration = pod.Generation
	if _, prev := podutil.GetPodConditionFromList(pod.Status.Conditions, c.Type); prev != nil && prev.Status == c.Status {
		c.LastTransitionTime = prev.LastTransitionTime
	}
	if i, _ := podutil.GetPodConditionFromList(s.Conditions, c.Type); i >= 0 {
		s.Conditions[i] = c
	} else {
		s.Conditions = append(s.Conditions, c)
	}
}

// UpdateConditions brings the conditions that follow the Ready of s's
// container statuses up to date, as the node agent generates them after
// RefreshPodStatus has set Ready: Initialized (kuscia's rule with
// AsKusciaAgent: every init container Ready; else the kubelet 1.37's),
// then ContainersReady and Ready (UpdateReadiness). Each keeps the
// LastTransitionTime of pod.Status's condition while its status is
// unchanged. A nil pod or s changes nothing.
func (g *Generator) UpdateConditions(pod *v1.Pod, s *v1.PodStatus) {
	if pod == nil || s == nil {
		return
	}
	var init v1.PodCondition
	if g != nil && g.opts.kuscia {
		init = kusciaInitialized(pod, s.InitContainerStatuses, s.Phase)
	} else {
		init = initialized(pod, &pod.Status, s.ContainerStatuses, s.InitContainerStatuses, s.Phase)
	}
	setCondition(pod, s, init)
	UpdateReadiness(pod, s)
}
