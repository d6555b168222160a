package fake

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/internal/k8scompat"
	"github.com/kri-kit/testkit/sim/workload"
)

func (c *core) GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	if pod == nil {
		return nil, errors.New("fake: GetPodStatus: pod is nil")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fake: GetPodStatus of pod %q: %w", podKey(pod.Namespace, pod.Name), err)
	}
	p := c.p
	p.mu.Lock()
	defer p.unlock()
	if err := p.scripts.takeMethodFault(MethodGetPodStatus, pod.Namespace, pod.Name); err != nil {
		return nil, err
	}
	now := p.clock.Now()
	status := &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace, TimeStamp: now}
	ps := p.pods[pod.UID]
	if ps == nil || !p.advanced(ps, now) {
		return status, nil
	}
	p.settle(ps, now) // read only from here on
	var active string
	if sb := ps.activeSandbox(); sb != nil {
		active = sb.id
	}
	// The lists are made at their length (nil while empty), not grown.
	all := ps.instancesNewestFirst()
	inActive := 0
	for _, in := range all {
		if active != "" && in.sandboxID == active {
			inActive++
		}
	}
	if len(all) > 0 {
		status.ContainerStatuses = make([]*pkgcontainer.Status, 0, len(all))
	}
	if inActive > 0 {
		status.ActiveContainerStatuses = make([]*pkgcontainer.Status, 0, inActive)
	}
	for _, in := range all {
		st := in.status()
		status.ContainerStatuses = append(status.ContainerStatuses, st)
		if active != "" && in.sandboxID == active {
			status.ActiveContainerStatuses = append(status.ActiveContainerStatuses, in.status())
		}
	}
	if len(ps.sandboxes) > 0 {
		status.SandboxStatuses = make([]*runtimeapi.PodSandboxStatus, 0, len(ps.sandboxes))
	}
	for _, sb := range ps.sandboxes {
		status.SandboxStatuses = append(status.SandboxStatuses, sb.status(ps.ref, p.podIPs != nil))
	}
	// The pod's IP is that of its newest sandbox while it is ready, as the
	// kubelet's runtime reads it (GetPodStatus, determinePodSandboxIPs).
	if sb := ps.activeSandbox(); sb != nil && sb.ip != "" {
		status.IPs = []string{sb.ip}
	}
	return status, nil
}

// instancesNewestFirst lists every remembered container instance of the pod,
// the most recently created first, as a runtime reports them.
func (ps *podState) instancesNewestFirst() []*instance {
	all := make([]*instance, 0, 2*(len(ps.sim.Init)+len(ps.sim.App)))
	for in := range ps.instances() {
		all = append(all, in)
	}
	slices.SortFunc(all, func(a, b *instance) int { return int(b.seq) - int(a.seq) })
	return all
}

func (in *instance) status() *pkgcontainer.Status {
	return &pkgcontainer.Status{
		ID:           pkgcontainer.ContainerID{Type: RuntimeName, ID: in.ID},
		Name:         in.name(),
		State:        in.state(),
		CreatedAt:    in.CreatedAt(),
		StartedAt:    in.StartedAt(),
		FinishedAt:   in.FinishedAt(),
		ExitCode:     in.ExitCode(),
		Image:        in.Image,
		ImageID:      in.imageID,
		ImageRef:     in.imageID,
		Hash:         in.hash,
		RestartCount: in.Restarts,
		Reason:       in.exitReason(),
		Message:      in.message,
		Resources:    containerResources(in.runsWith()),
	}
}

// imageID returns imageID(image), the same string for every instance of
// image. The caller holds p.mu.
func (p *PodProvider) imageID(image string) string {
	id, ok := p.imageIDs[image]
	if !ok {
		if p.imageIDs == nil {
			p.imageIDs = map[string]string{}
		}
		id = imageID(image)
		p.imageIDs[image] = id
	}
	return id
}

// imageID is the fake's stand-in for the digest of an image.
func imageID(image string) string {
	if image == "" {
		return ""
	}
	return "fake-image://" + image
}

// status is the CRI status of the sandbox; with network, it has a network
// status with its IP (empty for a host-network pod), as a CRI runtime
// reports it.
func (sb *sandboxState) status(ref PodRef, network bool) *runtimeapi.PodSandboxStatus {
	state := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	if sb.ready {
		state = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	st := &runtimeapi.PodSandboxStatus{
		Id:        sb.id,
		State:     state,
		CreatedAt: sb.createdAt.UnixNano(),
		Metadata:  &runtimeapi.PodSandboxMetadata{Name: ref.Name, Namespace: ref.Namespace, Uid: string(ref.UID), Attempt: sb.attempt},
	}
	if network {
		st.Network = &runtimeapi.PodSandboxNetworkStatus{Ip: sb.ip}
	}
	return st
}

func (c *core) GetPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fake: GetPods: %w", err)
	}
	p := c.p
	p.mu.Lock()
	defer p.unlock()
	if err := p.scripts.takeMethodFault(MethodGetPods, "", ""); err != nil {
		return nil, err
	}
	now := p.clock.Now()
	pods := make([]*pkgcontainer.Pod, 0, len(p.pods))
	for _, ps := range p.pods {
		if !p.advancePod(ps, now) {
			continue
		}
		out := &pkgcontainer.Pod{
			ID:        ps.ref.UID,
			Name:      ps.ref.Name,
			Namespace: ps.ref.Namespace,
			CreatedAt: uint64(ps.createdAt.UnixNano()),
		}
		k8scompat.SetPodTimestamp(out, now)
		for _, in := range ps.instancesNewestFirst() {
			if all || in.Running() {
				out.Containers = append(out.Containers, in.container())
			}
		}
		for _, sb := range ps.sandboxes {
			if all || sb.ready {
				out.Sandboxes = append(out.Sandboxes, sb.container())
			}
		}
		// Without all: every pod with a running container or a ready
		// sandbox, as the kubelet's runtime lists them (a pod whose
		// containers have all exited keeps its sandbox until KillPod).
		if all || len(out.Containers) > 0 || len(out.Sandboxes) > 0 {
			pods = append(pods, out)
		}
	}
	slices.SortFunc(pods, func(a, b *pkgcontainer.Pod) int {
		return comparePodRefs(PodRef{UID: a.ID, Namespace: a.Namespace, Name: a.Name}, PodRef{UID: b.ID, Namespace: b.Namespace, Name: b.Name})
	})
	return pods, nil
}

func (in *instance) container() *pkgcontainer.Container {
	c := &pkgcontainer.Container{
		ID:       pkgcontainer.ContainerID{Type: RuntimeName, ID: in.ID},
		Name:     in.name(),
		Image:    in.Image,
		ImageID:  in.imageID,
		ImageRef: in.imageID,
		Hash:     in.hash,
		State:    in.state(),
	}
	k8scompat.SetContainerOrigin(c, in.sandboxID, in.CreatedAt().UnixNano())
	return c
}

func (sb *sandboxState) container() *pkgcontainer.Container {
	state := pkgcontainer.ContainerStateExited
	if sb.ready {
		state = pkgcontainer.ContainerStateRunning
	}
	c := &pkgcontainer.Container{
		ID:    pkgcontainer.ContainerID{Type: RuntimeName, ID: sb.id},
		State: state,
	}
	k8scompat.SetContainerOrigin(c, "", sb.createdAt.UnixNano())
	return c
}

func (c *core) RefreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus) {
	if pod == nil || podStatus == nil {
		return
	}
	p := c.p
	p.mu.Lock()
	defer p.unlock()
	ps := p.pods[pod.UID]
	if ps == nil || !p.advancePod(ps, p.clock.Now()) {
		return
	}
	initDone := true
	podStatus.InitContainerStatuses = nil
	for _, c := range pod.Spec.InitContainers {
		st := ps.containerStatus(c, "PodInitializing")
		if workload.IsSidecar(&c) {
			// A sidecar has done its part of initialisation once it runs.
			if st.State.Running == nil && st.State.Terminated == nil {
				initDone = false
			}
		} else if st.State.Terminated == nil || st.State.Terminated.ExitCode != 0 {
			initDone = false
		} else {
			// Completed: ready, as the kubelet's prober manager sets an
			// init container that exited 0 (UpdatePodStatus in
			// pkg/kubelet/prober/prober_manager.go), which the agent's
			// Initialized condition reads.
			st.Ready = true
		}
		podStatus.InitContainerStatuses = append(podStatus.InitContainerStatuses, st)
	}
	waiting := "ContainerCreating"
	if !initDone {
		waiting = "PodInitializing"
	}
	podStatus.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		podStatus.ContainerStatuses = append(podStatus.ContainerStatuses, ps.containerStatus(c, waiting))
	}
}

// containerStatus is the API status of container c of the pod; waiting is
// the reason given for a container that has not run yet.
func (ps *podState) containerStatus(c v1.Container, waiting string) v1.ContainerStatus {
	st := v1.ContainerStatus{Name: c.Name, Image: c.Image}
	if prev := ps.previous(c.Name); prev != nil && !prev.active() {
		st.LastTerminationState.Terminated = prev.terminated()
	}
	cur := ps.current(c.Name)
	st.Resources, st.AllocatedResources = apiResources(c, cur)
	if cur != nil {
		st.ContainerID = (&pkgcontainer.ContainerID{Type: RuntimeName, ID: cur.ID}).String()
		st.ImageID = cur.imageID
		st.RestartCount = int32(cur.Restarts)
	}
	if item, failed := ps.lastStartErr[c.Name]; failed {
		st.State.Waiting = &v1.ContainerStateWaiting{Reason: item.Err.Error(), Message: item.Message}
		if cur != nil && !cur.active() {
			st.LastTerminationState.Terminated = cur.terminated()
		}
		return st
	}
	started := false
	switch {
	case cur == nil || cur.State() == workload.InstanceCreated:
		st.State.Waiting = &v1.ContainerStateWaiting{Reason: waiting}
	case cur.Running():
		st.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(cur.StartedAt())}
		st.Ready, started = cur.Prober.Ready(), cur.Prober.Started()
	default:
		st.State.Terminated = cur.terminated()
	}
	st.Started = &started
	return st
}

func (in *instance) terminated() *v1.ContainerStateTerminated {
	return &v1.ContainerStateTerminated{
		ExitCode:    int32(in.ExitCode()),
		Reason:      in.exitReason(),
		Message:     in.message,
		StartedAt:   metav1.NewTime(in.StartedAt()),
		FinishedAt:  metav1.NewTime(in.FinishedAt()),
		ContainerID: (&pkgcontainer.ContainerID{Type: RuntimeName, ID: in.ID}).String(),
	}
}

// PodSnapshot is a copy of the simulated state of one pod.
type PodSnapshot struct {
	Pod        PodRef
	Sandboxes  []SandboxSnapshot   // newest first
	Containers []ContainerSnapshot // every container of the spec: init containers, then app containers
}

// SandboxSnapshot is a copy of the state of one sandbox.
type SandboxSnapshot struct {
	ID        string
	Ready     bool
	Attempt   uint32
	CreatedAt time.Time
	// IP is the sandbox's IP with WithPodIPs (empty for a host-network
	// pod, and without the option).
	IP string
}

// ContainerSnapshot is a copy of the state of the current instance of one
// container. ID and State are empty while the container was never created.
type ContainerSnapshot struct {
	Name     string
	ID       string
	Init     bool
	State    pkgcontainer.State
	ExitCode int
	// Reason and Message are those of an exited instance as GetPodStatus
	// reports them: Reason "Completed" for exit code 0, "Error" otherwise
	// (a container killed by a signal included), "StartError" for an
	// instance left by a failed start (WithStartErrorInstances).
	Reason       string
	Message      string
	RestartCount int
	CreatedAt    time.Time
	StartedAt    time.Time
	FinishedAt   time.Time
	// Terminating is true while a container that ignores SIGTERM waits for
	// its grace period to end.
	Terminating bool
	// Started and Ready are what RefreshPodStatus reports of a running
	// container: started once its startup probe has succeeded, ready
	// while its readiness probe succeeds (without those probes: whenever
	// it runs). Both are false when it does not run.
	Started, Ready bool
	// LastStartError is the failure of the latest start attempt, if it
	// failed (the container may still have an older, exited instance).
	LastStartError error
}

// Container returns the snapshot of the named container.
func (s PodSnapshot) Container(name string) (ContainerSnapshot, bool) {
	for _, c := range s.Containers {
		if c.Name == name {
			return c, true
		}
	}
	return ContainerSnapshot{}, false
}

// Snapshot returns the simulated state of the pod with the given key
// ("namespace/name"), as of the clock's current time, and whether the fake
// knows the pod.
func (p *PodProvider) Snapshot(key string) (PodSnapshot, bool) {
	p.mu.Lock()
	defer p.unlock()
	ps := p.pods[p.byKey[key]]
	if ps == nil || !p.advancePod(ps, p.clock.Now()) {
		return PodSnapshot{}, false
	}
	return ps.snapshot(), true
}

// Snapshots returns the simulated state of every pod the fake knows, sorted
// by namespace, name and UID.
func (p *PodProvider) Snapshots() []PodSnapshot {
	p.mu.Lock()
	defer p.unlock()
	now := p.clock.Now()
	out := make([]PodSnapshot, 0, len(p.pods))
	for _, ps := range p.pods {
		if p.advancePod(ps, now) {
			out = append(out, ps.snapshot())
		}
	}
	slices.SortFunc(out, func(a, b PodSnapshot) int { return comparePodRefs(a.Pod, b.Pod) })
	return out
}

func (ps *podState) snapshot() PodSnapshot {
	s := PodSnapshot{Pod: ps.ref}
	for _, sb := range ps.sandboxes {
		s.Sandboxes = append(s.Sandboxes, SandboxSnapshot{ID: sb.id, Ready: sb.ready, Attempt: sb.attempt, CreatedAt: sb.createdAt, IP: sb.ip})
	}
	spec := ps.pod.Spec
	for i, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		cs := ContainerSnapshot{Name: c.Name, Init: i < len(spec.InitContainers)}
		if in := ps.current(c.Name); in != nil {
			cs.ID, cs.State, cs.ExitCode, cs.RestartCount = in.ID, in.state(), in.ExitCode(), in.Restarts
			cs.Reason, cs.Message = in.exitReason(), in.message
			cs.CreatedAt, cs.StartedAt, cs.FinishedAt, cs.Terminating = in.CreatedAt(), in.StartedAt(), in.FinishedAt(), in.terminating()
			cs.Started = in.Running() && in.Prober.Started()
			cs.Ready = in.Running() && in.Prober.Ready()
		}
		if item, ok := ps.lastStartErr[c.Name]; ok {
			cs.LastStartError = item.Err
		}
		s.Containers = append(s.Containers, cs)
	}
	return s
}

// comparePodRefs orders pods by namespace, name and UID, without
// allocating: GetPods and Snapshots sort thousands of pods with it.
func comparePodRefs(a, b PodRef) int {
	return cmp.Or(
		strings.Compare(a.Namespace, b.Namespace),
		strings.Compare(a.Name, b.Name),
		strings.Compare(string(a.UID), string(b.UID)),
	)
}
