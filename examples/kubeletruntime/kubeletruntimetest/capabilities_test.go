package kubeletruntimetest_test

import (
	"slices"
	"testing"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/examples/kubeletruntime/kubeletruntimetest"
)

// TestCapabilitiesArePodCapabilities checks that no node capability is
// declared (kubeletruntime has no NodeProvider, and Config rejects a node
// capability without its trigger) and that no pod capability is left out.
func TestCapabilitiesArePodCapabilities(t *testing.T) {
	caps := kubeletruntimetest.Capabilities()
	for _, c := range []conformance.Capability{conformance.CapNodeStatusUpdates, conformance.CapBackendFailures} {
		if slices.Contains(caps, c) {
			t.Errorf("node capability %q is declared", c)
		}
	}
	if got, want := len(caps), len(conformance.AllCapabilities())-2; got != want {
		t.Errorf("%d capabilities declared, want every pod capability: %d", got, want)
	}
}
