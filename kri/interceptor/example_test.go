package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// A backend that fails once: the first GetPodStatus returns an error, the
// later ones reach the provider. The methods left nil, and
// SetPodSyncHandler, are the provider's own.
func ExampleNewPodProvider() {
	provider := fake.NewPodProvider() // any kri.PodProvider
	var failed atomic.Bool
	flaky := interceptor.NewPodProvider(provider, interceptor.PodFuncs{
		GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
			if failed.CompareAndSwap(false, true) {
				return nil, errors.New("backend unavailable")
			}
			return next.GetPodStatus(ctx, pod)
		},
	})

	ctx := context.Background()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"}}
	_, err := flaky.GetPodStatus(ctx, pod)
	fmt.Println("first:", err)
	st, err := flaky.GetPodStatus(ctx, pod)
	fmt.Println("second:", st.ID, err)
	_, notifier := flaky.(kri.PodSyncNotifier)
	fmt.Println("still a PodSyncNotifier:", notifier)
	// Output:
	// first: backend unavailable
	// second: uid-web <nil>
	// still a PodSyncNotifier: true
}

// A backend that hangs: Ping answers only when its context is done, as a
// provider must (kri.NodeProvider.Ping).
func ExampleNewNodeProvider() {
	provider := fake.NewNodeProvider() // any kri.NodeProvider
	hung := interceptor.NewNodeProvider(provider, interceptor.NodeFuncs{
		Ping: func(ctx context.Context, next kri.NodeProvider) error {
			<-ctx.Done()
			return ctx.Err()
		},
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	fmt.Println("ping:", hung.Ping(ctx))
	fmt.Println("node:", hung.ConfigureNode(context.Background(), "node-1").Name)
	// Output:
	// ping: context deadline exceeded
	// node: node-1
}

// The conformance suite run against a provider made slower than it is:
// every SyncPod takes 100ms longer. A suite that passes this way does not
// depend on the provider being fast.
func Example_conformance() {
	TestSlowSyncPod := func(t *testing.T) {
		conformance.Run(t, conformance.Config{
			NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
				return interceptor.NewPodProvider(fake.NewPodProvider() /* your provider here */, interceptor.PodFuncs{
					SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
						time.Sleep(100 * time.Millisecond)
						return next.SyncPod(ctx, pod, st, rc)
					},
				}), nil
			},
			Capabilities: []conformance.Capability{conformance.CapRestartPolicies},
		})
	}
	_ = TestSlowSyncPod
}
