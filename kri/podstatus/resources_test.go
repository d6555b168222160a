package podstatus_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// The cases of the kubelet's TestConvertToAPIContainerStatusesForResources
// (pkg/kubelet/kubelet_pods_test.go), by name. There the allocation
// manager holds the allocated resources; here the pod's spec is the
// allocation. The previous status's instance has another container ID, as
// there (its OldStatus has none), so that nothing is preserved from it.
// One case departs: "BestEffortQoSPod" gets no Resources where the kubelet
// reports an empty ResourceRequirements (see the package doc).
func TestConvertToAPIContainerStatusesForResources(t *testing.T) {
	const from = "TestConvertToAPIContainerStatusesForResources/"
	cpu1mem1 := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")}
	cpu2mem2 := v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("2Gi")}
	withStorage := func(l v1.ResourceList) v1.ResourceList {
		out := l.DeepCopy()
		out[v1.ResourceEphemeralStorage] = resource.MustParse("2Gi")
		out[v1.ResourceStorage] = resource.MustParse("2Gi")
		return out
	}
	cpu1mem1s, cpu2mem2s := withStorage(cpu1mem1), withStorage(cpu2mem2)
	extended := func(l v1.ResourceList) v1.ResourceList {
		out := l.DeepCopy()
		for _, name := range []v1.ResourceName{v1.ResourceMemory, v1.ResourceCPU} {
			if _, ok := out[name]; !ok {
				out[name] = resource.MustParse("0")
			}
		}
		out["dummy.io/dummy"] = resource.MustParse("1")
		return out
	}
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	old := func(r *v1.ResourceRequirements) v1.ContainerStatus {
		return v1.ContainerStatus{Name: "ctr0", Image: "img", ImageID: "img1234", State: running, Resources: r}
	}
	memOnly := v1.ResourceList{v1.ResourceMemory: resource.MustParse("100M")}
	belowMin := v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("100M"), v1.ResourceCPU: resource.MustParse("1m")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("5m")},
	}

	for name, tc := range map[string]struct {
		state     pkgcontainer.State // Running when empty
		resources v1.ResourceRequirements
		allocated *v1.ResourceRequirements         // resources when nil
		actual    *pkgcontainer.ContainerResources // resources' when nil
		old       v1.ContainerStatus
		want      *v1.ResourceRequirements
		wantAlloc v1.ResourceList
	}{
		"GuaranteedQoSPod with CPU and memory CRI status": {
			resources: v1.ResourceRequirements{Limits: cpu1mem1, Requests: cpu1mem1},
			old:       old(&v1.ResourceRequirements{Limits: cpu1mem1, Requests: cpu1mem1}),
			want:      &v1.ResourceRequirements{Limits: cpu1mem1, Requests: cpu1mem1}, wantAlloc: cpu1mem1,
		},
		"BurstableQoSPod with CPU and memory CRI status": {
			resources: v1.ResourceRequirements{Limits: cpu1mem1, Requests: cpu1mem1},
			old:       old(&v1.ResourceRequirements{Limits: cpu2mem2, Requests: cpu1mem1}),
			want:      &v1.ResourceRequirements{Limits: cpu1mem1, Requests: cpu1mem1}, wantAlloc: cpu1mem1,
		},
		"BurstableQoSPod without CPU": {
			resources: v1.ResourceRequirements{Requests: memOnly},
			actual:    &pkgcontainer.ContainerResources{CPURequest: resource.NewMilliQuantity(2, resource.DecimalSI)},
			old:       old(&v1.ResourceRequirements{Requests: memOnly}),
			want:      &v1.ResourceRequirements{Requests: memOnly}, wantAlloc: memOnly,
		},
		"BurstableQoSPod with below min CPU": {
			resources: belowMin,
			actual: &pkgcontainer.ContainerResources{
				CPURequest: resource.NewMilliQuantity(2, resource.DecimalSI),
				CPULimit:   resource.NewMilliQuantity(10, resource.DecimalSI),
			},
			old:  old(belowMin.DeepCopy()),
			want: belowMin.DeepCopy(), wantAlloc: belowMin.Requests,
		},
		"GuaranteedQoSPod with CPU and memory CRI status, with ephemeral storage": {
			resources: v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s},
			old:       old(&v1.ResourceRequirements{Limits: cpu1mem1, Requests: cpu1mem1}),
			want:      &v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s}, wantAlloc: cpu1mem1s,
		},
		"BurstableQoSPod with CPU and memory CRI status, with ephemeral storage": {
			resources: v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s},
			old:       old(&v1.ResourceRequirements{Limits: cpu2mem2s, Requests: cpu2mem2s}),
			want:      &v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s}, wantAlloc: cpu1mem1s,
		},
		"BurstableQoSPod with CPU and memory CRI status, with ephemeral storage, nil resources in OldStatus": {
			resources: v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s},
			old:       old(nil),
			want:      &v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s}, wantAlloc: cpu1mem1s,
		},
		"BestEffortQoSPod": {
			old:  old(&v1.ResourceRequirements{}),
			want: nil, // the kubelet: &v1.ResourceRequirements{}
		},
		"BestEffort QoSPod with extended resources": {
			resources: v1.ResourceRequirements{Requests: extended(v1.ResourceList{})},
			old:       old(&v1.ResourceRequirements{}),
			want:      &v1.ResourceRequirements{Requests: extended(v1.ResourceList{})}, wantAlloc: extended(v1.ResourceList{}),
		},
		"BurstableQoSPod with extended resources": {
			resources: v1.ResourceRequirements{Requests: extended(cpu1mem1)},
			old:       old(&v1.ResourceRequirements{}),
			want:      &v1.ResourceRequirements{Requests: extended(cpu1mem1)}, wantAlloc: extended(cpu1mem1),
		},
		"BurstableQoSPod with storage, ephemeral storage and extended resources": {
			resources: v1.ResourceRequirements{Requests: extended(cpu1mem1s)},
			old:       old(&v1.ResourceRequirements{}),
			want:      &v1.ResourceRequirements{Requests: extended(cpu1mem1s)}, wantAlloc: extended(cpu1mem1s),
		},
		"GuaranteedQoSPod with extended resources": {
			resources: v1.ResourceRequirements{Requests: extended(cpu1mem1), Limits: extended(cpu1mem1)},
			old:       old(&v1.ResourceRequirements{}),
			want:      &v1.ResourceRequirements{Requests: extended(cpu1mem1), Limits: extended(cpu1mem1)}, wantAlloc: extended(cpu1mem1),
		},
		"newly created Pod": {
			state:     pkgcontainer.ContainerStateCreated,
			resources: v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s},
			want:      &v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s}, wantAlloc: cpu1mem1s,
		},
		"newly running Pod": {
			resources: v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s},
			old:       v1.ContainerStatus{Name: "ctr0", Image: "img", ImageID: "img1234", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}},
			want:      &v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s}, wantAlloc: cpu1mem1s,
		},
		"newly terminated Pod": {
			// What the instance ran with no longer counts: it exited.
			state:     pkgcontainer.ContainerStateExited,
			resources: v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s},
			allocated: &v1.ResourceRequirements{Limits: cpu2mem2s, Requests: cpu2mem2s},
			old:       old(&v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s}),
			want:      &v1.ResourceRequirements{Limits: cpu2mem2s, Requests: cpu2mem2s}, wantAlloc: cpu2mem2s,
		},
		"resizing Pod": {
			resources: v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s},
			allocated: &v1.ResourceRequirements{Limits: cpu2mem2s, Requests: cpu2mem2s},
			old:       old(&v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s}),
			want:      &v1.ResourceRequirements{Limits: cpu1mem1s, Requests: cpu1mem1s}, wantAlloc: cpu2mem2s,
		},
	} {
		t.Run(name, func(t *testing.T) {
			spec := v1.Container{Name: "ctr0", Image: "img", Resources: tc.resources}
			if tc.allocated != nil {
				spec.Resources = *tc.allocated
			}
			actual := tc.actual
			if actual == nil {
				actual = &pkgcontainer.ContainerResources{
					MemoryLimit:   tc.resources.Limits.Memory(),
					CPULimit:      tc.resources.Limits.Cpu(),
					MemoryRequest: tc.resources.Requests.Memory(),
					CPURequest:    tc.resources.Requests.Cpu(),
				}
			}
			state := cmpOr(tc.state, pkgcontainer.ContainerStateRunning)
			in := instance("ctr0", "ctr0", 0, state)
			in.Image, in.ImageRef, in.Resources = "img", "img1234", actual
			if state != pkgcontainer.ContainerStateCreated {
				in.StartedAt = at(0)
			}
			if state == pkgcontainer.ContainerStateExited {
				in.FinishedAt = at(1)
			}
			pod := mkPod(v1.PodSpec{Containers: []v1.Container{spec}}, v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{tc.old}})
			got := podstatus.Generate(pod, runtimeStatus(in), nil).ContainerStatuses[0]
			if !equality.Semantic.DeepEqual(got.AllocatedResources, tc.wantAlloc) {
				t.Errorf("%s%s: AllocatedResources = %v, want %v", from, name, got.AllocatedResources, tc.wantAlloc)
			}
			if !equality.Semantic.DeepEqual(got.Resources, tc.want) {
				t.Errorf("%s%s: Resources = %v, want %v", from, name, got.Resources, tc.want)
			}
		})
	}
}

// A running instance the runtime reports no resources for keeps, under
// the same container ID, the resources the previous status showed for it
// (the kubelet's preserveOldResourcesValue), and reports the allocated
// ones otherwise.
func TestResourcesPreservedWhileTheRuntimeReportsNone(t *testing.T) {
	cpu1 := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")}
	cpu2 := v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("2Gi")}
	spec := v1.Container{Name: "app", Image: "img", Resources: v1.ResourceRequirements{Requests: cpu2, Limits: cpu2}}
	in := runningI("app", "c1", 0)
	for _, tc := range []struct {
		name string
		old  v1.ContainerStatus
		want v1.ResourceList
	}{
		{"same instance, running before", v1.ContainerStatus{Name: "app", ContainerID: cid("c1"), State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
			Resources: &v1.ResourceRequirements{Requests: cpu1, Limits: cpu1}}, cpu1},
		{"another instance", v1.ContainerStatus{Name: "app", ContainerID: cid("c0"), State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
			Resources: &v1.ResourceRequirements{Requests: cpu1, Limits: cpu1}}, cpu2},
		{"no previous status", v1.ContainerStatus{Name: "other"}, cpu2},
	} {
		pod := mkPod(v1.PodSpec{Containers: []v1.Container{spec}}, v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{tc.old}})
		got := podstatus.Generate(pod, runtimeStatus(in), nil).ContainerStatuses[0].Resources
		if got == nil || !equality.Semantic.DeepEqual(got.Limits, tc.want) || !equality.Semantic.DeepEqual(got.Requests, tc.want) {
			t.Errorf("%s: Resources = %v, want requests and limits %v", tc.name, got, tc.want)
		}
	}
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
