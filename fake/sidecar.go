package fake

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// Native sidecars: restartable init containers (restartPolicy Always), as
// the kubelet's runtime manager runs them. computeInitContainerActions
// (kuberuntime_container.go) starts one in spec order and the next init
// container once it runs, and restarts it whenever it exits, whatever the
// pod's restart policy; computePodActions (kuberuntime_manager.go) kills
// the pod, sidecars included, once no app container is left to keep or
// start; killContainersWithSyncResult stops the sidecars after the app
// containers, the last first (kuberuntime_termination_order.go), which the
// pod simulation does (workload.Pod.StopRuns, through terminate).

// isSidecar reports whether c is a restartable init container.
func isSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// sidecarNames returns the names of the restartable init containers of the
// pod's spec as last synced, in spec order.
func (ps *podState) sidecarNames() []string {
	if ps.pod == nil {
		return nil
	}
	var names []string
	for i := range ps.pod.Spec.InitContainers {
		if c := &ps.pod.Spec.InitContainers[i]; isSidecar(c) {
			names = append(names, c.Name)
		}
	}
	return names
}

// appsDone reports whether every app container has run and exited for
// good: none is active and none is to be restarted under the pod's policy.
func (ps *podState) appsDone() bool {
	spec := &ps.pod.Spec
	for i := range spec.Containers {
		cur := ps.containers[spec.Containers[i].Name].current()
		if cur == nil || cur.active() || shouldRestart(cur, spec.RestartPolicy) {
			return false
		}
	}
	return len(spec.Containers) > 0
}

// syncSidecar does what sync does for restartable init container c, the
// i-th init container: it starts it unless it is active or the app
// containers are done, and reports whether the next init container may
// follow: c runs and, when it has a startup probe, that probe has
// succeeded, unless a later container already started (computeInitContainerActions
// in kuberuntime_container.go waits for a running restartable init
// container's startup probe before it starts the next one, but only the
// first time: a container started after it means the pod was initialized
// past it).
func (s *syncer) syncSidecar(c *v1.Container, i int) bool {
	cur := s.ps.containers[c.Name].current()
	switch {
	case cur != nil && cur.state == pkgcontainer.ContainerStateRunning:
		return cur.probeStarted() || s.ps.startedAfterInit(i)
	case cur != nil && cur.active():
		return false // created: wait for it to run
	case s.ps.appsDone():
		return true // not restarted: the pod is done
	}
	if !s.start(c, true) {
		return false
	}
	cur = s.ps.containers[c.Name].current()
	return cur.state == pkgcontainer.ContainerStateRunning && cur.probeStarted()
}

// startedAfterInit reports whether a container after the i-th init
// container (a later init container, or an app container) has an instance.
func (ps *podState) startedAfterInit(i int) bool {
	spec := &ps.pod.Spec
	for _, c := range slices.Concat(spec.InitContainers[i+1:], spec.Containers) {
		if ps.containers[c.Name].current() != nil {
			return true
		}
	}
	return false
}

// stopSidecarsIfDone stops the pod once its app containers are done for
// good while a sidecar is active, as the kubelet's runtime kills such a pod:
// its sidecars get SIGTERM in the order of KillPod, with the pod's grace
// period, and its sandbox stops. SyncPod does not wait for them.
func (s *syncer) stopSidecarsIfDone() {
	ps := s.ps
	active := slices.ContainsFunc(ps.sidecarNames(), func(name string) bool {
		cur := ps.containers[name].current()
		return cur != nil && cur.active()
	})
	if !active || !ps.appsDone() {
		return
	}
	s.p.terminate(ps, s.now, s.p.gracePeriod(s.pod, ps.pod, nil), nil)
	s.p.stopSandboxes(ps, s.now, nil)
}

// startedByProbe reports whether the instance id of container name has
// passed its startup probe (an instance the fake does not know has not).
func (ps *podState) startedByProbe(name, id string) bool {
	h := ps.containers[name]
	if h == nil {
		return false
	}
	for _, in := range h.instances {
		if in.id == id {
			return in.probeStarted()
		}
	}
	return false
}
