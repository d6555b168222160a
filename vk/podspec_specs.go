package vk

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The specs of what the pod spec asks of a backend: each needs a
// capability (Config.Capabilities) and judges the status VK publishes.

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-014", Level: Must, Capabilities: []Capability{CapContainerRestarts},
			Title: "a container that exits under restartPolicy Always is restarted, its restart count never decreasing and its LastTerminationState the run that ended",
			VK:    "node/pod.go updatePodStatus (publishes the provider's container statuses as they are); node/sync.go syncProviderWrapper.updatePodStatus"},
			run: restartsAreCounted},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-015", Level: Must, Capabilities: []Capability{CapContainerRestarts},
			Title: "a pod whose exited container will be restarted is never published Succeeded or Failed",
			VK: "node/pod.go shouldSkipPodStatusUpdate, updatePodStatus; node/podcontroller.go syncPodInProvider (skips a Failed or Succeeded pod); " +
				"node/sync.go syncPodStatuses (polls no terminal pod): once terminal, a pod's status is never published again"},
			run: restartingPodIsNotTerminal},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-016", Level: Must, Capabilities: []Capability{CapStartFailures},
			Title: "a container the backend cannot start is published Waiting with a reason, the pod Pending, never Failed",
			VK:    "node/pod.go shouldSkipPodStatusUpdate, updatePodStatus; node/podcontroller.go syncPodInProvider (a Failed pod is never synced again)"},
			run: failedStartIsWaiting},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-017", Level: Must, Capabilities: []Capability{CapExitCodes}, AsyncOnly: true,
			Title: "after DeletePod VK publishes each container terminated with the exit code its process ended with",
			VK: "node/podcontroller.go PodLifecycleHandler.DeletePod (doc: notify a terminal status), PodController.Run (NotifyPods callback); node/pod.go updatePodStatus; " +
				"node/sync.go syncProviderWrapper.DeletePod (a sync provider's pod is published with exit code 0 whatever it did: skipped)"},
			run: deletedContainersKeepTheirExitCodes},
		spec{SpecInfo: SpecInfo{ID: "KVK-POD-018", Level: Must, Capabilities: []Capability{CapGracePeriod}, AsyncOnly: true,
			Title: "DeletePod gives a container's SIGTERM handler the pod's deletionGracePeriodSeconds (not its terminationGracePeriodSeconds) before it kills the container",
			VK: "node/podcontroller.go syncPodInProvider (DeletePod of the pod with its deletionGracePeriodSeconds, then deletePodsFromKubernetes enqueued with that delay: " +
				"the API pod goes away when the grace period is over, a status change alone does not re-sync it, node/pod.go podShouldEnqueue), deletePodsFromKubernetesHandler"},
			run: gracePeriodIsHonoured},
	)
}

// publishedAsReported ends a message on a container status VK published.
const publishedAsReported = " (updatePodStatus, node/pod.go, publishes the container statuses the provider reports as they are)"

// podRunning returns a pod of newPod's kind whose only container, app, is
// c (a container of Config.Workloads).
func podRunning(prefix string, policy corev1.RestartPolicy, c corev1.Container) *corev1.Pod {
	p := newPod(prefix)
	p.Spec.RestartPolicy = policy
	c.Name = "app"
	p.Spec.Containers[0] = c
	return p
}

// watchPod reads the pod VK publishes every second for d and hands it to
// check (nil once it is gone).
func (e *env) watchPod(p *corev1.Pod, d time.Duration, check func(cur *corev1.Pod)) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		e.sleep(time.Second)
		check(e.apiPod(p.Namespace, p.Name))
	}
}

func restartsAreCounted(e *env) {
	p := e.createPod(podRunning("restarts", corev1.RestartPolicyAlways, e.w.ExitsAfter(10*time.Second, 0)))
	script := argv(p.Spec.Containers[0])
	key := podKey(p)
	var (
		maxSeen  int32 = -1
		runStart       = map[int32]time.Time{} // restart count -> StartedAt of that run, as published
		last     *corev1.Pod
	)
	e.watchPod(p, 2*time.Minute, func(cur *corev1.Pod) {
		if cur == nil || len(cur.Status.ContainerStatuses) == 0 {
			return
		}
		last = cur
		cs := cur.Status.ContainerStatuses[0]
		n := cs.RestartCount
		if n < maxSeen {
			e.failf("VK published container %s of pod %s (%q, restartPolicy Always) with restart count %d after %d: "+
				"updatePodStatus (node/pod.go) publishes the provider's container statuses as they are, and a restart count never goes down "+
				"(controllers and users read it as the number of restarts so far); %s", cs.Name, key, script, n, maxSeen, describeStatus(cur))
		}
		maxSeen = max(maxSeen, n)
		if r := cs.State.Running; r != nil {
			if _, ok := runStart[n]; !ok {
				runStart[n] = r.StartedAt.Time
			}
		}
		if n == 0 {
			return
		}
		t := cs.LastTerminationState.Terminated
		if t == nil {
			e.failf("VK published container %s of pod %s with restart count %d and no LastTerminationState: the run that ended "+
				"(its exit code, when it started and finished) is what the previous run's terminated state must carry%s; %s", cs.Name, key, n, publishedAsReported, describeStatus(cur))
		}
		if t.ExitCode != 0 || t.FinishedAt.Time.Before(t.StartedAt.Time) {
			e.failf("VK published container %s of pod %s (%q) with LastTerminationState exit code %d, started %v, finished %v: "+
				"not the run that ended (exit code 0, finished after it started)%s", cs.Name, key, script, t.ExitCode, t.StartedAt.Time, t.FinishedAt.Time, publishedAsReported)
		}
		// Running: the run before this one ended last; between runs (back-off),
		// the run counted by n.
		ended := n
		if cs.State.Running != nil {
			ended = n - 1
		}
		if prev, ok := runStart[ended]; ok && !t.StartedAt.Time.Equal(prev) {
			e.failf("VK published container %s of pod %s with restart count %d (%s) and a LastTerminationState that started at %v, "+
				"but the run that ended last (restart count %d) started at %v: LastTerminationState is not the previous run%s",
				cs.Name, key, n, stateName(cs.State), t.StartedAt.Time, ended, prev, publishedAsReported)
		}
		if r := cs.State.Running; r != nil && r.StartedAt.Time.Before(t.FinishedAt.Time) {
			e.failf("VK published container %s of pod %s running since %v with a LastTerminationState that finished at %v, after it: "+
				"not the previous run%s", cs.Name, key, r.StartedAt.Time, t.FinishedAt.Time, publishedAsReported)
		}
	})
	if maxSeen < 2 {
		e.failf("container %s of pod %s (%q, restartPolicy Always) was published with restart count %d after 2m: "+
			"it exits every 10s and, with the kubelet's back-off (10s, 20s, ...), must have been restarted twice by then; VK publishes %s; %s",
			p.Spec.Containers[0].Name, key, script, max(maxSeen, 0), describeStatus(last), e.providerCallsOf(key))
	}
}

func restartingPodIsNotTerminal(e *env) {
	p := e.createPod(podRunning("will-restart", corev1.RestartPolicyAlways, e.w.ExitsAfter(10*time.Second, 3)))
	script := argv(p.Spec.Containers[0])
	key := podKey(p)
	exited := false
	e.watchPod(p, 70*time.Second, func(cur *corev1.Pod) {
		if cur == nil {
			e.goneUndeleted(p)
		}
		if ph := cur.Status.Phase; ph == corev1.PodSucceeded || ph == corev1.PodFailed {
			e.failf("VK published pod %s (one container, %q, restartPolicy Always) as %s: the container will be restarted, "+
				"but VK never publishes a status of a terminal pod again (node/pod.go shouldSkipPodStatusUpdate; syncPodInProvider skips it, "+
				"syncProviderWrapper.syncPodStatuses polls it no more): it stays %s while the provider runs it, and its controller replaces it; "+
				"a pod with restartPolicy Always is Running while a container waits to restart", key, script, ph, ph)
		}
		for _, cs := range cur.Status.ContainerStatuses {
			exited = exited || cs.RestartCount > 0 || cs.LastTerminationState.Terminated != nil || cs.State.Running == nil
		}
	})
	if !exited {
		e.failf("precondition: in 70s VK published no status of pod %s showing that its container (%q) exited: %s; %s",
			key, script, describeStatus(e.apiPod(p.Namespace, p.Name)), e.providerCallsOf(key))
	}
}

func failedStartIsWaiting(e *env) {
	p := e.createPod(podRunning("cannot-start", corev1.RestartPolicyAlways, e.w.FailsToStart()))
	key := podKey(p)
	cmd := argv(p.Spec.Containers[0])
	waiting := func(cur *corev1.Pod) bool {
		if cur == nil || len(cur.Status.ContainerStatuses) == 0 {
			return false
		}
		w := cur.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason != ""
	}
	var last *corev1.Pod
	check := func(cur *corev1.Pod) {
		if cur == nil {
			e.goneUndeleted(p)
		}
		if ph := cur.Status.Phase; ph == corev1.PodFailed || ph == corev1.PodSucceeded {
			e.failf("VK published pod %s, whose container the backend cannot start (%q, restartPolicy Always), as %s: "+
				"VK never syncs a terminal pod again (node/podcontroller.go syncPodInProvider, node/pod.go shouldSkipPodStatusUpdate), "+
				"so it would stay %s once the backend could start it; a failed start is the container Waiting with a reason and the pod Pending; VK published %s",
				key, cmd, ph, ph, describeStatus(cur))
		}
		for _, cs := range cur.Status.ContainerStatuses {
			if cs.State.Running != nil {
				e.failf("VK published container %s of pod %s running, though the backend cannot start it (%q)%s", cs.Name, key, cmd, publishedAsReported)
			}
		}
	}
	if !e.await(statusBound, func() bool { last = e.apiPod(p.Namespace, p.Name); check(last); return waiting(last) }) {
		e.failf("VK did not publish the container of pod %s, which the backend cannot start (%q), Waiting with a reason within %v: "+
			"it published %s; a failed start is the container Waiting with the reason (RunContainerError, ImagePullBackOff, ...) and the pod Pending; %s",
			key, cmd, statusBound, describeStatus(last), e.providerCallsOf(key))
	}
	e.watchPod(p, time.Minute, func(cur *corev1.Pod) {
		check(cur)
		if !waiting(cur) {
			e.failf("VK published the container of pod %s, which the backend cannot start, as %s: no longer Waiting with a reason", key, describeStatus(cur))
		}
	})
}

func deletedContainersKeepTheirExitCodes(e *env) {
	p := podRunning("exit-codes", corev1.RestartPolicyAlways, e.w.TrapsSIGTERM(0, 3))
	side := e.w.TrapsSIGTERM(0, 0)
	side.Name = "side"
	p.Spec.Containers = append(p.Spec.Containers, side)
	want := map[string]int32{"app": 3, "side": 0}
	p = e.createPod(p)
	key := podKey(p)
	if !e.await(statusBound, func() bool { return running(e.apiPod(p.Namespace, p.Name)) }) {
		e.failf("precondition: VK did not publish pod %s Running within %v: %s; %s", key, statusBound, describeStatus(e.apiPod(p.Namespace, p.Name)), e.providerCallsOf(key))
	}
	e.deleteInAPI(p)
	if !e.await(goneBound(p), func() bool { return e.apiPod(p.Namespace, p.Name) == nil }) {
		e.failf("precondition: pod %s is still in the API server %v after it was deleted; %s", key, goneBound(p), e.providerCallsOf(key))
	}
	hist := e.judge.api.StatusHistory(p.Namespace, p.Name)
	last := hist[len(hist)-1]
	for _, cs := range last.ContainerStatuses {
		t := cs.State.Terminated
		if t == nil {
			e.failf("precondition: the last status VK published for pod %s was %s: not every container terminated (KVK-POD-010)", key, describeStatus(&corev1.Pod{Status: last}))
		}
		if t.ExitCode != want[cs.Name] {
			var cmd []string
			for _, c := range p.Spec.Containers {
				if c.Name == cs.Name {
					cmd = argv(c)
				}
			}
			e.failf("after DeletePod VK published container %s of pod %s terminated with exit code %d (reason %q), but its process ended with %d "+
				"(its SIGTERM handler exits %d: it runs %q): VK publishes the terminal status the provider notifies (node/podcontroller.go PodController.Run, node/pod.go updatePodStatus) "+
				"as it is, and the exit code is what tells a stop from a crash (%s)",
				cs.Name, key, t.ExitCode, t.Reason, want[cs.Name], want[cs.Name], cmd, describeStatus(&corev1.Pod{Status: last}))
		}
	}
}

// gracePeriodIsHonoured deletes, with a grace period of 30s (as kubectl
// delete --grace-period=30 does), a pod whose terminationGracePeriodSeconds
// is 2 and whose container's SIGTERM handler takes 5s: the handler must be
// given the deletion's 30s, which VK hands DeletePod as the pod's
// deletionGracePeriodSeconds, not the spec's 2s.
func gracePeriodIsHonoured(e *env) {
	const handler = 5 * time.Second
	const grace = int64(30)
	p := podRunning("grace", corev1.RestartPolicyAlways, e.w.TrapsSIGTERM(handler, 0))
	p.Spec.TerminationGracePeriodSeconds = new(int64(2))
	p = e.createPod(p)
	key := podKey(p)
	if !e.await(statusBound, func() bool { return running(e.apiPod(p.Namespace, p.Name)) }) {
		e.failf("precondition: VK did not publish pod %s Running within %v: %s; %s", key, statusBound, describeStatus(e.apiPod(p.Namespace, p.Name)), e.providerCallsOf(key))
	}
	if err := e.judge.api.CoreV1().Pods(p.Namespace).Delete(e.ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(grace)}); err != nil {
		e.failf("deleting pod %s in the API server: %v", key, err)
	}
	deleted := time.Now()
	bound := time.Duration(grace)*time.Second + statusBound
	if !e.await(bound, func() bool { return e.apiPod(p.Namespace, p.Name) == nil }) {
		e.failf("precondition: pod %s is still in the API server %v after it was deleted; %s", key, bound, e.providerCallsOf(key))
	}
	hist := e.judge.api.StatusHistory(p.Namespace, p.Name)
	last := hist[len(hist)-1]
	t := last.ContainerStatuses[0].State.Terminated
	if t == nil {
		e.failf("precondition: the last status VK published for pod %s was %s: its container not terminated (KVK-POD-010)", key, describeStatus(&corev1.Pod{Status: last}))
	}
	if took := t.FinishedAt.Sub(deleted); took < handler-time.Second {
		e.failf("pod %s (terminationGracePeriodSeconds 2) was deleted with a grace period of %ds at %v; its container, whose SIGTERM handler takes %v "+
			"(%q), was published terminated at %v (%v later, exit code %d, reason %q): DeletePod did not give the handler "+
			"the pod's deletionGracePeriodSeconds (%d), which VK passes it with the pod (node/podcontroller.go syncPodInProvider, deletePod)",
			key, grace, deleted.Format(time.TimeOnly), handler, argv(p.Spec.Containers[0]), t.FinishedAt.Format(time.TimeOnly), took.Round(time.Millisecond), t.ExitCode, t.Reason, grace)
	}
}

// stateName names the state of a container.
func stateName(st corev1.ContainerState) string {
	switch {
	case st.Running != nil:
		return "running"
	case st.Waiting != nil:
		return "waiting: " + st.Waiting.Reason
	case st.Terminated != nil:
		return "terminated"
	}
	return "no state"
}
