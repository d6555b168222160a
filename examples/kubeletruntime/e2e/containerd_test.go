package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	v1 "k8s.io/api/core/v1"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	kubelettypes "k8s.io/kubelet/pkg/types"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/examples/kubeletruntime"
	"github.com/kri-kit/testkit/examples/kubeletruntime/kubeletruntimetest"
	"github.com/kri-kit/testkit/kri"
)

// EndpointEnv names the CRI endpoint TestConformanceContainerd runs against
// ("unix:///tmp/kri-e2e/containerd.sock"). The runtime must have the
// images of the suite's default workloads (busybox:1.36) and its sandbox
// image, and must be the test's alone: each spec starts by removing every
// pod sandbox of its process's namespace (see processNamespace).
const EndpointEnv = "KRI_E2E_CRI_ENDPOINT"

// criTimeout bounds each CRI call: a real runtime creates and stops
// containers in tens to hundreds of milliseconds, and the kubelet's default
// of 2 minutes would outlast the suite's own call timeout.
const criTimeout = 30 * time.Second

// TestConformanceContainerd gates the provider, over the real CRI runtime
// at $KRI_E2E_CRI_ENDPOINT, on the conformance suite, with every
// capability the runtime manager has. Its pods use the host network (the
// runtime has no CNI), and the timeouts are the suite's defaults for real
// providers with the grace period at the runtime manager's 2-second minimum.
func TestConformanceContainerd(t *testing.T) {
	endpoint := os.Getenv(EndpointEnv)
	if endpoint == "" {
		t.Skipf("%s is not set: this test needs a real CRI runtime at that endpoint ('make e2e' starts one); it is not part of 'make test'", EndpointEnv)
	}
	namespace := processNamespace()
	conformance.Run(t, conformance.Config{
		NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
			return newProvider(ctx, t, endpoint, namespace)
		},
		// make e2e runs the suite in parallel processes (the Ginkgo CLI,
		// --procs): they share the runtime, each in a namespace of its
		// own.
		Parallel:     true,
		Namespace:    namespace,
		Capabilities: kubeletruntimetest.Capabilities(),
		Workloads: conformance.Workloads{
			Pod: hostNetworkPod,
		},
		Timeouts: conformance.Timeouts{
			Call:        30 * time.Second,
			State:       60 * time.Second,
			Poll:        100 * time.Millisecond,
			Stable:      2 * time.Second,
			ShortRun:    time.Second,
			GracePeriod: 2 * time.Second,
		},
	})
}

// hostNetworkPod puts pod on the node's network, as every pod over the
// e2e runtime (it has no CNI), and sends each HTTP lifecycle hook of its
// containers that names no host to the node's 127.0.0.1. The kubelet's hook
// runner sends such a hook to the first IP of the pod's runtime status and
// fails it when there is none ("failed to find networking container",
// pkg/kubelet/lifecycle/handlers.go runHTTPHandler), and containerd
// reports no IP for a host-network sandbox: the kubelet's open bug
// kubernetes/kubernetes#134285, whose workaround is this explicit host
// (envoyproxy/gateway#9861 sets it so). Probes need nothing: the prober
// sends them to the PodIP of the API status, empty here (the suite's agent
// knows no node address), so to ":PORT", the node itself, where the
// containers' busybox httpd listens.
func hostNetworkPod(pod *v1.Pod) {
	pod.Spec.HostNetwork = true
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			lc := cs[i].Lifecycle
			if lc == nil {
				continue
			}
			for _, h := range []*v1.LifecycleHandler{lc.PostStart, lc.PreStop} {
				if h != nil && h.HTTPGet != nil && h.HTTPGet.Host == "" {
					h.HTTPGet.Host = nodeLoopback
				}
			}
		}
	}
}

// nodeLoopback is the host hostNetworkPod gives HTTP hooks.
const nodeLoopback = "127.0.0.1"

// processNamespace is the namespace of the suite's pods in this Ginkgo
// process: the parallel processes share the runtime, and each resets only
// its own pods.
func processNamespace() string {
	return fmt.Sprintf("kri-conformance-p%d", ginkgo.GinkgoParallelProcess())
}

// newProvider connects to the runtime, removes every pod sandbox a former
// spec of this process left in it (each spec gets a node of its own, as
// over the simulator, shared only with the specs of the other processes),
// and builds the provider over it. The connections are closed
// once ctx, the spec's, is done.
func newProvider(ctx context.Context, t *testing.T, endpoint, namespace string) (*kubeletruntime.Provider, error) {
	rs, is, err := kubeletruntime.DialCRI(ctx, endpoint, criTimeout)
	if err != nil {
		return nil, err
	}
	closeAll := func() {
		// The spec's context is done: close with a fresh one.
		_ = rs.Close(context.Background())
		_ = is.Close(context.Background())
	}
	if err := resetNamespace(ctx, rs, namespace); err != nil {
		closeAll()
		return nil, err
	}
	p, err := kubeletruntime.New(ctx, kubeletruntime.Options{
		RootDir:        t.TempDir(),
		RuntimeService: rs,
		ImageService:   is,
		// Restarts back off from 100ms to 1s instead of 10s to 5m, so
		// that crash loops show within the suite's waits.
		InitialBackOff: 100 * time.Millisecond,
		MaxBackOff:     time.Second,
		GCPeriod:       time.Second,
	})
	if err != nil {
		closeAll()
		return nil, err
	}
	context.AfterFunc(ctx, closeAll)
	return p, nil
}

// resetNamespace stops and removes every pod sandbox of the runtime in
// namespace (the kubelet's pod namespace label), and with them their
// containers (CRI RemovePodSandbox forcibly removes them). The former
// spec's provider may still be removing one of them (its garbage collector
// ends with its context): a removal that fails is tried again, in a fresh
// listing, for up to resetRetries rounds.
func resetNamespace(ctx context.Context, rs internalapi.RuntimeService, namespace string) error {
	var errs []error
	for round := 0; round < resetRetries; round++ {
		if round > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		sandboxes, err := rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
			LabelSelector: map[string]string{kubelettypes.KubernetesPodNamespaceLabel: namespace},
		})
		if err != nil {
			return fmt.Errorf("resetting the node: ListPodSandbox: %w", err)
		}
		errs = nil
		for _, sb := range sandboxes {
			if err := rs.StopPodSandbox(ctx, sb.Id); err != nil {
				errs = append(errs, fmt.Errorf("StopPodSandbox %s: %w", sb.Id, err))
				continue
			}
			if err := rs.RemovePodSandbox(ctx, sb.Id); err != nil {
				errs = append(errs, fmt.Errorf("RemovePodSandbox %s: %w", sb.Id, err))
			}
		}
		if len(errs) == 0 {
			return nil
		}
	}
	return fmt.Errorf("resetting the node (%d rounds): %w", resetRetries, errors.Join(errs...))
}

// resetRetries bounds the rounds of resetNamespace.
const resetRetries = 25
