package kri_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kri-kit/testkit/kri"
)

// A node agent computes the grace period at each kill request of a pod, as
// the kubelet's pod workers do, keeping the last value: here the node
// starts draining the pod, then the pod is deleted with a shorter grace
// period, then an eviction asks for 0.
func ExampleEffectiveGracePeriod() {
	pod := &v1.Pod{Spec: v1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](30)}}

	grace, _ := kri.EffectiveGracePeriod(0, pod, nil)
	fmt.Println("first kill:", grace)

	pod.DeletionGracePeriodSeconds = ptr.To[int64](10)
	grace, shortened := kri.EffectiveGracePeriod(grace, pod, nil)
	fmt.Println("deleted:", grace, shortened)

	grace, shortened = kri.EffectiveGracePeriod(grace, pod, ptr.To[int64](0))
	fmt.Println("evicted:", grace, shortened)

	// What the kubelet's runtime gives each container for that override.
	fmt.Println("runtime:", kri.RuntimeGracePeriod(pod, &grace))
	// Output:
	// first kill: 30
	// deleted: 10 true
	// evicted: 1 true
	// runtime: 2
}
