package podstatus

import (
	v1 "k8s.io/api/core/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
)

// phase computes the pod's phase from the API statuses of its app and init
// containers, as the kubelet's getPhase does with the ContainerRestartRules
// feature on (the default in Kubernetes 1.37): container-level restart
// policies and rules decide whether a terminated container restarts.
//
// terminal says the agent has stopped the pod for good (the kubelet's
// podIsTerminal): a pod whose containers have all stopped is then Succeeded
// or Failed whatever its restart policy. initialized says an app container
// exists in the pod's current sandbox (podHasInitialized): a restartable
// init container that has not started then no longer holds the pod in
// Pending.
func phase(pod *v1.Pod, app, init []v1.ContainerStatus, terminal, initialized bool) v1.PodPhase {
	spec := &pod.Spec
	var (
		pendingInit, failedInitFinal, pendingSidecars int
		unknown, running, waiting                     int
		stopped, stoppedFinal, succeeded              int
	)
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		st := findStatus(init, c.Name)
		if podutil.IsRestartableInitContainer(c) {
			// A sidecar counts with the app containers, except that a
			// terminated one does not count at all.
			switch {
			case st == nil:
				unknown++
			case st.State.Running != nil:
				if st.Started == nil || !*st.Started {
					pendingSidecars++
				}
				running++
			case st.State.Terminated != nil:
			case st.State.Waiting != nil:
				if st.LastTerminationState.Terminated == nil {
					pendingSidecars++
					waiting++
				}
			default:
				pendingSidecars++
				unknown++
			}
			continue
		}
		switch {
		case st == nil, st.State.Running != nil:
			pendingInit++
		case st.State.Terminated != nil:
			if t := st.State.Terminated; t.ExitCode != 0 && !terminationRestarts(c, spec, t) {
				failedInitFinal++
			}
		case st.State.Waiting != nil:
			if t := st.LastTerminationState.Terminated; t == nil {
				pendingInit++
			} else if t.ExitCode != 0 && !terminationRestarts(c, spec, t) {
				failedInitFinal++
			}
		default:
			pendingInit++
		}
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		st := findStatus(app, c.Name)
		switch {
		case st == nil:
			unknown++
		case st.State.Running != nil:
			running++
		case st.State.Terminated != nil:
			stopped++
			if !terminationRestarts(c, spec, st.State.Terminated) {
				stoppedFinal++
			}
			if st.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case st.State.Waiting != nil:
			if t := st.LastTerminationState.Terminated; t != nil {
				// Waiting to be restarted after it terminated.
				stopped++
				if !terminationRestarts(c, spec, t) {
					stoppedFinal++
				}
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}

	switch {
	case failedInitFinal > 0:
		// An init container failed and will not be retried.
		return v1.PodFailed
	case pendingInit > 0, pendingSidecars > 0 && !initialized, waiting > 0:
		return v1.PodPending
	case running > 0 && unknown == 0:
		return v1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		if terminal && !kubetypes.IsStaticPod(pod) {
			if stopped == succeeded {
				return v1.PodSucceeded
			}
			return v1.PodFailed
		}
		switch {
		case stopped != stoppedFinal:
			// Some container will be restarted.
			return v1.PodRunning
		case stopped == succeeded:
			return v1.PodSucceeded
		default:
			return v1.PodFailed
		}
	default:
		return v1.PodPending
	}
}

// phaseAndReason merges the computed phase with the previous status as the
// kubelet's generateAPIPodStatus does when its two previous statuses (the
// status manager's and the API's) are the same, old:
//
//   - a computed phase that is not terminal gives way to a terminal previous
//     phase (the "three-way merge");
//   - Reason and Message are kept while the phase is the previous one,
//     cleared when it changes;
//   - a previous terminal phase is final: a computed phase that is the other
//     terminal phase is forced back to it ("illegal phase transition"),
//     after Reason and Message have been cleared for the change, so the
//     result has none.
func phaseAndReason(old *v1.PodStatus, computed v1.PodPhase) (v1.PodPhase, string, string) {
	p := computed
	if !podutil.IsPodPhaseTerminal(p) && podutil.IsPodPhaseTerminal(old.Phase) {
		p = old.Phase
	}
	var reason, message string
	if p == old.Phase {
		reason, message = old.Reason, old.Message
	}
	if podutil.IsPodPhaseTerminal(old.Phase) {
		p = old.Phase
	}
	return p, reason, message
}
