package vkremote_test

import (
	"context"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"

	"github.com/kri-kit/testkit/examples/vkremote"
	"github.com/kri-kit/testkit/vk"
)

// serviceDelays are the remote service's delays in the suite: each request
// takes 50ms, a group starts 1s after it is created, a container exits 2s
// after SIGTERM.
var serviceDelays = vkremote.ServiceConfig{Latency: 50 * time.Millisecond, StartDelay: time.Second, StopDelay: 2 * time.Second}

// TestConformance gates the provider on the vk suite. Each spec gets a
// service of its own, served over HTTP on in-memory pipes, and runs in
// virtual time: the service's delays, the provider's poll loop and VK's
// controllers all run on the bubble's clock.
func TestConformance(t *testing.T) {
	vk.Run(t, vk.Config{
		NewPodProvider: func(ctx context.Context) (node.PodLifecycleHandler, error) {
			c := serveInMemory(ctx, vkremote.NewService(serviceDelays))
			return vkremote.New(vkremote.Config{Client: c, NodeName: vk.NodeName, PollInterval: time.Second}), nil
		},
		NewNodeProvider: func(ctx context.Context) (node.NodeProvider, error) {
			return vkremote.NewNode(serveInMemory(ctx, vkremote.NewService(serviceDelays))), nil
		},
		VirtualTime: true,
	})
}
