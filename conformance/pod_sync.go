package conformance

import (
	"fmt"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The sync specs (KRI-POD-001, 003, 046): SyncPod of a new pod starts its
// containers, again changes nothing, and works without a runtime status, as
// kuscia's syncPod calls it (pods_controller.go).
var podSyncSpecs = []*specDef{
	{id: "KRI-POD-001", level: Must, kind: kindPod, groups: []string{"sync"}, pod: podSyncStartsContainers,
		note: "Formerly GetPodStatus also had to report the pod's UID, name and namespace; that is KRI-POD-084 (SHOULD) now. Now the status kuscia's agent publishes must show the pod Running with every app container Running.",
		text: "SyncPod of a new pod returns nil and starts every app container: GetPodStatus reports each running, and the agent publishes the pod Running with each container Running"},
	{id: "KRI-POD-003", level: Must, kind: kindPod, groups: []string{"sync"}, pod: podSyncIsIdempotent,
		note: "Since the suite models kuscia's agent, an unexpected SyncPod error fails only this spec and KRI-POD-001 (kuscia's syncPod returns it as the outcome of the sync, which its pod worker reports as failed: pod_workers.go managePodLoop, \"Error syncing pod\"); every other spec notes it and goes on.",
		text: "SyncPod is idempotent: syncing a running pod again returns nil and neither duplicates nor restarts its containers, which keep their IDs"},
	{id: "KRI-POD-046", level: Must, kind: kindPod, groups: []string{"sync"}, pod: podSyncNilStatus,
		text: "SyncPod of a new pod with a nil podStatus starts it, as with an empty one"},
}

// syncUntilPublished syncs pod as the agent does until what the agent
// published for it satisfies cond (state timeout), unless what it
// published last does already. SyncPod must succeed in every sync.
func (e *podEnv) syncUntilPublished(pod *v1.Pod, desc string, cond func(g gomega.Gomega, s v1.PodStatus)) v1.PodStatus {
	s := e.publishedOf(pod)
	if failed, _ := attempt(func(g gomega.Gomega) { cond(g, s) }); failed == nil && e.updateDue(pod) == "" {
		return s
	}
	e.untilAsAgent(pod, e.st.t.State, fmt.Sprintf("pod %s: the agent publishes %s", podRef(pod), desc), func(g gomega.Gomega) {
		e.sync(pod)
		s = e.publishedOf(pod)
		cond(g, s)
	})
	return s
}

func podSyncNilStatus(e *podEnv) {
	e.step("syncing a new pod with a nil podStatus, as an agent does before the PLEG has one")
	pod := e.newPod("nilstatus", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	if err := e.syncPod(pod, nil); err != nil {
		e.skipIfNotSupported("SyncPod", err)
		e.failf("SyncPod of a new pod with a nil podStatus returned %v, want nil (a nil status means the pod was not started yet)", err)
	}
	e.setLast(pod, e.status(pod))
	e.syncUntilRunning(pod)
}

func podSyncStartsContainers(e *podEnv) {
	e.strictSync = true
	e.step("syncing a new pod of two containers until both run")
	pod := e.newPod("web", v1.RestartPolicyAlways,
		named("app", e.w().RunsUntilKilled()), named("sidecar", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	e.step("syncing on until the agent publishes the pod Running")
	e.syncUntilPublished(pod, "phase Running, every app container Running", func(g gomega.Gomega, s v1.PodStatus) {
		g.Expect(s.Phase).To(gomega.Equal(v1.PodRunning), "kuscia's agent would publish phase %s for a pod whose containers all run: %s", s.Phase, describeAPIStatus(s))
		for _, c := range pod.Spec.Containers {
			cs := apiStatusOf(s.ContainerStatuses, c.Name)
			g.Expect(cs != nil && cs.State.Running != nil).To(gomega.BeTrue(), "kuscia's agent would publish container %q as not running: %s", c.Name, describeAPIStatus(s))
		}
	})
}

func podSyncIsIdempotent(e *podEnv) {
	e.strictSync = true
	e.step("running a pod of two containers, then syncing it again and again")
	pod := e.newPod("steady", v1.RestartPolicyAlways,
		named("app", e.w().RunsUntilKilled()), named("sidecar", e.w().RunsUntilKilled()))
	st := e.syncUntilRunning(pod)
	ids := map[string]pkgcontainer.ContainerID{}
	for _, c := range pod.Spec.Containers {
		ids[c.Name] = runningOf(st, c.Name).ID
	}
	e.syncHolding(pod, "one running instance per container, same ID", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		for name, id := range ids {
			inst := instancesOf(st, name)
			g.Expect(inst).To(gomega.HaveLen(1), "container %q has %d instances after SyncPod of the running pod: %s", name, len(inst), describeStatus(st))
			g.Expect(inst[0].ID).To(gomega.Equal(id), "container %q changed its ID from %s: %s", name, id.ID, describeStatus(st))
			g.Expect(inst[0].State).To(gomega.Equal(pkgcontainer.ContainerStateRunning), "container %q stopped running: %s", name, describeStatus(st))
		}
	})
}
