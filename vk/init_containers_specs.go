package vk

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The specs of init containers (CapInitContainers): judged on every status
// VK published for the pod (the API server's history of its status
// writes), since VK publishes the provider's InitContainerStatuses and
// ContainerStatuses as they are.

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-019", Level: Must, Capabilities: []Capability{CapInitContainers},
			Title: "init containers run one at a time, in order, each to completion before the app containers start; VK publishes their InitContainerStatuses and the pod Pending until then",
			VK: "node/pod.go updatePodStatus (publishes the provider's InitContainerStatuses, ContainerStatuses and phase as they are), createOrUpdatePod, " +
				"podsEqual (compares spec.initContainers: the provider gets them with the pod); node/sync.go syncProviderWrapper.updatePodStatus"},
			run: initContainersRunInOrder},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-020", Level: Must, Capabilities: []Capability{CapInitContainers},
			Title: "an init container that fails is restarted under restartPolicy Always, the app containers still waiting and the pod never terminal; under restartPolicy Never VK publishes the pod Failed",
			VK: "node/pod.go updatePodStatus, shouldSkipPodStatusUpdate (a pod published Failed is never published again); node/podcontroller.go syncPodInProvider " +
				"(skips a Failed or Succeeded pod); node/sync.go syncPodStatuses (polls no terminal pod)"},
			run: failedInitContainer},
	)
}

// podWithInits returns a pod of newPod's kind (its app container runs until
// stopped) with restartPolicy policy and init containers init-1, init-2,
// ... from inits.
func podWithInits(prefix string, policy corev1.RestartPolicy, inits ...corev1.Container) *corev1.Pod {
	p := newPod(prefix)
	p.Spec.RestartPolicy = policy
	for i, c := range inits {
		c.Name = fmt.Sprintf("init-%d", i+1)
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	return p
}

// initCompleted reports whether init container name was published
// terminated with exit code 0.
func initCompleted(st corev1.PodStatus, name string) bool {
	for _, cs := range st.InitContainerStatuses {
		if cs.Name == name {
			return cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
		}
	}
	return false
}

// initStarted reports whether init container name was published running or
// terminated.
func initStarted(st corev1.PodStatus, name string) bool {
	for _, cs := range st.InitContainerStatuses {
		if cs.Name == name {
			return cs.State.Running != nil || cs.State.Terminated != nil || cs.RestartCount > 0
		}
	}
	return false
}

// appStarted names an app container the status shows running or having
// run, "" if none.
func appStarted(st corev1.PodStatus) string {
	for _, cs := range st.ContainerStatuses {
		if cs.State.Running != nil || cs.RestartCount > 0 || (cs.State.Terminated != nil && !cs.State.Terminated.StartedAt.IsZero()) {
			return cs.Name
		}
	}
	return ""
}

// describeInits says what a status shows of the init containers.
func describeInits(st corev1.PodStatus) string {
	if len(st.InitContainerStatuses) == 0 {
		return "no InitContainerStatuses"
	}
	var parts []string
	for _, cs := range st.InitContainerStatuses {
		s := fmt.Sprintf("%s %s restarts=%d", cs.Name, stateName(cs.State), cs.RestartCount)
		if t := cs.State.Terminated; t != nil {
			s += fmt.Sprintf(" (exit %d)", t.ExitCode)
		}
		parts = append(parts, s)
	}
	return "InitContainerStatuses: " + strings.Join(parts, "; ")
}

// initsBefore is what a message says of the kubelet's order.
const initsBefore = "the kubelet runs init containers one at a time, in the order of spec.initContainers, each to completion (exit code 0) " +
	"before the next and before any app container, and reports the pod Pending (Initialized False) until the last has completed; " +
	"VK publishes the provider's statuses as they are (node/pod.go updatePodStatus), so whoever reads the pod (kubectl, controllers " +
	"waiting for its init, an app that needs what init-1 set up) sees what the backend did"

func initContainersRunInOrder(e *env) {
	const run = 10 * time.Second
	p := e.createPod(podWithInits("init-order", corev1.RestartPolicyAlways, e.w.ExitsAfter(run, 0), e.w.ExitsAfter(run, 0)))
	key := podKey(p)
	done := func(st corev1.PodStatus) bool {
		return initCompleted(st, "init-1") && initCompleted(st, "init-2") && running(&corev1.Pod{Spec: p.Spec, Status: st})
	}
	bound := 2*run + statusBound
	var last *corev1.Pod
	ok := e.await(bound, func() bool { last = e.apiPod(p.Namespace, p.Name); return last != nil && done(last.Status) })
	for i, st := range e.judge.api.StatusHistory(p.Namespace, p.Name) {
		at := fmt.Sprintf("status %d VK published for pod %s (%s; %s)", i+1, key, describeStatus(&corev1.Pod{Status: st}), describeInits(st))
		if n := len(st.InitContainerStatuses); n != 0 && n != len(p.Spec.InitContainers) {
			e.failf("%s holds %d InitContainerStatuses for the pod's %d init containers: one per init container, in spec order%s",
				at, n, len(p.Spec.InitContainers), publishedAsReported)
		}
		if initStarted(st, "init-2") && !initCompleted(st, "init-1") {
			e.failf("%s shows init-2 started before init-1 completed: %s", at, initsBefore)
		}
		initialized := initCompleted(st, "init-1") && initCompleted(st, "init-2")
		if c := appStarted(st); c != "" && !initialized {
			e.failf("%s shows app container %s started before both init containers completed (each ran %v, %q): %s",
				at, c, run, argv(p.Spec.InitContainers[0]), initsBefore)
		}
		if !initialized && st.Phase != corev1.PodPending && st.Phase != "" {
			e.failf("%s shows the pod %s before its init containers completed: %s", at, st.Phase, initsBefore)
		}
		if !initialized && podReady(st) {
			e.failf("%s shows the pod Ready before its init containers completed: a Service would send it traffic; %s", at, initsBefore)
		}
	}
	if !ok {
		e.failf("VK did not publish pod %s (init containers init-1, init-2, each %q, then app) Running with both init containers "+
			"terminated with exit code 0 and app running within %v: it published %s; %s. %s; %s",
			key, argv(p.Spec.InitContainers[0]), bound, describeStatus(last), describeInits(statusOf(last)), initsBefore, e.providerCallsOf(key))
	}
}

func failedInitContainer(e *env) {
	const run = 2 * time.Second
	always := e.createPod(podWithInits("init-fails", corev1.RestartPolicyAlways, e.w.ExitsAfter(run, 1)))
	never := e.createPod(podWithInits("init-fails-once", corev1.RestartPolicyNever, e.w.ExitsAfter(run, 1)))
	cmd := argv(always.Spec.InitContainers[0])
	// The first restart comes after the kubelet's back-off of 10s; the watch
	// stays under a minute (VK's syncProviderWrapper publishes a sync
	// provider's pod Failed once GetPodStatus answers NotFound after that).
	const watch = 40 * time.Second
	var neverLast *corev1.Pod
	restarted := false
	e.watchPod(always, watch, func(cur *corev1.Pod) {
		if cur == nil {
			e.goneUndeleted(always)
		}
		st := cur.Status
		if ph := st.Phase; ph == corev1.PodFailed || ph == corev1.PodSucceeded {
			e.failf("VK published pod %s (restartPolicy Always, init container %q failing) as %s: the init container will be restarted, "+
				"but VK never publishes a status of a terminal pod again (node/pod.go shouldSkipPodStatusUpdate; syncPodInProvider skips it): "+
				"it stays %s while the backend retries it; the kubelet reports it Pending (Init:CrashLoopBackOff) and restarts the init container; %s",
				podKey(always), cmd, ph, ph, describeInits(st))
		}
		if c := appStarted(st); c != "" {
			e.failf("VK published app container %s of pod %s started, though its init container (%q) never completed: %s; %s",
				c, podKey(always), cmd, initsBefore, describeInits(st))
		}
		for _, cs := range st.InitContainerStatuses {
			restarted = restarted || cs.RestartCount > 0
		}
		neverLast = e.apiPod(never.Namespace, never.Name)
		if neverLast != nil {
			if c := appStarted(neverLast.Status); c != "" {
				e.failf("VK published app container %s of pod %s started, though its init container (%q, restartPolicy Never) failed: %s; %s",
					c, podKey(never), cmd, initsBefore, describeInits(neverLast.Status))
			}
		}
	})
	if !restarted {
		last := e.apiPod(always.Namespace, always.Name)
		e.failf("in %v VK published no restart of the init container of pod %s (restartPolicy Always, %q, which exits 1 after %v): "+
			"it published %s; %s. The kubelet restarts a failed init container as the restart policy says (after its back-off: 10s, 20s, ...), "+
			"counting it in its restart count, and the app containers wait%s; %s", watch, podKey(always), cmd, run,
			describeStatus(last), describeInits(statusOf(last)), publishedAsReported, e.providerCallsOf(podKey(always)))
	}
	if neverLast == nil || neverLast.Status.Phase != corev1.PodFailed {
		e.failf("in %v VK did not publish pod %s, whose init container (%q) exited 1 under restartPolicy Never, Failed: it published %s; %s. "+
			"The kubelet fails the pod (nothing will run it again), and a Job's controller or a user waits for that; VK publishes the "+
			"provider's phase as it is (node/pod.go updatePodStatus): the pod stays %s for good; %s",
			watch, podKey(never), cmd, describeStatus(neverLast), describeInits(statusOf(neverLast)), statusOf(neverLast).Phase, e.providerCallsOf(podKey(never)))
	}
}

// podReady reports whether st carries the pod's Ready condition True.
func podReady(st corev1.PodStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// statusOf is p's status, empty for nil.
func statusOf(p *corev1.Pod) corev1.PodStatus {
	if p == nil {
		return corev1.PodStatus{}
	}
	return p.Status
}
