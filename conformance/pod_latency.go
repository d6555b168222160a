package conformance

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/onsi/gomega/gmeasure"
	v1 "k8s.io/api/core/v1"
)

// report adds the experiment and a "median / p90 / max" entry for the
// measurement name.
func (e *podEnv) report(exp *gmeasure.Experiment, name string) {
	ds := slices.Clone(exp.Get(name).Durations)
	slices.Sort(ds)
	summary := fmt.Sprintf("n=%d median=%s p90=%s max=%s", len(ds), percentile(ds, 50), percentile(ds, 90), percentile(ds, 100))
	e.reportEntry(fmt.Sprintf("%s %s", e.spec.id, name), summary)
	e.reportEntry(exp.Name, exp)
}

// percentile returns the p-th percentile (nearest rank) of sorted ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	rank := (p*len(ds) + 99) / 100 // ceil(p/100 * n)
	return ds[min(max(rank, 1), len(ds))-1]
}

// The latency benchmarks (KRI-BENCH-001 to 003) carry the label "benchmark"
// and run only when the label filter asks for them. Each reports median, p90
// and max as a report entry, with the full gmeasure experiment next to it.
var podLatencySpecs = []*specDef{
	{id: "KRI-BENCH-001", level: Should, kind: kindPod, groups: []string{"latency"}, benchmark: true, pod: benchStartLatency,
		text: "latency from the first SyncPod of a pod to all its containers running, over N pods"},
	{id: "KRI-BENCH-002", level: Should, kind: kindPod, groups: []string{"latency"}, benchmark: true, pod: benchKillLatency,
		text: "duration of KillPod of a running pod, over N pods"},
	{id: "KRI-BENCH-003", level: Should, kind: kindPod, groups: []string{"latency"}, benchmark: true, pod: benchStatusLatency,
		text: "latency of GetPodStatus of a running pod, over N pods"},
}

// benchPods returns N new two-container pods.
func (e *podEnv) benchPods() []*v1.Pod {
	pods := make([]*v1.Pod, e.st.cfg.BenchmarkPods)
	for i := range pods {
		pods[i] = e.newPod(fmt.Sprintf("bench%d", i), v1.RestartPolicyAlways,
			named("app", e.w().RunsUntilKilled()), named("sidecar", e.w().RunsUntilKilled()))
	}
	return pods
}

func benchStartLatency(e *podEnv) {
	exp := gmeasure.NewExperiment("KRI pod start latency")
	for _, pod := range e.benchPods() {
		start := time.Now()
		e.syncUntilRunning(pod)
		exp.RecordDuration("first SyncPod to running", time.Since(start))
	}
	e.report(exp, "first SyncPod to running")
}

func benchKillLatency(e *podEnv) {
	exp := gmeasure.NewExperiment("KRI KillPod duration")
	for _, pod := range e.benchPods() {
		e.syncUntilRunning(pod)
		exp.RecordDuration("KillPod", e.killUntilStopped(pod, agentGrace(pod)))
	}
	e.report(exp, "KillPod")
}

func benchStatusLatency(e *podEnv) {
	exp := gmeasure.NewExperiment("KRI GetPodStatus latency")
	pods := e.benchPods()
	for _, pod := range pods {
		e.syncUntilRunning(pod)
	}
	for _, pod := range pods {
		var err error
		exp.MeasureDuration("GetPodStatus", func() {
			e.do("GetPodStatus", func(ctx context.Context) { _, err = e.p.GetPodStatus(ctx, pod) })
		})
		e.noError("GetPodStatus", err)
	}
	e.report(exp, "GetPodStatus")
}
