package vk

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-001", Level: Must,
			Title: "a pod created in the API server is published Running with its containers running and ready",
			VK:    "node/pod.go createOrUpdatePod, updatePodStatus; node/sync.go syncProviderWrapper.updatePodStatus (sync providers)"},
			run: podCreatedIsPublishedRunning},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-002", Level: Must,
			Title: "GetPod (and, of a sync provider, GetPodStatus) of a pod the provider does not run answer nil",
			VK:    "node/pod.go createOrUpdatePod (a non-nil GetPod means UpdatePod, not CreatePod); node/sync.go syncProviderWrapper.updatePodStatus (a non-nil status is published)"},
			run: unknownPodIsNil},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-003", Level: Should,
			Title: "the error of GetPod (and, of a sync provider, GetPodStatus) for a pod the provider does not run is nil or errdefs.IsNotFound",
			VK:    "errdefs/notfound.go IsNotFound (follows Cause, not Unwrap); node/podcontroller.go syncPodFromKubernetesHandler; node/sync.go syncProviderWrapper.updatePodStatus"},
			run: unknownPodErrorIsNotFound},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-004", Level: Must,
			Title: "a pod changed in the API server right after CreatePod returned runs on: VK's re-sync neither fails it nor starts its containers again",
			VK: "node/podcontroller.go UpdateFunc (a label change enqueues a sync: podShouldEnqueue), syncPodInProvider; " +
				"node/pod.go createOrUpdatePod (CreatePod again whenever GetPod answers nil), handleProviderError (an error publishes Pending/ProviderFailed, Failed under restartPolicy Never)"},
			run: resyncAfterCreateKeepsThePod},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-005", Level: Must,
			Title: "a pod deleted in the API server is deleted in the provider and goes away from the API server, not stuck Terminating",
			VK:    "node/podcontroller.go syncPodInProvider (deletePodsFromKubernetes enqueued only once DeletePod answered nil or NotFound), deletePodsFromKubernetesHandler"},
			run: deletedPodGoesAway},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-006", Level: Must,
			Title: "DeletePod of a pod the provider does not run answers nil or errdefs.IsNotFound",
			VK:    "node/podcontroller.go syncPodInProvider, syncPodFromKubernetesHandler, deleteDanglingPods (any other error is retried and leaves the pod Terminating)"},
			run: deleteUnknownPodIsNotFound},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-007", Level: Must,
			Title: "a pod deleted and created again under the same name (a new UID) is created anew and published Running",
			VK:    "node/pod.go createOrUpdatePod (CreatePod only when GetPod answers nil, else UpdatePod or nothing: podsEqual)"},
			run: recreatedPodRunsAnew},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-008", Level: Must,
			Title: "a pod the provider keeps running stays published Running, its containers never restarted",
			VK:    "node/sync.go syncProviderWrapper.updatePodStatus (GetPodStatus NotFound for a Running pod older than a minute publishes Failed/NotFound); node/pod.go updatePodStatus"},
			run: runningPodStaysRunning},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-009", Level: Should,
			Title: "GetPod answers the fields podsEqual compares as CreatePod got them",
			VK:    "node/pod.go createOrUpdatePod, podsEqual, podsEqualWithResolvedEnvs (a difference makes VK call UpdatePod on every sync)"},
			run: getPodRoundTrips},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-010", Level: Must,
			Title: "after DeletePod VK publishes a terminal status with every container terminated",
			VK:    "node/podcontroller.go PodLifecycleHandler.DeletePod (doc: notify a terminal status); node/sync.go syncProviderWrapper.DeletePod (does it for sync providers); node/pod.go updatePodStatus"},
			run: deletedPodEndsTerminal},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-011", Level: Must,
			Title: "a pod the provider runs that the API server does not have is listed by GetPods when VK starts, and deleted",
			VK:    "node/podcontroller.go PodController.Run, deleteDanglingPods (GetPods once at start; DeletePod of each pod missing from the API server, not retried)"},
			prepare: runLeftoverPod, run: leftoverPodIsDeleted},
	)
}

func podCreatedIsPublishedRunning(e *env) {
	p := e.createPod(newPod("created"))
	var last *corev1.Pod
	ready := func() bool {
		last = e.apiPod(p.Namespace, p.Name)
		if !running(last) {
			return false
		}
		for _, cs := range last.Status.ContainerStatuses {
			if !cs.Ready {
				return false
			}
		}
		return true
	}
	if !e.await(statusBound, ready) {
		how := "NotifyPods"
		if !e.async {
			how = "GetPodStatus, which VK polls every 5s (node/sync.go syncProviderWrapper.syncPodStatuses)"
		}
		e.failf("VK published pod %s as %s %v after it was created, not Running with every container running and ready: "+
			"VK publishes what the provider reports through %s (node/pod.go updatePodStatus); %s",
			podKey(p), describeStatus(last), statusBound, how, e.providerCallsOf(podKey(p)))
	}
	if n := len(e.calls.of("CreatePod", podKey(p))); n == 0 {
		e.failf("the pod runs but VK never called CreatePod")
	}
}

func unknownPodIsNil(e *env) {
	name := "never-created-" + string(uuid.NewUUID())[:8]
	// VK asks GetPod of every pod it has not given the provider yet
	// (createOrUpdatePod, node/pod.go), after NotifyPods (PodController.Run).
	var pod *corev1.Pod
	var err error
	e.direct("GetPod("+Namespace+"/"+name+")", func() { pod, err = e.pods.GetPod(e.ctx, Namespace, name) })
	if pod != nil {
		e.failf("GetPod(%q, %q) of a pod the provider never got answered a pod (error %v): VK's createOrUpdatePod (node/pod.go) "+
			"takes any non-nil answer for a pod the provider runs, and calls UpdatePod (or nothing, if podsEqual) instead of CreatePod: "+
			"the pod would never be created", Namespace, name, err)
	}
	// VK reads GetPodStatus only through syncProviderWrapper (node/sync.go),
	// which it wraps around a sync provider alone (PodController.Run).
	if !e.async {
		var st *corev1.PodStatus
		e.direct("GetPodStatus("+Namespace+"/"+name+")", func() { st, err = e.pods.GetPodStatus(e.ctx, Namespace, name) })
		if st != nil {
			e.failf("GetPodStatus(%q, %q) of a pod the provider never got answered a status (phase %q, error %v): "+
				"VK's syncProviderWrapper.updatePodStatus (node/sync.go) publishes any non-nil status it gets", Namespace, name, st.Phase, err)
		}
	}
	// And VK, for a pod it has not given the provider yet, calls CreatePod.
	p := e.createPod(newPod("fresh"))
	if !e.await(statusBound, func() bool { return len(e.calls.of("CreatePod", podKey(p))) > 0 }) {
		e.failf("VK did not call CreatePod for new pod %s within %v: createOrUpdatePod (node/pod.go) calls it only when GetPod answers nil; %s",
			podKey(p), statusBound, e.providerCallsOf(podKey(p)))
	}
}

func unknownPodErrorIsNotFound(e *env) {
	name := "never-created-" + string(uuid.NewUUID())[:8]
	// VK asks GetPod of a pod gone from the API server
	// (syncPodFromKubernetesHandler), and GetPodStatus, of a sync provider
	// only, of each pod it polls (node/sync.go).
	var err error
	e.direct("GetPod("+Namespace+"/"+name+")", func() { _, err = e.pods.GetPod(e.ctx, Namespace, name) })
	if err != nil && !errdefs.IsNotFound(err) {
		e.failf("GetPod of a pod the provider does not run answered %q, which VK does not read as NotFound%s: "+
			"once the pod is gone from the API server, VK's syncPodFromKubernetesHandler (node/podcontroller.go) takes it for a failure "+
			"and retries the key with back-off, up to 20 times", err, causeHint(err))
	}
	if e.async {
		return
	}
	e.direct("GetPodStatus("+Namespace+"/"+name+")", func() { _, err = e.pods.GetPodStatus(e.ctx, Namespace, name) })
	if err != nil && !errdefs.IsNotFound(err) {
		e.failf("GetPodStatus of a pod the provider does not run answered %q, which VK does not read as NotFound%s: "+
			"VK's syncProviderWrapper.updatePodStatus (node/sync.go) then returns the error and never publishes a pod the provider lost as Failed/NotFound",
			err, causeHint(err))
	}
}

// causeHint explains why an error that looks NotFound is not NotFound to VK.
func causeHint(err error) string {
	if wrapsNotFound(err) {
		return " (it wraps an errdefs NotFound error with Unwrap, as fmt.Errorf's %w does; errdefs.IsNotFound follows only Cause(), as github.com/pkg/errors' Wrap provides)"
	}
	return " (errdefs.IsNotFound)"
}

// resyncAfterCreateKeepsThePod has VK sync a pod again right after
// CreatePod returned, as it does when the pod changes in the API server
// (a label a controller or a user adds to a pod just bound): the
// informer's UpdateFunc enqueues the key (podShouldEnqueue: podsEqual
// compares the labels), and createOrUpdatePod asks GetPod again. The
// suite never calls CreatePod itself: VK calls it a second time only when
// GetPod answers nil then (a provider whose GetPod reads a cache that lags
// its CreatePod), and a provider whose GetPod answers the pod once
// CreatePod has returned gets UpdatePod instead.
func resyncAfterCreateKeepsThePod(e *env) {
	p := e.createPod(newPod("resynced"))
	key := podKey(p)
	// Polled every 10ms: the first change comes at once after CreatePod
	// returned, while a cache behind GetPod may still lag it.
	if !e.awaitEvery(10*time.Millisecond, statusBound, func() bool { return len(e.calls.of("CreatePod", key)) > 0 }) {
		e.failf("precondition: VK did not call CreatePod for new pod %s within %v; %s", key, statusBound, e.providerCallsOf(key))
	}
	first := e.calls.of("CreatePod", key)[0]
	// A status the provider notified while VK created the pod (VK's mock
	// provider notifies from CreatePod) is on its way through VK's status
	// queue (node/pod.go enqueuePodStatusUpdate): the change comes once VK
	// has published it, so that the pod VK hands over on the re-sync carries
	// it, on the real clock as in virtual time. A provider that has
	// reported nothing yet gets the change at once.
	if reports := e.reportsOf(key); len(reports) > 0 {
		want := reports[len(reports)-1].Phase
		e.awaitEvery(10*time.Millisecond, statusBound, func() bool { cur := e.apiPod(p.Namespace, p.Name); return cur != nil && cur.Status.Phase == want })
	}
	mark := e.calls.len()
	// Three changes, the first at once, then every half second: each is a sync of VK while the provider may
	// still be catching up with its CreatePod.
	for i := range 3 {
		if i > 0 {
			e.sleep(500 * time.Millisecond)
		}
		e.relabel(p, "resync", fmt.Sprint(i))
	}
	var last *corev1.Pod
	e.await(statusBound, func() bool { last = e.apiPod(p.Namespace, p.Name); return running(last) })
	e.sleep(2 * 5 * time.Second) // two polls of a sync provider
	creates := e.calls.since(mark, "CreatePod", key)
	why := fmt.Sprintf("after the first CreatePod (answered %v) VK's re-syncs got from GetPod %s and called CreatePod %d more times (%s), UpdatePod %d times",
		first.Err, describeGets(e.calls.since(mark, "GetPod", key)), len(creates), describeErrs(creates), len(e.calls.since(mark, "UpdatePod", key)))
	hist := e.judge.api.StatusHistory(p.Namespace, p.Name)
	for _, st := range hist {
		if st.Reason == "ProviderFailed" {
			e.failf("VK published pod %s as %s when it synced the pod again, a change (a label) made in the API server right after CreatePod returned: "+
				"createOrUpdatePod (node/pod.go) calls CreatePod whenever GetPod answers nil, and handleProviderError publishes a CreatePod error "+
				"Pending/ProviderFailed (Failed under restartPolicy Never); a provider whose GetPod lags its CreatePod must answer that CreatePod nil "+
				"and start nothing again; %s", key, describeStatus(&corev1.Pod{Status: st}), why)
		}
	}
	if !running(last) {
		hint := ""
		if len(e.calls.since(mark, "UpdatePod", key)) > 0 {
			hint = "; VK handed the change over with UpdatePod (GetPod answered the pod), and the pod it hands over carries the status the API server " +
				"had then, which right after CreatePod is not yet the provider's (empty, for a sync provider until VK's first poll, node/sync.go): " +
				"a provider that takes that status for its own and reports it back (through NotifyPods or GetPodStatus) has VK publish it (node/pod.go updatePodStatus)"
		}
		e.failf("VK did not publish pod %s Running within %v of a change (a label) made in the API server right after CreatePod returned; "+
			"it published %s; %s%s", key, statusBound, describeStatus(last), why, hint)
	}
	// From the first Running status on, each container keeps the run it
	// started with: in what the provider reported (the NotifyPods callback
	// of an async provider, GetPodStatus of a sync one), which shows a
	// restart even when VK publishes only the latest of two reports (its
	// status queue keeps one per pod), and in what VK published.
	reports := e.reportsOf(key)
	for _, seq := range []struct {
		who      string
		statuses []corev1.PodStatus
	}{{"the provider reported", reports}, {"VK published", hist}} {
		var ran *corev1.PodStatus
		for i := range seq.statuses {
			st := &seq.statuses[i]
			if ran == nil {
				if running(&corev1.Pod{Spec: p.Spec, Status: *st}) {
					ran = st
				}
				continue
			}
			for j, cs := range st.ContainerStatuses {
				if j >= len(ran.ContainerStatuses) {
					break
				}
				was := ran.ContainerStatuses[j]
				if cs.State.Running == nil || cs.ContainerID != was.ContainerID || cs.RestartCount != was.RestartCount ||
					!cs.State.Running.StartedAt.Equal(&was.State.Running.StartedAt) {
					e.failf("after VK synced pod %s again (a change made in the API server right after CreatePod returned), %s container %s "+
						"as %s, container ID %q (was %q), restart count %d (was %d), %s (was started at %v): the container was started again (or stopped); "+
						"createOrUpdatePod (node/pod.go) calls CreatePod whenever GetPod answers nil, and a CreatePod of a pod the provider runs must start nothing; %s",
						key, seq.who, cs.Name, describeStatus(&corev1.Pod{Status: *st}), cs.ContainerID, was.ContainerID, cs.RestartCount, was.RestartCount,
						startedAt(cs), was.State.Running.StartedAt.Time, why)
				}
			}
		}
	}
}

// reportsOf returns the statuses the provider reported of pod key so far,
// oldest first: through the NotifyPods callback (async) or GetPodStatus
// (sync).
func (e *env) reportsOf(key string) []corev1.PodStatus {
	var reports []corev1.PodStatus
	for _, h := range e.calls.handedOver() {
		switch o := h.Copy.(type) {
		case *corev1.Pod:
			if strings.HasPrefix(h.What, "the NotifyPods callback") && podKey(o) == key {
				reports = append(reports, o.Status)
			}
		case *corev1.PodStatus:
			if h.What == "GetPodStatus("+key+")" {
				reports = append(reports, *o)
			}
		}
	}
	return reports
}

// startedAt says when a container's running state began, for messages.
func startedAt(cs corev1.ContainerStatus) string {
	if cs.State.Running == nil {
		return "not running"
	}
	return fmt.Sprintf("started at %v", cs.State.Running.StartedAt.Time)
}

// relabel sets label k=v on pod p in the API server, as 'kubectl label'
// does, again on a conflict with VK's status writes.
func (e *env) relabel(p *corev1.Pod, k, v string) {
	for i := 0; ; i++ {
		cur := e.livePod(p)
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		cur.Labels[k] = v
		_, err := e.judge.api.CoreV1().Pods(p.Namespace).Update(e.ctx, cur, metav1.UpdateOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || i == 10 {
			e.failf("precondition: labelling pod %s in the API server: %v", podKey(p), err)
		}
	}
}

// describeErrs lists what calls answered.
func describeErrs(calls []call) string {
	if len(calls) == 0 {
		return "none"
	}
	var errs []string
	for _, c := range calls {
		errs = append(errs, fmt.Sprint(c.Err))
	}
	return "answers: " + strings.Join(errs, ", ")
}

// deleteInAPI deletes the pod in the API server as kubectl does (the pod's
// own grace period) and returns the time it did.
func (e *env) deleteInAPI(p *corev1.Pod) time.Time {
	if err := e.judge.api.CoreV1().Pods(p.Namespace).Delete(e.ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		e.failf("deleting pod %s in the API server: %v", podKey(p), err)
	}
	return time.Now()
}

// goneBound is how long after a delete the pod may stay in the API server:
// VK removes it DeletionGracePeriodSeconds after DeletePod succeeded
// (syncPodInProvider), plus statusBound.
func goneBound(p *corev1.Pod) time.Duration {
	return time.Duration(*p.Spec.TerminationGracePeriodSeconds)*time.Second + statusBound
}

func deletedPodGoesAway(e *env) {
	p := e.runPod("deleted")
	key := podKey(p)
	e.deleteInAPI(p)
	var last *corev1.Pod
	if !e.await(goneBound(p), func() bool { last = e.apiPod(p.Namespace, p.Name); return last == nil }) {
		deletes := e.calls.of("DeletePod", key)
		why := "VK never called DeletePod"
		if n := len(deletes); n > 0 {
			why = fmt.Sprintf("VK called DeletePod %d times, last answered %v", n, deletes[n-1].Err)
		}
		e.failf("pod %s is still in the API server %v after it was deleted (%s): VK's syncPodInProvider (node/podcontroller.go) "+
			"removes it only once DeletePod has answered nil or errdefs.NotFound, and retries any other answer; %s",
			key, goneBound(p), describeStatus(last), why)
	}
	if len(e.calls.of("DeletePod", key)) == 0 {
		e.failf("pod %s went away from the API server but VK never called DeletePod", key)
	}
}

func deleteUnknownPodIsNotFound(e *env) {
	p := newPod("never-created")
	p.UID = types.UID(uuid.NewUUID())
	p.CreationTimestamp = metav1.Now()
	now := metav1.Now()
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, new(int64(30))
	// VK deletes a pod the provider never got when it was deleted in the
	// API server before VK synced it (syncPodInProvider).
	var err error
	e.direct("DeletePod("+podKey(p)+")", func() { err = e.pods.DeletePod(e.ctx, p) })
	if err != nil && !errdefs.IsNotFound(err) {
		e.failf("DeletePod of pod %s, which the provider never got, answered %q, which VK does not read as NotFound%s: "+
			"VK's syncPodInProvider (node/podcontroller.go) retries it and leaves the pod Terminating in the API server "+
			"(deletePodsFromKubernetes is enqueued only after nil or NotFound); so do syncPodFromKubernetesHandler and deleteDanglingPods",
			podKey(p), err, causeHint(err))
	}
}

func recreatedPodRunsAnew(e *env) {
	first := e.runPod("again")
	key := podKey(first)
	e.deleteInAPI(first)
	if !e.await(goneBound(first), func() bool { return e.apiPod(first.Namespace, first.Name) == nil }) {
		e.failf("precondition: pod %s is still in the API server %v after it was deleted; %s", key, goneBound(first), e.providerCallsOf(key))
	}
	if pod, err := e.pods.GetPod(e.ctx, first.Namespace, first.Name); pod != nil {
		e.notef("after DeletePod the provider's GetPod still answers a pod for %s (UID %s, error %v)", key, pod.UID, err)
	}
	second := newPod("again")
	second.Name = first.Name
	second = e.createPod(second)
	var last *corev1.Pod
	if !e.await(statusBound, func() bool { last = e.apiPod(second.Namespace, second.Name); return running(last) }) {
		e.failf("pod %s, created again (UID %s) after its predecessor (UID %s) was deleted, was not published Running within %v (VK published %s): "+
			"VK's createOrUpdatePod (node/pod.go) calls CreatePod only when GetPod answers nil, and UpdatePod or nothing (podsEqual) otherwise; "+
			"CreatePod was called for UIDs %v",
			key, second.UID, first.UID, statusBound, describeStatus(last), createdUIDs(e, key))
	}
	if uids := createdUIDs(e, key); len(uids) != 2 || uids[1] != second.UID {
		e.failf("pod %s was created again (UID %s) but VK called CreatePod for UIDs %v: createOrUpdatePod (node/pod.go) "+
			"calls CreatePod only when GetPod answers nil; VK now publishes the status of the old pod", key, second.UID, uids)
	}
	for _, cs := range last.Status.ContainerStatuses {
		if startedBefore(cs.State.Running.StartedAt, second.CreationTimestamp) {
			e.failf("pod %s, created again at %v, is published with container %s started at %v, before it existed (to the second): the status of its predecessor",
				key, second.CreationTimestamp.Time, cs.Name, cs.State.Running.StartedAt.Time)
		}
	}
}

func createdUIDs(e *env, key string) []types.UID {
	var uids []types.UID
	for _, c := range e.calls.of("CreatePod", key) {
		if len(uids) == 0 || uids[len(uids)-1] != c.Pod.UID {
			uids = append(uids, c.Pod.UID)
		}
	}
	return uids
}

func runningPodStaysRunning(e *env) {
	p := e.runPod("steady")
	key := podKey(p)
	restarts := map[string]int32{}
	for _, cs := range p.Status.ContainerStatuses {
		restarts[cs.Name] = cs.RestartCount
	}
	const watch = 3 * time.Minute
	end := time.Now().Add(watch)
	for time.Now().Before(end) {
		e.sleep(time.Second)
		cur := e.apiPod(p.Namespace, p.Name)
		if !running(cur) {
			msg := fmt.Sprintf("pod %s, which the provider was not asked to stop, was published %s %v after it ran", key, describeStatus(cur), time.Since(p.Status.StartTime.Time).Round(time.Second))
			if cur != nil && cur.Status.Reason == "NotFound" && !e.async {
				gets := e.calls.of("GetPodStatus", key)
				msg += fmt.Sprintf(": VK's syncProviderWrapper.updatePodStatus (node/sync.go) publishes a Running pod older than a minute Failed/NotFound "+
					"when GetPodStatus answers NotFound (it last answered %v)", lastErr(gets))
			}
			e.failf("%s", msg)
		}
		for _, cs := range cur.Status.ContainerStatuses {
			if cs.RestartCount != restarts[cs.Name] {
				e.failf("pod %s: VK published container %s with restart count %d (it was %d) though the provider was asked nothing", key, cs.Name, cs.RestartCount, restarts[cs.Name])
			}
		}
	}
}

func lastErr(cs []call) error {
	if len(cs) == 0 {
		return nil
	}
	return cs[len(cs)-1].Err
}

// podsEqualFields is what VK's podsEqual (node/pod.go) compares.
type podsEqualFields struct {
	Containers, InitContainers []corev1.Container
	EphemeralContainers        []corev1.EphemeralContainer
	ActiveDeadlineSeconds      *int64
	Tolerations                []corev1.Toleration
	Labels, Annotations        map[string]string
}

func podsEqualOf(p *corev1.Pod) podsEqualFields {
	return podsEqualFields{p.Spec.Containers, p.Spec.InitContainers, p.Spec.EphemeralContainers,
		p.Spec.ActiveDeadlineSeconds, p.Spec.Tolerations, p.Labels, p.Annotations}
}

func getPodRoundTrips(e *env) {
	p := e.runPod("roundtrip")
	key := podKey(p)
	creates := e.calls.of("CreatePod", key)
	if len(creates) == 0 {
		e.failf("the pod runs but VK never called CreatePod")
	}
	got, err := e.pods.GetPod(e.ctx, p.Namespace, p.Name)
	if got == nil {
		e.failf("GetPod of running pod %s answered no pod (error %v)", key, err)
	}
	if d := cmp.Diff(podsEqualOf(creates[len(creates)-1].Pod), podsEqualOf(got)); d != "" {
		e.failf("GetPod of running pod %s does not answer what CreatePod got in the fields VK's podsEqual (node/pod.go) compares "+
			"(-CreatePod +GetPod):\n%s\nVK's createOrUpdatePod calls UpdatePod on every sync of the pod while they differ", key, d)
	}
}

func deletedPodEndsTerminal(e *env) {
	p := e.runPod("ending")
	key := podKey(p)
	e.deleteInAPI(p)
	if !e.await(goneBound(p), func() bool { return e.apiPod(p.Namespace, p.Name) == nil }) {
		e.failf("precondition: pod %s is still in the API server %v after it was deleted; %s", key, goneBound(p), e.providerCallsOf(key))
	}
	hist := e.judge.api.StatusHistory(p.Namespace, p.Name)
	if len(hist) == 0 {
		e.failf("VK never published a status of pod %s", key)
	}
	last := hist[len(hist)-1]
	ok := last.Phase == corev1.PodSucceeded || last.Phase == corev1.PodFailed
	for _, cs := range last.ContainerStatuses {
		ok = ok && cs.State.Terminated != nil
	}
	if !ok {
		e.failf("the last status VK published for pod %s before it went away was %s: DeletePod's contract (node/podcontroller.go, "+
			"PodLifecycleHandler) asks the provider to notify, once the pod is deleted, a terminal status with every container terminated "+
			"(VK's syncProviderWrapper.DeletePod, node/sync.go, does it for sync providers); %s",
			key, describeStatus(&corev1.Pod{Status: last}), e.providerCallsOf(key))
	}
}

// runLeftoverPod gives the provider, before VK starts, a pod the API server
// does not have: one a previous VK left running (its API pod deleted while
// VK was down). It calls the provider as that previous VK did: for an
// async provider NotifyPods first (PodController.Run registers its
// callback before any other call, node/podcontroller.go; the callback is
// gone with that VK: it drops what it gets), then CreatePod. A leftover
// pod has run a while when a VK starts, so it then waits, up to
// statusBound, for GetPods to list it: GetPods may answer from a cache
// (PodLifecycleHandler.GetPods, node/podcontroller.go: "can be cached").
func runLeftoverPod(e *env) {
	const step = "'a pod left over by a previous VK' (KVK-POD-011, before VK starts)"
	if n, ok := e.pods.(node.PodNotifier); ok {
		prev, cancel := context.WithCancel(e.ctx)
		defer cancel() // the previous VK is gone before this spec's VK starts
		e.providerCall(step, "NotifyPods", func() { n.NotifyPods(prev, func(*corev1.Pod) {}) })
	}
	p := newPod("leftover")
	p.UID = types.UID(uuid.NewUUID())
	p.CreationTimestamp = metav1.Now()
	var err error
	e.providerCall(step, "CreatePod("+podKey(p)+")", func() { err = e.pods.CreatePod(e.ctx, p.DeepCopy()) })
	if err != nil {
		e.failf("precondition: CreatePod of pod %s before VK started answered %v", podKey(p), err)
	}
	e.prepared = p
	var listed bool
	e.await(statusBound, func() bool {
		var pods []*corev1.Pod
		e.providerCall(step, "GetPods", func() { pods, err = e.pods.GetPods(e.ctx) })
		listed = err == nil && slices.ContainsFunc(pods, func(q *corev1.Pod) bool { return q != nil && podKey(q) == podKey(p) })
		return listed
	})
	if !listed {
		e.failf("GetPods did not list pod %s, which CreatePod started (it answered nil), within %v (last error: %v): "+
			"VK's deleteDanglingPods (node/podcontroller.go) reads GetPods once, when it starts, to find the pods a previous VK left running; "+
			"a pod GetPods does not list keeps running with no pod in the API server", podKey(p), statusBound, err)
	}
}

func leftoverPodIsDeleted(e *env) {
	p := e.prepared
	key := podKey(p)
	// deleteDanglingPods runs in PodController.Run before it is ready.
	deletes := e.calls.of("DeletePod", key)
	if len(deletes) == 0 {
		var listed []string
		for _, c := range e.calls.of("GetPods", "") {
			listed = append(listed, fmt.Sprintf("error %v", c.Err))
		}
		e.failf("VK never deleted pod %s, which the provider ran when VK started and the API server does not have: "+
			"VK's deleteDanglingPods (node/podcontroller.go) deletes, once at start, the pods GetPods lists that the API server lacks "+
			"(GetPods calls: %v); its containers keep running with no pod in the API server", key, listed)
	}
	if err := deletes[0].Err; err != nil && !errdefs.IsNotFound(err) {
		e.failf("DeletePod of leftover pod %s (the provider's own pod object, as GetPods listed it) answered %q: "+
			"VK's deleteDanglingPods (node/podcontroller.go) logs it and never tries again", key, err)
	}
	// GetPods may answer from a cache: it has up to statusBound to catch up.
	var pods []*corev1.Pod
	var err error
	gone := e.await(statusBound, func() bool {
		e.direct("GetPods", func() { pods, err = e.pods.GetPods(e.ctx) })
		return err == nil && !slices.ContainsFunc(pods, func(q *corev1.Pod) bool { return q != nil && podKey(q) == key })
	})
	if err != nil {
		e.failf("GetPods answered %v", err)
	}
	if !gone {
		e.failf("%v after DeletePod of leftover pod %s answered %v GetPods still lists it: the provider kept it; VK will not delete it again until it restarts "+
			"(node/podcontroller.go deleteDanglingPods)", statusBound, key, deletes[0].Err)
	}
}

// startedBefore reports whether a container that started at started did so
// before a pod created at created existed, at the API server's precision:
// it stores times in seconds (RFC 3339 in JSON), so a start time that went
// through JSON lost its fraction, and one in the second the pod was created
// in is not before it.
func startedBefore(started, created metav1.Time) bool {
	return started.Truncate(time.Second).Before(created.Truncate(time.Second))
}
