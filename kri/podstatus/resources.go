package podstatus

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The smallest CPU request and limit a Linux cgroup tells apart, in
// millicores: what the kubelet's cm.MinShares (2 shares) and
// cm.MinMilliCPULimit stand for. At or below them, the kubelet reports the
// allocated value rather than what the runtime read back.
const (
	minSharesMilliCPU = 2
	minMilliCPULimit  = 10
)

// instanceResources returns the Resources and AllocatedResources of the API
// status st of container c built from runtime instance cs, as the kubelet's
// convertToAPIContainerStatuses (convertContainerStatusResources) computes
// them, c's spec standing for the agent's allocation: AllocatedResources
// are c's requests; Resources are c's resources, with, for a running
// instance, each CPU and memory request and limit c sets replaced by what
// cs.Resources reports (the CPU ones only above the smallest value a cgroup
// tells apart), or else, when the previous status old showed the same
// instance running, kept from old. A container whose spec has no resources
// gets neither (the kubelet reports them empty).
func instanceResources(c *v1.Container, cs *pkgcontainer.Status, st *v1.ContainerStatus, old *v1.ContainerStatus) (*v1.ResourceRequirements, v1.ResourceList) {
	if len(c.Resources.Requests) == 0 && len(c.Resources.Limits) == 0 && len(c.Resources.Claims) == 0 {
		// The kubelet reports an empty ResourceRequirements here: it
		// says nothing more than none.
		return nil, nil
	}
	allocated := c.Resources.Requests.DeepCopy()
	out := c.Resources.DeepCopy()
	if cs.State != pkgcontainer.ContainerStateRunning {
		return out, allocated
	}
	var oldRes *v1.ResourceRequirements
	if old != nil && old.State.Running != nil && old.ContainerID == st.ContainerID {
		oldRes = old.Resources
	}
	preserve := func(name v1.ResourceName, into v1.ResourceList, from func(*v1.ResourceRequirements) v1.ResourceList) {
		if oldRes == nil {
			return
		}
		if q, ok := from(oldRes)[name]; ok {
			into[name] = q.DeepCopy()
		}
	}
	limits := func(r *v1.ResourceRequirements) v1.ResourceList { return r.Limits }
	requests := func(r *v1.ResourceRequirements) v1.ResourceList { return r.Requests }
	var actual pkgcontainer.ContainerResources
	if cs.Resources != nil {
		actual = *cs.Resources
	}
	overlay := func(into v1.ResourceList, name v1.ResourceName, got *resource.Quantity, floor int64, from func(*v1.ResourceRequirements) v1.ResourceList) {
		switch {
		case got == nil:
			preserve(name, into, from)
		case floor == 0:
			into[name] = got.DeepCopy()
		default:
			want := into[name]
			if got.MilliValue() > floor || want.MilliValue() > floor {
				into[name] = got.DeepCopy()
			}
		}
	}
	if out.Limits != nil {
		overlay(out.Limits, v1.ResourceCPU, actual.CPULimit, minMilliCPULimit, limits)
		overlay(out.Limits, v1.ResourceMemory, actual.MemoryLimit, 0, limits)
	}
	if out.Requests != nil {
		overlay(out.Requests, v1.ResourceCPU, actual.CPURequest, minSharesMilliCPU, requests)
		overlay(out.Requests, v1.ResourceMemory, actual.MemoryRequest, 0, requests)
	}
	return out, allocated
}
