package podstatus

import v1 "k8s.io/api/core/v1"

// kusciaPhase is the phase as kuscia's agent computes it (secretflow/kuscia
// pkg/agent/framework/pod.go getPhase, an older kubelet's rules), from the
// API statuses of the pod's app and init containers: every init container
// is an ordinary one (restartable init containers are not known), and only
// the pod's restart policy counts.
func kusciaPhase(spec *v1.PodSpec, app, init []v1.ContainerStatus) v1.PodPhase {
	var pendingInit, failedInit int
	for i := range spec.InitContainers {
		st := findStatus(init, spec.InitContainers[i].Name)
		switch {
		case st == nil, st.State.Running != nil:
			pendingInit++
		case st.State.Terminated != nil:
			if st.State.Terminated.ExitCode != 0 {
				failedInit++
			}
		case st.State.Waiting != nil:
			if last := st.LastTerminationState.Terminated; last == nil {
				pendingInit++
			} else if last.ExitCode != 0 {
				failedInit++
			}
		default:
			pendingInit++
		}
	}
	var unknown, running, waiting, stopped, succeeded int
	for i := range spec.Containers {
		st := findStatus(app, spec.Containers[i].Name)
		switch {
		case st == nil:
			unknown++
		case st.State.Running != nil:
			running++
		case st.State.Terminated != nil:
			stopped++
			if st.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case st.State.Waiting != nil:
			if st.LastTerminationState.Terminated != nil {
				stopped++
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}
	switch {
	case failedInit > 0 && spec.RestartPolicy == v1.RestartPolicyNever:
		return v1.PodFailed
	case pendingInit > 0 || waiting > 0:
		return v1.PodPending
	case running > 0 && unknown == 0:
		return v1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		switch {
		case spec.RestartPolicy == v1.RestartPolicyAlways:
			return v1.PodRunning
		case stopped == succeeded:
			return v1.PodSucceeded
		case spec.RestartPolicy == v1.RestartPolicyNever:
			return v1.PodFailed
		}
		return v1.PodRunning
	}
	return v1.PodPending
}
