package fake_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
)

// withResources returns c with CPU and memory requests and limits.
func withResources(c v1.Container, cpuReq, cpuLim, memReq, memLim string) v1.Container {
	c.Resources = v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpuReq), v1.ResourceMemory: resource.MustParse(memReq)},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpuLim), v1.ResourceMemory: resource.MustParse(memLim)},
	}
	return c
}

// resized returns a copy of pod whose container 0 has the given resources.
func resized(pod *v1.Pod, cpuReq, cpuLim, memReq, memLim string) *v1.Pod {
	out := pod.DeepCopy()
	out.Spec.Containers[0] = withResources(out.Spec.Containers[0], cpuReq, cpuLim, memReq, memLim)
	return out
}

// expectResources fails unless st reports the given CPU limit and memory
// limit.
func expectResources(t *testing.T, st *pkgcontainer.Status, cpuLim, memLim string) {
	t.Helper()
	r := st.Resources
	if r == nil || r.CPULimit == nil || r.MemoryLimit == nil {
		t.Fatalf("container %s reports resources %+v, want cpu limit %s and memory limit %s", st.Name, r, cpuLim, memLim)
	}
	if r.CPULimit.Cmp(resource.MustParse(cpuLim)) != 0 || r.MemoryLimit.Cmp(resource.MustParse(memLim)) != 0 {
		t.Errorf("container %s reports cpu limit %s and memory limit %s, want %s and %s", st.Name, r.CPULimit, r.MemoryLimit, cpuLim, memLim)
	}
}

func TestResizeInPlace(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []fake.Option
	}{{"own state", nil}, {"kubelet semantics", []fake.Option{fake.WithKubeletSemantics()}}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.opts...)
			sub := f.p.Subscribe(64)
			defer sub.Close()
			pod := newPod("web", v1.RestartPolicyNever, withResources(container("app", "sh", "-c", "trap 'exit 143' TERM; sleep infinity & wait"), "250m", "500m", "64Mi", "128Mi"))
			f.mustSync(pod)
			before := f.status(pod).FindContainerStatusByName("app")
			expectResources(t, before, "500m", "128Mi")

			pod = resized(pod, "500m", "1", "128Mi", "256Mi")
			f.mustSync(pod)
			st := f.status(pod)
			after := st.FindContainerStatusByName("app")
			if !running(after) || after.ID != before.ID || after.RestartCount != 0 || len(st.ContainerStatuses) != 1 {
				t.Fatalf("after the resize: %+v (%d instances), want %v still running, no restart", after, len(st.ContainerStatuses), before.ID)
			}
			expectResources(t, after, "1", "256Mi")
			if after.Resources.CPURequest.Cmp(resource.MustParse("500m")) != 0 || after.Resources.MemoryRequest.Cmp(resource.MustParse("128Mi")) != 0 {
				t.Errorf("requests reported %s %s, want 500m 128Mi", after.Resources.CPURequest, after.Resources.MemoryRequest)
			}
			var resizes int
			for len(sub.C) > 0 {
				if e := <-sub.C; e.Type == fake.EventContainerResized {
					resizes++
					if e.ContainerID != before.ID.ID || e.Container != "app" {
						t.Errorf("resize event %+v names another container", e)
					}
				}
			}
			if resizes != 1 {
				t.Errorf("got %d ContainerResized events, want 1", resizes)
			}

			// The API status reports what the container runs with.
			var api v1.PodStatus
			f.p.RefreshPodStatus(pod, &api)
			cs := api.ContainerStatuses[0]
			if cs.Resources == nil || cs.Resources.Limits.Cpu().Cmp(resource.MustParse("1")) != 0 ||
				cs.AllocatedResources.Memory().Cmp(resource.MustParse("128Mi")) != 0 {
				t.Errorf("API status resources %+v allocated %v, want cpu limit 1 and 128Mi allocated memory", cs.Resources, cs.AllocatedResources)
			}

			// An unchanged pod resizes nothing.
			f.mustSync(pod)
			for len(sub.C) > 0 {
				if e := <-sub.C; e.Type == fake.EventContainerResized {
					t.Errorf("a sync with unchanged resources resized again: %+v", e)
				}
			}
		})
	}
}

func TestResizeRestartContainer(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []fake.Option
	}{{"own state", nil}, {"kubelet semantics", []fake.Option{fake.WithKubeletSemantics()}}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.opts...)
			c := withResources(container("app", "sh", "-c", "trap 'exit 143' TERM; sleep infinity & wait"), "250m", "500m", "64Mi", "128Mi")
			c.ResizePolicy = []v1.ContainerResizePolicy{
				{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired},
				{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer},
			}
			pod := newPod("web", v1.RestartPolicyNever, c)
			f.mustSync(pod)
			before := f.status(pod).FindContainerStatusByName("app")

			// A CPU change needs no restart even here.
			pod = resized(pod, "500m", "1", "64Mi", "128Mi")
			f.mustSync(pod)
			if got := f.status(pod).FindContainerStatusByName("app"); got.ID != before.ID {
				t.Fatalf("a CPU resize (policy NotRequired) restarted the container: %v, was %v", got.ID, before.ID)
			}

			pod = resized(pod, "500m", "1", "128Mi", "256Mi")
			f.mustSync(pod)
			st := f.status(pod)
			after := st.FindContainerStatusByName("app")
			if !running(after) || after.ID == before.ID || after.RestartCount != 1 {
				t.Fatalf("after a memory resize (policy RestartContainer): %+v, want a new running instance with restart count 1 (restart policy Never notwithstanding)", after)
			}
			expectResources(t, after, "1", "256Mi")
			var old *pkgcontainer.Status
			for _, s := range st.ContainerStatuses {
				if s.ID == before.ID {
					old = s
				}
			}
			if old == nil || old.State != pkgcontainer.ContainerStateExited {
				t.Errorf("the instance killed for the resize: %+v, want exited", old)
			}
			f.mustSync(pod)
			if got := f.status(pod).FindContainerStatusByName("app"); got.ID != after.ID {
				t.Errorf("a later sync restarted the container again: %v, want %v", got.ID, after.ID)
			}
		})
	}
}
