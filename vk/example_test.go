package vk_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/virtual-kubelet/virtual-kubelet/node"

	"github.com/kri-kit/testkit/vk"
	"github.com/kri-kit/testkit/vk/simprovider"
)

// A provider's module runs the suite from one test; 'go test' then gives
// the verdict (its exit status), -ginkgo.junit-report=FILE a JUnit report
// and -vk.summary=FILE the summary.
func ExampleRun() {
	_ = func(t *testing.T) {
		vk.Run(t, vk.Config{
			// A fresh provider per spec: here the kit's reference provider.
			NewPodProvider: func(ctx context.Context) (node.PodLifecycleHandler, error) {
				return simprovider.NewAsync(simprovider.WithContext(ctx)), nil
			},
			NewNodeProvider: func(context.Context) (node.NodeProvider, error) { return simprovider.NewNode(), nil },
			// The reference provider does no real I/O: each spec runs in
			// virtual time.
			VirtualTime: true,
			// What of the pod spec its backend does; the specs of a
			// capability left out are skipped, the reason printed.
			Capabilities: []vk.Capability{vk.CapContainerRestarts, vk.CapStartFailures, vk.CapExitCodes, vk.CapGracePeriod},
			// Known gaps while adopting the suite, each with its reason:
			// reported as expected failures; a MUST one still fails the run.
			ExpectedFailures: map[string]string{"KVK-POD-009": "GetPod drops annotations until the backend stores them"},
			// Each spec has a VK and an API server of its own: the Ginkgo
			// CLI may spread them over processes (--procs=N).
			Parallel: true,
		})
	}
}

// Catalogue lists the specs, each with the VK code it rests on.
func ExampleCatalogue() {
	for _, s := range vk.Catalogue()[:2] {
		fmt.Println(s.ID, s.Level)
	}
	// Output:
	// KVK-NODE-001 MUST
	// KVK-NODE-002 MUST
}
