package vkremote_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/examples/vkremote"
	"github.com/kri-kit/testkit/vk"
)

// serviceDelays are the remote service's delays in the suite: each request
// takes 50ms, a group starts 1s after it is created, a container exits 2s
// after SIGTERM.
var serviceDelays = vkremote.ServiceConfig{Latency: 50 * time.Millisecond, StartDelay: time.Second, StopDelay: 2 * time.Second}

// stopsAs is the suite's "traps SIGTERM, takes d, exits with code"
// container as the service runs it: the service does not run images, but
// reads what a container does on SIGTERM from its env (EnvStopAfter,
// EnvStopExitCode).
func stopsAs(d time.Duration, code int) corev1.Container {
	return corev1.Container{Image: "registry.example/app:1", Env: []corev1.EnvVar{
		{Name: vkremote.EnvStopAfter, Value: strconv.FormatFloat(d.Seconds(), 'f', -1, 64)},
		{Name: vkremote.EnvStopExitCode, Value: strconv.Itoa(code)},
	}}
}

// TestConformance gates the provider on the vk suite. Each spec gets a
// service of its own, served over HTTP on in-memory pipes, and runs in
// virtual time: the service's delays, the provider's poll loop and VK's
// controllers all run on the bubble's clock. The provider declares what
// its service does on DeletePod (exit codes, the grace period), with the
// suite's SIGTERM workload in the service's terms (Config.Workloads).
func TestConformance(t *testing.T) {
	vk.Run(t, vk.Config{
		NewPodProvider: func(ctx context.Context) (node.PodLifecycleHandler, error) {
			c := serveInMemory(ctx, vkremote.NewService(serviceDelays))
			return vkremote.New(vkremote.Config{Client: c, NodeName: vk.NodeName, PollInterval: time.Second}), nil
		},
		NewNodeProvider: func(ctx context.Context) (node.NodeProvider, error) {
			return vkremote.NewNode(serveInMemory(ctx, vkremote.NewService(serviceDelays))), nil
		},
		VirtualTime:  true,
		Capabilities: []vk.Capability{vk.CapExitCodes, vk.CapGracePeriod},
		Workloads:    vk.Workloads{TrapsSIGTERM: stopsAs},
	})
}
