// The KRI consumer of make release-check (hack/release-check.sh): a module
// of its own that gets the kit from a module proxy, with nothing in its
// go.mod but what the README's install lines and replace block put there,
// and gates the kit's fake on the conformance suite.
package kriconsumer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Config{
		NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) { return fake.NewPodProvider(), nil },
		NewNodeProvider: func(ctx context.Context) (kri.NodeProvider, error) {
			n := fake.NewNodeProvider()
			if err := n.Err(); err != nil {
				return nil, err
			}
			context.AfterFunc(ctx, n.Close)
			return n, nil
		},
		Capabilities: conformance.AllCapabilities(),
		TriggerNodeStatusUpdate: func(ctx context.Context, p kri.NodeProvider) error {
			n, ok := p.(*fake.NodeProvider)
			if !ok {
				return errors.New("not the fake NodeProvider")
			}
			n.MarkNotReady("KRIConformance", "triggered by the conformance suite")
			return nil
		},
		MakeBackendUnhealthy: func(ctx context.Context, p kri.NodeProvider) error {
			n, ok := p.(*fake.NodeProvider)
			if !ok {
				return errors.New("not the fake NodeProvider")
			}
			n.FailPingsUntilHealed(nil)
			return nil
		},
		Timeouts: conformance.Timeouts{
			Call: 5 * time.Second, State: 10 * time.Second, Poll: 10 * time.Millisecond,
			Stable: 100 * time.Millisecond, ShortRun: 100 * time.Millisecond, GracePeriod: time.Second,
		},
		VirtualTime: true,
	})
}
