package hostprocess

import (
	"context"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Native sidecars (restartable init containers) beyond their start, which
// reconcile does: the kubelet's runtime manager stops them once the app
// containers are done for good (computePodActions: no container to keep or
// start means KillPod, and the restartable init containers are not
// restarted), and on KillPod stops them only after the app containers, the
// later ones first (kuberuntime_termination_order.go).

// minimumSidecarGrace is the least a sidecar is given between SIGTERM and
// SIGKILL when its turn comes after the pod's grace period is used up, as
// the kubelet's killContainer never gives less than
// minimumGracePeriodInSeconds.
const minimumSidecarGrace = 2 * time.Second

// sidecarNames returns the names of the restartable init containers of
// pod, in spec order.
func sidecarNames(pod *v1.Pod) []string {
	var names []string
	for i := range pod.Spec.InitContainers {
		if isSidecar(&pod.Spec.InitContainers[i]) {
			names = append(names, pod.Spec.InitContainers[i].Name)
		}
	}
	return names
}

// appsDone reports whether every app container of pod has run and exited
// for good under policy: none runs and none is to be started again.
// host.mu must be held.
func (ps *podState) appsDone(pod *v1.Pod, policy v1.RestartPolicy) bool {
	for i := range pod.Spec.Containers {
		cur := ps.containers[pod.Spec.Containers[i].Name].current()
		if cur == nil || !cur.exited || shouldRestart(policy, cur.exitCode) {
			return false
		}
	}
	return len(pod.Spec.Containers) > 0
}

// stopSidecarsIfDone stops the pod as the kubelet does once its app
// containers are done for good while sidecars still run: the sandbox
// becomes NOTREADY (so nothing starts again) and the containers stop in
// the order of KillPod with the pod's grace period.
func (h *host) stopSidecarsIfDone(ctx context.Context, ps *podState, pod *v1.Pod, policy v1.RestartPolicy) error {
	h.mu.Lock()
	running := false
	for _, name := range sidecarNames(pod) {
		if cur := ps.containers[name].current(); cur != nil && !cur.exited {
			running = true
		}
	}
	done := running && ps.appsDone(pod, policy)
	if done {
		for _, sb := range ps.sandboxes {
			sb.ready = false
		}
	}
	h.mu.Unlock()
	if !done {
		return nil
	}
	return h.stopContainers(ctx, ps, pod, sidecarNames(pod), gracePeriod(pod, nil))
}

// stopStages returns the running instances of ps in the order KillPod
// stops them: first every container that is not a sidecar (app containers,
// and init containers that still run) together, then the sidecars named in
// sidecars one at a time, the last in spec order first. host.mu must be
// held.
func (ps *podState) stopStages(sidecars []string) [][]*instance {
	var first []*instance
	side := map[string]*instance{}
	for name, cs := range ps.containers {
		for _, inst := range cs.instances {
			if inst.exited {
				continue
			}
			if slices.Contains(sidecars, name) {
				side[name] = inst
			} else {
				first = append(first, inst)
			}
		}
	}
	stages := [][]*instance{first}
	for i := len(sidecars) - 1; i >= 0; i-- {
		if inst := side[sidecars[i]]; inst != nil {
			stages = append(stages, []*instance{inst})
		}
	}
	return stages
}

// sidecarStarted reports whether the running sidecar name of ps lets the
// next container start: it has no startup probe, or that probe has
// succeeded.
func (h *host) sidecarStarted(ps *podState, name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	cur := ps.containers[name].current()
	return cur != nil && !cur.exited && cur.startedLocked()
}
