package remotebackend_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/kri"
)

// BenchmarkSyncPodRunning measures the steady state of a pod worker: SyncPod
// and GetPodStatus of a running pod with two containers.
func BenchmarkSyncPodRunning(b *testing.B) {
	p, _, _ := newFakeProvider(b)
	rc := kri.NewReasonCache()
	pod := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"), ctr("sidecar", "sleep", "infinity"))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.SyncPod(ctx, pod, nil, rc); err != nil {
			b.Fatal(err)
		}
		if _, err := p.GetPodStatus(ctx, pod); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCatchUp measures how long the Service takes to catch up with a
// minute of a crash-looping container (200ms doubling to 2s: 33 restarts).
func BenchmarkCatchUp(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		svc, fc := newFakeService(b)
		pod := newPod(v1.RestartPolicyAlways, sh("app", "exit 1"))
		if _, err := svc.Apply(ctx, pod); err != nil {
			b.Fatal(err)
		}
		fc.SetTime(at(60_000))
		if _, _, err := svc.Pod(ctx, pod.UID); err != nil {
			b.Fatal(err)
		}
	}
}
