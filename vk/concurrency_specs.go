package vk

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Several pods through VK at once: VK's PodController runs two workers
// (nodeutil's default is more), its status queue a worker of its own, and a
// provider's notifications come from the provider's goroutines, so the
// provider's methods run concurrently for different pods. Run it (and the
// provider's own tests) with -race: the spec judges what VK publishes,
// the race detector what the provider's memory sees.

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-036", Level: Must,
			Title: "pods created, restarted, updated and deleted at the same time are each handled and published as if alone: a pod's deletion holds back no other pod's status",
			VK: "node/podcontroller.go PodController.Run (podSyncWorkers workers call CreatePod, UpdatePod and DeletePod of different pods concurrently; " +
				"the NotifyPods callback may be called from any goroutine), syncPodInProvider; node/pod.go enqueuePodStatusUpdate, updatePodStatus " +
				"(a status never notified is never published); node/sync.go syncProviderWrapper.syncPodStatuses"},
			run: podsAtOnce},
	)
}

// podsAtOnce starts four pods at once (two that run until stopped, one whose
// container exits after 2s and is restarted after the back-off, one whose
// SIGTERM handler takes 20s), then, while the third waits for its restart
// and the fourth is stopping, deletes the first and the fourth, creates two
// more and relabels the second, the creations once the fourth's DeletePod
// was called. Without CapContainerRestarts
// there is no third pod, without CapGracePeriod the fourth stops at once:
// the spec needs no capability.
func podsAtOnce(e *env) {
	mk := func(prefix string, policy corev1.RestartPolicy, c corev1.Container) *corev1.Pod {
		p := podRunning(prefix, policy, c)
		// A container name of its own: a status of one pod published for
		// another shows.
		p.Spec.Containers[0].Name = prefix
		return p
	}
	has := func(c Capability) bool { return slices.Contains(e.cfg.Capabilities, c) }
	pause := newPod("pause").Spec.Containers[0]
	steady := []*corev1.Pod{mk("steady-a", corev1.RestartPolicyAlways, pause), mk("steady-b", corev1.RestartPolicyAlways, pause)}
	slowC := pause
	if has(CapGracePeriod) {
		slowC = e.w.TrapsSIGTERM(20*time.Second, 0)
	}
	slow := mk("slow-stop", corev1.RestartPolicyAlways, slowC)
	var crash *corev1.Pod
	all := []*corev1.Pod{e.createPod(steady[0]), e.createPod(steady[1]), e.createPod(slow)}
	steady[0], steady[1], slow = all[0], all[1], all[2]
	if has(CapContainerRestarts) {
		crash = e.createPod(mk("crash", corev1.RestartPolicyAlways, e.w.ExitsAfter(2*time.Second, 1)))
		all = append(all, crash)
	}
	started := func(p *corev1.Pod) bool {
		cur := e.apiPod(p.Namespace, p.Name)
		if cur == nil || len(cur.Status.ContainerStatuses) != 1 {
			return false
		}
		cs := cur.Status.ContainerStatuses[0]
		return cs.State.Running != nil || cs.RestartCount > 0 || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil
	}
	for _, p := range all {
		if !e.await(statusBound, func() bool { return started(p) }) {
			e.failf("precondition: VK did not publish pod %s, created with other pods at once, with its container started within %v: it published %s; %s",
				podKey(p), statusBound, describeStatus(e.apiPod(p.Namespace, p.Name)), e.providerCallsOf(podKey(p)))
		}
	}
	// All at once: two deletions (one that takes 20s), two creations, a
	// change of labels, while crash's container waits for its restart.
	e.deleteInAPI(steady[0])
	e.deleteInAPI(slow)
	// The creations come once slow's DeletePod has been called: while it
	// stops (20s with CapGracePeriod).
	if !e.await(statusBound, func() bool { return len(e.calls.of("DeletePod", podKey(slow))) > 0 }) {
		e.failf("precondition: VK did not call DeletePod for pod %s within %v after it was deleted; %s", podKey(slow), statusBound, e.providerCallsOf(podKey(slow)))
	}
	fresh := []*corev1.Pod{e.createPod(mk("fresh-a", corev1.RestartPolicyAlways, pause)), e.createPod(mk("fresh-b", corev1.RestartPolicyAlways, pause))}
	cur := e.livePod(steady[1])
	cur.Labels["at-once"] = "yes"
	if _, err := e.judge.api.CoreV1().Pods(cur.Namespace).Update(e.ctx, cur, metav1.UpdateOptions{}); err != nil {
		e.failf("precondition: updating the labels of pod %s in the API server: %v", podKey(cur), err)
	}
	type check struct {
		what string
		ok   func() bool
		pod  *corev1.Pod
	}
	checks := []check{
		{"gone from the API server (deleted)", func() bool { return e.apiPod(steady[0].Namespace, steady[0].Name) == nil }, steady[0]},
		{"gone from the API server (deleted; its SIGTERM handler takes 20s)", func() bool { return e.apiPod(slow.Namespace, slow.Name) == nil }, slow},
		{"published Running (created while two pods were being deleted)", func() bool { return running(e.apiPod(fresh[0].Namespace, fresh[0].Name)) }, fresh[0]},
		{"published Running (created while two pods were being deleted)", func() bool { return running(e.apiPod(fresh[1].Namespace, fresh[1].Name)) }, fresh[1]},
		{"relabelled through UpdatePod", func() bool {
			for _, c := range e.calls.of("UpdatePod", podKey(steady[1])) {
				if c.Pod.Labels["at-once"] == "yes" && c.Err == nil {
					return true
				}
			}
			return false
		}, steady[1]},
	}
	if crash != nil {
		checks = append(checks, check{"published with its container restarted (restart count 1 or more in some status; it exits 1 after 2s, back-off 10s)", func() bool {
			for _, st := range e.judge.api.StatusHistory(crash.Namespace, crash.Name) {
				if len(st.ContainerStatuses) == 1 && st.ContainerStatuses[0].RestartCount > 0 {
					return true
				}
			}
			return false
		}, crash})
	}
	bound := goneBound(slow)
	allOK := func() bool {
		for _, c := range checks {
			if !c.ok() {
				return false
			}
		}
		return true
	}
	if !e.await(bound, allOK) {
		var missed []string
		for _, c := range checks {
			if !c.ok() {
				missed = append(missed, fmt.Sprintf("pod %s not %s: VK published %s; %s", podKey(c.pod), c.what,
					describeStatus(e.apiPod(c.pod.Namespace, c.pod.Name)), e.providerCallsOf(podKey(c.pod))))
			}
		}
		e.failf("with several pods created, restarted, relabelled and deleted at once, within %v:\n%s\n"+
			"VK hands the provider each pod as it comes (node/podcontroller.go: two workers call CreatePod, UpdatePod and DeletePod of different pods "+
			"concurrently) and publishes each pod's status as the provider reports it (node/pod.go enqueuePodStatusUpdate, updatePodStatus): "+
			"a status never reported (a notification dropped or held back while another pod is being deleted) is never published",
			bound, strings.Join(missed, "\n"))
	}
	if !running(e.apiPod(steady[1].Namespace, steady[1].Name)) {
		e.failf("pod %s, relabelled while other pods were created and deleted, is published %s", podKey(steady[1]), describeStatus(e.apiPod(steady[1].Namespace, steady[1].Name)))
	}
	// No pod was published with another's status.
	for _, p := range append(all, fresh...) {
		for i, st := range e.judge.api.StatusHistory(p.Namespace, p.Name) {
			for _, cs := range st.ContainerStatuses {
				if !slices.ContainsFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == cs.Name }) {
					e.failf("status %d VK published for pod %s reports container %q, which is not the pod's (its container is %q): "+
						"a status of another pod, published for this one; VK publishes the status the provider reports for the pod's name%s",
						i+1, podKey(p), cs.Name, p.Spec.Containers[0].Name, publishedAsReported)
				}
			}
		}
	}
}
