package fake_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// BenchmarkSyncPodResize measures a SyncPod that resizes a running
// container in place: the pod alternates between two sets of resources,
// so that every sync applies one (a ContainerResized event each).
func BenchmarkSyncPodResize(b *testing.B) {
	p := fake.NewPodProvider()
	sub := p.Subscribe(1) // a subscriber that never reads: events are dropped
	defer sub.Close()
	ctx := context.Background()
	rc := kri.NewReasonCache()
	small := newPod("web", v1.RestartPolicyAlways, withResources(container("app", "sleep", "infinity"), "250m", "500m", "64Mi", "128Mi"))
	large := resized(small, "500m", "1", "128Mi", "256Mi")
	if err := p.SyncPod(ctx, small, nil, rc); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		pod := small
		if i%2 == 0 {
			pod = large
		}
		i++
		if err := p.SyncPod(ctx, pod, nil, rc); err != nil {
			b.Fatal(err)
		}
	}
	st, err := p.GetPodStatus(ctx, small)
	if err != nil || len(st.ContainerStatuses) != 1 {
		b.Fatalf("after %d resizes: %d instances (%v), want the one resized in place", i, len(st.ContainerStatuses), err)
	}
}
