package podstatus

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
)

// stampedConditions are the condition types whose LastTransitionTime the
// kubelet's status manager sets (updateStatusInternal).
var stampedConditions = [...]v1.PodConditionType{
	v1.ContainersReady, v1.PodReady, v1.PodInitialized, v1.PodReadyToStartContainers,
	v1.PodScheduled, v1.DisruptionTarget, v1.AllContainersRestarting,
}

// StampTimes sets in s, a status about to be reported, the times the
// kubelet's status manager sets with its clock before it sends a status
// (updateStatusInternal and updateLastTransitionTime in
// k8s.io/kubernetes/pkg/kubelet/status/status_manager.go); old is the status
// reported before, pod.Status as given to Generate:
//
//   - the LastTransitionTime of the conditions the kubelet owns or shares
//     (ContainersReady, Ready, Initialized, PodReadyToStartContainers,
//     PodScheduled, DisruptionTarget, AllContainersRestarting): old's
//     LastTransitionTime when old has a condition of that type with the same
//     status, now when the status changed or the condition is new;
//   - StartTime: old's when it has one, else s's when it has one, else now.
//
// now is truncated to whole seconds, as the status manager's normalizeStatus
// and the API server keep times. Other conditions (readiness gates, resize
// conditions, those of other controllers) are left as they are: their
// owners stamp them. Only the first condition of each type counts, as in the
// kubelet. The kubelet also stamps a DisruptionTarget condition again when
// the pod turns terminal (mergePodStatus), which StampTimes does not do.
//
// A node agent calls it on the status Generate returns (and that it may have
// changed since, a condition of its own added) just before it sends it:
//
//	s := podstatus.Generate(pod, status, reasons)
//	podstatus.StampTimes(&pod.Status, &s, clock.Now())
//
// A nil s is left alone; a nil old counts as an empty status.
func StampTimes(old, s *v1.PodStatus, now time.Time) {
	if s == nil {
		return
	}
	if old == nil {
		old = &v1.PodStatus{}
	}
	stamp := metav1.NewTime(now.Truncate(time.Second))
	for _, t := range stampedConditions {
		_, c := podutil.GetPodCondition(s, t)
		if c == nil {
			continue
		}
		c.LastTransitionTime = stamp
		if _, prev := podutil.GetPodCondition(old, t); prev != nil && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
	}
	switch {
	case old.StartTime != nil && !old.StartTime.IsZero():
		s.StartTime = old.StartTime.DeepCopy()
	case s.StartTime.IsZero():
		s.StartTime = &stamp
	}
}
