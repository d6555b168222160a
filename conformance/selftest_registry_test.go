package conformance_test

import (
	"slices"
)

// The zoo: every mutant and benign variant of the suite's self-tests, by
// spec group. Each group's lists live beside its specs: pod_kill.go's specs,
// pod_kill_mutants_test.go's podKillMutants, pod_kill_benign_test.go's
// podKillBenign. A new group's lists are added here.

// mutants returns every mutant: TestMutantsAreCaught runs each and checks
// that it fails exactly the specs it names; TestEverySpecHasAMutant checks
// that every spec is named by one. The probe, hook and resize groups also
// name the specs their violations break in other groups' mutants
// (withProbeWants, withHookCatches, alsoFailing).
func mutants() []*mutant {
	return withProbeWants(alsoFailing(withHookCatches(slices.Concat(
		podSyncMutants(), podStatusMutants(), podRefreshMutants(), podKillMutants(), podRestartMutants(),
		podInitMutants(), podReasonCacheMutants(), podCleanupMutants(), podDeleteMutants(), podLifecycleMutants(),
		podOwnershipMutants(), podValidationMutants(), podContextMutants(),
		podspecImageMutants(), podspecEnvMutants(), podspecTerminationMessageMutants(), podspecHooksMutants(),
		podspecSidecarsMutants(), podspecProbesMutants(), podspecResizeMutants(),
		nodeConfigureMutants(), nodePingMutants(), nodeRefreshMutants(), nodeCallbackMutants(), nodeContextMutants(),
	)), resizeAlsoFailed))
}

// benignVariants returns the fake's benign variants: each takes one freedom
// the contract grants, and TestBenignVariantsPass checks that the suite
// still passes it.
func benignVariants() []*benign {
	return slices.Concat(
		podSyncBenign(), podStatusBenign(), podRefreshBenign(), podKillBenign(), podRestartBenign(),
		podReasonCacheBenign(), podDeleteBenign(), podLifecycleBenign(), podContextBenign(),
		podspecResizeBenign(), podspecProbesBenign(),
	)
}

// hostBenignVariants returns the benign variants of the hostprocess example,
// for the pod-spec capabilities the fake does not simulate:
// TestHostBenignVariantsPass checks that the suite passes each.
func hostBenignVariants() []hostBenign {
	return slices.Concat(
		podspecImageHostBenign(), podspecTerminationMessageHostBenign(),
		podspecHooksHostBenign(), podspecSidecarsHostBenign(),
	)
}
