package kri_test

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

// A provider reports each container start to the ReasonCache it is handed;
// the agent reads the reason back when it builds the pod's API status.
func ExampleReasonCache() {
	cache := kri.NewReasonCache()

	// SyncPod failed to start "app" ...
	start := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, "app")
	start.Fail(pkgcontainer.ErrRunContainer, `exec: "serve": executable file not found in $PATH`)
	cache.Update("pod-uid", pkgcontainer.PodSyncResult{SyncResults: []*pkgcontainer.SyncResult{start}})

	if item, ok := cache.Get("pod-uid", "app"); ok {
		fmt.Println(errors.Is(item.Err, pkgcontainer.ErrRunContainer), item.Message)
	}

	// ... and a later attempt succeeded, which clears the reason.
	cache.Update("pod-uid", pkgcontainer.PodSyncResult{SyncResults: []*pkgcontainer.SyncResult{
		pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, "app"),
	}})
	_, ok := cache.Get("pod-uid", "app")
	fmt.Println(ok)

	// Output:
	// true exec: "serve": executable file not found in $PATH
	// false
}

func ExampleNewReasonCacheWithSize() {
	cache := kri.NewReasonCacheWithSize(2)
	for _, name := range []string{"a", "b", "c"} {
		r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, name)
		r.Fail(pkgcontainer.ErrRunContainer, "")
		cache.Update("pod-uid", pkgcontainer.PodSyncResult{SyncResults: []*pkgcontainer.SyncResult{r}})
	}
	_, hasA := cache.Get("pod-uid", "a")
	fmt.Println(cache.Len(), hasA)
	// Output: 2 false
}

// A provider's CleanupPods stops and forgets every pod it knows that none of
// the three arguments names.
func ExamplePodsToKeep() {
	known := []types.UID{"web", "batch", "orphan"}
	keep := kri.PodsToKeep(
		[]*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "web"}}}, // desired
		[]*pkgcontainer.Pod{{ID: "batch"}},                     // running, still known to the agent
		nil,
	)
	for _, uid := range known {
		if !keep.Has(uid) {
			fmt.Println("orphan:", uid)
		}
	}
	// Output: orphan: orphan
}
