// Package podactions computes what the kubelet's runtime does at a sync of
// a pod from the runtime status it is handed (computePodActions): the
// start order of package github.com/kri-kit/testkit/sim/workload, read
// from a pkgcontainer.PodStatus. It is apart from workload because that
// status is the kubelet's type (k8s.io/kubernetes), which the sim module
// does not import.
package podactions

import (
	"context"
	"slices"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/sim/workload"
)

// PodActions is what the kubelet's runtime does at one sync of a pod, from
// the runtime status it is handed (ActionsFromStatus), in order: kill what
// the status shows, then start in a new sandbox, then the containers.
type PodActions struct {
	// KillPod: the running containers and the sandboxes the status shows
	// are killed first (what it does not show lives on, as the kubelet's
	// killPodWithSyncResult of ConvertPodStatusToRunningPod leaves it).
	KillPod bool
	// CreateSandbox: the containers start in a new sandbox, whose attempt
	// number is Attempt.
	CreateSandbox bool
	Attempt       uint32
	// StartInit and StartApps are the init and app containers to start,
	// in spec order: pointers into the pod handed to ActionsFromStatus.
	StartInit, StartApps []*v1.Container
}

// ActionsFromStatus computes what the kubelet's runtime does at a sync of
// pod whose runtime status is st (computePodActions in
// kuberuntime_manager.go, computeInitContainerActions in
// kuberuntime_container.go), for what the kit simulates: no ephemeral
// containers, and neither probes nor resizes (the caller's). It is the
// start order above, read from a status instead of a Pod's runs, so a
// stale status is acted on as the kubelet acts on it. started reports
// whether the run id of container name has passed its startup probe (the
// kubelet asks its startup manager; nil: none has); a Created container
// counts as a start in flight, waited for. A container st does not name
// has not run; a nil st is a status showing nothing, and a nil pod has
// nothing to do.
func ActionsFromStatus(ctx context.Context, pod *v1.Pod, st *pkgcontainer.PodStatus, started func(name, id string) bool) PodActions {
	if pod == nil {
		return PodActions{}
	}
	if st == nil {
		st = &pkgcontainer.PodStatus{}
	}
	if started == nil {
		started = func(string, string) bool { return false }
	}
	spec := &pod.Spec
	logger := klog.FromContext(ctx)
	if create, attempt := sandboxChanged(st); create {
		a := PodActions{KillPod: true}
		if spec.RestartPolicy == v1.RestartPolicyNever && attempt != 0 && len(st.ContainerStatuses) != 0 {
			return a // the pod is done: no new sandbox
		}
		var apps []*v1.Container
		for i := range spec.Containers {
			if c := &spec.Containers[i]; !(runsOnce(pod, c) && succeeded(st, c.Name)) {
				apps = append(apps, c)
			}
		}
		if len(apps) == 0 && anyAppContainerCreated(pod, st) {
			return a
		}
		a.CreateSandbox, a.Attempt = true, attempt
		if len(spec.InitContainers) > 0 {
			a.StartInit = []*v1.Container{&spec.InitContainers[0]}
		} else {
			a.StartApps = apps
		}
		return a
	}

	initToStart, initialized, failed := initFromStatus(logger, pod, st, started)
	if failed {
		return PodActions{KillPod: true} // an init container failed for good
	}
	if !initialized {
		return PodActions{StartInit: initToStart}
	}
	keep := 0
	var apps []*v1.Container
	for i := range spec.Containers {
		c := &spec.Containers[i]
		cs := findStatus(st.ContainerStatuses, c.Name)
		if cs != nil && (cs.State == pkgcontainer.ContainerStateRunning || cs.State == pkgcontainer.ContainerStateCreated) {
			keep++
			continue
		}
		if pkgcontainer.ShouldContainerBeRestarted(logger, c, pod, st) {
			apps = append(apps, c)
		}
	}
	if keep == 0 && len(apps) == 0 {
		// Nothing left to run: stop the sandbox, and the sidecars with
		// it, which are not started again.
		return PodActions{KillPod: true}
	}
	return PodActions{StartInit: initToStart, StartApps: apps}
}

// initFromStatus computes what computeInitContainerActions
// (kuberuntime_container.go) does: the last init container the status
// shows in the active sandbox decides which comes next, and a restartable
// init container (sidecar) lets the next one start once it runs and is
// started again whenever it has exited. It returns the init containers to
// start, in spec order, and reports whether initialisation is done, and
// whether an init container failed for good. A running sidecar with a
// startup probe lets the next one start only once that probe has
// succeeded (started); a created one is a start in flight, waited for.
func initFromStatus(logger klog.Logger, pod *v1.Pod, st *pkgcontainer.PodStatus, started func(name, id string) bool) (toStart []*v1.Container, initialized, failed bool) {
	spec := &pod.Spec
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
			if before && workload.IsSidecar(c) {
				rev = append(rev, c)
			}
			continue
		}
		if before && !workload.IsSidecar(c) {
			continue
		}
		switch {
		case cs.State == pkgcontainer.ContainerStateCreated:
			// wait for it
		case cs.State == pkgcontainer.ContainerStateRunning:
			if workload.IsSidecar(c) && c.StartupProbe != nil && !started(c.Name, cs.ID.ID) {
				// wait for its startup probe, as the kubelet waits for the
				// startup manager's success
			} else if workload.IsSidecar(c) {
				if i == len(spec.InitContainers)-1 {
					initialized = true
				} else if !before {
					rev = append(rev, &spec.InitContainers[i+1])
				}
			}
		case workload.IsSidecar(c):
			rev = append(rev, c) // exited: always started again
		case cs.ExitCode == 0 && cs.Reason != "OOMKilled":
			if i == len(spec.InitContainers)-1 {
				initialized = true
			} else {
				rev = append(rev, &spec.InitContainers[i+1])
			}
		case !pkgcontainer.ShouldContainerBeRestarted(logger, c, pod, st):
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

// sandboxChanged reports whether the pod needs a new sandbox per the status
// and the attempt number it gets, as PodSandboxChanged
// (pkg/kubelet/kuberuntime/util) decides: none shown, more than one ready,
// or the newest not ready. (A simulated sandbox has no network to
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

// findStatus returns the first (newest) status of the named container,
// skipping nil entries.
func findStatus(statuses []*pkgcontainer.Status, name string) *pkgcontainer.Status {
	for _, cs := range statuses {
		if cs != nil && cs.Name == name {
			return cs
		}
	}
	return nil
}
