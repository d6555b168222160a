package conformance_test

import "slices"

// The zoo: every mutant and benign variant of the suite's self-tests, by
// spec group. Each group's lists live beside its specs: pod_kill.go's specs,
// pod_kill_mutants_test.go's podKillMutants, pod_kill_benign_test.go's
// podKillBenign. A new group's lists are added here.

// mutants returns every mutant: TestMutantsAreCaught runs each and checks
// that it fails exactly the specs it names; TestEverySpecHasAMutant checks
// that every spec is named by one. A mutant's want lists, in its own entry,
// every spec it fails: the specs of its group it was written for, then,
// each under a comment saying why, the specs of other groups that stand on
// what it breaks.
func mutants() []*mutant {
	return slices.Concat(
		podSyncMutants(), podStatusMutants(), podRefreshMutants(), podKillMutants(), podRestartMutants(),
		podInitMutants(), podReasonCacheMutants(), podCleanupMutants(), podDeleteMutants(), podLifecycleMutants(),
		podOwnershipMutants(), podValidationMutants(), podContextMutants(),
		podspecImageMutants(), podspecEnvMutants(), podspecTerminationMessageMutants(), podspecHooksMutants(),
		podspecSidecarsMutants(), podspecProbesMutants(), podspecNetworkProbesMutants(), podspecResizeMutants(),
		podNotifyMutants(),
		nodeConfigureMutants(), nodePingMutants(), nodeRefreshMutants(), nodeCallbackMutants(), nodeContextMutants(),
	)
}

// benignVariants returns the fake's benign variants: each takes one freedom
// the contract grants, and TestBenignVariantsPass checks that the suite
// still passes it.
func benignVariants() []*benign {
	return slices.Concat(
		podSyncBenign(), podStatusBenign(), podRefreshBenign(), podKillBenign(), podRestartBenign(),
		podReasonCacheBenign(), podDeleteBenign(), podLifecycleBenign(), podContextBenign(),
		podspecResizeBenign(), podspecProbesBenign(), podNotifyBenign(),
	)
}

// hostBenignVariants returns the benign variants of the hostprocess example,
// for the pod-spec capabilities the fake does not simulate:
// TestHostBenignVariantsPass checks that the suite passes each. Each list
// names the spec groups its freedoms can reach besides the pod-spec ones.
func hostBenignVariants() []hostBenign {
	return slices.Concat(
		withGroups(podspecImageHostBenign(), "image"), withGroups(podspecTerminationMessageHostBenign(), "termination-message"),
		withGroups(podspecHooksHostBenign(), "hooks", "kill"), withGroups(podspecSidecarsHostBenign(), "sidecars", "restart"),
		withGroups(podKillHostBenign(), "kill"),
	)
}

// withGroups sets the groups of every variant of vs.
func withGroups(vs []hostBenign, groups ...string) []hostBenign {
	for i := range vs {
		vs[i].groups = groups
	}
	return vs
}
