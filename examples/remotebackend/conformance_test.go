package remotebackend_test

import (
	"context"
	"testing"
	"time"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/examples/remotebackend"
	"github.com/kri-kit/testkit/kri"
)

// TestConformance gates the provider on the KRI conformance suite with
// every capability it supports and no expected failures. Each spec gets a
// fresh Service on the real clock, with the default back-off (200ms
// doubling to 2s), and a Provider in front of it.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Config{
		NewPodProvider: func(context.Context) (kri.PodProvider, error) {
			svc, err := remotebackend.NewService(remotebackend.ServiceOptions{})
			if err != nil {
				return nil, err
			}
			return remotebackend.New(svc)
		},
		Capabilities: []conformance.Capability{
			conformance.CapInitContainers,
			conformance.CapRestartPolicies,
			conformance.CapGracePeriod,
			conformance.CapStartFailures,
			conformance.CapOrphanCleanup,
			// A cloud service runs the container with its environment,
			// expanded as the kubelet would.
			conformance.CapEnvExpansion,
			// What the Service runs of the pod spec itself, with
			// workload.Pod: probes (Started and Ready in RefreshPodStatus),
			// postStart and preStop hooks, restartable init containers.
			conformance.CapProbes,
			conformance.CapSidecars,
			conformance.CapLifecycleHooks,
			// HTTP and TCP probes and HTTP hooks are answered by the
			// server the container's command runs (httpd), as
			// workload.Pod simulates it; KRI-POD-090 also needs the
			// termination message, which the Service does not report.
			conformance.CapNetworkProbes,
			// Not CapTerminationMessage: the Service reports no
			// termination messages (a remote service reports the exit
			// of a run, not a file in its container), so the hook specs
			// that read what a hook wrote there (KRI-POD-062, 064) are
			// skipped; 063 and 065 run.
			// Not CapImagePullPolicy: it has no local images, so no
			// imagePullPolicy Never.
			// Not CapResize: the simulated service cannot change the
			// resources of a running container.
		},
		RuntimeName: remotebackend.RuntimeName,
		// The Service reacts at once; only the grace periods (1s) and
		// the back-off take time. The state timeout leaves room for a
		// loaded machine.
		// The Service's only clock is Go's time and it does no I/O: each
		// spec runs in a synctest bubble, its grace periods and back-off
		// on virtual time.
		VirtualTime: true,
		Timeouts: conformance.Timeouts{
			Call:        10 * time.Second,
			State:       15 * time.Second,
			Poll:        20 * time.Millisecond,
			Stable:      300 * time.Millisecond,
			ShortRun:    200 * time.Millisecond,
			GracePeriod: time.Second,
		},
	})
}
