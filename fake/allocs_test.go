package fake_test

import (
	"context"
	"testing"

	"github.com/kri-kit/testkit/kri"
)

// TestSyncPodNothingToDoAllocatesNothing pins BenchmarkSyncPodNothingToDo's
// allocation target, which unlike its time is the same on every machine: a
// SyncPod of a running pod handed the status GetPodStatus returned, with
// nothing to do, allocates nothing, in both modes.
func TestSyncPodNothingToDoAllocatesNothing(t *testing.T) {
	for _, m := range benchModes {
		t.Run(m.name, func(t *testing.T) {
			p, pods := populate(t, 1, m.opts...)
			pod, rc, ctx := pods[0], kri.NewReasonCache(), context.Background()
			st, err := p.GetPodStatus(ctx, pod)
			if err != nil {
				t.Fatal(err)
			}
			var syncErr error
			allocs := testing.AllocsPerRun(100, func() {
				if err := p.SyncPod(ctx, pod, st, rc); err != nil {
					syncErr = err
				}
			})
			if syncErr != nil {
				t.Fatal(syncErr)
			}
			if allocs != 0 {
				t.Errorf("SyncPod with nothing to do: %v allocations per call, want 0", allocs)
			}
		})
	}
}
