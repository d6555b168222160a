package conformance

import (
	"fmt"
	"reflect"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The specs of what the provider is handed (KRI-POD-045 to 050): ownership
// of every input, a nil podStatus, KillPod's signals and defaults and its nil
// pod, and RefreshPodStatus of init containers.

// copyRunningPod copies rp deeply enough to notice a provider mutating it.
func copyRunningPod(rp pkgcontainer.Pod) pkgcontainer.Pod {
	cp := rp
	cp.Containers, cp.Sandboxes = nil, nil
	for _, c := range rp.Containers {
		cc := *c
		cp.Containers = append(cp.Containers, &cc)
	}
	for _, c := range rp.Sandboxes {
		cc := *c
		cp.Sandboxes = append(cp.Sandboxes, &cc)
	}
	return cp
}

// unchanged fails the spec when got differs from want, the copy taken before
// method was handed got.
func (e *podEnv) unchanged(method, what string, want, got any) {
	if !reflect.DeepEqual(want, got) {
		e.failf("%s mutated the %s it was handed:\nbefore: %+v\nafter:  %+v", method, what, want, got)
	}
}

// changedImage is the image KRI-POD-045 puts into the pod after handing it
// to SyncPod.
const changedImage = "kri-conformance/changed:1"

func podInputsOwned(e *podEnv) {
	e.step("running a pod, then handing each method a pod, statuses and arguments the spec keeps copies of")
	pod := e.newPod("inputs", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	want := pod.DeepCopy()

	// A pod worker's copy, handed to SyncPod and changed afterwards: the
	// provider must not have kept it.
	handed := pod.DeepCopy()
	if err := e.syncPod(handed, e.lastStatus(pod)); err != nil {
		e.skipIfNotSupported("SyncPod", err)
		e.diagnose("SyncPod of pod %s returned an unexpected error: %v (KRI-POD-001 and 003 check this)", podRef(pod), err)
	}
	handed.Name += "-changed"
	handed.Spec.Containers[0].Name = "changed"
	handed.Spec.Containers[0].Image = changedImage

	st := e.status(pod)
	e.unchanged("GetPodStatus", "pod", want, pod)
	for _, c := range st.ContainerStatuses {
		if c.Name != "app" || sameImage(c.Image, changedImage) {
			e.failf("after the pod handed to SyncPod was changed (container renamed to changed, image %s), GetPodStatus reports container %s with image %q: the provider kept the caller's pod; %s",
				changedImage, c.Name, c.Image, describeStatus(st))
		}
	}
	ps := e.publish(pod, e.status(pod))
	e.unchanged("RefreshPodStatus", "pod", want, pod)
	if apiStatusOf(ps.ContainerStatuses, "changed") != nil || apiStatusOf(ps.ContainerStatuses, "app") == nil {
		e.failf("after the pod handed to SyncPod was changed, RefreshPodStatus names containers %v, want app and not changed: the provider kept the caller's pod", statusNames(ps.ContainerStatuses))
	}
	for _, p := range e.getPods(true) {
		if p != nil && p.ID == pod.UID && p.Name != pod.Name {
			e.failf("after the pod handed to SyncPod was changed, GetPods lists it as %s/%s, want %s", p.Namespace, p.Name, podRef(pod))
		}
	}

	rp := e.runningPod(pod)
	rpWant := copyRunningPod(rp)
	pods := []*v1.Pod{pod}
	running := []*pkgcontainer.Pod{&rp}
	possibly := map[types.UID]sets.Empty{pod.UID: {}}
	e.noError("CleanupPods", e.cleanupPods(pods, running, possibly))
	e.unchanged("CleanupPods", "desired pods", []*v1.Pod{want}, pods)
	e.unchanged("CleanupPods", "running pods", []*pkgcontainer.Pod{&rpWant}, running)
	e.unchanged("CleanupPods", "possibly running pods", map[types.UID]sets.Empty{pod.UID: {}}, possibly)

	grace := *agentGrace(pod)
	handedGrace := grace
	e.noError("KillPod", e.killPod(pod, rp, &handedGrace))
	e.unchanged("KillPod", "pod", want, pod)
	e.unchanged("KillPod", "running pod", rpWant, rp)
	if handedGrace != grace {
		e.failf("KillPod changed the grace period override it was handed from %d to %d", grace, handedGrace)
	}
	e.noError("DeletePod", e.deletePod(pod))
	e.unchanged("DeletePod", "pod", want, pod)
}

func podSyncNilStatus(e *podEnv) {
	e.step("syncing a new pod with a nil podStatus, as an agent does before the PLEG has one")
	pod := e.newPod("nilstatus", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	if err := e.syncPod(pod, nil); err != nil {
		e.skipIfNotSupported("SyncPod", err)
		e.failf("SyncPod of a new pod with a nil podStatus returned %v, want nil (a nil status means the pod was not started yet)", err)
	}
	e.setLast(pod, e.status(pod))
	e.syncUntilRunning(pod)
}

func podKillSendsSIGTERM(e *podEnv) {
	long := 3*e.st.graceSecs + minimumGraceSecs
	pod := e.newPod("sigterm", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	pod.Spec.TerminationGracePeriodSeconds = &long
	// The container exits on SIGTERM because its shell traps it: as PID 1
	// of its own PID namespace a process without a handler ignores
	// SIGTERM, and a container is reported running before its shell has
	// run its trap (milliseconds, more on a loaded machine). In the pod's
	// shared PID namespace the sandbox holds PID 1, so the container exits
	// on SIGTERM from its first instant, trap or not: the kill's time then
	// says whether SIGTERM came first, whenever it came. Host processes
	// (never PID 1) and simulated containers behave so anyway.
	share := true
	pod.Spec.ShareProcessNamespace = &share
	e.syncUntilRunning(pod)
	e.step(fmt.Sprintf("killing the pod, whose container exits on SIGTERM, with a grace period of %ds", long))
	elapsed := e.killAsAgent(pod)
	if limit := time.Duration(long) * time.Second * 2 / 3; elapsed >= limit {
		e.failf("KillPod with a grace period of %ds of a container that exits on SIGTERM took %s: it did not send SIGTERM first, or did not notice the exit", long, elapsed)
	}
	e.expectNothingRunning(pod, "after KillPod returned nil")
}

func podKillDeletionGrace(e *podEnv) {
	long := 3*e.st.graceSecs + minimumGraceSecs
	pod := e.stubbornPod("deletiongrace", long)
	deletion := e.st.graceSecs
	deletedAt := metav1.Now()
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &deletedAt, &deletion
	e.step(fmt.Sprintf("killing the pod without override: DeletionGracePeriodSeconds %ds, TerminationGracePeriodSeconds %ds", deletion, long))
	elapsed := e.killObserved(pod, nil)
	if elapsed >= time.Duration(long)*time.Second {
		e.failf("KillPod without override of a pod with DeletionGracePeriodSeconds %ds took %s: it waited for TerminationGracePeriodSeconds (%ds) instead", deletion, elapsed, long)
	}
	e.expectNothingRunning(pod, "after KillPod returned nil")
}

func podKillNilPod(e *podEnv) {
	pod := e.newPod("nilpod", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()), named("sidecar", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	e.step("killing the pod with a nil pod and only the running pod")
	e.expectNil("KillPod", e.killPod(nil, e.runningPod(pod), agentGrace(pod)), "KillPod with a nil pod and the running pod")
	// A KillPod that returns before the containers stopped is KRI-POD-014's.
	e.eventuallyFor(time.Duration(*agentGrace(pod))*time.Second+2*e.st.t.Stable, fmt.Sprintf("pod %s stopped after KillPod with a nil pod", podRef(pod)), func(g gomega.Gomega) {
		st := e.status(pod)
		for _, c := range st.ContainerStatuses {
			g.Expect(c.State).NotTo(gomega.Equal(pkgcontainer.ContainerStateRunning), "container %s still runs after KillPod with a nil pod returned nil: %s", c.Name, describeStatus(st))
		}
	})
}

func podRefreshInit(e *podEnv) {
	e.step("running a pod whose init container setup exits 0, then refreshing the status the agent builds")
	pod := e.newPod("refreshinit", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	setInitContainers(pod, named("setup", e.w().ExitsWithCode(0)))
	e.syncUntilRunning(pod)
	ps := e.publish(pod, e.status(pod))
	if apiStatusOf(ps.ContainerStatuses, "setup") != nil {
		e.failf("RefreshPodStatus reports the init container setup among the app containers %v; it belongs in InitContainerStatuses", statusNames(ps.ContainerStatuses))
	}
	if app := apiStatusOf(ps.ContainerStatuses, "app"); app == nil || app.State.Running == nil {
		e.failf("RefreshPodStatus does not report the running app container as Running (statuses: %v)", statusNames(ps.ContainerStatuses))
	}
	setup := apiStatusOf(ps.InitContainerStatuses, "setup")
	switch {
	case setup == nil:
		e.failf("RefreshPodStatus reports no status for the init container setup (init statuses: %v)", statusNames(ps.InitContainerStatuses))
	case len(ps.InitContainerStatuses) != 1:
		e.failf("RefreshPodStatus reports init containers %v, want [setup]", statusNames(ps.InitContainerStatuses))
	case setup.State.Terminated == nil || setup.State.Terminated.ExitCode != 0:
		e.failf("RefreshPodStatus reports the completed init container setup as %+v, want Terminated with exit code 0", setup.State)
	}
}
