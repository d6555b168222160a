package conformance

import (
	"fmt"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
)

// The delete specs (KRI-POD-019, 020): DeletePod of a pod the provider
// never saw, and of one it killed (as syncTerminatedPod calls it), after
// which nothing of the pod runs or is reported.
var podDeleteSpecs = []*specDef{
	{id: "KRI-POD-019", level: Should, kind: kindPod, groups: []string{"delete"}, pod: podDeleteUnknown,
		note: "Lowered to SHOULD: kuscia's agent only logs DeletePod's error (pods_controller.go syncTerminatedPod) and finishes the pod anyway.",
		text: "DeletePod of a pod the provider does not know returns nil"},
	{id: "KRI-POD-020", level: Must, kind: kindPod, groups: []string{"delete"}, pod: podDeleteForgets,
		note: "Formerly a pod, killed or still running, had to be forgotten as soon as DeletePod returned; now the agent's order (KillPod, then DeletePod) is used, nothing of the pod may run afterwards and it must be forgotten within the state timeout (dead containers may be collected later).",
		text: "after KillPod and DeletePod no container of the pod runs again, and the pod is soon no longer listed by GetPods(true) and reported unknown by GetPodStatus"},
}

func podDeleteUnknown(e *podEnv) {
	e.step("deleting a pod the provider never saw")
	pod := e.newPod("unknown", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.expectNil("DeletePod", e.deletePod(pod), "DeletePod of a pod the provider does not know")
}

func podDeleteForgets(e *podEnv) {
	pod := e.newPod("deleted", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	e.step("killing the pod and deleting it, as the agent does once the pod is gone from the API server")
	e.killUntilStopped(pod, agentGrace(pod))
	e.noError("DeletePod", e.deletePod(pod))
	e.step("waiting for the pod to be forgotten, checking that none of its containers runs again")
	e.eventually(fmt.Sprintf("deleted pod %s forgotten", podRef(pod)), func(g gomega.Gomega) {
		st := e.status(pod)
		if r := runningOf(st, "app"); r != nil {
			e.failf("container app (%s) of pod %s runs after KillPod and DeletePod returned nil: %s", r.ID.String(), podRef(pod), describeStatus(st))
		}
		for _, p := range e.getPods(true) {
			g.Expect(p == nil || p.ID != pod.UID).To(gomega.BeTrue(), "GetPods(true) still lists the deleted pod %s", podRef(pod))
		}
		g.Expect(st.ContainerStatuses).To(gomega.BeEmpty(), "GetPodStatus of the deleted pod %s still reports containers: %s", podRef(pod), describeStatus(st))
		g.Expect(st.SandboxStatuses).To(gomega.BeEmpty(), "GetPodStatus of the deleted pod %s still reports %d sandboxes", podRef(pod), len(st.SandboxStatuses))
	})
}
