package conformance

import (
	"fmt"
	"strings"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/sim/workload"
)

// The reason cache specs: a container whose start fails is published
// Waiting with the failure's reason (from the ReasonCache SyncPod writes, or
// from RefreshPodStatus), and the reason goes once the container starts.
var podReasonCacheSpecs = []*specDef{
	{id: "KRI-POD-012", level: Must, kind: kindPod, groups: []string{"reason-cache"}, caps: []Capability{CapStartFailures}, pod: podStartFailureRecorded,
		note: "Since KRI-POD-045 was added, SyncPod's error must name the container. Since the suite models kuscia's agent, the MUST is what the agent publishes: the container Waiting with the failure's reason, which the ReasonCache or RefreshPodStatus may give (kuscia's K8sProvider writes no ReasonCache entry and returns nil, and its RefreshPodStatus copies the backend's Waiting reason); SyncPod's error and the ReasonCache entry are KRI-POD-085 (SHOULD).",
		text: "a container whose start fails is published Waiting with the failure's reason (from the ReasonCache SyncPod writes, or from RefreshPodStatus), not as still being created"},
	{id: "KRI-POD-013", level: Must, kind: kindPod, groups: []string{"reason-cache"}, caps: []Capability{CapStartFailures}, pod: podStartSuccessClears,
		note: "Formerly the spec fixed the pod by changing the container's command under the same UID, which the API server forbids; now only the image changes (from one that cannot be pulled). Formerly the entry had to be gone at the first GetPodStatus that showed the container running; now it may be cleared by the next SyncPod, which is handed that status: a backend that starts containers asynchronously learns of the success one sync later, and the kubelet reads an entry only for a container that is not running (kubelet_pods.go convertToAPIContainerStatuses).",
		text: "a later successful start of the container clears its ReasonCache entry, at the latest in the SyncPod after the first GetPodStatus that shows the container running"},
	{id: "KRI-POD-052", level: Must, kind: kindPod, groups: []string{"reason-cache", "sync"}, caps: []Capability{CapStartFailures}, pod: podOneStartFails,
		note: "Since the suite models kuscia's agent, the MUST is what it publishes: the failed container Waiting with the failure's reason, the other Running and left alone. Which containers SyncPod's error and the ReasonCache name is KRI-POD-085's (SHOULD): the agent reads the ReasonCache only for containers it will start again, never for a running one.",
		text: "when one container fails to start and another starts, the agent publishes the failed one Waiting with the failure's reason and the other Running, and the other keeps running"},
	{id: "KRI-POD-085", level: Should, kind: kindPod, groups: []string{"reason-cache"}, caps: []Capability{CapStartFailures}, pod: podStartFailureReturned,
		note: "Split from KRI-POD-012 and KRI-POD-052 as a SHOULD: kuscia's agent only logs SyncPod's error (pod_workers.go managePodLoop; its ported completeWork queues a retry in a work queue nothing reads), and reads the ReasonCache only to publish a Waiting reason, which RefreshPodStatus may give instead.",
		text: "a failed container start makes SyncPod return an error naming that container and no other that started, and is recorded in the ReasonCache for that container only, with error and message"},
}

// startFailureOf says why the start of container app of pod fails.
func startFailureOf(pod *v1.Pod) string {
	c := pod.Spec.Containers[0]
	if workload.ImageMissing(c.Image) {
		return "its image " + c.Image + " cannot be pulled"
	}
	return "its executable is missing"
}

// failStart syncs pod, whose container app cannot start, as kuscia's agent
// does until the agent publishes app Waiting with the reason of the
// failure: from the ReasonCache SyncPod wrote (pod.go
// convertToAPIContainerStatuses) or from RefreshPodStatus, which may
// replace the statuses with a backend's. Either way the pod's owner sees
// why app does not run; a default reason (ContainerCreating,
// PodInitializing) or none hides it. SyncPod's error and the ReasonCache
// entry are KRI-POD-085's.
func (e *podEnv) failStart(pod *v1.Pod) {
	e.untilAsAgent(pod, e.st.t.State, fmt.Sprintf("pod %s: the agent publishes the failed start of app", podRef(pod)), func(g gomega.Gomega) {
		st, _ := e.trySync(pod)
		g.Expect(runningOf(st, "app")).To(gomega.BeNil(), "container app runs although its start must fail (%s): %s", startFailureOf(pod), describeStatus(st))
		s := e.publish(pod, st)
		cs := apiStatusOf(s.ContainerStatuses, "app")
		g.Expect(cs).NotTo(gomega.BeNil(), "kuscia's agent would publish no status of container app: %s", describeAPIStatus(s))
		g.Expect(cs.State.Waiting).NotTo(gomega.BeNil(), "kuscia's agent would publish container app, whose start failed (%s), as %s instead of Waiting with the failure's reason (neither the ReasonCache nor RefreshPodStatus gave one): %s", startFailureOf(pod), describeAPIStatus(s), describeStatus(st))
		g.Expect(defaultWaiting(cs.State.Waiting.Reason)).To(gomega.BeFalse(), "kuscia's agent would publish container app, whose start failed (%s), as Waiting(%q), which says it is still being created: neither the ReasonCache (SyncPod) nor RefreshPodStatus reported the failure; %s", startFailureOf(pod), cs.State.Waiting.Reason, describeStatus(st))
	})
}

func podStartFailureRecorded(e *podEnv) {
	e.step("syncing a pod whose container's executable is missing")
	pod := e.newPod("badstart", v1.RestartPolicyAlways, named("app", e.w().FailsToStart()))
	e.failStart(pod)
}

func podStartFailureReturned(e *podEnv) {
	e.step("syncing a pod whose container good starts and bad cannot (missing executable)")
	pod := e.newPod("onefails", v1.RestartPolicyAlways, named("good", e.w().RunsUntilKilled()), named("bad", e.w().FailsToStart()))
	var err error
	e.untilAsAgent(pod, e.st.t.State, fmt.Sprintf("pod %s: SyncPod reports the failed start of bad", podRef(pod)), func(g gomega.Gomega) {
		var st *pkgcontainer.PodStatus
		st, err = e.trySync(pod)
		g.Expect(runningOf(st, "good")).NotTo(gomega.BeNil(), "container good is not running next to bad, whose start fails: %s", describeStatus(st))
		g.Expect(err).To(gomega.HaveOccurred(), "SyncPod returned nil although container bad failed to start: kuscia's agent logs no failed sync for it")
		item, ok := e.rc.Get(pod.UID, "bad")
		g.Expect(ok).To(gomega.BeTrue(), "the ReasonCache has no entry for container bad after its start failed: kuscia's agent can publish the failure only if RefreshPodStatus reports it")
		g.Expect(item.Err).To(gomega.HaveOccurred(), "the ReasonCache entry of bad has no error")
		g.Expect(item.Message).NotTo(gomega.BeEmpty(), "the ReasonCache entry of bad has no message")
	})
	if msg := err.Error(); !strings.Contains(msg, "bad") {
		e.failf("SyncPod's error does not name the container bad whose start failed: %v", err)
	} else if strings.Contains(msg, `"good"`) {
		e.failf("SyncPod's error names container good, which started: %v", err)
	}
	if item, ok := e.rc.Get(pod.UID, "good"); ok {
		e.failf("the ReasonCache holds a failure for container good, which started, while bad failed: %v: %s (kuscia's agent would publish it should good exit and be restarted)", item.Err, item.Message)
	}
}

func podStartSuccessClears(e *podEnv) {
	pod := e.newPod("recovers", v1.RestartPolicyAlways, named("app", e.w().PullFails()))
	e.step(fmt.Sprintf("syncing a pod whose image %s cannot be pulled", pod.Spec.Containers[0].Image))
	e.failStart(pod)
	fixed := pod.DeepCopy()
	fixed.Spec.Containers[0].Image = e.w().Image
	e.step(fmt.Sprintf("changing only the image, to %s, as the API server allows, and syncing until app runs", fixed.Spec.Containers[0].Image))
	st := e.syncUntilRunning(fixed)
	if _, ok := e.rc.Get(pod.UID, "app"); !ok {
		return
	}
	// A provider whose backend starts containers asynchronously learns of
	// the success only later and may report it at the next SyncPod, the
	// first handed a status that shows app running: the kubelet reads a
	// ReasonCache entry only for a container that is not running
	// (kubelet_pods.go convertToAPIContainerStatuses skips containers that
	// ShouldContainerBeRestarted says stay as they are), so the stale
	// entry is never shown. The sync that saw app running has handed
	// SyncPod that status already.
	id := runningOf(st, "app").ID
	if item, ok := e.rc.Get(pod.UID, "app"); ok {
		e.failf("container app runs (%s) since its image was changed to %s, but its ReasonCache entry (%v: %s) is still there after the SyncPod of the agent's sync that first saw it running, which was handed that status (%s): a successful start must clear the entry, at the latest at the first SyncPod that sees the container running",
			id.ID, e.w().Image, item.Err, item.Message, describeStatus(st))
	}
}

func podOneStartFails(e *podEnv) {
	pod := e.newPod("onefails", v1.RestartPolicyAlways, named("good", e.w().RunsUntilKilled()), named("bad", e.w().FailsToStart()))
	e.step("syncing a pod whose container good starts and bad cannot (missing executable), as kuscia's agent does")
	e.untilAsAgent(pod, e.st.t.State, fmt.Sprintf("pod %s: good running, bad's failed start published", podRef(pod)), func(g gomega.Gomega) {
		st, _ := e.trySync(pod)
		g.Expect(runningOf(st, "good")).NotTo(gomega.BeNil(), "container good is not running next to bad, whose start fails: %s", describeStatus(st))
		s := e.publish(pod, st)
		good, bad := apiStatusOf(s.ContainerStatuses, "good"), apiStatusOf(s.ContainerStatuses, "bad")
		g.Expect(good != nil && good.State.Running != nil).To(gomega.BeTrue(), "kuscia's agent would publish container good, which runs, as not running while bad fails to start: %s", describeAPIStatus(s))
		g.Expect(bad != nil && bad.State.Waiting != nil && !defaultWaiting(bad.State.Waiting.Reason)).To(gomega.BeTrue(),
			"kuscia's agent would publish container bad, whose start fails, without the failure's reason (neither the ReasonCache nor RefreshPodStatus gave one): %s", describeAPIStatus(s))
	})
	e.step("syncing on: good must keep running, its ID unchanged")
	id := runningOf(e.lastStatus(pod), "good").ID
	e.trySyncHolding(pod, "good keeps running while bad keeps failing", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		r := runningOf(st, "good")
		g.Expect(r).NotTo(gomega.BeNil(), "container good stopped while the start of bad kept failing: %s", describeStatus(st))
		g.Expect(r.ID).To(gomega.Equal(id), "container good was restarted (was %s) while the start of bad kept failing: %s", id.ID, describeStatus(st))
	})
}
