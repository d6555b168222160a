package fake

import (
	"fmt"
	"iter"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/utils/clock"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

// RuntimeName is the container runtime type the fake reports in container
// IDs (pkgcontainer.ContainerID.Type).
const RuntimeName = "fake"

// maxSandboxes is how many sandboxes of one pod the fake remembers: the
// current one and the one before it.
const maxSandboxes = 2

// PodRef names a pod.
type PodRef struct {
	UID       types.UID
	Namespace string
	Name      string
}

// Key returns "namespace/name", the key scripts and snapshots use.
func (r PodRef) Key() string { return podKey(r.Namespace, r.Name) }

func podKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// keyIs reports whether key is podKey(namespace, name), without building
// that string.
func keyIs(key, namespace, name string) bool {
	if namespace == "" {
		return key == name
	}
	return len(key) == len(namespace)+1+len(name) && key[len(namespace)] == '/' &&
		key[:len(namespace)] == namespace && key[len(namespace)+1:] == name
}

func refOf(pod *v1.Pod) PodRef {
	if pod == nil {
		return PodRef{}
	}
	return PodRef{UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name}
}

// podState is everything the fake knows of one pod.
type podState struct {
	ref PodRef
	key string // ref.Key(), kept to look scripts up without allocating
	// byKeyGen is p.byKeyGen when byKey last named this pod under key (0:
	// not yet): podFor looks byKey up again only after a change.
	byKeyGen uint64
	// pod is a private copy of what the fake uses of the latest pod handed
	// to SyncPod (see specCopy).
	pod *v1.Pod
	// steady is steadyFieldsOf(pod), for podFor's comparison
	// (sameStoredSpec).
	steady    []uint64
	createdAt time.Time
	// sandboxes, newest first.
	sandboxes []*sandboxState
	// lastStartErr holds the failure of the latest start of a container, if
	// it failed, for RefreshPodStatus (nil until the first).
	lastStartErr map[string]kri.ReasonItem
	// orphan is set once CleanupPods has stopped the pod: it is forgotten
	// as soon as none of its containers is active any more.
	orphan bool
	// retries are the wake-ups at which the agent is to be notified of the
	// pod: back-off ends, starts due to be tried again (podsync.go).
	retries []retryTimer
	// syncNotifiedAt is when a SyncPod's changes of the pod last notified
	// the agent, or are due to (paceSyncNotification).
	syncNotifiedAt time.Time
	// sim plays the pod's runs (workload.Pod, in the mode where the fake's
	// syncs start them: simulation.go newSim) and keeps them: the current
	// and the previous run of each container the fake has started, whose
	// Data is the fake's instance; wake is the wake-up at its next event,
	// due at wakeAt (advanceSim).
	sim    *workload.Pod
	wake   clock.Timer
	wakeAt time.Time
	// settled is the count of p.mu's releases at which the pod stops
	// being known up to date at settledAt (0: not known); see settle.
	settled   uint64
	settledAt time.Time
}

// anyActive reports whether some instance of the pod is created or
// running.
func (ps *podState) anyActive() bool {
	for in := range ps.instances() {
		if in.active() {
			return true
		}
	}
	return false
}

// anySidecarActive reports whether a restartable init container of the pod
// has a created or running instance.
func (ps *podState) anySidecarActive() bool {
	for i := range ps.pod.Spec.InitContainers {
		c := &ps.pod.Spec.InitContainers[i]
		if cur := ps.current(c.Name); cur != nil && workload.IsSidecar(c) && cur.active() {
			return true
		}
	}
	return false
}

type sandboxState struct {
	id        string
	createdAt time.Time
	ready     bool
	attempt   uint32
	ip        string // WithPodIPs: the pod's IP; empty for host-network pods
}

// activeSandbox returns the newest sandbox if it is ready.
func (ps *podState) activeSandbox() *sandboxState {
	if len(ps.sandboxes) > 0 && ps.sandboxes[0].ready {
		return ps.sandboxes[0]
	}
	return nil
}

// setStartErr records item as the failure of the latest start of
// container name.
func (ps *podState) setStartErr(name string, item kri.ReasonItem) {
	if ps.lastStartErr == nil {
		ps.lastStartErr = map[string]kri.ReasonItem{}
	}
	ps.lastStartErr[name] = item
}

// started yields the containers the fake has started (the pod
// simulation's: init containers, then app containers, in the order of
// their first start), without allocating.
func (ps *podState) started() iter.Seq[*workload.PodContainer] {
	return func(yield func(*workload.PodContainer) bool) {
		for _, list := range [2][]*workload.PodContainer{ps.sim.Init, ps.sim.App} {
			for _, c := range list {
				if !yield(c) {
					return
				}
			}
		}
	}
}

// instances yields every instance of the pod the fake remembers: of each
// container it has started (init containers, then app containers, in the
// order of their first start), the previous instance, then the current one.
func (ps *podState) instances() iter.Seq[*instance] {
	return func(yield func(*instance) bool) {
		for c := range ps.started() {
			for _, r := range [2]*workload.Run{c.Previous, c.Current} {
				if in := instanceOf(r); in != nil && !yield(in) {
					return
				}
			}
		}
	}
}

// current returns the current instance of container name, nil before its
// first; previous the one before it.
func (ps *podState) current(name string) *instance {
	if c := ps.container(name); c != nil {
		return instanceOf(c.Current)
	}
	return nil
}

func (ps *podState) previous(name string) *instance {
	if c := ps.container(name); c != nil {
		return instanceOf(c.Previous)
	}
	return nil
}

// container returns the pod simulation's container name, nil if the fake
// never started it (workload.Pod.Container, read here).
func (ps *podState) container(name string) *workload.PodContainer {
	// Two plain loops, not started(): this runs for every container at
	// every sync.
	for _, c := range ps.sim.Init {
		if c.Name == name {
			return c
		}
	}
	for _, c := range ps.sim.App {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// instanceOf returns the fake's instance of run r (its Data), nil for nil.
func instanceOf(r *workload.Run) *instance {
	if r == nil {
		return nil
	}
	in, _ := r.Data.(*instance)
	return in
}

// instance is one run of a container, what a runtime calls a container:
// the pod simulation's Run (podState.sim), which plays it and holds its
// state (when it runs, when and how it exits, its signals, its files, its
// probes), with what the fake's runtime keeps beside it. It is the Run's
// Data.
type instance struct {
	*workload.Run
	pod       *podState
	imageID   string // imageID(Image), shared by the instances of the image (PodProvider.imageIDs)
	hash      uint64
	sandboxID string
	seq       uint64 // creation order among the provider's instances
	// resources are the CPU and memory it runs with (resize.go), nil
	// without any.
	resources *v1.ResourceRequirements
	// message is its termination message once it has exited (its start's
	// message for a failed start); exited is set then: later events of
	// its run are not published (onRunEvent).
	message string
	exited  bool
	// hookFailPending: its postStart hook failed
	// (workload.Run.PostStartFailure) and that is still to be reported to
	// the ReasonCache (syncpod.go: postStart, reportHookFailure).
	hookFailPending bool
}

// runsWith returns the CPU and memory the instance runs with (empty
// without any).
func (in *instance) runsWith() v1.ResourceRequirements {
	if in.resources == nil {
		return v1.ResourceRequirements{}
	}
	return *in.resources
}

// name is the name of the instance's container.
func (in *instance) name() string { return in.Spec.Name }

// state is the instance's state as a runtime reports it.
func (in *instance) state() pkgcontainer.State {
	switch in.State() {
	case workload.InstanceCreated:
		return pkgcontainer.ContainerStateCreated
	case workload.InstanceRunning:
		return pkgcontainer.ContainerStateRunning
	}
	return pkgcontainer.ContainerStateExited
}

func (in *instance) active() bool { return in.State() != workload.InstanceExited }

// exitReason is the reason of the exited instance:
// workload.ReasonStartError for a failed start, else workload.ExitReason
// of its exit code; "" while it is active.
func (in *instance) exitReason() string {
	if in.active() {
		return ""
	}
	if in.StartFailed {
		return workload.ReasonStartError
	}
	return workload.ExitReason(in.ExitCode())
}

// terminating reports whether a signal has set the end of the running
// instance: KillPod sent SIGTERM to a container that ignores it or takes a
// while to exit, or scheduled a sidecar's SIGTERM after the app
// containers.
func (in *instance) terminating() bool {
	_, _, ending := in.Stopping()
	return ending
}

// instanceByID returns the instance id of container name, nil if the fake
// does not remember it.
func (ps *podState) instanceByID(name, id string) *instance {
	c := ps.container(name)
	if c == nil {
		return nil
	}
	for _, in := range [2]*instance{instanceOf(c.Current), instanceOf(c.Previous)} {
		if in != nil && in.ID == id {
			return in
		}
	}
	return nil
}

// staleness describes how st, handed to SyncPod for pod, differs from what
// GetPodStatus would report now in what the kubelet's runtime acts on: the
// pod's identity, its newest sandbox (ID and readiness) and, per container,
// its newest instance (ID and state). It returns "" when they agree, and
// does not allocate then.
func (p *PodProvider) staleness(pod *v1.Pod, st *pkgcontainer.PodStatus) string {
	if pod == nil {
		return ""
	}
	p.mu.Lock()
	defer p.unlock()
	ps := p.pods[pod.UID]
	if ps != nil {
		if now := p.clock.Now(); p.advanced(ps, now) {
			p.settle(ps, now) // read only from here on
		} else {
			ps = nil
		}
	}
	if st == nil {
		if ps == nil || (len(ps.sandboxes) == 0 && len(ps.sim.Init)+len(ps.sim.App) == 0) {
			return ""
		}
		return "podStatus is nil, but the runtime has " + ps.describe()
	}
	var diffs []string
	if st.ID != "" && st.ID != pod.UID {
		diffs = append(diffs, fmt.Sprintf("podStatus is of pod UID %q, not %q", st.ID, pod.UID))
	}
	if ps == nil {
		if len(st.SandboxStatuses) > 0 || len(st.ContainerStatuses) > 0 {
			diffs = append(diffs, fmt.Sprintf("podStatus shows %d sandboxes and %d containers of a pod the runtime does not have", len(st.SandboxStatuses), len(st.ContainerStatuses)))
		}
		return strings.Join(diffs, "; ")
	}
	if d := sandboxDiff(st, ps); d != "" {
		diffs = append(diffs, d)
	}
	// shown: the statuses (of the first 64) a started container found.
	var shown uint64
	for _, list := range [2][]*workload.PodContainer{ps.sim.Init, ps.sim.App} { // started(), without its closures
		for _, c := range list {
			var cs *pkgcontainer.Status // findStatus(st.ContainerStatuses, c.Name), read here
			for i, s := range st.ContainerStatuses {
				if s != nil && s.Name == c.Name {
					cs = s
					if i < 64 {
						shown |= 1 << i
					}
					break
				}
			}
			if d := containerDiff(c.Name, cs, c.Current); d != "" {
				diffs = append(diffs, d)
			}
		}
	}
	if n := len(st.ContainerStatuses); n < 64 && shown == 1<<n-1 {
		// Every status is one a started container found: none shows a
		// container the runtime does not have.
		return strings.Join(diffs, "; ")
	}
	for _, cs := range st.ContainerStatuses {
		if cs != nil && ps.container(cs.Name) == nil && findStatus(st.ContainerStatuses, cs.Name) == cs {
			diffs = append(diffs, fmt.Sprintf("container %q: podStatus shows %s, the runtime has no instance of it", cs.Name, describeState(cs.ID.ID, cs.State)))
		}
	}
	return strings.Join(diffs, "; ")
}

func sandboxDiff(st *pkgcontainer.PodStatus, ps *podState) string {
	var have *sandboxState
	if len(ps.sandboxes) > 0 {
		have = ps.sandboxes[0]
	}
	var shown *runtimeapi.PodSandboxStatus
	if len(st.SandboxStatuses) > 0 {
		shown = st.SandboxStatuses[0]
	}
	switch {
	case have == nil && shown == nil:
		return ""
	case shown == nil:
		return fmt.Sprintf("podStatus shows no sandbox, the runtime has %s", have.describe())
	case have == nil:
		return fmt.Sprintf("podStatus shows sandbox %s, the runtime has none", shown.GetId())
	case shown.GetId() != have.id || (shown.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY) != have.ready:
		return fmt.Sprintf("podStatus shows sandbox %s %s, the runtime's newest is %s", shown.GetId(), readiness(shown.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY), have.describe())
	}
	return ""
}

// containerDiff describes how shown, the status handed in of container
// name, differs from r, its current run ("" when they agree).
func containerDiff(name string, shown *pkgcontainer.Status, r *workload.Run) string {
	var have *instance // instanceOf(r), read here
	if r != nil {
		have, _ = r.Data.(*instance)
	}
	switch {
	case have == nil:
		return ""
	case shown == nil:
		return fmt.Sprintf("container %q: podStatus shows no instance, the runtime's newest is %s", name, have.describe())
	case shown.ID.ID != have.ID || shown.State != have.state():
		return fmt.Sprintf("container %q: podStatus shows %s, the runtime's newest is %s", name, describeState(shown.ID.ID, shown.State), have.describe())
	}
	return ""
}

func describeState(id string, state pkgcontainer.State) string {
	return fmt.Sprintf("%s %s", id, state)
}

func readiness(ready bool) string {
	if ready {
		return "ready"
	}
	return "not ready"
}

func (sb *sandboxState) describe() string {
	return fmt.Sprintf("sandbox %s %s", sb.id, readiness(sb.ready))
}

func (in *instance) describe() string {
	if !in.active() {
		return fmt.Sprintf("%s exited (exit code %d)", in.ID, in.ExitCode())
	}
	return describeState(in.ID, in.state())
}

// describe summarises the pod's newest sandbox and current instances.
func (ps *podState) describe() string {
	var parts []string
	if len(ps.sandboxes) > 0 {
		parts = append(parts, ps.sandboxes[0].describe())
	}
	for c := range ps.started() {
		if in := instanceOf(c.Current); in != nil {
			parts = append(parts, fmt.Sprintf("container %q %s", c.Name, in.describe()))
		}
	}
	return strings.Join(parts, ", ")
}
