package kubeletruntime_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/examples/kubeletruntime"
	"github.com/kri-kit/testkit/kri"
)

// runningPod returns a provider and a pod of two running containers, with
// the status GetPodStatus reports for it.
func runningPodForBench(b *testing.B) (*kubeletruntime.Provider, *v1.Pod, *pkgcontainer.PodStatus) {
	p, err := kubeletruntime.New(b.Context(), kubeletruntime.Options{RootDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Stop)
	pod := newPod("bench", v1.RestartPolicyAlways, container("app", "sleep", "infinity"), container("sidecar", "sleep", "infinity"))
	if err := p.SyncPod(b.Context(), pod, nil, kri.NewReasonCache()); err != nil {
		b.Fatal(err)
	}
	st, err := p.GetPodStatus(b.Context(), pod)
	if err != nil || len(st.ContainerStatuses) != 2 {
		b.Fatalf("GetPodStatus = %v, %v; want two containers", st, err)
	}
	return p, pod, st
}

// BenchmarkGetPodStatus measures GetPodStatus of a running pod of two
// containers: the runtime manager's GetPod and GetPodStatus over the
// simulated CRI services.
func BenchmarkGetPodStatus(b *testing.B) {
	p, pod, _ := runningPodForBench(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.GetPodStatus(b.Context(), pod); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyncPodSteady measures SyncPod of a pod whose containers all run,
// as a pod worker's periodic resync does: the runtime manager computes that
// there is nothing to do.
func BenchmarkSyncPodSteady(b *testing.B) {
	p, pod, st := runningPodForBench(b)
	rc := kri.NewReasonCache()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.SyncPod(b.Context(), pod, st, rc); err != nil {
			b.Fatal(err)
		}
	}
}
