package hostprocess_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/examples/hostprocess"
	"github.com/kri-kit/testkit/examples/hostprocess/hostprocesstest"
	"github.com/kri-kit/testkit/kri"
)

// TestConformance gates the provider on the KRI conformance suite, with every
// capability it supports declared. Each spec gets a fresh provider rooted in
// its own temporary directory; the suite stops it when the spec ends.
func TestConformance(t *testing.T) {
	timeouts := conformance.DefaultTimeouts()
	// Real processes start in milliseconds: poll often and keep the
	// "nothing happens" windows short so the suite stays fast.
	timeouts.Poll = 20 * time.Millisecond
	timeouts.Stable = 500 * time.Millisecond
	timeouts.ShortRun = 500 * time.Millisecond
	// A host process has no file system of its own: the termination
	// message goes to a fresh host file per container.
	messages := t.TempDir()
	var n atomic.Int64
	workloads := conformance.Workloads{
		TerminationMessagePath: func() string {
			return filepath.Join(messages, fmt.Sprintf("termination-%d", n.Add(1)))
		},
		// The same for the file the probe specs' containers write and
		// their exec probes test for.
		ProbeFilePath: func() string {
			return filepath.Join(messages, fmt.Sprintf("probe-%d", n.Add(1)))
		},
	}
	conformance.Run(t, conformance.Config{
		NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
			// TestPath has the httpd of the workload vocabulary.
			return hostprocess.New(hostprocess.Options{RootDir: t.TempDir(), Path: hostprocess.TestPath})
		},
		NewNodeProvider: func(ctx context.Context) (kri.NodeProvider, error) {
			return hostprocess.NewNodeProvider(hostprocess.NodeOptions{})
		},
		Capabilities: hostprocesstest.Capabilities(),
		Workloads:    workloads,
		RuntimeName:  hostprocess.RuntimeName,
		Timeouts:     timeouts,
	})
}
