package conformance_test

import (
	"fmt"
	"slices"
)

// The zoo: every mutant and benign variant of the suite's self-tests, by
// spec group. Each group's lists live beside its specs: pod_kill.go's specs,
// pod_kill_mutants_test.go's podKillMutants, pod_kill_benign_test.go's
// podKillBenign. A new group's lists are added here.

// mutants returns every mutant: TestMutantsAreCaught runs each and checks
// that it fails exactly the specs it names; TestEverySpecHasAMutant checks
// that every spec is named by one. The pod-spec groups also name the specs
// of theirs that other groups' mutants break (withHookCatches, and the
// maps handed to alsoFailing).
func mutants() []*mutant {
	return alsoFailing(withHookCatches(slices.Concat(
		podSyncMutants(), podStatusMutants(), podRefreshMutants(), podKillMutants(), podRestartMutants(),
		podInitMutants(), podReasonCacheMutants(), podCleanupMutants(), podDeleteMutants(), podLifecycleMutants(),
		podOwnershipMutants(), podValidationMutants(), podContextMutants(),
		podspecImageMutants(), podspecEnvMutants(), podspecTerminationMessageMutants(), podspecHooksMutants(),
		podspecSidecarsMutants(), podspecProbesMutants(), podspecNetworkProbesMutants(), podspecResizeMutants(),
		podNotifyMutants(),
		nodeConfigureMutants(), nodePingMutants(), nodeRefreshMutants(), nodeCallbackMutants(), nodeContextMutants(),
	)), probesAlsoFailed, resizeAlsoFailed, networkProbesAlsoFailed, sidecarStartupAlsoFailed, notifyAlsoFailed)
}

// alsoFailing adds to the want list of each mutant of zoo that a map of
// also names the specs listed there, and returns zoo. A name that is no
// mutant's panics: the map is stale.
func alsoFailing(zoo []*mutant, also ...map[string][]string) []*mutant {
	for _, m := range also {
		for name, ids := range m {
			i := slices.IndexFunc(zoo, func(m *mutant) bool { return m.name == name })
			if i < 0 {
				panic(fmt.Sprintf("alsoFailing: no mutant is named %q", name))
			}
			zoo[i].want = append(slices.Clone(zoo[i].want), ids...)
		}
	}
	return zoo
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
// TestHostBenignVariantsPass checks that the suite passes each.
func hostBenignVariants() []hostBenign {
	return slices.Concat(
		podspecImageHostBenign(), podspecTerminationMessageHostBenign(),
		podspecHooksHostBenign(), podspecSidecarsHostBenign(),
	)
}
