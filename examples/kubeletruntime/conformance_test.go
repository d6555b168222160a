package kubeletruntime_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	critest "k8s.io/cri-api/pkg/apis/testing"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/examples/kubeletruntime"
	"github.com/kri-kit/testkit/examples/kubeletruntime/kubeletruntimetest"
	"github.com/kri-kit/testkit/kri"
)

// variantEnv selects the simulator variant TestConformance runs against in
// a re-executed test binary: Ginkgo runs one suite per process.
const (
	variantEnv        = "KUBELETRUNTIME_CONFORMANCE_VARIANT"
	variantNormalized = "normalized-images"
)

// conformanceConfig declares every capability the kubelet's runtime manager
// has. The timeouts suit a simulator whose containers start at once; the
// grace period is the runtime manager's 2-second minimum, below which it
// gives no container less time.
func conformanceConfig(t *testing.T, normalize bool) conformance.Config {
	return conformance.Config{
		NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
			return kubeletruntime.New(ctx, kubeletruntime.Options{
				RootDir:         t.TempDir(),
				NormalizeImages: normalize,
				// Restarts back off from 100ms to 1s instead of 10s to
				// 5m, so that crash loops show within the suite's waits.
				InitialBackOff: 100 * time.Millisecond,
				MaxBackOff:     time.Second,
				GCPeriod:       time.Second,
			})
		},
		Capabilities: kubeletruntimetest.Capabilities(),
		RuntimeName:  critest.FakeRuntimeName,
		Timeouts: conformance.Timeouts{
			Call:        10 * time.Second,
			State:       10 * time.Second,
			Poll:        20 * time.Millisecond,
			Stable:      300 * time.Millisecond,
			ShortRun:    300 * time.Millisecond,
			GracePeriod: 2 * time.Second,
		},
	}
}

// TestConformance gates the provider on the KRI conformance suite, over the
// simulator that reports images as the pod spec names them (or, in the
// re-executed binary of TestConformanceNormalizedImages, over the one that
// normalises them).
func TestConformance(t *testing.T) {
	t.Parallel() // alongside the variant's child process
	conformance.Run(t, conformanceConfig(t, os.Getenv(variantEnv) == variantNormalized))
}

// TestConformanceNormalizedImages runs the suite against the provider over
// a simulator that reports fully qualified image names, as containerd and
// CRI-O do, in a re-executed test binary.
func TestConformanceNormalizedImages(t *testing.T) {
	if os.Getenv(variantEnv) != "" {
		t.Skip("runs the variant in a child process")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	args := []string{"-test.run=^TestConformance$", "-test.count=1", "-ginkgo.no-color"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), variantEnv+"="+variantNormalized)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("the conformance suite against the image-normalising simulator failed (%v):\n%s", err, out.String())
	} else if testing.Verbose() {
		t.Log(out.String())
	}
}
