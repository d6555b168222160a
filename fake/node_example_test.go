package fake_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

func nodeExampleReady(n *v1.Node) v1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c
		}
	}
	return v1.NodeCondition{}
}

// A node with 8 CPUs of which 7.5 are allocatable, on a fake clock.
func ExampleNewNodeProvider() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	provider := fake.NewNodeProvider(
		fake.WithNodeClock(clk),
		fake.WithNodeCapacity(v1.ResourceList{v1.ResourceCPU: resource.MustParse("8")}),
		fake.WithNodeAllocatable(v1.ResourceList{v1.ResourceCPU: resource.MustParse("7500m")}),
		fake.WithNodeInfo(v1.NodeSystemInfo{KubeletVersion: "v1.37.0"}),
	)
	defer provider.Close()
	if err := provider.Err(); err != nil {
		fmt.Println("bad options:", err)
		return
	}

	node := provider.ConfigureNode(context.Background(), "edge-1")
	capacity, allocatable := node.Status.Capacity[v1.ResourceCPU], node.Status.Allocatable[v1.ResourceCPU]
	memory := node.Status.Allocatable[v1.ResourceMemory]
	fmt.Println(node.Name, node.Status.NodeInfo.KubeletVersion, node.Status.NodeInfo.OperatingSystem)
	fmt.Println("cpu:", capacity.String(), "allocatable:", allocatable.String(), "memory:", memory.String())
	for _, a := range node.Status.Addresses {
		fmt.Println(a.Type, a.Address)
	}
	ready := nodeExampleReady(node)
	fmt.Println(ready.Type, ready.Status, ready.Reason, ready.LastHeartbeatTime.UTC().Format(time.RFC3339))
	// Output:
	// edge-1 v1.37.0 linux
	// cpu: 8 allocatable: 7500m memory: 8Gi
	// InternalIP 10.0.0.1
	// Hostname edge-1
	// Ready True KubeletReady 2026-01-01T00:00:00Z
}

// Options never panic: a bad value is reported by Err and corrected.
func ExampleNodeProvider_Err() {
	provider := fake.NewNodeProvider(
		fake.WithNodeCapacity(v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}),
		fake.WithNodeAllocatable(v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")}),
	)
	defer provider.Close()
	fmt.Println(provider.Err())

	node := provider.ConfigureNode(context.Background(), "n")
	allocatable := node.Status.Allocatable[v1.ResourceCPU]
	fmt.Println("allocatable cpu:", allocatable.String())
	// Output:
	// fake: WithNodeAllocatable: allocatable cpu 3 exceeds capacity 2; clamped to 2
	// allocatable cpu: 2
}

// Ping fails as often as scripted, then recovers; a done context wins over
// everything.
func ExampleNodeProvider_FailPings() {
	provider := fake.NewNodeProvider()
	defer provider.Close()

	provider.FailPings(2, errors.New("connection refused"))
	for range 3 {
		fmt.Println(provider.Ping(context.Background()))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fmt.Println(provider.Ping(ctx))
	fmt.Println("pings:", provider.Calls().Ping)
	// Output:
	// connection refused
	// connection refused
	// <nil>
	// context canceled
	// pings: 4
}

func ExampleNodeProvider_FailPingsUntilHealed() {
	provider := fake.NewNodeProvider()
	defer provider.Close()

	provider.FailPingsUntilHealed(nil) // nil: fake.ErrNodeUnhealthy
	err := provider.Ping(context.Background())
	fmt.Println(errors.Is(err, fake.ErrNodeUnhealthy))
	fmt.Println(errors.Is(provider.Ping(context.Background()), fake.ErrNodeUnhealthy))

	provider.Heal()
	fmt.Println(provider.Ping(context.Background()))
	// Output:
	// true
	// true
	// <nil>
}

// RefreshNodeStatus renews heartbeats from the clock and reports whether it
// changed anything.
func ExampleNodeProvider_RefreshNodeStatus() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	provider := fake.NewNodeProvider(fake.WithNodeClock(clk))
	defer provider.Close()
	ctx := context.Background()

	status := &provider.ConfigureNode(ctx, "node-a").Status
	fmt.Println("same instant:", provider.RefreshNodeStatus(ctx, status))

	clk.Step(10 * time.Second)
	fmt.Println("10s later:", provider.RefreshNodeStatus(ctx, status))
	fmt.Println("again:", provider.RefreshNodeStatus(ctx, status))

	provider.MarkNotReady("NetworkUnavailable", "CNI plugin not initialized")
	fmt.Println("after MarkNotReady:", provider.RefreshNodeStatus(ctx, status))
	ready := nodeExampleReady(&v1.Node{Status: *status})
	fmt.Println(ready.Status, ready.Reason, ready.LastHeartbeatTime.UTC().Format(time.RFC3339))
	// Output:
	// same instant: false
	// 10s later: true
	// again: false
	// after MarkNotReady: true
	// False NetworkUnavailable 2026-01-01T00:00:10Z
}

// A controller under test learns about a node going NotReady through the
// status-update callback, without waiting for its next refresh.
func ExampleNodeProvider_MarkNotReady() {
	provider := fake.NewNodeProvider()
	defer provider.Close() // no delivery goroutine outlives the test

	ctx := context.Background()
	provider.ConfigureNode(ctx, "node-a")
	updates := make(chan *v1.Node, 1)
	provider.SetStatusUpdateCallback(ctx, func(n *v1.Node) { updates <- n })

	provider.MarkNotReady("NetworkUnavailable", "CNI plugin not initialized")
	node := <-updates // delivered asynchronously
	ready := nodeExampleReady(node)
	fmt.Println(node.Name, ready.Status, ready.Reason+":", ready.Message)

	provider.MarkReady()
	fmt.Println(nodeExampleReady(<-updates).Status)
	// Output:
	// node-a False NetworkUnavailable: CNI plugin not initialized
	// True
}

// Capacity changes reach the callback too; allocatable follows capacity
// unless set on its own.
func ExampleNodeProvider_SetCapacity() {
	provider := fake.NewNodeProvider()
	defer provider.Close()

	ctx := context.Background()
	provider.ConfigureNode(ctx, "node-a")
	updates := make(chan *v1.Node, 2)
	provider.SetStatusUpdateCallback(ctx, func(n *v1.Node) { updates <- n })

	if err := provider.SetCapacity(v1.ResourceList{v1.ResourceMemory: resource.MustParse("4Gi")}); err != nil {
		fmt.Println(err)
	}
	if err := provider.SetAllocatable(v1.ResourceList{v1.ResourceMemory: resource.MustParse("3Gi")}); err != nil {
		fmt.Println(err)
	}
	for range 2 {
		n := <-updates
		capacity, allocatable := n.Status.Capacity[v1.ResourceMemory], n.Status.Allocatable[v1.ResourceMemory]
		fmt.Println("memory:", capacity.String(), "allocatable:", allocatable.String())
	}

	fmt.Println(provider.SetAllocatable(v1.ResourceList{v1.ResourceMemory: resource.MustParse("5Gi")}))
	// Output:
	// memory: 4Gi allocatable: 4Gi
	// memory: 4Gi allocatable: 3Gi
	// fake: SetAllocatable: allocatable memory 5Gi exceeds capacity 4Gi
}

// Interceptors wrap the fake's behaviour: here a backend that hangs on Ping
// until the caller gives up, and a node that carries a taint.
func ExampleNodeProvider_SetInterceptors() {
	provider := fake.NewNodeProvider()
	defer provider.Close()

	provider.SetInterceptors(interceptor.NodeFuncs{
		Ping: func(ctx context.Context, next kri.NodeProvider) error {
			<-ctx.Done() // never answers
			return ctx.Err()
		},
		ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
			node := next.ConfigureNode(ctx, name)
			node.Spec.Taints = append(node.Spec.Taints, v1.Taint{Key: "virtual-kubelet.io/provider", Value: "fake", Effect: v1.TaintEffectNoSchedule})
			return node
		},
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	fmt.Println(provider.Ping(ctx))
	fmt.Println(provider.ConfigureNode(context.Background(), "vk-1").Spec.Taints[0].ToString())

	provider.SetInterceptors(interceptor.NodeFuncs{}) // back to the fake's own behaviour
	fmt.Println(provider.Ping(context.Background()))
	// Output:
	// context deadline exceeded
	// virtual-kubelet.io/provider=fake:NoSchedule
	// <nil>
}
