package vk

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The spec of termination messages (CapTerminationMessages).

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-021", Level: Must, Capabilities: []Capability{CapTerminationMessages},
			Title: "a container that exits is published terminated with its termination message: what it wrote to its terminationMessagePath, or under FallbackToLogsOnError the tail of its log",
			VK:    "node/pod.go updatePodStatus (publishes the provider's container statuses, their terminated state's message included, as they are); node/sync.go syncProviderWrapper.updatePodStatus"},
			run: terminationMessagesPublished},
	)
}

// The words the containers of KVK-POD-021 write.
const (
	terminationWord = "vk-conformance-finished"
	logWord         = "vk-conformance-crashed"
)

func terminationMessagesPublished(e *env) {
	p := newPod("termination-message")
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	written := e.w.WritesTerminationMessage(terminationWord, 3)
	written.Name = "writes"
	logged := e.w.LogsAndExits(logWord, 2)
	logged.Name, logged.TerminationMessagePolicy = "logs", corev1.TerminationMessageFallbackToLogsOnError
	p.Spec.Containers = []corev1.Container{written, logged}
	p = e.createPod(p)
	key := podKey(p)
	terminated := func(cur *corev1.Pod) bool {
		if cur == nil || len(cur.Status.ContainerStatuses) != len(p.Spec.Containers) {
			return false
		}
		for _, cs := range cur.Status.ContainerStatuses {
			if cs.State.Terminated == nil {
				return false
			}
		}
		return true
	}
	var last *corev1.Pod
	if !e.await(statusBound, func() bool { last = e.apiPod(p.Namespace, p.Name); return terminated(last) }) {
		e.failf("precondition: VK did not publish both containers of pod %s (restartPolicy Never; %q and %q, which exit at once) terminated within %v: "+
			"it published %s; %s", key, argv(written), argv(logged), statusBound, describeStatus(last), e.providerCallsOf(key))
	}
	for _, cs := range last.Status.ContainerStatuses {
		msg := cs.State.Terminated.Message
		switch cs.Name {
		case written.Name:
			// The kubelet puts the runtime's own message, if any, before it:
			// "<runtime message>: <termination message>"
			// (kuberuntime_container.go, convertToKubeContainerStatus).
			if !strings.HasSuffix(msg, terminationWord) {
				e.failf("VK published container %s of pod %s (%q) terminated with message %q: the container wrote %q to its terminationMessagePath (%s), "+
					"which the kubelet reports as the terminated state's message (kuberuntime_container.go, getTerminationMessage), and a Job's "+
					"pod failure policy, kubectl describe and whoever debugs the pod read it there%s",
					cs.Name, key, argv(written), msg, terminationWord, corev1.TerminationMessagePathDefault, publishedAsReported)
			}
		case logged.Name:
			if !strings.Contains(msg, logWord) {
				e.failf("VK published container %s of pod %s (%q, terminationMessagePolicy FallbackToLogsOnError, exit code 2) terminated with message %q: "+
					"it failed and wrote no termination message, so the kubelet reports the tail of its log (%q; kuberuntime_container.go, "+
					"convertToKubeContainerStatus, readLastStringFromContainerLogs)%s", cs.Name, key, argv(logged), msg, logWord, publishedAsReported)
			}
		}
	}
}
