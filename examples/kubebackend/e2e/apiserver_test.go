package e2e_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/examples/kubebackend"
	"github.com/kri-kit/testkit/kri"
)

// KubeconfigEnv names the kubeconfig of the API server
// TestConformanceAPIServer runs against.
const KubeconfigEnv = "KRI_E2E_KUBECONFIG"

// Namespace is the backend namespace of every spec's mirrors; each spec
// gets a backend node and an agent label of its own, so the specs do not
// see each other's pods.
const Namespace = "kri-e2e-backend"

// TestConformanceAPIServer gates the provider on the conformance suite with
// the API server at $KRI_E2E_KUBECONFIG as the backend cluster and a
// simulated kubelet on the real clock as its node, a fresh pair per spec,
// with the capabilities and (no) expected failures of TestConformance in
// package kubebackend. The timeouts leave room for a loaded machine.
func TestConformanceAPIServer(t *testing.T) {
	path := os.Getenv(KubeconfigEnv)
	if path == "" {
		t.Skipf("%s is not set: this test needs the kubeconfig of a running kube-apiserver ('make e2e' starts one with etcd); it is not part of 'make test'", KubeconfigEnv)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("reading the kubeconfig %s (%s): %v", path, KubeconfigEnv, err)
	}
	// The suite runs many pods at once; client-go's default of 5 QPS
	// would throttle every spec.
	cfg.QPS, cfg.Burst = 500, 1000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("a client for %s: %v", cfg.Host, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := prepareNamespace(ctx, client); err != nil {
		t.Fatalf("preparing namespace %s on %s: %v", Namespace, cfg.Host, err)
	}
	conformance.Run(t, conformance.Config{
		// make e2e runs the suite in parallel processes (the Ginkgo CLI,
		// --procs): each spec's provider is an agent and a node of its
		// own in the shared namespace, and CleanupPods does nothing.
		Parallel: true,
		NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
			id := randomID()
			return kubebackend.NewBackend(ctx, client, kubebackend.Options{
				Namespace: Namespace,
				Agent:     "kri-e2e-" + id,
				NodeName:  "kri-e2e-node-" + id,
			}, kubebackend.KubeletOptions{Logf: t.Logf, BackOff: kubebackend.BackOff{Initial: time.Second, Max: 4 * time.Second}})
		},
		Capabilities: []conformance.Capability{
			conformance.CapInitContainers,
			conformance.CapRestartPolicies,
			conformance.CapGracePeriod,
			conformance.CapStartFailures,
			// What the pod spec asks is the backend cluster's kubelet's
			// business, and it does it.
			conformance.CapImagePullPolicy,
			conformance.CapEnvExpansion,
			conformance.CapTerminationMessage,
			// Not CapResize: see ../conformance_test.go.
		},
		Timeouts: conformance.Timeouts{
			Call:        30 * time.Second,
			State:       30 * time.Second,
			Poll:        50 * time.Millisecond,
			Stable:      time.Second,
			ShortRun:    500 * time.Millisecond,
			GracePeriod: time.Second,
		},
	})
}

// prepareNamespace creates the backend namespace and its default service
// account, which the API server's ServiceAccount admission wants for every
// pod and which no controller manager creates here. The provider would
// create the namespace too.
func prepareNamespace(ctx context.Context, client kubernetes.Interface) error {
	_, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	_, err = client.CoreV1().ServiceAccounts(Namespace).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("service account default: %w", err)
	}
	return nil
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
