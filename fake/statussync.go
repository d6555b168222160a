package fake

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// syncFromStatus reconciles the pod from s.status, as the kubelet's runtime
// does (computePodActions, then SyncPod, in
// pkg/kubelet/kuberuntime/kuberuntime_manager.go), for what the fake
// simulates: no ephemeral containers, probes or resizes. Effects land on the fake's real state: a container the status
// wrongly shows exited is started once more, next to the instance still
// running. The caller holds p.mu; killing with a grace period releases it
// while waiting.
func (s *syncer) syncFromStatus(ctx context.Context) error {
	st, pod, spec := s.status, s.pod, &s.pod.Spec
	logger := klog.FromContext(ctx)

	if create, attempt := sandboxChanged(st); create {
		// Everything the status shows is killed; what it does not show
		// lives on (killPodWithSyncResult of ConvertPodStatusToRunningPod).
		if err := s.killShown(ctx); err != nil {
			return err
		}
		if spec.RestartPolicy == v1.RestartPolicyNever && attempt != 0 && len(st.ContainerStatuses) != 0 {
			return nil // the pod is done: no new sandbox
		}
		var toStart []*v1.Container
		for i := range spec.Containers {
			if c := &spec.Containers[i]; !(runsOnce(pod, c) && succeeded(st, c.Name)) {
				toStart = append(toStart, c)
			}
		}
		if len(toStart) == 0 && anyAppContainerCreated(pod, st) {
			return nil
		}
		s.sandbox = s.newSandbox(attempt)
		if len(spec.InitContainers) > 0 {
			s.start(&spec.InitContainers[0], true)
			return nil
		}
		for _, c := range toStart {
			s.start(c, false)
		}
		return nil
	}

	initToStart, initialized, failed := s.initFromStatus(logger)
	if failed {
		return s.killShown(ctx) // an init container failed for good
	}
	if !initialized {
		s.startAll(initToStart, true)
		return nil
	}
	keep := 0
	var toStart []*v1.Container
	for i := range spec.Containers {
		c := &spec.Containers[i]
		cs := findStatus(st.ContainerStatuses, c.Name)
		if cs != nil && (cs.State == pkgcontainer.ContainerStateRunning || cs.State == pkgcontainer.ContainerStateCreated) {
			keep++ // a Created container is a start in flight in the fake
			continue
		}
		if pkgcontainer.ShouldContainerBeRestarted(logger, c, pod, st) {
			toStart = append(toStart, c)
		}
	}
	if keep == 0 && len(toStart) == 0 {
		// Nothing left to run: stop the sandbox, and the sidecars with
		// it, which are not started again.
		return s.killShown(ctx)
	}
	s.startAll(initToStart, true)
	s.startAll(toStart, false)
	return nil
}

// startAll makes one start attempt of each container, in order.
func (s *syncer) startAll(cs []*v1.Container, init bool) {
	for _, c := range cs {
		s.start(c, init)
	}
}

// initFromStatus computes what computeInitContainerActions
// (kuberuntime_container.go) does: the last init container the status
// shows in the active sandbox decides which comes next, and a restartable
// init container (sidecar) lets the next one start once it runs and is
// started again whenever it has exited. It returns the init containers to
// start, in spec order, and reports whether initialisation is done, and
// whether an init container failed for good. A running sidecar with a
// startup probe lets the next one start only once that probe has
// succeeded; a created one is a start in flight, waited for.
func (s *syncer) initFromStatus(logger klog.Logger) (toStart []*v1.Container, initialized, failed bool) {
	st, spec := s.status, &s.pod.Spec
	if len(spec.InitContainers) == 0 {
		return nil, true, false
	}
	initialized = pkgcontainer.HasAnyActiveRegularContainerStarted(spec, st)
	before := initialized // every init container before this one is done
	var rev []*v1.Container
	for i := len(spec.InitContainers) - 1; i >= 0; i-- {
		c := &spec.InitContainers[i]
		cs := findStatus(st.ActiveContainerStatuses, c.Name)
		if cs == nil {
			if before && isSidecar(c) {
				rev = append(rev, c)
			}
			continue
		}
		if before && !isSidecar(c) {
			continue
		}
		switch {
		case cs.State == pkgcontainer.ContainerStateCreated:
			// wait for it
		case cs.State == pkgcontainer.ContainerStateRunning:
			if isSidecar(c) && c.StartupProbe != nil && !s.ps.startedByProbe(c.Name, cs.ID.ID) {
				// wait for its startup probe, as the kubelet waits for the
				// startup manager's success
			} else if isSidecar(c) {
				if i == len(spec.InitContainers)-1 {
					initialized = true
				} else if !before {
					rev = append(rev, &spec.InitContainers[i+1])
				}
			}
		case isSidecar(c):
			rev = append(rev, c) // exited: always started again
		case cs.ExitCode == 0 && cs.Reason != "OOMKilled":
			if i == len(spec.InitContainers)-1 {
				initialized = true
			} else {
				rev = append(rev, &spec.InitContainers[i+1])
			}
		case !pkgcontainer.ShouldContainerBeRestarted(logger, c, s.pod, st):
			return nil, false, true
		default:
			rev = append(rev, c)
		}
		before = true
	}
	if !before {
		rev = append(rev, &spec.InitContainers[0])
	}
	slices.Reverse(rev)
	return rev, initialized, false
}

// killShown kills what the status shows — its running containers, with the
// pod's grace period, and its sandboxes — and waits for that, as the
// kubelet's runtime does when SyncPod must kill the pod. The caller holds
// p.mu; it is released while waiting.
func (s *syncer) killShown(ctx context.Context) error {
	p, st := s.p, s.status
	deadline := p.terminate(s.ps, s.now, p.gracePeriod(s.pod, s.ps.pod, nil), func(in *instance) bool {
		for _, cs := range st.ContainerStatuses {
			if cs.ID.ID == in.ID && cs.State == pkgcontainer.ContainerStateRunning {
				return true
			}
		}
		return false
	})
	p.stopSandboxes(s.ps, s.now, func(sb *sandboxState) bool {
		for _, ss := range st.SandboxStatuses {
			if ss.GetId() == sb.id {
				return true
			}
		}
		return false
	})
	if err := p.waitLocked(ctx, deadline); err != nil {
		return fmt.Errorf("fake: SyncPod of pod %q: containers still terminating: %w", podKey(s.pod.Namespace, s.pod.Name), err)
	}
	if now := p.clock.Now(); now.After(s.now) {
		// The wait let others in: start over from the state as it is now.
		s.now = now
		s.ps = p.podFor(s.pod, now)
		p.advancePod(s.ps, now)
		s.sandbox = nil
	}
	return nil
}

// sandboxChanged reports whether the pod needs a new sandbox per the status
// and the attempt number it gets, as PodSandboxChanged
// (pkg/kubelet/kuberuntime/util) decides: none shown, more than one ready,
// or the newest not ready. (The fake's sandboxes have no network to
// change.)
func sandboxChanged(st *pkgcontainer.PodStatus) (bool, uint32) {
	if len(st.SandboxStatuses) == 0 {
		return true, 0
	}
	ready := 0
	for _, ss := range st.SandboxStatuses {
		if ss.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			ready++
		}
	}
	newest := st.SandboxStatuses[0]
	if ready > 1 || newest.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
		return true, newest.GetMetadata().GetAttempt() + 1
	}
	return false, newest.GetMetadata().GetAttempt()
}

// runsOnce reports whether a container that succeeded is not started again
// (restart policy OnFailure, the container's own first).
func runsOnce(pod *v1.Pod, c *v1.Container) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy == v1.ContainerRestartPolicyOnFailure
	}
	return pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure
}

func succeeded(st *pkgcontainer.PodStatus, name string) bool {
	cs := findStatus(st.ContainerStatuses, name)
	return cs != nil && cs.State != pkgcontainer.ContainerStateRunning && cs.ExitCode == 0
}

func anyAppContainerCreated(pod *v1.Pod, st *pkgcontainer.PodStatus) bool {
	for _, c := range pod.Spec.Containers {
		if cs := findStatus(st.ContainerStatuses, c.Name); cs != nil {
			switch cs.State {
			case pkgcontainer.ContainerStateCreated, pkgcontainer.ContainerStateRunning, pkgcontainer.ContainerStateExited:
				return true
			}
		}
	}
	return false
}

// validateStatus rejects a status SyncPod cannot act on, naming the
// problem, where the kubelet's runtime would crash.
func validateStatus(pod *v1.Pod, st *pkgcontainer.PodStatus) error {
	for _, list := range []struct {
		field    string
		statuses []*pkgcontainer.Status
	}{{"ContainerStatuses", st.ContainerStatuses}, {"ActiveContainerStatuses", st.ActiveContainerStatuses}} {
		for i, cs := range list.statuses {
			if cs == nil {
				return fmt.Errorf("fake: SyncPod of pod %q: podStatus.%s[%d] is nil", podKey(pod.Namespace, pod.Name), list.field, i)
			}
		}
	}
	for i, ss := range st.SandboxStatuses {
		if ss == nil {
			return fmt.Errorf("fake: SyncPod of pod %q: podStatus.SandboxStatuses[%d] is nil", podKey(pod.Namespace, pod.Name), i)
		}
	}
	return nil
}
