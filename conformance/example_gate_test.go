package conformance_test

import (
	"context"
	"testing"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// A provider that holds itself to the SHOULD specs too: with Strict the run
// fails when an applicable SHOULD spec does not pass, except the one listed
// in ExpectedFailures, whose failure costs nothing. 'go test -args
// -kri.strict' does the same for one run.
func ExampleConfig_strict() {
	TestConformance := func(t *testing.T) {
		conformance.Run(t, conformance.Config{
			NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
				return fake.NewPodProvider(), nil // your provider here
			},
			Strict: true,
			ExpectedFailures: map[string]string{
				"KRI-POD-036": "duplicate container names are left to the API server's validation",
			},
		})
	}
	_ = TestConformance
}

// A quick CI job that does not wait out the timeouts of the known failures:
// they are reported as expected failures "not run", and the verdict stays
// "not conformant" while a MUST spec is listed. 'go test -args
// -kri.skip-expected-failures' does the same for one run.
func ExampleConfig_skipExpectedFailures() {
	TestConformance := func(t *testing.T) {
		conformance.Run(t, conformance.Config{
			NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
				return fake.NewPodProvider(), nil // your provider here
			},
			ExpectedFailures: map[string]string{
				"KRI-POD-013": "ReasonCache entries are never cleared (issue #42)",
			},
			SkipExpectedFailures: true,
		})
	}
	_ = TestConformance
}
