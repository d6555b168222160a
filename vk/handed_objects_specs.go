package vk

import (
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-013", Level: Should,
			Title: "objects the provider answered (GetPod, GetPodStatus, GetPods) or notified (the NotifyPods callback) are never changed by it afterwards",
			VK: "node/podcontroller.go PodLifecycleHandler.GetPod, GetPodStatus, GetPods (doc: expected to be immutable, may be accessed concurrently outside the calling goroutine), deleteDanglingPods (reads GetPods' pods in goroutines of its own after GetPods returned); " +
				"PodController.Run (the NotifyPods callback copies the pod before it keeps it as knownPod.lastPodStatusReceivedFromProvider); node/sync.go syncProviderWrapper.updatePodStatus (copies GetPodStatus' answer at once)"},
			run: handedObjectsStayUnchanged},
	)
}

// getPodStatusIfSync asks a sync provider for p's status, as VK's
// syncProviderWrapper does (node/sync.go); VK never calls GetPodStatus of
// an async provider (PodController.Run wraps only a sync one).
func (e *env) getPodStatusIfSync(p *corev1.Pod) {
	if !e.async {
		_, _ = e.pods.GetPodStatus(e.ctx, p.Namespace, p.Name)
	}
}

// handedObjectsStayUnchanged drives a pod through what changes the
// provider's view of it (it runs, its labels change, a second pod comes and
// goes), asks the provider directly too, then stops VK, waits for the
// provider's calls to return and compares every object the provider handed
// over with the copy taken when it did.
func handedObjectsStayUnchanged(e *env) {
	p := e.runPod("handed")
	key := podKey(p)
	_, _ = e.pods.GetPod(e.ctx, p.Namespace, p.Name)
	e.getPodStatusIfSync(p)
	_, _ = e.pods.GetPods(e.ctx)
	cur := e.apiPod(p.Namespace, p.Name)
	cur.Labels["handed"] = "changed"
	if _, err := e.judge.api.CoreV1().Pods(p.Namespace).Update(e.ctx, cur, metav1.UpdateOptions{}); err != nil {
		e.failf("precondition: updating the labels of pod %s in the API server: %v", key, err)
	}
	if !e.await(statusBound, func() bool { return len(e.calls.of("UpdatePod", key)) > 0 }) {
		e.failf("precondition: VK did not call UpdatePod within %v after the labels of pod %s changed; %s", statusBound, key, e.providerCallsOf(key))
	}
	other := e.runPod("handed-other")
	e.sleep(2 * 5 * time.Second) // two polls of a sync provider
	_, _ = e.pods.GetPod(e.ctx, p.Namespace, p.Name)
	e.getPodStatusIfSync(p)
	_, _ = e.pods.GetPods(e.ctx)
	e.deleteInAPI(other)
	e.sleep(2 * 5 * time.Second) // DeletePod, and the terminal status it leads to
	_, _ = e.pods.GetPod(e.ctx, p.Namespace, p.Name)
	e.getPodStatusIfSync(p)
	_, _ = e.pods.GetPods(e.ctx)

	e.stopPods()
	const bound = 10 * time.Second
	if !e.calls.close(bound) {
		e.failf("a call to the provider had not returned %v after VK stopped: the objects it handed over cannot be compared", bound)
	}
	handed := e.calls.handedOver()
	for _, h := range handed {
		if d := cmp.Diff(h.Copy, h.Obj); d != "" {
			e.failf("what %s handed VK at %v was changed by the provider afterwards (-as handed over +now):\n%s\n"+
				"VK's PodLifecycleHandler (node/podcontroller.go) expects answers it may read from other goroutines to stay as they are "+
				"(deleteDanglingPods reads GetPods' pods after GetPods returned; the NotifyPods callback and syncProviderWrapper.updatePodStatus, node/sync.go, "+
				"copy pods and statuses while the provider may be changing them): a change races VK's reads (a data race, which go test -race reports "+
				"when it catches one), and a pod VK reads while it changes can be torn; answer a copy (DeepCopy) and replace it, never change it",
				h.What, h.At.Format(time.TimeOnly), d)
		}
	}
	if len(handed) == 0 {
		e.failf("precondition: the provider handed VK no object (GetPod, GetPodStatus, GetPods and the NotifyPods callback never answered one)")
	}
}
