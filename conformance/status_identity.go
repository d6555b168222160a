package conformance

import (
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The identity of GetPodStatus's answer (KRI-POD-084): a spec of its own,
// so that a provider that gets it wrong is told once, and every other spec
// goes on past it (status notes it) and judges its own promise.

func init() {
	registerPodSpecs([]*specDef{
		{id: "KRI-POD-084", level: Should, kind: kindPod, groups: []string{"status"}, pod: podStatusIdentity,
			note: "Split from KRI-POD-001 and KRI-POD-002, whose MUST checks stopped at it, and from the check every spec made of every GetPodStatus answer. A SHOULD: kuscia's agent reads ID, Name and Namespace of the runtime status only through pkgcontainer.ConvertPodStatusToRunningPod, into the running pod it hands KillPod with the API pod; a provider that kills by the API pod (kuscia's K8sProvider) never looks at them.",
			text: "GetPodStatus reports the pod's UID, name and namespace, for a pod the provider never saw and for one it runs"},
	}...)
}

func podStatusIdentity(e *podEnv) {
	pod := e.newPod("identity", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	check := func(when string, st *pkgcontainer.PodStatus) {
		if st.ID != pod.UID || st.Name != pod.Name || st.Namespace != pod.Namespace {
			e.failf("GetPodStatus of pod %s (UID %s) %s reports UID %q, name %q, namespace %q: kuscia's agent hands these to KillPod as the running pod's (ConvertPodStatusToRunningPod in pods_controller.go syncTerminatingPod), so a provider that kills by them would stop another pod or none",
				podRef(pod), pod.UID, when, st.ID, st.Name, st.Namespace)
		}
	}
	e.step("asking GetPodStatus about a pod the provider never saw")
	check("before it was ever synced", e.status(pod))
	e.step("syncing the pod until it runs and asking again")
	check("while it runs", e.syncUntilRunning(pod))
}
