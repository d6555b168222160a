package fake_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// A controller that syncs a pod only when its provider asks, as kuscia's
// agent does, gets the fake's calls: one for what SyncPod did, and one when
// the container exits by itself, from the fake's Start loop, while nobody
// calls the fake. The handler may read the fake during the call.
func ExampleWithPodSyncHandler() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "job", UID: "uid-job"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{
			{Name: "main", Image: "busybox:1.36", Command: []string{"sh", "-c", "sleep 5; exit 0"}},
		}},
	}
	synced := make(chan string, 10)
	var provider *fake.PodProvider
	provider = fake.NewPodProvider(fake.WithClock(clk), fake.WithPodSyncHandler(kri.PodSyncHandlerFunc(func(uid types.UID) {
		st, _ := provider.GetPodStatus(context.Background(), pod)
		synced <- fmt.Sprintf("sync %s at %v: main %s", uid, clk.Since(start), st.FindContainerStatusByName("main").State)
	})))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = provider.Start(ctx) })
	defer func() { cancel(); provider.Stop(); wg.Wait() }()

	_ = provider.SyncPod(ctx, pod, &pkgcontainer.PodStatus{}, kri.NewReasonCache())
	fmt.Println(<-synced)
	clk.Step(5 * time.Second) // main exits
	fmt.Println(<-synced)
	// Output:
	// sync uid-job at 0s: main running
	// sync uid-job at 5s: main exited
}
