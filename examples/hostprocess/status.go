package hostprocess

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/internal/k8scompat"
)

// Default Waiting reasons of a container that has not started, as the
// kubelet reports them.
const (
	reasonContainerCreating = "ContainerCreating"
	reasonPodInitializing   = "PodInitializing"
)

func (h *host) getPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	if pod == nil {
		return nil, fmt.Errorf("%w: nil pod", ErrInvalidPod)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	status := &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}

	h.mu.Lock()
	defer h.mu.Unlock()
	ps := h.pods[pod.UID]
	if ps == nil {
		return status, nil
	}
	status.Name, status.Namespace = ps.name, ps.namespace
	status.TimeStamp = time.Now()
	for _, sb := range ps.sandboxes {
		status.SandboxStatuses = append(status.SandboxStatuses, h.sandboxStatusLocked(ps, sb))
	}
	current := ps.currentSandbox()
	for _, inst := range ps.instancesLocked() {
		s := statusOf(inst)
		status.ContainerStatuses = append(status.ContainerStatuses, s)
		if current != nil && inst.sandboxID == current.id {
			status.ActiveContainerStatuses = append(status.ActiveContainerStatuses, statusOf(inst))
		}
	}
	return status, nil
}

// instancesLocked returns every instance of ps, newest first. host.mu must
// be held.
func (ps *podState) instancesLocked() []*instance {
	var all []*instance
	for _, cs := range ps.containers {
		all = append(all, cs.instances...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq > all[j].seq })
	return all
}

func (h *host) sandboxStatusLocked(ps *podState, sb *sandbox) *runtimeapi.PodSandboxStatus {
	state := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	if sb.ready {
		state = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	return &runtimeapi.PodSandboxStatus{
		Id: sb.id,
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name:      ps.name,
			Uid:       string(ps.uid),
			Namespace: ps.namespace,
			Attempt:   sb.attempt,
		},
		State:          state,
		CreatedAt:      sb.createdAt.UnixNano(),
		RuntimeHandler: RuntimeName,
	}
}

// statusOf returns the runtime status of inst. host.mu must be held.
func statusOf(inst *instance) *pkgcontainer.Status {
	s := &pkgcontainer.Status{
		ID:           inst.containerID(),
		Name:         inst.name,
		State:        inst.state(),
		CreatedAt:    inst.createdAt,
		StartedAt:    inst.startedAt,
		Image:        inst.image,
		Hash:         inst.hash,
		RestartCount: inst.restartCount,
	}
	if inst.exited {
		s.FinishedAt = inst.finishedAt
		s.ExitCode = inst.exitCode
		s.Reason = inst.reason()
		s.Message = inst.message
	}
	return s
}

func (h *host) getPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	states := make([]*podState, 0, len(h.pods))
	for _, ps := range h.pods {
		states = append(states, ps)
	}
	sort.Slice(states, func(i, j int) bool { return states[i].seq < states[j].seq })

	pods := make([]*pkgcontainer.Pod, 0, len(states))
	for _, ps := range states {
		pod := &pkgcontainer.Pod{ID: ps.uid, Name: ps.name, Namespace: ps.namespace}
		if n := len(ps.sandboxes); n > 0 {
			pod.CreatedAt = uint64(ps.sandboxes[n-1].createdAt.UnixNano())
		}
		for _, inst := range ps.instancesLocked() {
			if !all && inst.exited {
				continue
			}
			c := &pkgcontainer.Container{
				ID:    inst.containerID(),
				Name:  inst.name,
				Image: inst.image,
				Hash:  inst.hash,
				State: inst.state(),
			}
			k8scompat.SetContainerOrigin(c, inst.sandboxID, inst.createdAt.UnixNano())
			pod.Containers = append(pod.Containers, c)
		}
		for _, sb := range ps.sandboxes {
			if !all && !sb.ready {
				continue
			}
			state := pkgcontainer.ContainerStateExited
			if sb.ready {
				state = pkgcontainer.ContainerStateRunning
			}
			c := &pkgcontainer.Container{ID: pkgcontainer.ContainerID{Type: RuntimeName, ID: sb.id}, State: state}
			k8scompat.SetContainerOrigin(c, "", sb.createdAt.UnixNano())
			pod.Sandboxes = append(pod.Sandboxes, c)
		}
		// Without all: the pods with a running container or a ready
		// sandbox (one whose containers have all exited keeps it until
		// KillPod), as the kubelet's runtime lists them.
		if !all && len(pod.Containers) == 0 && len(pod.Sandboxes) == 0 {
			continue
		}
		pods = append(pods, pod)
	}
	return pods, nil
}

func (h *host) refreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus) {
	if pod == nil || podStatus == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ps := h.pods[pod.UID]
	if ps == nil {
		return
	}
	waiting := reasonContainerCreating
	if len(pod.Spec.InitContainers) > 0 {
		waiting = reasonPodInitializing
	}
	var initStatuses, statuses []v1.ContainerStatus
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		initStatuses = append(initStatuses, apiStatusLocked(ps.containers[c.Name], c, true, waiting))
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		statuses = append(statuses, apiStatusLocked(ps.containers[c.Name], c, false, waiting))
	}
	podStatus.InitContainerStatuses = initStatuses
	podStatus.ContainerStatuses = statuses
}

// apiStatusLocked returns the API status of container c (nil cs: never
// started). host.mu must be held.
func apiStatusLocked(cs *containerState, c *v1.Container, isInit bool, waiting string) v1.ContainerStatus {
	st := v1.ContainerStatus{Name: c.Name, Image: c.Image}
	var cur, prev *instance
	if cs != nil && len(cs.instances) > 0 {
		cur = cs.instances[0]
		if len(cs.instances) > 1 {
			prev = cs.instances[1]
		}
		st.ContainerID = cur.apiContainerID()
		st.RestartCount = int32(cur.restartCount)
	}
	running := cur != nil && !cur.exited
	switch {
	case running:
		st.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(cur.startedAt)}
		st.LastTerminationState = terminatedState(prev)
		st.Ready = (!isInit || cur.sidecar) && cur.readyLocked()
	case cs != nil && cs.startErr != nil:
		st.State.Waiting = &v1.ContainerStateWaiting{Reason: cs.startErr.Err.Error(), Message: cs.startErr.Message}
		st.LastTerminationState = terminatedState(cur)
	case cur != nil:
		st.State = terminatedState(cur)
		st.LastTerminationState = terminatedState(prev)
		st.Ready = isInit && !cur.sidecar && cur.exitCode == 0
	default:
		st.State.Waiting = &v1.ContainerStateWaiting{Reason: waiting}
	}
	started := running && cur.startedLocked()
	st.Started = &started
	return st
}

// terminatedState is the API state of an exited instance (an empty state
// for nil).
func terminatedState(inst *instance) v1.ContainerState {
	if inst == nil || !inst.exited {
		return v1.ContainerState{}
	}
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		ExitCode:    int32(inst.exitCode),
		Reason:      inst.reason(),
		Message:     inst.message,
		StartedAt:   metav1.NewTime(inst.startedAt),
		FinishedAt:  metav1.NewTime(inst.finishedAt),
		ContainerID: inst.apiContainerID(),
	}}
}
