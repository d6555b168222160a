package conformance

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// The validation specs (KRI-POD-034, 036): SyncPod rejects what it cannot
// run (a nil pod, a pod without UID, a nil ReasonCache, two containers of
// one name) with an error, and changes nothing.
var podValidationSpecs = []*specDef{
	{id: "KRI-POD-034", level: Should, kind: kindPod, groups: []string{"validation"}, pod: podSyncRejectsBadInput,
		note: "Until KRI-POD-036 was added this spec also required rejecting duplicate container names; that part is KRI-POD-036 (SHOULD) now. Lowered to SHOULD: agents pass API pods (with UIDs) and their own ReasonCache.",
		text: "SyncPod rejects a nil pod, a pod without UID and a nil ReasonCache with an error, and changes nothing"},
	{id: "KRI-POD-036", level: Should, kind: kindPod, groups: []string{"validation"}, pod: podSyncRejectsDuplicateNames,
		note: "Split from KRI-POD-034 and lowered to SHOULD: the API server's validation rejects such pods, and real runtimes do not repeat it.",
		text: "SyncPod rejects a pod with two containers of the same name with an error and changes nothing (the API server validates this too)"},
}

func podSyncRejectsBadInput(e *podEnv) {
	e.step("syncing a nil pod, a pod without UID and a pod with a nil ReasonCache")
	good := e.newPod("good", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	noUID := good.DeepCopy()
	noUID.UID = ""
	noUID.Name += "-nouid"
	e.expectRejected(
		rejectedSync{"a nil pod", func(ctx context.Context) error { return e.p.SyncPod(ctx, nil, nil, e.rc) }},
		rejectedSync{"a pod without UID", func(ctx context.Context) error { return e.p.SyncPod(ctx, noUID, emptyStatus(noUID), e.rc) }},
		rejectedSync{"a nil ReasonCache", func(ctx context.Context) error { return e.p.SyncPod(ctx, good, emptyStatus(good), nil) }},
	)
	e.expectNothingLeft([]*v1.Pod{good}, noUID)
}

func podSyncRejectsDuplicateNames(e *podEnv) {
	e.step("syncing a pod with two containers of the same name")
	dup := e.newPod("dup", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()), named("app", e.w().RunsUntilKilled()))
	e.expectRejected(rejectedSync{"a pod with two containers named app", func(ctx context.Context) error {
		return e.p.SyncPod(ctx, dup, emptyStatus(dup), e.rc)
	}})
	e.expectNothingLeft([]*v1.Pod{dup}, nil)
}

// rejectedSync is a SyncPod call that must be rejected.
type rejectedSync struct {
	what string
	call func(ctx context.Context) error
}

// expectRejected fails the spec when one of the calls returns nil.
func (e *podEnv) expectRejected(calls ...rejectedSync) {
	for _, c := range calls {
		var err error
		e.do("SyncPod", func(ctx context.Context) { err = c.call(ctx) })
		if err == nil {
			e.failf("SyncPod of %s returned nil, want an error", c.what)
		}
	}
}

// expectNothingLeft fails the spec when a rejected SyncPod left a trace of
// pods (by UID) or of noUID (a pod without UID, by namespace and name).
func (e *podEnv) expectNothingLeft(pods []*v1.Pod, noUID *v1.Pod) {
	for _, p := range e.getPods(true) {
		if p == nil {
			continue
		}
		left := noUID != nil && p.Namespace == noUID.Namespace && p.Name == noUID.Name
		for _, pod := range pods {
			left = left || p.ID == pod.UID
		}
		if left {
			e.failf("a rejected SyncPod left pod %s/%s (UID %s) behind", p.Namespace, p.Name, p.ID)
		}
	}
	for _, pod := range pods {
		if st := e.status(pod); len(st.ContainerStatuses) > 0 {
			e.failf("a rejected SyncPod of pod %s created containers: %s", podRef(pod), describeStatus(st))
		}
	}
}
