package workload

import (
	v1 "k8s.io/api/core/v1"
)

// The order in which the kubelet's runtime starts a pod's containers, at
// each sync (computePodActions in kuberuntime_manager.go,
// computeInitContainerActions in kuberuntime_container.go):
//
//   - the init containers one after another, in spec order: the next once
//     the one before has exited 0; one that failed is started again
//     unless the pod's restart policy is Never (then the pod has failed);
//   - a restartable init container (a sidecar) in its turn among them, and
//     the next container once it has started (it runs and its startup
//     probe, if any, has succeeded) — the first time only: once a later
//     container has run, its restarts hold nothing up; it is started
//     again whenever it has exited, whatever the restart policy;
//   - once every init container has, every app container that has not run,
//     or has exited and the restart policy restarts;
//   - once the app containers are done for good (each has run and exited,
//     none is to start again), the sidecars are stopped, not restarted.
//
// StartInTurn is that order over a Pod's runs, for the Pod's own starts
// (Reconcile) and for a caller that starts the runs itself (CallerStarts);
// podactions.ActionsFromStatus (github.com/kri-kit/testkit/kri/podactions)
// is the same order over the kubelet's runtime status, as the kubelet reads
// it.

// StartInTurn makes one pass of the kubelet's start order over spec's
// containers, as this Pod's runs stand: it calls start for each container
// whose turn has come and that does not run (a created run counts as
// running), in spec order, reading the container's runs again after each
// call (a start that ran and completed at once lets the next init container
// follow in the same pass). start starts the container, or does nothing (a
// back-off, a failed start). It returns whether the app containers were
// done for good when the pass began: the caller then stops the pod's
// sidecars. The containers are found in the Pod by name; one the Pod does
// not have has not run.
func (p *Pod) StartInTurn(spec *v1.PodSpec, start func(c *v1.Container, isInit bool)) (appsDone bool) {
	done := p.appsDone(spec)
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if IsSidecar(c) {
			if done {
				continue // the pod is done: not started again
			}
			if pc := p.Container(c.Name); pc == nil || !pc.active() {
				start(c, true)
			}
			if pc := p.Container(c.Name); !(pc != nil && pc.Started()) && !p.startedAfter(spec, i) {
				return done
			}
			continue
		}
		if p.Container(c.Name).completed() {
			continue
		}
		if p.toStart(p.Container(c.Name)) {
			start(c, true)
		}
		if !p.Container(c.Name).completed() {
			return done
		}
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if p.toStart(p.Container(c.Name)) {
			start(c, false)
		}
	}
	return done
}

// IsSidecar reports whether init container c is restartable (its
// restartPolicy is Always): a sidecar.
func IsSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// active reports whether c has a run that is created or running.
func (c *PodContainer) active() bool {
	return c.Current != nil && c.Current.State() != InstanceExited
}

// completed reports whether c's current run exited 0 (false for nil).
func (c *PodContainer) completed() bool {
	return c != nil && c.Current != nil && c.Current.State() == InstanceExited && c.Current.ExitCode() == 0
}

// toStart reports whether c (nil: one the Pod does not have) is to start
// when its turn comes: it has not run, or its current run has exited and
// either its image changed (SetImage) or the restart policy restarts it
// (Restarts).
func (p *Pod) toStart(c *PodContainer) bool {
	return c == nil || c.Current == nil || !c.active() && (c.replace || p.restarts(c))
}

// startedAfter reports whether a container after spec's i-th init
// container has run.
func (p *Pod) startedAfter(spec *v1.PodSpec, i int) bool {
	for _, list := range [2][]v1.Container{spec.InitContainers[i+1:], spec.Containers} {
		for j := range list {
			if c := p.Container(list[j].Name); c != nil && c.Current != nil {
				return true
			}
		}
	}
	return false
}

// appsDone reports whether spec's app containers are done for good: each
// has run and exited, none has a start planned, and none is to start again.
func (p *Pod) appsDone(spec *v1.PodSpec) bool {
	for i := range spec.Containers {
		c := p.Container(spec.Containers[i].Name)
		if c == nil || c.Current == nil || c.active() || c.pending || p.restarts(c) {
			return false
		}
	}
	return len(spec.Containers) > 0
}
