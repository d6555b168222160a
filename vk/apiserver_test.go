package vk

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kri-kit/testkit/vk/simprovider"
)

// kubeconfigEnv names the kubeconfig of the kube-apiserver the tests of
// this file run VK against ('make e2e' starts one with etcd).
const kubeconfigEnv = "KRI_E2E_KUBECONFIG"

// apiServerFromEnv returns the API server $KRI_E2E_KUBECONFIG names, and
// skips the test when it is not set: these tests are not part of 'make
// test'.
func apiServerFromEnv(t *testing.T) *rest.Config {
	t.Helper()
	path := os.Getenv(kubeconfigEnv)
	if path == "" {
		t.Skipf("%s is not set: this test needs the kubeconfig of a running kube-apiserver ('make e2e' starts one with etcd)", kubeconfigEnv)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("reading the kubeconfig %s (%s): %v", path, kubeconfigEnv, err)
	}
	return cfg
}

// referenceOver returns the configuration of the reference provider,
// async or sync, with VK over the API server api as the node nodeName,
// suffixed with the number of the Ginkgo process: the specs run in parallel
// processes under the Ginkgo CLI (make e2e), and each process's VK is a
// node of its own, as each test of this file is.
func referenceOver(api *rest.Config, async bool, nodeName string) Config {
	return Config{
		APIServer: api,
		NodeName:  fmt.Sprintf("%s-%d", nodeName, ginkgo.GinkgoParallelProcess()),
		Parallel:  true,
		NewPodProvider: func(ctx context.Context) (node.PodLifecycleHandler, error) {
			if async {
				return simprovider.NewAsync(simprovider.WithContext(ctx)), nil
			}
			return simprovider.New(simprovider.WithContext(ctx)), nil
		},
		NewNodeProvider: func(context.Context) (node.NodeProvider, error) { return simprovider.NewNode(), nil },
		Capabilities:    AllCapabilities(),
		MakeBackendUnhealthy: func(_ context.Context, p node.NodeProvider) error {
			p.(interface{ MakeUnhealthy() }).MakeUnhealthy()
			return nil
		},
		TriggerNodeStatusUpdate: reportMemoryPressure,
	}
}

// TestConformanceAPIServer runs the suite through Run against the async
// reference provider with VK's controllers over a real kube-apiserver: every
// status and every deletion VK writes is validated and stored as in a
// cluster. The sync provider is TestConformanceAPIServerSync's (Run runs
// once per process).
func TestConformanceAPIServer(t *testing.T) {
	Run(t, referenceOver(apiServerFromEnv(t), true, "vk-e2e-async"))
}

// TestConformanceAPIServerSync is TestConformanceAPIServer for the sync
// reference provider, whose statuses VK polls.
func TestConformanceAPIServerSync(t *testing.T) {
	Run(t, referenceOver(apiServerFromEnv(t), false, "vk-e2e-sync"))
}

// TestAPIServerRejectionFailsTheSpec is virtual-kubelet#938 met by the
// suite: a provider whose pod status the API server rejects (an invalid pod
// IP) is published no Running pod, and KVK-POD-001 fails naming the
// rejection. The in-process fake API server validates nothing and would
// take that status.
func TestAPIServerRejectionFailsTheSpec(t *testing.T) {
	api := apiServerFromEnv(t)
	invalidIP := func(st *corev1.PodStatus) {
		st.PodIP, st.PodIPs = "10.1.0.256", []corev1.PodIP{{IP: "10.1.0.256"}}
	}
	for _, async := range []bool{true, false} {
		cfg := referenceOver(api, async, "vk-e2e-rejected")
		newProvider := statusAltered(async, invalidIP)
		cfg.NewPodProvider = func(context.Context) (node.PodLifecycleHandler, error) { return newProvider(), nil }
		var created spec
		for _, s := range specs {
			if s.ID == "KVK-POD-001" {
				created = s
			}
		}
		o := runSpec(t, created, cfg)
		if !o.Failed || !strings.Contains(o.Message, "the API server rejected") || !strings.Contains(o.Message, "10.1.0.256") {
			t.Errorf("KVK-POD-001 against a provider (async %t) reporting pod IP 10.1.0.256, over a real API server: failed %t, message:\n%s\n"+
				"want it failed, naming the API server's rejection of the IP", async, o.Failed, o.Message)
		}
	}
}
