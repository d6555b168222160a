package vk_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/vk"
	"github.com/kri-kit/testkit/vk/simprovider"
)

// A provider's module runs the suite from one test; 'go test' then gives
// the verdict (its exit status), -ginkgo.junit-report=FILE a JUnit report
// and -vk.summary=FILE the summary.
func ExampleRun() {
	_ = func(t *testing.T) {
		vk.Run(t, vk.Config{
			// A fresh provider per spec: here the kit's reference provider.
			NewPodProvider: func(ctx context.Context) (node.PodLifecycleHandler, error) {
				return simprovider.NewAsync(simprovider.WithContext(ctx)), nil
			},
			NewNodeProvider: func(context.Context) (node.NodeProvider, error) { return simprovider.NewNode(), nil },
			// The reference provider does no real I/O: each spec runs in
			// virtual time.
			VirtualTime: true,
			// What of the pod spec its backend does; the specs of a
			// capability left out are skipped, the reason printed.
			Capabilities: []vk.Capability{vk.CapContainerRestarts, vk.CapStartFailures, vk.CapExitCodes, vk.CapGracePeriod},
			// Known gaps while adopting the suite, each with its reason:
			// reported as expected failures; a MUST one still fails the run.
			ExpectedFailures: map[string]string{"KVK-POD-009": "GetPod drops annotations until the backend stores them"},
			// Each spec has a VK and an API server of its own: the Ginkgo
			// CLI may spread them over processes (--procs=N).
			Parallel: true,
		})
	}
}

// Catalogue lists the specs, each with the VK code it rests on.
func ExampleCatalogue() {
	for _, s := range vk.Catalogue()[:2] {
		fmt.Println(s.ID, s.Level)
	}
	// Output:
	// KVK-NODE-001 MUST
	// KVK-NODE-002 MUST
}

// A backend that does not run shell scripts gives the suite's containers in
// its own terms: here one whose SIGTERM behaviour an image of its own reads
// from the env. The fields left nil keep the defaults.
func ExampleDefaultWorkloads() {
	def := vk.DefaultWorkloads("")
	fmt.Println(def.TrapsSIGTERM(5*time.Second, 3).Command)
	fmt.Println(def.WritesTerminationMessage("done", 0).Command)

	_ = vk.Config{
		Capabilities: []vk.Capability{vk.CapExitCodes, vk.CapGracePeriod},
		Workloads: vk.Workloads{TrapsSIGTERM: func(d time.Duration, code int) corev1.Container {
			return corev1.Container{Image: "registry.example/stopper:1", Env: []corev1.EnvVar{
				{Name: "STOP_AFTER", Value: d.String()}, {Name: "STOP_EXIT_CODE", Value: strconv.Itoa(code)},
			}}
		}},
	}
	// Output:
	// [sh -c trap 'sleep 5; exit 3' TERM; sleep infinity & wait]
	// [sh -c echo -n done > /dev/termination-log; exit 0]
}

// A node provider that declares vk.CapNodeStatusUpdates says how to make it
// notice a change of its node, which it must push through VK's
// NotifyNodeStatus callback (KVK-NODE-005).
func ExampleConfig_triggerNodeStatusUpdate() {
	_ = vk.Config{
		NewNodeProvider: func(context.Context) (node.NodeProvider, error) { return simprovider.NewNode(), nil },
		Capabilities:    []vk.Capability{vk.CapNodeStatusUpdates},
		TriggerNodeStatusUpdate: func(_ context.Context, p node.NodeProvider) error {
			p.(*simprovider.Node).ReportCondition(corev1.NodeCondition{
				Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue, Reason: "BackendMemoryLow"})
			return nil
		},
	}
}
