package podstatus

import (
	"math"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The Waiting reasons of a container the node agent has not started yet.
const (
	// ReasonContainerCreating is the Waiting reason of a container without
	// an instance in a pod without init containers.
	ReasonContainerCreating = "ContainerCreating"
	// ReasonPodInitializing is the Waiting reason of a container without an
	// instance in a pod with init containers.
	ReasonPodInitializing = "PodInitializing"
)

// Messages of the states the kubelet infers for containers the runtime no
// longer reports (convertToAPIContainerStatuses in kubelet_pods.go).
const (
	msgUnknownWasRunning = "The container could not be located when the pod was terminated"
	msgVanishedRunning   = "The container could not be located when the pod was deleted.  The container used to be Running"
	msgInitLost          = "Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally"
	reasonCompleted      = "Completed"
	exitCodeUnknown      = 137
)

// listKind says which list of the pod spec is converted.
type listKind int

const (
	appList listKind = iota
	initList
	ephemeralList
)

// convertList builds the API status of every container of specs (one of the
// pod's three container lists), init containers in spec order and the others
// by name, from the runtime view and
// previous, that list's statuses in the previous pod status. It follows the
// kubelet's convertToAPIContainerStatuses; see the package documentation for
// where it departs from it. A name that appears twice in specs gets one
// status, for its first occurrence.
func convertList(pod *v1.Pod, v *runtimeView, specs []v1.Container, previous []v1.ContainerStatus, kind listKind) []v1.ContainerStatus {
	if len(specs) == 0 {
		return nil
	}
	defaultReason := ReasonContainerCreating
	if len(pod.Spec.InitContainers) > 0 {
		defaultReason = ReasonPodInitializing
	}
	out := make([]v1.ContainerStatus, 0, len(specs))
	// spec[i] is the container of out[i].
	spec := make([]*v1.Container, 0, len(specs))
	for i := range specs {
		c := &specs[i]
		if hasName(out, c.Name) {
			continue
		}
		old := findStatus(previous, c.Name)
		out = append(out, containerStatus(pod, v, c, old, defaultReason))
		spec = append(spec, c)
	}
	for i := range out {
		startFailure(pod, v, spec[i], &out[i], kind)
	}
	if kind != initList {
		// The kubelet sorts app and ephemeral container statuses by name
		// (kubetypes.SortedContainerStatuses in convertToAPIContainerStatuses);
		// init containers stay in spec order, the order they run in.
		slices.SortStableFunc(out, func(a, b v1.ContainerStatus) int { return strings.Compare(a.Name, b.Name) })
	}
	return out
}

// containerStatus is the status of container c before start failures are
// applied: the default Waiting state (with the restart count and last
// termination of old, or all of old when it shows c terminated), replaced by
// the newest instance when there is one, with the instance before it as the
// last termination state.
func containerStatus(pod *v1.Pod, v *runtimeView, c *v1.Container, old *v1.ContainerStatus, defaultReason string) v1.ContainerStatus {
	st := v1.ContainerStatus{
		Name:  c.Name,
		Image: c.Image,
		State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: defaultReason}},
	}
	if old != nil {
		if old.State.Terminated != nil {
			// A terminated container stays as it was last reported
			// until the runtime says otherwise (its instance may have
			// been garbage-collected).
			st = *old.DeepCopy()
			st.Name = c.Name
		} else {
			st.RestartCount = old.RestartCount
			old.LastTerminationState.DeepCopyInto(&st.LastTerminationState)
		}
	}
	newest, previous := v.newestTwo(c.Name)
	switch {
	case newest != nil:
		st = instanceStatus(c, newest, old, v.kuscia)
		if previous != nil {
			st.LastTerminationState = instanceState(previous, containerID(previous.ID), old)
		}
	case old != nil && old.State.Terminated == nil && old.State.Running != nil &&
		st.State.Waiting != nil && st.State.Waiting.Reason == defaultReason &&
		st.LastTerminationState.Terminated == nil:
		// The container was running and the runtime no longer
		// reports it: it terminated, with an exit code nobody knows.
		// Showing it terminated rather than never started keeps the
		// pod from going back to Pending.
		st.LastTerminationState.Terminated = &v1.ContainerStateTerminated{
			Reason:   pkgcontainer.ContainerReasonStatusUnknown,
			Message:  msgVanishedRunning,
			ExitCode: exitCodeUnknown,
		}
		if pod.DeletionTimestamp == nil {
			st.RestartCount = incr(st.RestartCount)
		}
	}
	st.VolumeMounts = volumeMountStatuses(c)
	return st
}

// instanceStatus converts one runtime instance of container c
// (convertContainerStatus in the kubelet), given c's previous API status;
// runtimeOnly takes the restart count and last termination from the
// runtime alone, as kuscia's agent does (AsKusciaAgent).
func instanceStatus(c *v1.Container, cs *pkgcontainer.Status, old *v1.ContainerStatus, runtimeOnly bool) v1.ContainerStatus {
	cid := containerID(cs.ID)
	st := v1.ContainerStatus{
		Name:         c.Name,
		RestartCount: clampInt32(cs.RestartCount),
		Image:        cs.Image,
		ImageID:      cs.ImageRef,
		ContainerID:  cid,
		State:        instanceState(cs, cid, old),
	}
	if st.Image == "" {
		st.Image = c.Image
	}
	if st.ImageID == "" {
		st.ImageID = cs.ImageID
	}
	st.Resources, st.AllocatedResources = instanceResources(c, cs, &st, old)
	if old != nil && !runtimeOnly {
		// The restart count never goes back, and the termination the
		// previous status showed is the last termination of a new
		// instance (what a provider that keeps one instance per name
		// relies on).
		if old.RestartCount > st.RestartCount {
			st.RestartCount = old.RestartCount
		}
		if old.ContainerID != cid && old.State.Terminated != nil {
			st.LastTerminationState.Terminated = old.State.Terminated.DeepCopy()
		} else if old.LastTerminationState.Terminated != nil {
			st.LastTerminationState.Terminated = old.LastTerminationState.Terminated.DeepCopy()
		}
		switch {
		case st.State.Running != nil:
			if old.State.Terminated != nil && old.RestartCount >= clampInt32(cs.RestartCount) {
				// Running again after the previous status showed
				// it terminated: a restart the runtime did not
				// count.
				st.RestartCount = incr(old.RestartCount)
			}
			if old.Started != nil {
				started := *old.Started
				st.Started = &started
			}
		}
	}
	if old != nil && cs.State == pkgcontainer.ContainerStateUnknown && old.State.Running != nil {
		// Reported terminated: one restart more than the runtime, which
		// lost the instance, could count (kuscia's agent counts it too,
		// runtime counts or not).
		st.RestartCount = incr(old.RestartCount)
	}
	if cs.User != nil {
		st.User = &v1.ContainerUser{}
		if l := cs.User.Linux; l != nil {
			st.User.Linux = &v1.LinuxContainerUser{UID: l.UID, GID: l.GID}
			if l.SupplementalGroups != nil {
				st.User.Linux.SupplementalGroups = append([]int64{}, l.SupplementalGroups...)
			}
		}
	}
	return st
}

// instanceState is the API state of runtime instance cs, whose API
// container ID is cid, given the container's previous API status.
func instanceState(cs *pkgcontainer.Status, cid string, old *v1.ContainerStatus) v1.ContainerState {
	switch {
	case cs.State == pkgcontainer.ContainerStateRunning:
		return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(cs.StartedAt)}}
	case cs.State == pkgcontainer.ContainerStateExited:
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode:    clampInt32(cs.ExitCode),
			Reason:      cs.Reason,
			Message:     cs.Message,
			StartedAt:   metav1.NewTime(cs.StartedAt),
			FinishedAt:  metav1.NewTime(cs.FinishedAt),
			ContainerID: cid,
		}}
	case cs.State == pkgcontainer.ContainerStateUnknown && old != nil && old.State.Running != nil:
		// It was running and its state cannot be read now: it is
		// reported terminated, not waiting, so that a container that
		// must run once is not taken as never run.
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			Reason:   pkgcontainer.ContainerReasonStatusUnknown,
			Message:  msgUnknownWasRunning,
			ExitCode: exitCodeUnknown,
		}}
	default:
		// Created: waiting to run. Any other state (unknown without a
		// previous running status, or a state KRI does not define)
		// collapses to waiting too.
		return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}
	}
}

// containerID is id.String() (type://id) without fmt.
func containerID(id pkgcontainer.ContainerID) string {
	return id.Type + "://" + id.ID
}

// startFailure applies the last failed start recorded in the reason cache:
// a container that the agent will start again and whose latest start
// failed is Waiting with that failure as reason and message, its
// termination (if it was terminated) becoming the last termination state.
// Init containers that completed are never started again, and an init
// container the runtime no longer reports is taken as completed once an app
// container exists (not by kuscia's agent, AsKusciaAgent).
func startFailure(pod *v1.Pod, v *runtimeView, c *v1.Container, st *v1.ContainerStatus, kind listKind) {
	newest := v.newest(c.Name)
	if kind == initList {
		if newest != nil && newest.State == pkgcontainer.ContainerStateExited && newest.ExitCode == 0 {
			return
		}
		if newest == nil && !v.kuscia && !podutil.IsRestartableInitContainer(c) && st.State.Waiting != nil && v.anyRegularCreated(&pod.Spec) {
			st.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				Reason:  reasonCompleted,
				Message: msgInitLost,
			}}
			return
		}
	}
	if !shouldStartAgain(c, pod, newest) {
		return
	}
	item, ok := v.reason(pod.UID, c.Name)
	if !ok {
		return
	}
	if st.State.Terminated != nil {
		st.LastTerminationState = st.State
	}
	waiting := &v1.ContainerStateWaiting{Message: item.Message}
	if item.Err != nil {
		waiting.Reason = item.Err.Error()
	}
	st.State = v1.ContainerState{Waiting: waiting}
}

// setStartedAndReady sets Started and Ready as the kubelet's prober manager
// does for containers without startup and readiness probes
// (prober_manager.go, UpdatePodStatus): a container has started while it
// runs, and a started container is ready; a regular init container is ready
// once it has exited 0. Any other container keeps the Ready its conversion
// gave it, as the prober leaves it: false, or the previous status's when the
// previous status showed the container terminated and the runtime no longer
// reports it (convertToAPIContainerStatuses then copies the whole previous
// status). So an init container that completed and is waiting to run again
// in a new sandbox after its instance was removed stays ready, as in the
// kubelet. Probes in the spec are not run: a node agent that runs them
// overrides these fields (and the conditions built from them).
func setStartedAndReady(spec *v1.PodSpec, app, init []v1.ContainerStatus) {
	for i := range app {
		running := app[i].State.Running != nil
		app[i].Started = &running
		if running {
			app[i].Ready = true
		}
	}
	for i := range init {
		st := &init[i]
		running := st.State.Running != nil
		st.Started = &running
		if c := findContainer(spec.InitContainers, st.Name); c != nil && podutil.IsRestartableInitContainer(c) {
			if running {
				st.Ready = true
			}
		} else if st.State.Terminated != nil && st.State.Terminated.ExitCode == 0 {
			st.Ready = true
		}
	}
}

// unsetProbeFields leaves Started unset and Ready false in the statuses of
// containers the runtime reports an instance of, as kuscia's
// convertToAPIContainerStatuses converts them (WithProbeFieldsUnset); a
// status without an instance is the conversion's default or the previous
// status carried over whole, and keeps what it has.
func unsetProbeFields(v *runtimeView, statuses []v1.ContainerStatus) {
	for i := range statuses {
		if v.newest(statuses[i].Name) != nil {
			statuses[i].Started, statuses[i].Ready = nil, false
		}
	}
}

// volumeMountStatuses reports c's volume mounts as the kubelet does
// (convertToAPIContainerStatuses, with RecursiveReadOnlyMounts): a read-only
// mount says whether it is recursively read-only. Generate cannot ask the
// runtime whether it supports recursive read-only mounts, so only a mount
// that requires them (Enabled, which the runtime must honour or fail the
// container) reports Enabled; IfPossible reports Disabled.
func volumeMountStatuses(c *v1.Container) []v1.VolumeMountStatus {
	if len(c.VolumeMounts) == 0 {
		return nil
	}
	out := make([]v1.VolumeMountStatus, 0, len(c.VolumeMounts))
	for _, m := range c.VolumeMounts {
		vs := v1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if m.ReadOnly {
			mode := v1.RecursiveReadOnlyDisabled
			if m.RecursiveReadOnly != nil && *m.RecursiveReadOnly == v1.RecursiveReadOnlyEnabled &&
				(m.MountPropagation == nil || *m.MountPropagation == v1.MountPropagationNone) {
				mode = v1.RecursiveReadOnlyEnabled
			}
			vs.RecursiveReadOnly = &mode
		}
		out = append(out, vs)
	}
	return out
}

// findStatus returns the status named name in statuses, the last one when
// there are several (the kubelet indexes them in a map), or nil.
func findStatus(statuses []v1.ContainerStatus, name string) *v1.ContainerStatus {
	for i := len(statuses) - 1; i >= 0; i-- {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

// findContainer returns the first container named name in cs, or nil.
func findContainer(cs []v1.Container, name string) *v1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func hasName(statuses []v1.ContainerStatus, name string) bool {
	for i := range statuses {
		if statuses[i].Name == name {
			return true
		}
	}
	return false
}

// clampInt32 converts n to int32, saturating instead of wrapping around.
func clampInt32(n int) int32 {
	switch {
	case n > math.MaxInt32:
		return math.MaxInt32
	case n < math.MinInt32:
		return math.MinInt32
	}
	return int32(n)
}

// incr adds one to a restart count, saturating at math.MaxInt32.
func incr(n int32) int32 {
	if n == math.MaxInt32 {
		return n
	}
	return n + 1
}
