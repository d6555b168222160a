// Package hostprocesstest holds what the tests that run the conformance
// suite against package hostprocess share: hostprocess's own gate
// (TestConformance) and the kit's self-tests, whose host mutants decorate
// hostprocess and must run with the capabilities it declares.
package hostprocesstest

import "github.com/kri-kit/testkit/conformance"

// Capabilities returns the capabilities package hostprocess implements, as
// its TestConformance declares them; the caller owns the slice. Not
// conformance.CapResize: a host process runs in the provider's own cgroup,
// with no CPU or memory limits of its own to change in place, so it reports
// no Resources. Nor the node capabilities (node-status-updates,
// backend-failures), for which its gate sets no trigger.
func Capabilities() []conformance.Capability {
	return []conformance.Capability{
		conformance.CapInitContainers,
		conformance.CapRestartPolicies,
		conformance.CapGracePeriod,
		conformance.CapStartFailures,
		conformance.CapOrphanCleanup,
		conformance.CapImagePullPolicy,
		conformance.CapEnvExpansion,
		conformance.CapTerminationMessage,
		conformance.CapSidecars,
		conformance.CapLifecycleHooks,
		conformance.CapProbes,
		conformance.CapNetworkProbes,
	}
}
