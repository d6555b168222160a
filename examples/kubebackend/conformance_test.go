package kubebackend_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/examples/kubebackend"
	"github.com/kri-kit/testkit/kri"
)

var node atomic.Int64

// backOff is long enough for the suite to see every run of a container
// that exits at once through the API and the informer on a loaded machine
// (the kubelet's own starts at 10s).
var backOff = kubebackend.BackOff{Initial: 500 * time.Millisecond, Max: 2 * time.Second}

// TestConformance gates the provider on the KRI conformance suite with
// client-go's fake clientset as the backend's API server
// (kubebackend.NewFakeClientset) and a simulated kubelet on the real clock
// as its node, a fresh pair per spec, with every capability the provider
// supports — not orphan cleanup: CleanupPods does nothing, as in kuscia's
// K8sProvider — and no expected failures.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Config{
		NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
			return kubebackend.NewBackend(ctx, kubebackend.NewFakeClientset(), kubebackend.Options{
				Namespace: "backend",
				NodeName:  fmt.Sprintf("sim-node-%d", node.Add(1)),
			}, kubebackend.KubeletOptions{Logf: t.Logf, BackOff: backOff})
		},
		Capabilities: suiteCapabilities,
		Timeouts:     suiteTimeouts,
		// The fake clientset, its informers and the simulated kubelet
		// run on Go's time and do no I/O: each spec runs in a synctest
		// bubble, its grace periods and back-off on virtual time.
		VirtualTime: true,
	})
}

// suiteCapabilities are the capabilities the provider declares: every one
// it supports (TestKusciaFaithfulVerdict declares the same for the
// kuscia-faithful mode).
var suiteCapabilities = []conformance.Capability{
	conformance.CapInitContainers,
	conformance.CapRestartPolicies,
	conformance.CapGracePeriod,
	conformance.CapStartFailures,
	// What the pod spec asks is the backend cluster's kubelet's
	// business, and it does it.
	conformance.CapImagePullPolicy,
	conformance.CapEnvExpansion,
	conformance.CapTerminationMessage,
	// Not CapSidecars: the simulated kubelet runs every init
	// container to completion (no restartable init containers).
	// Not lifecycle-hooks: hooks are the backend kubelet's business,
	// and the simulated one does not run them.
	// Not CapResize: SyncPod does not patch the backend pod's
	// resources (its resize subresource), and the simulated
	// kubelet of the backend would not resize it.
}

// suiteTimeouts: the backend reacts within milliseconds; only the grace
// periods (1s) and the back-off take time. Calls get the suite's default
// 30s: on a loaded machine the first fake clientset of the binary takes
// seconds to build.
var suiteTimeouts = conformance.Timeouts{
	Call:        30 * time.Second,
	State:       15 * time.Second,
	Poll:        20 * time.Millisecond,
	Stable:      500 * time.Millisecond,
	ShortRun:    300 * time.Millisecond,
	GracePeriod: time.Second,
}
