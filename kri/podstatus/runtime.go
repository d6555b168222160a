package podstatus

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

// runtimeView is the runtime status Generate works from: the non-nil
// container instances sorted newest first, the non-nil sandboxes, and the
// reason cache (nil when there is none).
type runtimeView struct {
	// kuscia: convert as kuscia's agent does (AsKusciaAgent).
	kuscia    bool
	instances []*pkgcontainer.Status
	active    []*pkgcontainer.Status
	sandboxes []*runtimeapi.PodSandboxStatus
	ips       []string
	reasons   *kri.ReasonCache
}

// newRuntimeView normalises status. The kubelet's runtime returns container
// instances newest first and the kubelet relies on it in places
// (pkgcontainer.PodStatus.FindContainerStatusByName takes the first match);
// a KRI provider returns them in any order, so they are sorted here once, by
// CreatedAt, newest first. The sort is stable: instances with equal CreatedAt
// (zero timestamps included) keep the order the provider gave, which is the
// order the kubelet's own tests rely on. The slice is a copy; status is not
// modified.
func newRuntimeView(status *pkgcontainer.PodStatus, reasons *kri.ReasonCache) runtimeView {
	var v runtimeView
	// A zero ReasonCache has no backing cache and panics on Get; it records
	// nothing, so it is treated as no cache at all.
	if reasons != nil && *reasons != (kri.ReasonCache{}) {
		v.reasons = reasons
	}
	if status == nil {
		return v
	}
	v.ips = status.IPs
	v.instances = make([]*pkgcontainer.Status, 0, len(status.ContainerStatuses))
	for _, cs := range status.ContainerStatuses {
		if cs != nil {
			v.instances = append(v.instances, cs)
		}
	}
	slices.SortStableFunc(v.instances, func(a, b *pkgcontainer.Status) int {
		return b.CreatedAt.Compare(a.CreatedAt)
	})
	for _, cs := range status.ActiveContainerStatuses {
		if cs != nil {
			v.active = append(v.active, cs)
		}
	}
	for _, sb := range status.SandboxStatuses {
		if sb != nil {
			v.sandboxes = append(v.sandboxes, sb)
		}
	}
	return v
}

// newestTwo returns the newest instance of the container named name and the
// one before it (the instance the newest replaced), each nil when missing.
// Older instances do not count, as in the kubelet's
// convertToAPIContainerStatuses.
func (v *runtimeView) newestTwo(name string) (newest, previous *pkgcontainer.Status) {
	for _, cs := range v.instances {
		if cs.Name != name {
			continue
		}
		if newest == nil {
			newest = cs
			continue
		}
		return newest, cs
	}
	return newest, nil
}

// newest returns the newest instance of the container named name, or nil.
func (v *runtimeView) newest(name string) *pkgcontainer.Status {
	n, _ := v.newestTwo(name)
	return n
}

// reason returns the failure recorded for the latest start of container name.
func (v *runtimeView) reason(podUID types.UID, name string) (*kri.ReasonItem, bool) {
	if v.reasons == nil {
		return nil, false
	}
	return v.reasons.Get(podUID, name)
}

// anyRegularCreated reports whether the newest instance of some app
// container has been created, which tells that the init containers have
// completed (the kubelet's kuberuntime.HasAnyRegularContainerCreated).
func (v *runtimeView) anyRegularCreated(spec *v1.PodSpec) bool {
	for i := range spec.Containers {
		cs := v.newest(spec.Containers[i].Name)
		if cs == nil {
			continue
		}
		switch cs.State {
		case pkgcontainer.ContainerStateCreated, pkgcontainer.ContainerStateRunning, pkgcontainer.ContainerStateExited:
			return true
		}
	}
	return false
}

// podHasInitialized reports whether an app container has been created in
// the pod's current sandbox (the kubelet's
// pkgcontainer.HasAnyActiveRegularContainerStarted, which reads
// ActiveContainerStatuses). A KRI provider may leave ActiveContainerStatuses
// empty, so when it is empty a running app container counts (a running
// container lives in the ready sandbox), and a provider without sandboxes (a
// remote backend, where the pod has a single generation) counts any app
// container instance.
func (v *runtimeView) podHasInitialized(spec *v1.PodSpec) bool {
	isApp := func(name string) bool {
		for i := range spec.Containers {
			if spec.Containers[i].Name == name {
				return true
			}
		}
		return false
	}
	if len(v.active) > 0 {
		for _, cs := range v.active {
			if isApp(cs.Name) {
				return true
			}
		}
		return false
	}
	for _, cs := range v.instances {
		if isApp(cs.Name) && (len(v.sandboxes) == 0 || cs.State == pkgcontainer.ContainerStateRunning) {
			return true
		}
	}
	return false
}
