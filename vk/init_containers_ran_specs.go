package vk

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// An init container reported completed must have run: KVK-POD-019 judges
// the order the statuses show, this spec what the init container itself
// left (its termination message), which a backend that reports init
// containers completed without running them cannot show.

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-035", Level: Must, Capabilities: []Capability{CapInitContainers, CapTerminationMessages},
			Title: "an init container reported completed has run: its terminated state carries the termination message it wrote",
			VK: "node/pod.go updatePodStatus (publishes the provider's InitContainerStatuses as they are: the pod Initialized and its app containers started " +
				"though the init container's work was never done); node/sync.go syncProviderWrapper.updatePodStatus"},
			run: initContainersReallyRan},
	)
}

const initRanWord = "init-ran"

func initContainersReallyRan(e *env) {
	p := e.createPod(podWithInits("init-ran", corev1.RestartPolicyAlways, e.w.WritesTerminationMessage(initRanWord, 0)))
	key := podKey(p)
	cmd := argv(p.Spec.InitContainers[0])
	done := func(st corev1.PodStatus) bool {
		return initCompleted(st, "init-1") && running(&corev1.Pod{Spec: p.Spec, Status: st})
	}
	var last *corev1.Pod
	if !e.await(2*statusBound, func() bool { last = e.apiPod(p.Namespace, p.Name); return last != nil && done(last.Status) }) {
		e.failf("precondition: VK did not publish pod %s (init container init-1 %q, then app) Running with init-1 terminated with exit code 0 within %v: "+
			"it published %s; %s; %s", key, cmd, 2*statusBound, describeStatus(last), describeInits(statusOf(last)), e.providerCallsOf(key))
	}
	for i, st := range e.judge.api.StatusHistory(p.Namespace, p.Name) {
		for _, cs := range st.InitContainerStatuses {
			t := cs.State.Terminated
			if t == nil || t.ExitCode != 0 {
				continue
			}
			if !strings.HasSuffix(t.Message, initRanWord) {
				e.failf("status %d VK published for pod %s reports init container %s (%q, which writes %q to its terminationMessagePath, then exits 0) "+
					"completed with exit code 0 and termination message %q: it never ran, or its message was lost; %s. "+
					"An app container that needs what its init containers set up starts without it%s",
					i+1, key, cs.Name, cmd, initRanWord, t.Message, describeInits(st), publishedAsReported)
			}
		}
	}
}
