package hostprocesstest_test

import (
	"context"
	"testing"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/examples/hostprocess"
	"github.com/kri-kit/testkit/examples/hostprocess/hostprocesstest"
	"github.com/kri-kit/testkit/kri"
)

// A test that runs the suite against hostprocess declares what
// hostprocess implements.
func ExampleCapabilities() {
	TestConformance := func(t *testing.T) {
		conformance.Run(t, conformance.Config{
			NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
				return hostprocess.New(hostprocess.Options{RootDir: t.TempDir()})
			},
			Capabilities: hostprocesstest.Capabilities(),
		})
	}
	_ = TestConformance
}
