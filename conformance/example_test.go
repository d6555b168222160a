package conformance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// A provider's module gates itself on the suite with one test. Run calls
// RunSpecs, so 'go test -run TestConformance -args
// -ginkgo.junit-report=junit.xml -kri.timeout-scale=2' works as expected.
func ExampleRun() {
	// In a _test.go file of the provider's module:
	TestConformance := func(t *testing.T) {
		conformance.Run(t, conformance.Config{
			NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
				return fake.NewPodProvider(), nil // your provider here
			},
			NewNodeProvider: func(ctx context.Context) (kri.NodeProvider, error) {
				return fake.NewNodeProvider(), nil // your provider here
			},
			// Only what the provider supports; the other specs are skipped.
			Capabilities: []conformance.Capability{
				conformance.CapRestartPolicies,
				conformance.CapStartFailures,
			},
			// Known failures while adopting the suite: reported, never
			// "conformant".
			ExpectedFailures: map[string]string{
				"KRI-POD-013": "ReasonCache entries are never cleared (issue #42)",
			},
			TimeoutScale: 2, // a slow backend
		})
	}
	_ = TestConformance
}

// A provider that only simulates its backend (its only clock is Go's time,
// it does no real I/O) runs the suite in virtual time: each spec in a
// testing/synctest bubble, its grace periods, probe periods and back-off
// costing no real time. A provider over a real runtime leaves it false and
// may set Parallel instead, for the Ginkgo CLI's --procs.
func ExampleConfig_virtualTime() {
	TestConformance := func(t *testing.T) {
		conformance.Run(t, conformance.Config{
			NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
				return fake.NewPodProvider(), nil // your simulated provider here
			},
			Capabilities: []conformance.Capability{conformance.CapRestartPolicies, conformance.CapGracePeriod},
			VirtualTime:  true,
		})
	}
	_ = TestConformance
}

// A test package that already has a Ginkgo suite registers the specs at
// package level and calls RunSpecs itself. The benchmarks run only with
// -ginkgo.label-filter=benchmark.
func ExampleDescribePodProvider() {
	cfg := conformance.Config{
		NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
			return fake.NewPodProvider(), nil
		},
		Capabilities: conformance.AllCapabilities()[:0],
		Timeouts:     conformance.Timeouts{Call: 10 * time.Second},
	}
	// At package level of the test package:
	//
	//	var _ = conformance.DescribePodProvider(cfg)
	//	var _ = conformance.DescribeNodeProvider(nodeCfg)
	//
	//	func TestSuite(t *testing.T) {
	//		gomega.RegisterFailHandler(ginkgo.Fail)
	//		ginkgo.RunSpecs(t, "my provider")
	//	}
	register := func() bool { return conformance.DescribePodProvider(cfg) }
	_ = register
}

// The catalogue of specs, for tooling: every ID with its level and labels.
func ExampleCatalogue() {
	s := conformance.Catalogue()[0]
	fmt.Println(s.ID, s.Level, s.Labels)
	// Output: KRI-POD-001 MUST [pod sync must]
}

func ExampleCapability_Label() {
	fmt.Println(conformance.CapGracePeriod.Label())
	// Output: capability:grace-period
}
