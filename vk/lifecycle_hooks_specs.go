package vk

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The specs of lifecycle hooks (CapLifecycleHooks with
// CapTerminationMessages): what a hook writes is read back as the
// container's termination message.

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-025", Level: Must, Capabilities: []Capability{CapLifecycleHooks, CapTerminationMessages},
			Title: "a container's postStart exec hook runs in it once it has started: what the hook wrote to the terminationMessagePath is the message of its terminated state",
			VK: "node/pod.go createOrUpdatePod (hands the provider the container's lifecycle as written; VK runs no hook itself), " +
				"updatePodStatus (publishes the provider's container statuses, their terminated state's message included, as they are); node/sync.go syncProviderWrapper.updatePodStatus"},
			run: postStartHookRuns},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-026", Level: Must, Capabilities: []Capability{CapLifecycleHooks, CapTerminationMessages}, AsyncOnly: true,
			Title: "DeletePod runs a container's preStop exec hook before it sends SIGTERM: what the hook wrote to the terminationMessagePath is the message of the terminated state VK publishes",
			VK: "node/podcontroller.go syncPodInProvider; node/pod.go deletePod (DeletePod with the pod as it is, lifecycle included; VK runs no hook itself); " +
				"PodLifecycleHandler.DeletePod (doc: notify a terminal status), PodController.Run (NotifyPods callback); node/pod.go updatePodStatus; " +
				"node/sync.go syncProviderWrapper.DeletePod (a sync provider's pod is published with VK's own terminal status, no message: skipped)"},
			run: preStopHookRuns},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-027", Level: Must, Capabilities: []Capability{CapLifecycleHooks, CapContainerRestarts},
			Title: "a container whose postStart hook fails is killed and restarted, the restart counted, the pod Running (never Succeeded or Failed) meanwhile",
			VK: "node/pod.go updatePodStatus (publishes the provider's restart counts and phase as they are; VK runs no hook itself), " +
				"shouldSkipPodStatusUpdate (a terminal pod is never published again); node/sync.go syncProviderWrapper.updatePodStatus"},
			run: failedPostStartRestarts},
	)
}

// The words the hooks of KVK-POD-025 and 026 write.
const (
	postStartWord = "vk-conformance-post-start-ran"
	preStopWord   = "vk-conformance-pre-stop-ran"
)

// hookCommand describes the exec hook h for messages.
func hookCommand(h *corev1.LifecycleHandler) string {
	switch {
	case h == nil:
		return "none"
	case h.Exec != nil:
		return "exec " + strings.Join(h.Exec.Command, " ")
	}
	return "not an exec hook"
}

// postStartHookRuns runs, under restartPolicy Never, a container that
// sleeps 3s and exits 0 without writing anything, whose postStart hook
// writes postStartWord to /dev/termination-log (as the node e2e test
// "should execute poststart exec hook properly" checks a hook's effect
// from inside the container, test/e2e/common/node/lifecycle_hook.go).
func postStartHookRuns(e *env) {
	const run = 3 * time.Second
	c := e.w.PostStartWrites(postStartWord, run)
	p := e.createPod(podRunning("post-start", corev1.RestartPolicyNever, c))
	key := podKey(p)
	hook := hookCommand(lifecycleOf(p.Spec.Containers[0]).PostStart)
	var last *corev1.Pod
	bound := run + statusBound
	if !e.await(bound, func() bool {
		last = e.apiPod(p.Namespace, p.Name)
		return last != nil && len(last.Status.ContainerStatuses) == 1 && last.Status.ContainerStatuses[0].State.Terminated != nil
	}) {
		e.failf("precondition: VK did not publish the container of pod %s (restartPolicy Never; %q, which exits 0 after %v) terminated within %v: "+
			"it published %s; %s", key, argv(c), run, bound, describeStatus(last), e.providerCallsOf(key))
	}
	t := last.Status.ContainerStatuses[0].State.Terminated
	if !strings.HasSuffix(t.Message, postStartWord) {
		e.failf("VK published the container of pod %s (%q, which writes nothing itself; postStart hook %s) terminated with exit code %d and message %q: "+
			"the kubelet runs a postStart exec hook inside the container right after it starts (kuberuntime_container.go startContainer, "+
			"m.runner.Run), so the hook writes %q to its terminationMessagePath (%s), which the kubelet reports as the message "+
			"(getTerminationMessage); VK hands the hook over and runs none itself%s; %s",
			key, argv(c), hook, t.ExitCode, t.Message, postStartWord, corev1.TerminationMessagePathDefault, publishedAsReported, e.providerCallsOf(key))
	}
}

// preStopHookRuns deletes a running container whose SIGTERM handler exits
// 0 at once and whose preStop hook writes preStopWord to
// /dev/termination-log (as the node e2e test "should execute prestop exec
// hook properly" checks a preStop hook's effect, there from a second
// pod).
func preStopHookRuns(e *env) {
	c := e.w.PreStopWrites(preStopWord)
	p := e.createPod(podRunning("pre-stop", corev1.RestartPolicyAlways, c))
	key := podKey(p)
	hook := hookCommand(lifecycleOf(p.Spec.Containers[0]).PreStop)
	if !e.await(statusBound, func() bool { return running(e.apiPod(p.Namespace, p.Name)) }) {
		e.failf("precondition: VK did not publish pod %s Running within %v: %s; %s", key, statusBound, describeStatus(e.apiPod(p.Namespace, p.Name)), e.providerCallsOf(key))
	}
	e.deleteInAPI(p)
	if !e.await(goneBound(p), func() bool { return e.apiPod(p.Namespace, p.Name) == nil }) {
		e.failf("precondition: pod %s is still in the API server %v after it was deleted; %s", key, goneBound(p), e.providerCallsOf(key))
	}
	hist := e.judge.api.StatusHistory(p.Namespace, p.Name)
	last := hist[len(hist)-1]
	if len(last.ContainerStatuses) != 1 || last.ContainerStatuses[0].State.Terminated == nil {
		e.failf("precondition: the last status VK published for pod %s was %s: its container not terminated (KVK-POD-010)", key, describeStatus(&corev1.Pod{Status: last}))
	}
	t := last.ContainerStatuses[0].State.Terminated
	if !strings.HasSuffix(t.Message, preStopWord) {
		e.failf("after DeletePod VK published the container of pod %s (%q; preStop hook %s) terminated with exit code %d and message %q: "+
			"the kubelet runs a preStop exec hook inside the container before it sends SIGTERM, within the grace period "+
			"(kuberuntime_container.go killContainer, executePreStopHook), so the hook writes %q to its terminationMessagePath (%s), "+
			"which the kubelet reports as the message (getTerminationMessage); VK hands DeletePod the pod, hook included, runs none itself "+
			"and publishes the terminal status the provider notifies (node/podcontroller.go PodController.Run, node/pod.go updatePodStatus) as it is; %s",
			key, argv(c), hook, t.ExitCode, t.Message, preStopWord, corev1.TerminationMessagePathDefault, e.providerCallsOf(key))
	}
}

// lifecycleOf is c's lifecycle, empty when it has none.
func lifecycleOf(c corev1.Container) corev1.Lifecycle {
	if c.Lifecycle == nil {
		return corev1.Lifecycle{}
	}
	return *c.Lifecycle
}

// failedPostStartRestarts runs, under restartPolicy Always, a container
// that would run for good but whose postStart hook fails, and waits for VK
// to publish it restarted (the node e2e tests' hook failures,
// test/e2e/common/node/lifecycle_hook.go, read the same from the
// container's restart count).
func failedPostStartRestarts(e *env) {
	p := e.createPod(podRunning("post-start-fails", corev1.RestartPolicyAlways, e.w.FailsPostStart()))
	key := podKey(p)
	c := p.Spec.Containers[0]
	hook := hookCommand(lifecycleOf(c).PostStart)
	var last *corev1.Pod
	restarted := func() bool {
		last = e.livePod(p)
		if ph := last.Status.Phase; ph == corev1.PodSucceeded || ph == corev1.PodFailed {
			e.failf("VK published pod %s (restartPolicy Always), whose container's postStart hook (%s) fails, as %s: the kubelet kills such a "+
				"container and restarts it, the pod Running meanwhile; VK never publishes a status of a terminal pod again "+
				"(node/pod.go shouldSkipPodStatusUpdate), so it would stay %s for good; %s", key, hook, ph, ph, describeStatus(last))
		}
		return len(last.Status.ContainerStatuses) > 0 && last.Status.ContainerStatuses[0].RestartCount > 0
	}
	// The kill once the hook fails, the kubelet's back-off of 10s, and VK.
	bound := 10*time.Second + statusBound
	if !e.await(bound, restarted) {
		e.failf("VK did not publish the container of pod %s (restartPolicy Always; %q), whose postStart hook (%s) fails, restarted within %v: "+
			"it published %s. The kubelet kills a container whose postStart hook fails (kuberuntime_container.go startContainer: killContainer "+
			"with reason FailedPostStartHook, then ErrPostStartHook) and restarts it as the restart policy says, counting the restart; "+
			"VK runs no hook and publishes the provider's restart count as it is%s; %s",
			key, argv(c), hook, bound, describeStatus(last), publishedAsReported, e.providerCallsOf(key))
	}
}
