package fake

import (
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/workload"
)

// Native sidecars: restartable init containers (restartPolicy Always), as
// the kubelet's runtime manager runs them. computeInitContainerActions
// (kuberuntime_container.go) starts one in spec order and the next init
// container once it runs, and restarts it whenever it exits, whatever the
// pod's restart policy; computePodActions (kuberuntime_manager.go) kills
// the pod, sidecars included, once no app container is left to keep or
// start; killContainersWithSyncResult stops the sidecars after the app
// containers, the last first (kuberuntime_termination_order.go).

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

// terminate stops every active instance of the pod that pick selects
// (every one when pick is nil): a running one's preStop hook runs at once,
// then SIGTERM: a container that honours it exits at once with 143 (or its
// handler's code, after its handler's sleep); one that ignores it gets
// SIGKILL when grace ends (at once for a grace of 0). Restartable init
// containers get SIGTERM only once every other container has exited, one
// at a time, the last in spec order first, each waiting for its turn (not
// before its preStop hook's end) no longer than grace and then given what
// is left of it (at least minimumGracePeriod under
// WithMinimumGracePeriod), as the kubelet's killContainer and
// terminationOrdering do. It returns when the last of them will have
// exited (now if none is left running). The caller holds p.mu.
func (p *PodProvider) terminate(ps *podState, now time.Time, grace time.Duration, pick func(*instance) bool) time.Time {
	sidecars := ps.sidecarNames()
	deadline := now
	for _, h := range ps.order {
		if !slices.Contains(sidecars, h.name) {
			for _, in := range h.instances {
				if in.active() && (pick == nil || pick(in)) {
					deadline = maxTime(deadline, p.sigterm(ps, h, in, now, grace, nil))
				}
			}
		}
	}
	for i := len(sidecars) - 1; i >= 0; i-- {
		h := ps.containers[sidecars[i]]
		if h == nil {
			continue
		}
		for _, in := range h.instances {
			if !in.active() || (pick != nil && !pick(in)) {
				continue
			}
			// Its turn: once the containers before it in the termination
			// order have exited, not before its preStop hook's end, at the
			// latest when its grace period ends.
			waited := deadline
			turn := func(hookEnd time.Time, left time.Duration) (time.Time, time.Duration) {
				end := hookEnd.Add(left)
				at := maxTime(hookEnd, waited)
				if at.After(end) {
					at = end
				}
				left = end.Sub(at)
				if p.minimumGracePeriod {
					left = max(left, minimumGracePeriod)
				}
				return at, left
			}
			deadline = maxTime(deadline, p.sigterm(ps, h, in, now, grace, turn))
		}
	}
	return deadline
}

// sigterm stops active instance in of container h at now with grace before
// SIGKILL, as the kubelet's killContainer does: its preStop hook runs
// first, its time taken from grace (hooks.go); then, when turn is set (a
// sidecar), it waits for its turn, which turn returns with what is left of
// grace then; then SIGTERM. It returns when in will have exited.
func (p *PodProvider) sigterm(ps *podState, h *containerHistory, in *instance, now time.Time, grace time.Duration, turn func(hookEnd time.Time, left time.Duration) (time.Time, time.Duration)) time.Time {
	p.publish(Event{At: now, Type: EventContainerKilling, Pod: ps.ref, Container: in.name, ContainerID: in.id})
	if script := p.scripts.containers[containerKey{pod: ps.key, name: h.name}]; script != nil && script.ignoreTERM {
		in.sim.IgnoreSIGTERM()
	}
	at := now
	if in.state == pkgcontainer.ContainerStateRunning {
		at, grace = ps.sim.PreStop(ps.sim.Container(in.name), in.run, now, grace) // hooks.go
	}
	if turn != nil {
		at, grace = turn(at, grace)
	}
	end := in.sim.SIGTERM(now, at, grace)
	if in.sim.State() == workload.InstanceExited {
		p.exitNow(ps, in, now, in.sim.ExitCode()) // it exited at once, at now
		return now
	}
	p.schedule(in, end)
	return end
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
