package podstatus_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// BenchmarkGenerate: a pod of three containers with two instances each (a
// restart behind each of them), a ready sandbox, a previous status and a
// start failure recorded for one container.
func BenchmarkGenerate(b *testing.B) {
	spec := v1.PodSpec{Containers: containers("a", "b", "c"), RestartPolicy: v1.RestartPolicyAlways}
	status := runtimeStatus(
		withRestarts(runningI("a", "a2", 10), 1), exitedI("a", "a1", 1, 1),
		withRestarts(runningI("b", "b2", 11), 1), exitedI("b", "b1", 2, 1),
		withRestarts(exitedI("c", "c2", 12, 2), 1), exitedI("c", "c1", 3, 1),
	)
	status.IPs = []string{"10.0.0.10"}
	rc := reasonCache(podUID, map[string][2]string{"c": crash})
	pod := mkPod(spec, v1.PodStatus{})
	pod.Status = podstatus.Generate(pod, status, rc)
	if got := pod.Status.Phase; got != v1.PodRunning {
		b.Fatalf("Generate: phase %s, want Running", got)
	}
	var sink v1.PodStatus
	b.ReportAllocs()
	for b.Loop() {
		sink = podstatus.Generate(pod, status, rc)
	}
	_ = sink
}
