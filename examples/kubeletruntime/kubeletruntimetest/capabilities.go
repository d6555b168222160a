// Package kubeletruntimetest holds what the tests that run the conformance
// suite against package kubeletruntime share: its gate over the CRI
// simulator (TestConformance) and its end-to-end run over containerd
// (package e2e) declare the same capabilities.
package kubeletruntimetest

import (
	"slices"

	"github.com/kri-kit/testkit/conformance"
)

// Capabilities returns every pod capability the suite knows; the caller
// owns the slice. Package kubeletruntime runs the kubelet's own runtime
// manager, whose behaviour the pod capabilities describe, so it declares
// them all, over any CRI runtime: a capability added to the suite is
// declared here at once, and a kubeletruntime gate that fails it shows a
// spec that asks what the kubelet does not, or a gap of the CRI simulator.
// The node capabilities are not among them: kubeletruntime is a pod
// provider only.
func Capabilities() []conformance.Capability {
	return slices.DeleteFunc(conformance.AllCapabilities(), func(c conformance.Capability) bool {
		return c == conformance.CapNodeStatusUpdates || c == conformance.CapBackendFailures
	})
}
