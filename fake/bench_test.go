package fake_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// benchPod returns pod i with three long-running containers.
func benchPod(i int) *v1.Pod {
	c := func(name string) v1.Container {
		return v1.Container{Name: name, Image: "busybox:1.36", Command: []string{"sleep", "infinity"}}
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprint("pod-", i), UID: types.UID(fmt.Sprint("uid-", i))},
		Spec:       v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{c("app"), c("sidecar"), c("proxy")}},
	}
}

// benchModes are the fake's two modes, for benchmarks that must meet their
// targets in both.
var benchModes = []struct {
	name string
	opts []fake.Option
}{
	{"default", nil},
	{"kubelet", []fake.Option{fake.WithKubeletSemantics()}},
}

// populate syncs n pods of three containers each into a new provider made
// with opts.
func populate(tb testing.TB, n int, opts ...fake.Option) (*fake.PodProvider, []*v1.Pod) {
	tb.Helper()
	p := fake.NewPodProvider(append([]fake.Option{fake.WithClock(clocktesting.NewFakeClock(t0)), fake.WithCallLogSize(16)}, opts...)...)
	rc := kri.NewReasonCache()
	pods := make([]*v1.Pod, n)
	for i := range n {
		pods[i] = benchPod(i)
		if err := p.SyncPod(context.Background(), pods[i], nil, rc); err != nil {
			tb.Fatal(err)
		}
	}
	return p, pods
}

// BenchmarkSyncPodSteadyState measures one pod worker round (GetPodStatus
// then SyncPod) of a running pod, with 1 and with 10,000 other pods known:
// the cost must depend on the pod's containers, not on the number of pods.
func BenchmarkSyncPodSteadyState(b *testing.B) {
	for _, m := range benchModes {
		for _, n := range []int{1, 10000} {
			b.Run(fmt.Sprintf("mode=%s/pods=%d", m.name, n), func(b *testing.B) { benchSteady(b, n, m.opts) })
		}
	}
}

func benchSteady(b *testing.B, n int, opts []fake.Option) {
	p, pods := populate(b, n, opts...)
	pod := pods[n/2]
	rc := kri.NewReasonCache()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		st, err := p.GetPodStatus(ctx, pod)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.SyncPod(ctx, pod, st, rc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetPodsAll lists 10,000 pods of three containers each.
func BenchmarkGetPodsAll(b *testing.B) {
	p, _ := populate(b, 10000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		pods, err := p.GetPods(ctx, true)
		if err != nil || len(pods) != 10000 {
			b.Fatalf("GetPods(true) = %d pods, %v", len(pods), err)
		}
	}
}

// BenchmarkMemory10000Pods reports the live heap that 10,000 pods of three
// containers each take (metric MB/10k-pods; the target is under 100).
func BenchmarkMemory10000Pods(b *testing.B) {
	b.ReportAllocs()
	var heapMB float64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		p, pods := populate(b, 10000)
		pods = nil
		runtime.GC()
		runtime.ReadMemStats(&after)
		heapMB = float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
		runtime.KeepAlive(p)
		_ = pods
	}
	b.ReportMetric(heapMB, "MB/10k-pods")
}

// BenchmarkSyncPodNothingToDo measures SyncPod alone of a running pod of
// three containers handed the status GetPodStatus returned: a sync with
// nothing to do (target: under 1 µs and 0 allocations), in both modes.
func BenchmarkSyncPodNothingToDo(b *testing.B) {
	for _, m := range benchModes {
		b.Run("mode="+m.name, func(b *testing.B) { benchNothingToDo(b, m.opts) })
	}
}

func benchNothingToDo(b *testing.B, opts []fake.Option) {
	p, pods := populate(b, 1, opts...)
	pod := pods[0]
	rc := kri.NewReasonCache()
	ctx := context.Background()
	st, err := p.GetPodStatus(ctx, pod)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := p.SyncPod(ctx, pod, st, rc); err != nil {
			b.Fatal(err)
		}
	}
}
