package conformance

import (
	"context"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
)

// The lifecycle specs (KRI-POD-029 to 033): Start blocks until its context
// is cancelled or Stop ends it, Stop is safe to repeat and to call without
// Start, and calls made before and while Start starts work.
var podLifecycleSpecs = []*specDef{
	{id: "KRI-POD-029", level: Should, kind: kindPod, groups: []string{"lifecycle"}, pod: podStartReturnsOnCancel,
		note: "A SHOULD: kuscia's agent cancels Start's context when it shuts down, then calls Stop (pods_controller.go Run), and exits; a Start that outlives it breaks nothing the agent does.",
		text: "Start blocks until its context is cancelled, then returns"},
	{id: "KRI-POD-030", level: Should, kind: kindPod, groups: []string{"lifecycle"}, pod: podStopEndsStart,
		note: "Lowered to SHOULD: kuscia's agent cancels Start's context before it calls Stop (pods_controller.go Run: syncLoop returns once the context is done, then provider.Stop()), so it never needs Stop to end Start.",
		text: "Stop ends a running Start and returns once Start has returned"},
	{id: "KRI-POD-031", level: Should, kind: kindPod, groups: []string{"lifecycle"}, pod: podSecondStop,
		text: "a second Stop is a harmless no-op"},
	{id: "KRI-POD-032", level: Should, kind: kindPod, groups: []string{"lifecycle"}, noStart: true, pod: podStopWithoutStart,
		note: "Lowered to SHOULD: the agent calls Stop once, after Start.",
		text: "Stop of a provider whose Start was never called returns at once"},
	{id: "KRI-POD-033", level: Must, kind: kindPod, groups: []string{"lifecycle"}, noStart: true, pod: podCallsBeforeStart,
		text: "calls made before Start, and while Start is starting, work"},
}

// startStillRunning checks for the stable window that Start has not
// returned.
func (e *podEnv) startStillRunning() {
	e.consistently("Start keeps running", func(gomega.Gomega) {
		select {
		case <-e.startDone:
			if e.startPanic != "" {
				e.fail(e.startPanic)
			}
			e.failf("Start returned (%v) while its context was live and Stop was not called", e.startErr)
		default:
		}
	})
}

// startReturned waits up to within for Start to return; it must return nil
// (or, when ctxOK, the context's error).
func (e *podEnv) startReturned(within time.Duration, after string, ctxOK bool) {
	select {
	case <-e.startDone:
	case <-time.After(within):
		e.failf("Start did not return within %s %s", within, after)
	}
	if e.startPanic != "" {
		e.fail(e.startPanic)
	}
	if e.startErr != nil && !(ctxOK && ctxErrOK(e.startErr)) {
		e.failf("Start returned %v %s, want nil", e.startErr, after)
	}
}

func podStartReturnsOnCancel(e *podEnv) {
	e.step("cancelling the context of a running Start")
	e.startStillRunning()
	e.startCancel()
	e.startReturned(e.st.t.Call, "after its context was cancelled", true)
}

func podStopEndsStart(e *podEnv) {
	e.step("calling Stop while Start runs")
	e.startStillRunning()
	e.do("Stop", func(context.Context) { e.p.Stop() })
	e.startReturned(e.st.t.Stable, "after Stop returned", false)
}

func podSecondStop(e *podEnv) {
	e.step("calling Stop twice")
	e.do("Stop", func(context.Context) { e.p.Stop() })
	e.do("Stop", func(context.Context) { e.p.Stop() })
}

func podStopWithoutStart(e *podEnv) {
	e.step("calling Stop on a provider whose Start was never called")
	e.do("Stop", func(context.Context) { e.p.Stop() })
}

func podCallsBeforeStart(e *podEnv) {
	e.step("syncing and listing pods before Start is called, then starting the provider")
	pod := e.newPod("early", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.noError("SyncPod", e.syncPod(pod, emptyStatus(pod)))
	e.setLast(pod, e.status(pod))
	e.getPods(true)
	e.start()
	e.syncUntilRunning(pod)
}
