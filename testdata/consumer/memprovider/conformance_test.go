package memprovider_test

import (
	"context"
	"testing"
	"time"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/kri"

	"example.com/consumer/memprovider"
)

// TestConformance gates the provider on the KRI conformance suite: it fails
// when any spec fails. The provider has no init containers and no grace
// periods, so it declares only the capabilities it has; the specs of the
// others are skipped and do not count against the verdict.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Config{
		NewPodProvider:  func(context.Context) (kri.PodProvider, error) { return memprovider.New(), nil },
		NewNodeProvider: func(context.Context) (kri.NodeProvider, error) { return memprovider.NewNode(), nil },
		Capabilities: []conformance.Capability{
			conformance.CapRestartPolicies,
			conformance.CapStartFailures,
			conformance.CapOrphanCleanup,
			// Not CapSidecars: the in-memory provider has no init
			// containers at all.
			// Not lifecycle-hooks: there is no process to run a hook in.
			// Not CapResize: the in-memory provider applies no
			// resources it could change.
		},
		// An in-memory provider has no clock but Go's and does no I/O:
		// each spec runs in a synctest bubble, on virtual time.
		VirtualTime: true,
		// An in-memory provider answers at once: short waits keep the
		// test fast.
		Timeouts: conformance.Timeouts{
			Call:   5 * time.Second,
			State:  10 * time.Second,
			Poll:   10 * time.Millisecond,
			Stable: 100 * time.Millisecond,
		},
	})
}
