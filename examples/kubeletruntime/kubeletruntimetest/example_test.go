package kubeletruntimetest_test

import (
	"context"
	"testing"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/examples/kubeletruntime"
	"github.com/kri-kit/testkit/examples/kubeletruntime/kubeletruntimetest"
	"github.com/kri-kit/testkit/kri"
)

// A test that runs the suite against kubeletruntime, over whichever CRI
// runtime, declares what the kubelet's runtime manager implements.
func ExampleCapabilities() {
	TestConformance := func(t *testing.T) {
		conformance.Run(t, conformance.Config{
			NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
				return kubeletruntime.New(ctx, kubeletruntime.Options{RootDir: t.TempDir()})
			},
			Capabilities: kubeletruntimetest.Capabilities(),
		})
	}
	_ = TestConformance
}
