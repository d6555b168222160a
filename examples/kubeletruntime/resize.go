package kubeletruntime

import (
	"fmt"
	"math"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// In-place resize. The runtime manager resizes a running container itself
// (computePodResizeAction, then doPodResizeAction: UpdateContainerResources
// for a NotRequired resize, a restart for RestartContainer), but first
// reads and writes the pod-level cgroup through the container manager's
// PodContainerManager, which in cm's stub fails ("not implemented"), so
// that every resize would fail. The provider's container manager is the
// stub with a PodContainerManager that keeps each pod's cgroup
// configuration in memory instead: made from the pod as SyncPod first sees
// it (cm.ResourceConfigForPod, as the kubelet's pcm.EnsureExists in its
// SyncPod), then changed only by the runtime manager's SetPodCgroupConfig.
// The provider manages no real pod cgroup (the stub never did): under a
// real runtime, the containers' own resources are what is applied. The
// runtime manager checks a memory limit decrease against the pod's usage,
// which this provider cannot read (PodCPUAndMemoryStats), so such a resize
// fails and the container keeps its resources, as the kubelet's runtime
// leaves it when the check fails.

// containerManager is cm's stub container manager whose pod container
// manager is podCgroups.
type containerManager struct {
	cm.ContainerManager
	pods *podCgroups
}

func (c *containerManager) NewPodContainerManager() cm.PodContainerManager { return c.pods }

// podCgroups is the stub's PodContainerManager with each pod's cgroup
// configuration kept in memory. It is safe for concurrent use.
type podCgroups struct {
	cm.PodContainerManager
	mu      sync.Mutex
	configs map[types.UID]*cm.ResourceConfig
}

func newContainerManager() *containerManager {
	stub := cm.NewStubContainerManager()
	return &containerManager{
		ContainerManager: stub,
		pods:             &podCgroups{PodContainerManager: stub.NewPodContainerManager(), configs: map[types.UID]*cm.ResourceConfig{}},
	}
}

// Exists reports whether the pod's configuration is recorded.
func (p *podCgroups) Exists(pod *v1.Pod) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.configs[pod.UID]
	return ok
}

// EnsureExists records the configuration of pod's cgroup, as the kubelet
// creates the cgroup at the pod's first sync, unless it is recorded
// already: CPU quota and memory the pod does not limit are unlimited, as a
// cgroup without a limit reads back.
func (p *podCgroups) EnsureExists(_ klog.Logger, pod *v1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.configs[pod.UID]; ok {
		return nil
	}
	rc := cm.ResourceConfigForPod(pod, false, uint64(cpuCFSQuotaPeriod.Microseconds()), false, kubeletconfig.NoneMemoryReservationPolicy)
	if rc == nil {
		rc = &cm.ResourceConfig{}
	}
	if rc.Memory == nil {
		rc.Memory = new(int64(math.MaxInt64))
	}
	if rc.CPUQuota == nil {
		rc.CPUQuota = new(int64(-1))
	}
	if rc.CPUShares == nil {
		rc.CPUShares = new(uint64(cm.MinShares))
	}
	if rc.CPUPeriod == nil {
		rc.CPUPeriod = new(uint64(cpuCFSQuotaPeriod.Microseconds()))
	}
	p.configs[pod.UID] = rc
	return nil
}

// GetPodCgroupConfig returns the recorded configuration of the pod's
// cgroup for resource (CPU or memory).
func (p *podCgroups) GetPodCgroupConfig(pod *v1.Pod, resource v1.ResourceName) (*cm.ResourceConfig, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rc, ok := p.configs[pod.UID]
	if !ok {
		return nil, fmt.Errorf("kubeletruntime: no cgroup configuration of pod %s recorded (SyncPod records it)", podRef(pod))
	}
	switch resource {
	case v1.ResourceCPU:
		return &cm.ResourceConfig{CPUShares: new(*rc.CPUShares), CPUQuota: new(*rc.CPUQuota), CPUPeriod: new(*rc.CPUPeriod)}, nil
	case v1.ResourceMemory:
		return &cm.ResourceConfig{Memory: new(*rc.Memory)}, nil
	}
	return nil, fmt.Errorf("kubeletruntime: pod %s: resource %q has no cgroup configuration", podRef(pod), resource)
}

// SetPodCgroupConfig records the fields set in rc.
func (p *podCgroups) SetPodCgroupConfig(_ klog.Logger, pod *v1.Pod, rc *cm.ResourceConfig) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur, ok := p.configs[pod.UID]
	if !ok {
		return fmt.Errorf("kubeletruntime: no cgroup configuration of pod %s recorded (SyncPod records it)", podRef(pod))
	}
	if rc.Memory != nil {
		cur.Memory = new(*rc.Memory)
	}
	if rc.CPUShares != nil {
		cur.CPUShares = new(*rc.CPUShares)
	}
	if rc.CPUQuota != nil {
		cur.CPUQuota = new(*rc.CPUQuota)
	}
	if rc.CPUPeriod != nil {
		cur.CPUPeriod = new(*rc.CPUPeriod)
	}
	return nil
}

// prune forgets the configurations of pods that removed reports removed
// and of which all, what the runtime still has, holds nothing.
func (p *podCgroups) prune(all []*pkgcontainer.Pod, removed func(types.UID) bool) {
	left := make(map[types.UID]bool, len(all))
	for _, pod := range all {
		left[pod.ID] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for uid := range p.configs {
		if !left[uid] && removed(uid) {
			delete(p.configs, uid)
		}
	}
}
