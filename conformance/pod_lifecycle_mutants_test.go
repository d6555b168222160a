package conformance_test

import (
	"context"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podLifecycleMutants are the mutants of the group "lifecycle"
// (pod_lifecycle.go): the fake with one contract violation each, and the specs
// it must fail.
func podLifecycleMutants() []*mutant {
	return []*mutant{
		{
			name:      "start-returns-at-once",
			violation: "Start returns nil at once instead of blocking (its background work goes on in a goroutine of its own until Stop)",
			want:      []string{"KRI-POD-029", "KRI-POD-030"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{Start: func(ctx context.Context, next kri.PodProvider) error {
					go func() { _ = next.Start(ctx) }()
					return nil
				}}
			},
		},
		{
			name:      "start-never-returns",
			violation: "Start keeps blocking after its context is cancelled and after Stop",
			want:      []string{"KRI-POD-029", "KRI-POD-030"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{Start: func(ctx context.Context, next kri.PodProvider) error {
					_ = next.Start(ctx)
					forever()
					return nil
				}}
			},
		},
		{
			name:      "stop-hangs",
			violation: "Stop never returns",
			want:      []string{"KRI-POD-030", "KRI-POD-031", "KRI-POD-032"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{Stop: func(next kri.PodProvider) {
					next.Stop()
					forever()
				}}
			},
			check: expectFailureMessage("KRI-POD-032", "Stop did not return within 6s"),
			cost:  2,
		},
	}
}
