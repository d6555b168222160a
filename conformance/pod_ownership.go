package conformance

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The ownership specs (KRI-POD-035, 045): what the provider is handed is the
// caller's and what it returns is the caller's: neither side mutates the
// other's copy.
var podOwnershipSpecs = []*specDef{
	{id: "KRI-POD-035", level: Must, kind: kindPod, groups: []string{"ownership"}, pod: podOwnership,
		note: "The requirement's words were narrowed to what the spec checks (SyncPod's inputs, GetPodStatus's and GetPods' answers); the other methods' inputs are KRI-POD-045's.",
		text: "SyncPod does not mutate the pod and status handed in, and mutating what GetPodStatus and GetPods return does not change their later answers"},
	{id: "KRI-POD-045", alone: true, level: Must, kind: kindPod, groups: []string{"ownership"}, pod: podInputsOwned,
		text: "GetPodStatus, RefreshPodStatus, CleanupPods, KillPod and DeletePod do not mutate what they are handed, and SyncPod does not keep the pod: changing it afterwards changes no answer"},
}

// copyRunningPod copies rp deeply enough to notice a provider mutating it.
func copyRunningPod(rp pkgcontainer.Pod) pkgcontainer.Pod {
	cp := rp
	cp.Containers, cp.Sandboxes = nil, nil
	for _, c := range rp.Containers {
		cc := *c
		cp.Containers = append(cp.Containers, &cc)
	}
	for _, c := range rp.Sandboxes {
		cc := *c
		cp.Sandboxes = append(cp.Sandboxes, &cc)
	}
	return cp
}

// unchanged fails the spec when got differs from want, the copy taken before
// method was handed got.
func (e *podEnv) unchanged(method, what string, want, got any) {
	if !reflect.DeepEqual(want, got) {
		e.failf("%s mutated the %s it was handed:\nbefore: %+v\nafter:  %+v", method, what, want, got)
	}
}

// changedImage is the image KRI-POD-045 puts into the pod after handing it
// to SyncPod.
const changedImage = "kri-conformance/changed:1"

func podInputsOwned(e *podEnv) {
	e.step("running a pod, then handing each method a pod, statuses and arguments the spec keeps copies of")
	pod := e.newPod("inputs", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	want := pod.DeepCopy()

	// A pod worker's copy, handed to SyncPod and changed afterwards: the
	// provider must not have kept it.
	handed := pod.DeepCopy()
	if err := e.syncPod(handed, e.lastStatus(pod)); err != nil {
		e.skipIfNotSupported("SyncPod", err)
		e.diagnose("SyncPod of pod %s returned an unexpected error: %v (KRI-POD-001 and 003 check this)", podRef(pod), err)
	}
	handed.Name += "-changed"
	handed.Spec.Containers[0].Name = "changed"
	handed.Spec.Containers[0].Image = changedImage

	st := e.status(pod)
	e.unchanged("GetPodStatus", "pod", want, pod)
	for _, c := range st.ContainerStatuses {
		if c.Name != "app" || sameImage(c.Image, changedImage) {
			e.failf("after the pod handed to SyncPod was changed (container renamed to changed, image %s), GetPodStatus reports container %s with image %q: the provider kept the caller's pod; %s",
				changedImage, c.Name, c.Image, describeStatus(st))
		}
	}
	ps := e.publish(pod, e.status(pod))
	e.unchanged("RefreshPodStatus", "pod", want, pod)
	if apiStatusOf(ps.ContainerStatuses, "changed") != nil || apiStatusOf(ps.ContainerStatuses, "app") == nil {
		e.failf("after the pod handed to SyncPod was changed, RefreshPodStatus names containers %v, want app and not changed: the provider kept the caller's pod", statusNames(ps.ContainerStatuses))
	}
	for _, p := range e.getPods(true) {
		if p != nil && p.ID == pod.UID && p.Name != pod.Name {
			e.failf("after the pod handed to SyncPod was changed, GetPods lists it as %s/%s, want %s", p.Namespace, p.Name, podRef(pod))
		}
	}

	rp := e.runningPod(pod)
	rpWant := copyRunningPod(rp)
	pods := []*v1.Pod{pod}
	running := []*pkgcontainer.Pod{&rp}
	possibly := map[types.UID]sets.Empty{pod.UID: {}}
	e.noError("CleanupPods", e.cleanupPods(pods, running, possibly))
	e.unchanged("CleanupPods", "desired pods", []*v1.Pod{want}, pods)
	e.unchanged("CleanupPods", "running pods", []*pkgcontainer.Pod{&rpWant}, running)
	e.unchanged("CleanupPods", "possibly running pods", map[types.UID]sets.Empty{pod.UID: {}}, possibly)

	grace := *agentGrace(pod)
	handedGrace := grace
	e.noError("KillPod", e.killPod(pod, rp, &handedGrace))
	e.unchanged("KillPod", "pod", want, pod)
	e.unchanged("KillPod", "running pod", rpWant, rp)
	if handedGrace != grace {
		e.failf("KillPod changed the grace period override it was handed from %d to %d", grace, handedGrace)
	}
	e.noError("DeletePod", e.deletePod(pod))
	e.unchanged("DeletePod", "pod", want, pod)
}

// copyStatus copies st deeply enough to notice a provider mutating it.
func copyStatus(st *pkgcontainer.PodStatus) *pkgcontainer.PodStatus {
	if st == nil {
		return nil
	}
	cp := *st
	cp.IPs = slices.Clone(st.IPs)
	cp.ContainerStatuses = copyStatuses(st.ContainerStatuses)
	cp.ActiveContainerStatuses = copyStatuses(st.ActiveContainerStatuses)
	cp.SandboxStatuses = slices.Clone(st.SandboxStatuses)
	return &cp
}

func copyStatuses(in []*pkgcontainer.Status) []*pkgcontainer.Status {
	if in == nil {
		return nil
	}
	out := make([]*pkgcontainer.Status, len(in))
	for i, s := range in {
		if s != nil {
			c := *s
			c.Mounts = slices.Clone(s.Mounts)
			out[i] = &c
		}
	}
	return out
}

func podOwnership(e *podEnv) {
	e.step("running a pod while checking that SyncPod leaves its inputs alone, then mutating what the provider returned")
	pod := e.newPod("owned", v1.RestartPolicyAlways,
		named("app", e.w().RunsUntilKilled()), named("sidecar", e.w().RunsUntilKilled()))
	podCopy := pod.DeepCopy()
	e.untilAsAgent(pod, e.st.t.State, fmt.Sprintf("pod %s running, its inputs untouched", podRef(pod)), func(g gomega.Gomega) {
		in := e.status(pod)
		e.markSynced(pod, in)
		inCopy := copyStatus(in)
		if err := e.syncPod(pod, in); err != nil {
			e.skipIfNotSupported("SyncPod", err)
			e.diagnose("SyncPod of pod %s returned an unexpected error: %v (KRI-POD-001 and 003 check this)", podRef(pod), err)
		}
		if !reflect.DeepEqual(pod, podCopy) {
			e.failf("SyncPod mutated the pod it was handed:\nbefore: %+v\nafter:  %+v", podCopy, pod)
		}
		if !reflect.DeepEqual(in, inCopy) {
			e.failf("SyncPod mutated the status it was handed:\nbefore: %s\nafter:  %s", describeStatus(inCopy), describeStatus(in))
		}
		st := e.status(pod)
		for _, c := range pod.Spec.Containers {
			g.Expect(runningOf(st, c.Name)).NotTo(gomega.BeNil(), "container %q is not running: %s", c.Name, describeStatus(st))
		}
	})

	// Mutate what GetPodStatus and GetPods returned; later answers must not
	// change.
	st := e.status(pod)
	want := copyStatus(st)
	for _, c := range st.ContainerStatuses {
		c.ID.ID += "-mutated"
		c.State = pkgcontainer.ContainerStateExited
		c.Name += "-mutated"
	}
	st.ContainerStatuses = append(st.ContainerStatuses[:0], st.ContainerStatuses[len(st.ContainerStatuses)-1])
	again := e.status(pod)
	if canonicalStatus(again) != canonicalStatus(want) {
		e.failf("mutating the status GetPodStatus returned changed its next answer:\nbefore: %s\nafter:  %s", canonicalStatus(want), canonicalStatus(again))
	}

	find := func() (*pkgcontainer.Pod, string) {
		for _, p := range e.getPods(true) {
			if p != nil && p.ID == pod.UID {
				return p, canonicalPod(p)
			}
		}
		e.failf("GetPods(true) does not list the running pod %s", podRef(pod))
		return nil, ""
	}
	p, before := find()
	for _, c := range p.Containers {
		c.ID.ID += "-mutated"
		c.Name += "-mutated"
	}
	p.Containers = nil
	p.Name += "-mutated"
	if _, after := find(); after != before {
		e.failf("mutating the pods GetPods returned changed its next answer:\nbefore: %s\nafter:  %s", before, after)
	}
}
