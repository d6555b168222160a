package conformance

import (
	"fmt"
	"strings"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// The in-place resize specs (KRI-POD-080 to 082). A node agent hands SyncPod
// the pod with the resources it allocated (the kubelet's pod worker hands
// its runtime the allocated pod, pod_workers.go); the provider resizes
// what runs, as the kubelet's runtime manager does (computePodResizeAction,
// doPodResizeAction). The resources grow (a smaller memory limit needs the
// container's usage, which the kubelet checks first) and are chosen to
// survive a CRI runtime's round trip: CPU shares and CFS quota give back
// the same millicores, and memory limits are whole bytes.
var podspecResizeSpecs = []*specDef{
	{id: "KRI-POD-080", level: Must, kind: kindPod, groups: []string{"pod-spec", "resize"}, caps: []Capability{CapResize}, pod: podResizeInPlace,
		text: "SyncPod of a pod whose running container's CPU and memory changed, with resize policy NotRequired, resizes it in place: it keeps running with the same ID and restart count, and GetPodStatus reports in its Resources the resources it runs with, the new ones once resized"},
	{id: "KRI-POD-081", level: Must, kind: kindPod, groups: []string{"pod-spec", "resize"}, caps: []Capability{CapResize}, pod: podResizeRestart,
		text: "SyncPod of a pod whose running container's memory changed, with resize policy RestartContainer for memory, restarts it whatever the pod's restart policy: a new instance with one more restart, which reports the new resources"},
	{id: "KRI-POD-082", level: Should, kind: kindPod, groups: []string{"pod-spec", "resize"}, caps: []Capability{CapResize}, pod: podResizeAPIStatus,
		text: "RefreshPodStatus keeps the CPU and memory Resources the agent computed from GetPodStatus for a running container resized in place"},
}

// The resources of the resize specs: before, and after the resize.
var (
	resizeBefore = resourcesOf("250m", "500m", "64Mi", "128Mi")
	resizeAfter  = resourcesOf("500m", "1", "128Mi", "256Mi")
	// resizeMemory changes only the memory of resizeBefore.
	resizeMemory = resourcesOf("250m", "500m", "128Mi", "256Mi")
)

// resourcesOf returns CPU and memory requests and limits.
func resourcesOf(cpuReq, cpuLim, memReq, memLim string) v1.ResourceRequirements {
	return v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpuReq), v1.ResourceMemory: resource.MustParse(memReq)},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpuLim), v1.ResourceMemory: resource.MustParse(memLim)},
	}
}

// resizePod returns a pod running one container, app, that runs until it
// is killed, with resizeBefore and the given resize policies for CPU and
// memory.
func (e *podEnv) resizePod(name string, policy v1.RestartPolicy, cpu, memory v1.ResourceResizeRestartPolicy) *v1.Pod {
	c := named("app", e.w().RunsUntilKilled())
	c.Resources = *resizeBefore.DeepCopy()
	c.ResizePolicy = []v1.ContainerResizePolicy{
		{ResourceName: v1.ResourceCPU, RestartPolicy: cpu},
		{ResourceName: v1.ResourceMemory, RestartPolicy: memory},
	}
	return e.newPod(name, policy, c)
}

// withResources returns a copy of pod (same UID: the same pod, updated)
// whose container app has r.
func withResources(pod *v1.Pod, r v1.ResourceRequirements) *v1.Pod {
	out := pod.DeepCopy()
	for i := range out.Spec.Containers {
		if out.Spec.Containers[i].Name == "app" {
			out.Spec.Containers[i].Resources = *r.DeepCopy()
		}
	}
	return out
}

// expectResources checks that st reports the resources of want in its
// Resources: at least one of the CPU request and limit, and one of the
// memory request and limit (a CRI runtime reports the CPU request as
// shares and the memory limit; the CPU limit only with CFS quota, the
// memory request only from the kubelet's own record), each equal to
// want's.
func expectResources(g gomega.Gomega, st *pkgcontainer.Status, want v1.ResourceRequirements, when string) {
	r := st.Resources
	g.Expect(r).NotTo(gomega.BeNil(), "container %s (%s) %s reports no Resources; want %s", st.Name, st.ID, when, describeResources(want))
	var cpu, memory int
	check := func(got *resource.Quantity, l v1.ResourceList, name v1.ResourceName, what string, n *int) {
		if got == nil {
			return
		}
		*n++
		w := l[name]
		g.Expect(got.Cmp(w)).To(gomega.BeZero(), "container %s (%s) %s reports %s %s; want %s (wanted %s)", st.Name, st.ID, when, what, got, w.String(), describeResources(want))
	}
	check(r.CPURequest, want.Requests, v1.ResourceCPU, "CPU request", &cpu)
	check(r.CPULimit, want.Limits, v1.ResourceCPU, "CPU limit", &cpu)
	check(r.MemoryRequest, want.Requests, v1.ResourceMemory, "memory request", &memory)
	check(r.MemoryLimit, want.Limits, v1.ResourceMemory, "memory limit", &memory)
	g.Expect(cpu).NotTo(gomega.BeZero(), "container %s (%s) %s reports no CPU request or limit in its Resources; want %s", st.Name, st.ID, when, describeResources(want))
	g.Expect(memory).NotTo(gomega.BeZero(), "container %s (%s) %s reports no memory request or limit in its Resources; want %s", st.Name, st.ID, when, describeResources(want))
}

// describeResources renders the CPU and memory requests and limits of r.
func describeResources(r v1.ResourceRequirements) string {
	var parts []string
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		req, lim := r.Requests[name], r.Limits[name]
		parts = append(parts, fmt.Sprintf("%s request %s limit %s", name, req.String(), lim.String()))
	}
	return strings.Join(parts, ", ")
}

func podResizeInPlace(e *podEnv) {
	pod := e.resizePod("inplace", v1.RestartPolicyAlways, v1.NotRequired, v1.NotRequired)
	e.step("syncing a pod whose container runs with " + describeResources(resizeBefore))
	st := e.syncUntil(pod, "container app running and reporting the resources it was started with", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		r := runningOf(st, "app")
		g.Expect(r).NotTo(gomega.BeNil(), "container app is not running: %s", describeStatus(st))
		expectResources(g, r, resizeBefore, "before the resize")
	})
	first := runningOf(st, "app")

	resized := withResources(pod, resizeAfter)
	e.step("syncing the same pod (same UID) with " + describeResources(resizeAfter) + ", resize policy NotRequired")
	sameInstance := func(st *pkgcontainer.PodStatus) *pkgcontainer.Status {
		for _, in := range instancesOf(st, "app") {
			if in.ID != first.ID {
				e.failf("container app was restarted for a resize whose policy is NotRequired: instance %s (restart count %d) next to %s; want %s resized in place: %s",
					in.ID, in.RestartCount, first.ID, first.ID, describeStatus(st))
			}
		}
		r := runningOf(st, "app")
		if r == nil {
			e.failf("container app (%s) stopped running after a resize whose policy is NotRequired: %s", first.ID, describeStatus(st))
		}
		if r.RestartCount != first.RestartCount {
			e.failf("container app (%s) reports restart count %d after its resize, was %d: %s", r.ID, r.RestartCount, first.RestartCount, describeStatus(st))
		}
		return r
	}
	e.syncUntil(resized, "container app ("+first.ID.ID+") running with the new resources", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		expectResources(g, sameInstance(st), resizeAfter, "after the resize")
	})
	e.syncHolding(resized, "container app stays resized and running, same ID", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		expectResources(g, sameInstance(st), resizeAfter, "after the resize")
	})
}

func podResizeRestart(e *podEnv) {
	pod := e.resizePod("restart", v1.RestartPolicyNever, v1.NotRequired, v1.RestartContainer)
	e.step("syncing a pod (restart policy Never) whose container runs with " + describeResources(resizeBefore))
	st := e.syncUntilRunning(pod)
	first := runningOf(st, "app")

	resized := withResources(pod, resizeMemory)
	e.step("syncing the same pod with " + describeResources(resizeMemory) + ", resize policy RestartContainer for memory")
	var next *pkgcontainer.Status
	e.syncUntil(resized, "container app restarted, with the new resources", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		r := runningOf(st, "app")
		g.Expect(r).NotTo(gomega.BeNil(), "container app is not running: %s", describeStatus(st))
		g.Expect(r.ID).NotTo(gomega.Equal(first.ID), "container app (%s) was not restarted for a resize whose policy is RestartContainer: %s", first.ID, describeStatus(st))
		g.Expect(r.RestartCount).To(gomega.Equal(first.RestartCount+1), "container app restarted for its resize as %s with restart count %d; want %d: %s", r.ID, r.RestartCount, first.RestartCount+1, describeStatus(st))
		for _, in := range instancesOf(st, "app") {
			g.Expect(in.ID == first.ID && in.State == pkgcontainer.ContainerStateRunning).To(gomega.BeFalse(), "the instance %s replaced for the resize still runs next to %s: %s", first.ID, r.ID, describeStatus(st))
		}
		expectResources(g, r, resizeMemory, "after its restart for the resize")
		next = r
	})
	e.syncHolding(resized, "the restarted container app keeps running, same ID", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		r := runningOf(st, "app")
		g.Expect(r).NotTo(gomega.BeNil(), "container app (%s) stopped running: %s", next.ID, describeStatus(st))
		g.Expect(r.ID).To(gomega.Equal(next.ID), "container app was restarted again (%s, was %s): %s", r.ID, next.ID, describeStatus(st))
	})
}

func podResizeAPIStatus(e *podEnv) {
	pod := e.resizePod("api", v1.RestartPolicyAlways, v1.NotRequired, v1.NotRequired)
	e.step("syncing a pod whose container runs with " + describeResources(resizeBefore) + ", then the same pod with " + describeResources(resizeAfter))
	e.syncUntilRunning(pod)
	resized := withResources(pod, resizeAfter)
	e.sync(resized)
	e.syncUntilRunning(resized)
	// RefreshPodStatus reads the provider's state now: the status it is
	// handed is built from GetPodStatus of the same moment.
	st := e.status(resized)
	e.step("building the API status as the agent does (the kubelet's conversion), then handing it to RefreshPodStatus")
	computed := podstatus.Generate(resized, st, e.rc)
	want := apiStatusOf(computed.ContainerStatuses, "app")
	if want == nil || want.Resources == nil {
		e.failf("the agent's conversion of GetPodStatus gave container app no Resources: %+v", computed.ContainerStatuses)
	}
	ps := *computed.DeepCopy()
	e.refresh(resized, &ps)
	got := apiStatusOf(ps.ContainerStatuses, "app")
	if got == nil {
		e.failf("RefreshPodStatus left no API status of container app: %+v", ps.ContainerStatuses)
	}
	if got.Resources == nil {
		e.failf("RefreshPodStatus left container app (%s) without Resources; the agent computed %s from GetPodStatus", got.ContainerID, describeResources(*want.Resources))
	}
	for _, l := range []struct {
		what      string
		got, want v1.ResourceList
	}{{"requests", got.Resources.Requests, want.Resources.Requests}, {"limits", got.Resources.Limits, want.Resources.Limits}} {
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			g, gok := l.got[name]
			w, wok := l.want[name]
			if gok != wok || g.Cmp(w) != 0 {
				e.failf("RefreshPodStatus changed the %s %s of running container app (%s) to %s; the agent computed %s from GetPodStatus (%s)",
					name, l.what, got.ContainerID, g.String(), w.String(), describeResources(*want.Resources))
			}
		}
	}
}
