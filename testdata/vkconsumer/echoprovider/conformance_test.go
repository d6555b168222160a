package echoprovider

import (
	"context"
	"testing"

	"github.com/virtual-kubelet/virtual-kubelet/node"

	"github.com/kri-kit/testkit/vk"
)

func TestConformance(t *testing.T) {
	vk.Run(t, vk.Config{
		NewPodProvider: func(context.Context) (node.PodLifecycleHandler, error) { return New(), nil },
		VirtualTime:    true,
	})
}
