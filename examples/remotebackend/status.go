package remotebackend

import (
	"context"
	"errors"
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/internal/k8scompat"
)

// Waiting reasons of a container the Service has not tried to start, as the
// kubelet reports them (package podstatus has the same).
const (
	reasonContainerCreating = "ContainerCreating"
	reasonPodInitializing   = "PodInitializing"
)

func containerID(runID string) pkgcontainer.ContainerID {
	return pkgcontainer.ContainerID{Type: RuntimeName, ID: runID}
}

// apiContainerID is the ContainerID of an API container status
// (type://id).
func apiContainerID(runID string) string {
	return RuntimeName + "://" + runID
}

// GetPodStatus returns the Service's view of pod: for every container that
// has run, one instance, its current run, with the Service's restart count;
// no sandboxes and no ActiveContainerStatuses. A run's CreatedAt is its
// StartedAt: the Service creates and starts a run in one step. It maps the
// backend's containers the way kuscia's K8sProvider.GetPodStatus maps the
// container statuses of its backend pod.
//
// A pod the Service does not know gets a status with only ID, Name and
// Namespace. A nil pod is an error.
func (p *Provider) GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	if pod == nil {
		return nil, errors.New("remotebackend: GetPodStatus of a nil pod")
	}
	view, ok, err := p.svc.Pod(ctx, pod.UID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}, nil
	}
	st := &pkgcontainer.PodStatus{ID: view.UID, Name: view.Name, Namespace: view.Namespace}
	for _, c := range slices.Concat(view.InitContainers, view.Containers) {
		if c.Current == nil {
			continue
		}
		r := c.Current
		s := &pkgcontainer.Status{
			ID: containerID(r.ID), Name: c.Name, Image: r.Image, RestartCount: c.RestartCount,
			State: pkgcontainer.ContainerStateRunning, CreatedAt: r.StartedAt, StartedAt: r.StartedAt,
		}
		if r.State == RunExited {
			s.State, s.FinishedAt, s.ExitCode, s.Reason = pkgcontainer.ContainerStateExited, r.FinishedAt, r.ExitCode, r.Reason
		}
		st.ContainerStatuses = append(st.ContainerStatuses, s)
	}
	return st, nil
}

// GetPods lists the Service's pods. With all false: every pod with a
// running container, with its running containers only; with all true:
// every pod, with the current run of every container that has run.
func (p *Provider) GetPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error) {
	views, err := p.svc.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []*pkgcontainer.Pod
	for _, v := range views {
		pod := &pkgcontainer.Pod{ID: v.UID, Name: v.Name, Namespace: v.Namespace, CreatedAt: uint64(max(v.SubmittedAt.UnixNano(), 0))}
		for _, c := range slices.Concat(v.InitContainers, v.Containers) {
			r := c.Current
			if r == nil || (!all && r.State != RunRunning) {
				continue
			}
			state := pkgcontainer.ContainerStateRunning
			if r.State == RunExited {
				state = pkgcontainer.ContainerStateExited
			}
			rc := &pkgcontainer.Container{ID: containerID(r.ID), Name: c.Name, Image: r.Image, State: state}
			k8scompat.SetContainerOrigin(rc, "", r.StartedAt.UnixNano())
			pod.Containers = append(pod.Containers, rc)
		}
		if all || len(pod.Containers) > 0 {
			out = append(out, pod)
		}
	}
	return out, nil
}

// RefreshPodStatus replaces the container statuses of podStatus with the
// Service's, as kuscia's K8sProvider.RefreshPodStatus replaces them with its
// backend pod's: for every container of pod's spec that the Service
// reports, State comes from the Service (Running or Terminated from the
// current run, Waiting with the Service's reason while it waits to start or
// restart the container), LastTerminationState from its last termination,
// and RestartCount, ContainerID and Image from the Service. While the
// Service waits to restart an exited container, that exited run is the
// last termination, as the kubelet shows a container in back-off
// (kubelet_pods.go, convertToAPIContainerStatuses). Started and Ready are
// the Service's (ContainerView), set from the container's probes as the
// kubelet's prober manager sets them (UpdatePodStatus): a running container
// is Started once its startup probe has succeeded and Ready while its
// readiness probe succeeds (without probes, both while it runs); a
// completed init container that is not a sidecar is Ready. Every other
// field of the handed statuses is kept, and so is the status of a container
// the Service has not tried to start yet.
//
// The statuses come out in spec order, init containers in
// InitContainerStatuses; a status handed in for a container not in the spec
// is dropped. For a pod the Service does not know, or a nil pod or
// podStatus, it changes nothing.
func (p *Provider) RefreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus) {
	if pod == nil || podStatus == nil {
		return
	}
	view, ok, err := p.svc.Pod(context.Background(), pod.UID)
	if err != nil || !ok {
		return
	}
	defaultReason := reasonContainerCreating
	if len(pod.Spec.InitContainers) > 0 {
		defaultReason = reasonPodInitializing
	}
	podStatus.InitContainerStatuses = refreshList(pod.Spec.InitContainers, podStatus.InitContainerStatuses, view.InitContainers, defaultReason)
	podStatus.ContainerStatuses = refreshList(pod.Spec.Containers, podStatus.ContainerStatuses, view.Containers, defaultReason)
}

// refreshList builds the statuses of specs from the handed ones and the
// Service's views.
func refreshList(specs []v1.Container, handed []v1.ContainerStatus, views []ContainerView, defaultReason string) []v1.ContainerStatus {
	if len(specs) == 0 {
		return nil
	}
	out := make([]v1.ContainerStatus, 0, len(specs))
	for _, spec := range specs {
		var st v1.ContainerStatus
		if i := slices.IndexFunc(handed, func(s v1.ContainerStatus) bool { return s.Name == spec.Name }); i >= 0 {
			handed[i].DeepCopyInto(&st)
		} else {
			st = v1.ContainerStatus{Name: spec.Name, Image: spec.Image, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: defaultReason}}}
		}
		if i := slices.IndexFunc(views, func(v ContainerView) bool { return v.Name == spec.Name }); i >= 0 {
			applyView(&st, &views[i])
		}
		out = append(out, st)
	}
	return out
}

// applyView replaces what the Service knows of st with its view c.
func applyView(st *v1.ContainerStatus, c *ContainerView) {
	if c.Current == nil && c.Waiting == nil {
		return // never tried: the agent's Waiting state stands
	}
	st.Image = c.Image
	st.RestartCount = int32(min(c.RestartCount, math.MaxInt32))
	st.LastTerminationState = v1.ContainerState{}
	if c.LastTermination != nil {
		st.LastTerminationState.Terminated = terminated(c.LastTermination)
	}
	if r := c.Current; r != nil {
		st.ContainerID = apiContainerID(r.ID)
		st.Image = r.Image
		switch {
		case c.Waiting != nil && r.State == RunExited:
			// Waiting to restart: the exited run is the last
			// termination.
			st.LastTerminationState.Terminated = terminated(&Termination{
				RunID: r.ID, ExitCode: r.ExitCode, Reason: r.Reason, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
			})
		case r.State == RunRunning:
			st.State = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(r.StartedAt)}}
		default:
			st.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				ExitCode: int32(r.ExitCode), Reason: r.Reason, ContainerID: st.ContainerID,
				StartedAt: metav1.NewTime(r.StartedAt), FinishedAt: metav1.NewTime(r.FinishedAt),
			}}
		}
	}
	if w := c.Waiting; w != nil {
		st.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}}
	}
	started := c.Started
	st.Started = &started
	st.Ready = c.Ready
}

func terminated(t *Termination) *v1.ContainerStateTerminated {
	return &v1.ContainerStateTerminated{
		ExitCode: int32(t.ExitCode), Reason: t.Reason, ContainerID: apiContainerID(t.RunID),
		StartedAt: metav1.NewTime(t.StartedAt), FinishedAt: metav1.NewTime(t.FinishedAt),
	}
}
