package fake

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// EventContainerResized: SyncPod applied new CPU or memory resources to a
// running container in place (a resize whose policy is NotRequired).
// Message says from what to what. A resize whose policy is
// RestartContainer shows as EventContainerKilling, EventContainerExited
// and the new instance's EventContainerCreated instead.
const EventContainerResized EventType = "ContainerResized"

// In-place resize, as the kubelet's runtime manager does it
// (computePodResizeAction and doPodResizeAction in
// pkg/kubelet/kuberuntime/kuberuntime_manager.go): SyncPod compares the
// CPU and memory requests and limits of each running app container with
// those the container was started or last resized with. When they differ,
// a container whose resize policy for every changed resource is
// NotRequired (the default) keeps running, with the same ID, and from then
// on reports the new resources; one whose policy for a changed resource is
// RestartContainer is killed with the pod's grace period and started again
// in the same SyncPod, whatever the pod's restart policy and without a
// crash-loop back-off, as a new instance with one more restart. Every
// instance reports the resources it runs with in its status's Resources
// (the CPU request and limit, the memory request and limit it has, as
// kuberuntime's toKubeContainerStatus reports them). The fake has no node
// capacity: every resize can be applied. Init containers are not resized.

// resize applies the resources of s.pod to the pod's running app
// containers: those the status shows running in a status-driven sync, else
// the current instances that run. It returns an error only when the wait
// for a container killed for its resize was cut short. The caller holds
// p.mu; waiting releases it.
func (s *syncer) resize(ctx context.Context) error {
	spec := &s.pod.Spec
	for i := range spec.Containers {
		c := &spec.Containers[i]
		in := s.runningInstance(c.Name)
		if in == nil {
			continue
		}
		changed := changedResources(in.runsWith(), c.Resources)
		if len(changed) == 0 {
			continue
		}
		if !restartOnResize(c, changed) {
			from := describeResources(in.runsWith())
			resized := resizable(c.Resources)
			in.resources = &resized
			s.p.publish(Event{At: s.now, Type: EventContainerResized, Pod: s.ps.ref, Container: c.Name, ContainerID: in.ID,
				Message: fmt.Sprintf("resized in place from %s to %s", from, describeResources(resized))})
			continue
		}
		if err := s.restartForResize(ctx, c, in); err != nil {
			return err
		}
	}
	return nil
}

// runningInstance returns the instance of container name that a resize
// acts on: the one the status shows running in a status-driven sync (if
// the fake still runs it), else the current instance if it runs.
func (s *syncer) runningInstance(name string) *instance {
	if s.status != nil {
		st := findStatus(s.status.ContainerStatuses, name)
		if st == nil || st.State != pkgcontainer.ContainerStateRunning {
			return nil
		}
		if in := s.ps.instanceByID(name, st.ID.ID); in != nil && in.Running() {
			return in
		}
		return nil
	}
	if cur := s.ps.current(name); cur != nil && cur.Running() {
		return cur
	}
	return nil
}

// restartForResize kills in, as the kubelet's runtime kills a container
// whose resize requires a restart (with the pod's grace period), and
// starts c again. The caller holds p.mu; waiting releases it.
func (s *syncer) restartForResize(ctx context.Context, c *v1.Container, in *instance) error {
	p := s.p
	deadline := p.terminate(s.ps, s.now, gracePeriod(s.pod, s.ps.pod, nil), func(x *instance) bool { return x == in })
	if err := p.waitLocked(ctx, deadline); err != nil {
		return fmt.Errorf("fake: SyncPod of pod %q: container %q killed for its resize is still terminating: %w", podKey(s.pod.Namespace, s.pod.Name), c.Name, err)
	}
	if now := p.clock.Now(); now.After(s.now) {
		s.now = now
		s.ps = p.podFor(s.pod, now)
		p.advancePod(s.ps, now)
	}
	// The kubelet starts the container again whatever the restart policy
	// and without back-off: doBackOff looks at the status, which shows it
	// running. The restart count comes from that status too.
	bo := p.backOff
	p.backOff = nil
	// The normal path that follows does not start it once more: the new
	// instance is active, and a status-driven sync keeps what the status
	// shows running.
	s.start(c, false)
	p.backOff = bo
	return nil
}

// The resources a resize compares and applies, as the kubelet's
// containerResourcesFromRequirements: CPU and memory requests and limits.
var resizableResources = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}

// resizable returns the CPU and memory requests and limits of r.
func resizable(r v1.ResourceRequirements) v1.ResourceRequirements {
	var out v1.ResourceRequirements
	for _, name := range resizableResources {
		if q, ok := r.Requests[name]; ok {
			if out.Requests == nil {
				out.Requests = v1.ResourceList{}
			}
			out.Requests[name] = q.DeepCopy()
		}
		if q, ok := r.Limits[name]; ok {
			if out.Limits == nil {
				out.Limits = v1.ResourceList{}
			}
			out.Limits[name] = q.DeepCopy()
		}
	}
	return out
}

// changedResources returns the resources (CPU, memory) whose request or
// limit differs between applied and want.
func changedResources(applied, want v1.ResourceRequirements) []v1.ResourceName {
	if len(applied.Requests) == 0 && len(applied.Limits) == 0 && len(want.Requests) == 0 && len(want.Limits) == 0 {
		// Nothing to compare: the steady sync of a container without
		// resources looks nothing up.
		return nil
	}
	var changed []v1.ResourceName
	differ := func(a, b v1.ResourceList, name v1.ResourceName) bool {
		qa, oka := a[name]
		qb, okb := b[name]
		return oka != okb || qa.Cmp(qb) != 0
	}
	for _, name := range resizableResources {
		if differ(applied.Requests, want.Requests, name) || differ(applied.Limits, want.Limits, name) {
			changed = append(changed, name)
		}
	}
	return changed
}

// restartOnResize reports whether c's resize policy asks for a restart
// when any of the changed resources changes (NotRequired when unset).
func restartOnResize(c *v1.Container, changed []v1.ResourceName) bool {
	for _, p := range c.ResizePolicy {
		for _, name := range changed {
			if p.ResourceName == name && p.RestartPolicy == v1.RestartContainer {
				return true
			}
		}
	}
	return false
}

// containerResources is what the status of an instance running with r
// reports, nil when r has no CPU or memory request or limit.
func containerResources(r v1.ResourceRequirements) *pkgcontainer.ContainerResources {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return nil // nothing made for an instance without resources
	}
	q := func(l v1.ResourceList, name v1.ResourceName) *resource.Quantity {
		if v, ok := l[name]; ok {
			c := v.DeepCopy() // on the heap only when found
			return &c
		}
		return nil
	}
	out := &pkgcontainer.ContainerResources{
		CPURequest:    q(r.Requests, v1.ResourceCPU),
		CPULimit:      q(r.Limits, v1.ResourceCPU),
		MemoryRequest: q(r.Requests, v1.ResourceMemory),
		MemoryLimit:   q(r.Limits, v1.ResourceMemory),
	}
	if out.CPURequest == nil && out.CPULimit == nil && out.MemoryRequest == nil && out.MemoryLimit == nil {
		return nil
	}
	return out
}

// describeResources renders the CPU and memory requests and limits of r.
func describeResources(r v1.ResourceRequirements) string {
	s := ""
	for _, name := range resizableResources {
		if s != "" {
			s += " "
		}
		s += fmt.Sprintf("%s=%s/%s", name, quantity(r.Requests, name), quantity(r.Limits, name))
	}
	return s
}

func quantity(l v1.ResourceList, name v1.ResourceName) string {
	if q, ok := l[name]; ok {
		return q.String()
	}
	return "-"
}

// resourcesOf returns the CPU and memory requests and limits that container
// name has in the pod handed to this SyncPod: what a new instance of it
// runs with.
func (s *syncer) resourcesOf(name string) v1.ResourceRequirements {
	spec := &s.pod.Spec
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return resizable(spec.Containers[i].Resources)
		}
	}
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == name {
			return resizable(spec.InitContainers[i].Resources)
		}
	}
	return v1.ResourceRequirements{}
}

// apiResources returns the Resources and AllocatedResources of container
// c's API status, as the kubelet's convertToAPIContainerStatuses
// (pkg/kubelet/kubelet_pods.go) computes them: the spec's resources (the
// agent's allocation), with the CPU and memory requests and limits the
// running instance cur runs with in their place; the spec's requests are
// the allocated resources. Both are nil for a container without resources.
func apiResources(c v1.Container, cur *instance) (*v1.ResourceRequirements, v1.ResourceList) {
	if len(c.Resources.Requests) == 0 && len(c.Resources.Limits) == 0 && len(c.Resources.Claims) == 0 {
		return nil, nil
	}
	out := c.Resources.DeepCopy()
	if cur != nil && cur.Running() {
		for _, name := range resizableResources {
			if q, ok := cur.runsWith().Requests[name]; ok && out.Requests != nil {
				out.Requests[name] = q.DeepCopy()
			}
			if q, ok := cur.runsWith().Limits[name]; ok && out.Limits != nil {
				out.Limits[name] = q.DeepCopy()
			}
		}
	}
	return out, c.Resources.Requests.DeepCopy()
}
