package vkremote_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
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
// controllers all run on the bubble's clock. The provider declares every
// capability its service honestly has: what it does on DeletePod (exit
// codes, the grace period), with the suite's SIGTERM workload in the
// service's terms (Config.Workloads), and a health check that fails once
// the service has lost its backend (backend failures: MakeBackendUnhealthy
// turns the node's service unhealthy). Its containers never exit, fail or
// restart on their own and it runs no init containers, probes, hooks or
// commands, so the capabilities of those are not declared and their
// specs are skipped.
func TestConformance(t *testing.T) {
	var services sync.Map // *vkremote.Node -> *vkremote.Service
	vk.Run(t, vk.Config{
		NewPodProvider: func(ctx context.Context) (node.PodLifecycleHandler, error) {
			c := serveInMemory(ctx, vkremote.NewService(serviceDelays))
			return vkremote.New(vkremote.Config{Client: c, NodeName: vk.NodeName, PollInterval: time.Second}), nil
		},
		NewNodeProvider: func(ctx context.Context) (node.NodeProvider, error) {
			svc := vkremote.NewService(serviceDelays)
			n := vkremote.NewNode(serveInMemory(ctx, svc))
			services.Store(n, svc)
			context.AfterFunc(ctx, func() { services.Delete(n) })
			return n, nil
		},
		MakeBackendUnhealthy: func(_ context.Context, p node.NodeProvider) error {
			svc, ok := services.Load(p)
			if !ok {
				return errors.New("not a node provider of this test")
			}
			svc.(*vkremote.Service).SetHealthy(false)
			return nil
		},
		VirtualTime:  true,
		Capabilities: []vk.Capability{vk.CapExitCodes, vk.CapGracePeriod, vk.CapBackendFailures},
		Workloads:    vk.Workloads{TrapsSIGTERM: stopsAs},
	})
}
