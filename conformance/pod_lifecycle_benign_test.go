package conformance_test

import (
	"context"
	"sync"
	"time"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podLifecycleBenign are the benign variants of the group "lifecycle"
// (pod_lifecycle.go): the fake taking one freedom each, which the suite must
// pass.
func podLifecycleBenign() []*benign {
	return []*benign{
		{
			name:    "stop-leaves-start-to-context",
			warns:   []string{"KRI-POD-030"},
			freedom: "Stop that does nothing, Start ending only when its context is done (kuscia's agent cancels it before Stop)",
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{
					Start: func(ctx context.Context, next kri.PodProvider) error {
						err := next.Start(ctx)
						next.Stop() // what the fake holds goes once Start has ended
						return err
					},
					Stop: func(kri.PodProvider) {},
				}
			},
		},
		{
			name:    "slow-start",
			freedom: "how long Start works before it blocks (calls made meanwhile must work)",
			pod:     slowStart,
		},
	}
}

// startSetup is how long the slow-start variant's Start works before it
// blocks: longer than the fake's stable window, so that specs run while
// Start is still starting.
const startSetup = 300 * time.Millisecond

// slowStart makes Start work for startSetup before it blocks. It stays
// correct: a Stop or a cancelled context during the setup ends Start, and
// Stop returns once Start has.
func slowStart(*fake.PodProvider) interceptor.PodFuncs {
	var mu sync.Mutex
	stopping := make(chan struct{})
	stopped := false
	var done chan struct{} // closed when Start returns; nil before Start
	return interceptor.PodFuncs{
		Start: func(ctx context.Context, next kri.PodProvider) error {
			mu.Lock()
			if done != nil {
				mu.Unlock()
				return next.Start(ctx) // a second Start: the fake's answer
			}
			done = make(chan struct{})
			finished := done
			mu.Unlock()
			defer close(finished)
			t := time.NewTimer(startSetup)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return nil
			case <-stopping:
				return nil
			}
			return next.Start(ctx)
		},
		Stop: func(next kri.PodProvider) {
			mu.Lock()
			if !stopped {
				stopped = true
				close(stopping)
			}
			finished := done
			mu.Unlock()
			next.Stop()
			if finished != nil {
				<-finished
			}
		},
	}
}
