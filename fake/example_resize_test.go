package fake_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// An in-place resize: the pod comes back with more CPU and memory for its
// running container, whose resize policy is NotRequired (the default).
// SyncPod applies them to the same container, which reports them.
func ExampleEventContainerResized() {
	ctx := context.Background()
	provider := fake.NewPodProvider()
	sub := provider.Subscribe(16)
	defer sub.Close()
	rc := kri.NewReasonCache()
	pod := examplePod()
	pod.Spec.Containers[0].Command = []string{"sleep", "infinity"}
	pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("128Mi")}
	_ = podWorker(ctx, provider, pod, rc)

	resized := pod.DeepCopy() // the same pod (UID), updated
	resized.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("256Mi")}
	_ = podWorker(ctx, provider, resized, rc)

	st, _ := provider.GetPodStatus(ctx, resized)
	app := st.FindContainerStatusByName("app")
	fmt.Println(app.State, app.RestartCount, app.Resources.CPULimit, app.Resources.MemoryLimit)
	for len(sub.C) > 0 {
		if e := <-sub.C; e.Type == fake.EventContainerResized {
			fmt.Println(e.Type, e.Container, e.Message)
		}
	}
	// Output:
	// running 0 1 256Mi
	// ContainerResized app resized in place from cpu=-/500m memory=-/128Mi to cpu=-/1 memory=-/256Mi
}
