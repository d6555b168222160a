package conformance

import (
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"
	v1 "k8s.io/api/core/v1"
)

// The context spec (KRI-POD-027): every method called with a cancelled
// context returns within the call timeout.
var podContextSpecs = []*specDef{
	{id: "KRI-POD-027", alone: true, level: Must, kind: kindPod, groups: []string{"context"}, pod: podCancelledContext,
		note: "Formerly the error had to wrap the context's, then also a gRPC status code Canceled or DeadlineExceeded was accepted; now any error (or nil) is: the kubelet's runtime manager over containerd, wrapped as kuscia's CRIProvider wraps it (return result.Error()), returns a string (failed to \"CreatePodSandbox\" ... rpc error: code = Canceled) in which neither survives, and the agent only needs the call to return (kuscia pods_controller.go syncPod hands the error to its pod worker, which retries).",
		text: "every method called with a cancelled context returns within the call timeout, with an error or nil"},
}

func podCancelledContext(e *podEnv) {
	e.step("calling every pod method with a cancelled context")
	pod := e.newPod("cancelled", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	running := e.runningPod(pod)
	fresh := e.newPod("fresh", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	calls := []struct {
		method string
		call   func() error
	}{
		{"SyncPod", func() error { return e.p.SyncPod(ctx, fresh, emptyStatus(fresh), e.rc) }},
		{"GetPodStatus", func() error { _, err := e.p.GetPodStatus(ctx, pod); return err }},
		{"GetPods", func() error { _, err := e.p.GetPods(ctx, true); return err }},
		{"KillPod", func() error { return e.p.KillPod(ctx, pod, running, agentGrace(pod)) }},
		{"DeletePod", func() error { return e.p.DeletePod(ctx, pod) }},
		{"CleanupPods", func() error { return e.p.CleanupPods(ctx, []*v1.Pod{pod, fresh}, nil, nil) }},
	}
	// Each call must return within the call timeout (e.do fails the spec
	// otherwise); what it returns is free. The agent logs the error and
	// retries (kuscia pods_controller.go syncPod returns SyncPod's error to
	// its pod worker), and the error a real runtime returns need not carry
	// the context's: the kubelet's runtime manager over containerd, wrapped
	// as kuscia's CRIProvider wraps it (return result.Error()), returns
	// failed to "CreatePodSandbox" ... rpc error: code = Canceled, a string.
	for _, c := range calls {
		var err error
		start := time.Now()
		e.do(c.method, func(context.Context) { err = c.call() })
		e.skipIfNotSupported(c.method, err)
		ginkgo.GinkgoWriter.Printf("%s with a cancelled context returned after %s: %v\n", c.method, time.Since(start).Round(time.Millisecond), err)
	}
}
