package fake

import (
	"fmt"
	"strings"

	"github.com/kri-kit/testkit/workload"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

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
	if ps != nil && !p.advancePod(ps, p.clock.Now()) {
		ps = nil
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
	for c := range ps.started() {
		if d := containerDiff(c.Name, findStatus(st.ContainerStatuses, c.Name), c.Current); d != "" {
			diffs = append(diffs, d)
		}
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
