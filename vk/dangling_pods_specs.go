package vk

import (
	"fmt"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The pods a VK that starts finds in the provider and not in the API
// server, whatever their phase (KVK-POD-011 has a running one).

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-031", Level: Must, Capabilities: []Capability{CapStartFailures},
			Title: "GetPods lists every pod the provider has, Pending and Failed ones too, so that a VK that starts deletes those the API server no longer has",
			VK: "node/podcontroller.go PodController.Run, deleteDanglingPods (GetPods once at start; DeletePod of each pod listed that the API server lacks, " +
				"whatever its phase; a pod left out is never deleted)"},
			run: danglingPodsOfAnyPhaseAreDeleted},
	)
}

// danglingPodsOfAnyPhaseAreDeleted has VK run a pod whose container cannot
// start (Pending) and one whose container exited 1 under restartPolicy
// Never (Failed), stops VK, deletes both from the API server while it is
// down (grace period 0, as kubectl delete --force does), and starts another
// VK over the same provider.
func danglingPodsOfAnyPhaseAreDeleted(e *env) {
	pending := e.createPod(podRunning("dangling-pending", corev1.RestartPolicyAlways, e.w.FailsToStart()))
	failed := e.createPod(podRunning("dangling-failed", corev1.RestartPolicyNever, e.w.ExitsAfter(time.Second, 1)))
	was := map[string]corev1.PodPhase{} // the phase VK published before it went down
	published := func(p *corev1.Pod, phase corev1.PodPhase) {
		was[podKey(p)] = phase
		var last *corev1.Pod
		if !e.await(statusBound, func() bool { last = e.apiPod(p.Namespace, p.Name); return last != nil && last.Status.Phase == phase }) {
			e.failf("precondition: VK did not publish pod %s (%q, restartPolicy %s) %s within %v: it published %s; %s",
				podKey(p), argv(p.Spec.Containers[0]), p.Spec.RestartPolicy, phase, statusBound, describeStatus(last), e.providerCallsOf(podKey(p)))
		}
	}
	published(pending, corev1.PodPending)
	published(failed, corev1.PodFailed)
	e.stopPods()
	for _, p := range []*corev1.Pod{pending, failed} {
		if err := e.judge.api.CoreV1().Pods(p.Namespace).Delete(e.ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
			e.failf("precondition: deleting pod %s in the API server: %v", podKey(p), err)
		}
	}
	// The new VK reads GetPods once, at its start (deleteDanglingPods),
	// and GetPods may answer from a cache (PodLifecycleHandler's doc): it
	// starts once GetPods lists both pods, as a VK that restarts a while
	// after they ran would find them, or after statusBound, and a GetPods
	// that leaves them out fails below.
	e.await(statusBound, func() bool {
		pods, _ := e.pods.GetPods(e.ctx)
		n := 0
		for _, q := range pods {
			if k := podKey(q); k == podKey(pending) || k == podKey(failed) {
				n++
			}
		}
		return n == 2
	})
	mark := e.calls.len()
	stop, err := e.judge.startPods(e.ctx, e.pods)
	if err != nil {
		e.failf("precondition: the second PodController did not start: %v", err)
	}
	e.stopPods = stop
	for _, p := range []*corev1.Pod{pending, failed} {
		key := podKey(p)
		deletes := e.calls.since(mark, "DeletePod", key)
		if len(deletes) > 0 {
			if err := deletes[0].Err; err != nil && !errdefs.IsNotFound(err) {
				e.failf("DeletePod of pod %s, which a VK that started found in the provider and not in the API server, answered %q: "+
					"VK's deleteDanglingPods (node/podcontroller.go) logs it and never tries again", key, err)
			}
			// DeletePod answered nil: the provider lets the pod go within
			// its grace period.
			listed := func() bool {
				pods, _ := e.pods.GetPods(e.ctx)
				for _, q := range pods {
					if podKey(q) == key {
						return true
					}
				}
				return false
			}
			if e.await(goneBound(p), func() bool { return !listed() }) {
				continue
			}
			e.failf("%v after DeletePod of pod %s (phase %s when VK went down), which a VK that started found in the provider and not in the API server, "+
				"answered %v, GetPods still lists it: VK's deleteDanglingPods (node/podcontroller.go) calls DeletePod once and never again until it restarts",
				goneBound(p), key, was[key], deletes[0].Err)
		}
		still, _ := e.pods.GetPod(e.ctx, p.Namespace, p.Name)
		if still == nil {
			continue // the provider forgot it: nothing to delete
		}
		listed := "no pod"
		if pods, err := e.pods.GetPods(e.ctx); err == nil {
			listed = fmt.Sprint(len(pods), " pods")
		}
		e.failf("a VK that started never deleted pod %s, which the API server no longer has and the provider still has (GetPod answers it, phase %q): "+
			"VK's deleteDanglingPods (node/podcontroller.go) deletes, once at start, the pods GetPods lists that the API server lacks, "+
			"and GetPods left it out (it lists %s now); nothing deletes it until VK starts again, and a pod that cannot start keeps being retried by the backend",
			key, still.Status.Phase, listed)
	}
}
