package conformance

import (
	"fmt"
	"reflect"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The refresh specs: what RefreshPodStatus makes of the status the agent
// built (pod.go generateAPIPodStatus hands it over before publishing): it
// touches only the pod's own containers, keeps reasons and last
// terminations, and reports init containers.
var podRefreshSpecs = []*specDef{
	{id: "KRI-POD-024", level: Must, kind: kindPod, groups: []string{"refresh"}, pod: podRefreshUnknown,
		note: "Since the contract was grounded in the node agent, Ready and Started may change: the kubelet's prober sets them on every status.",
		text: "RefreshPodStatus leaves the status of a pod the provider does not know unchanged, but for its containers' Ready and Started"},
	{id: "KRI-POD-025", level: Must, kind: kindPod, groups: []string{"refresh"}, pod: podRefreshContainers,
		text: "RefreshPodStatus names only containers of the pod's spec: Running for a running one, Terminated with its exit code for an exited one"},
	{id: "KRI-POD-026", level: Must, kind: kindPod, groups: []string{"refresh"}, caps: []Capability{CapStartFailures}, pod: podRefreshWaiting,
		text: "RefreshPodStatus reports a container whose start failed as Waiting with a reason"},
	{id: "KRI-POD-042", level: Must, kind: kindPod, groups: []string{"refresh", "restart"}, caps: []Capability{CapRestartPolicies}, pod: podRefreshAfterRestart,
		note: "Formerly RefreshPodStatus filled an empty status; now it refines the agent's, and a Waiting newest instance (crash-loop back-off) with the newest exited run as LastTerminationState is right. A runtime whose garbage collector removed the previous run before the status was read (kuberuntime_gc.go, while the next run is still being created) reports no last termination, as the kubelet would not: the spec then waits for the next run, at most twice.",
		text: "after a restart, RefreshPodStatus keeps the newest run's ContainerID and the run before it as LastTerminationState, with its exit code"},
	{id: "KRI-POD-050", level: Must, kind: kindPod, groups: []string{"refresh", "init"}, caps: []Capability{CapInitContainers}, pod: podRefreshInit,
		text: "RefreshPodStatus reports init containers in InitContainerStatuses, not among the app containers, a completed one Terminated with exit code 0"},
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

func podRefreshUnknown(e *podEnv) {
	e.step("refreshing a status of a pod the provider does not know")
	pod := e.newPod("unknown", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	in := v1.PodStatus{
		Phase:   v1.PodPending,
		Message: "set by the caller",
		ContainerStatuses: []v1.ContainerStatus{{
			Name:  "app",
			State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "KRIConformanceSentinel"}},
		}},
	}
	want := in.DeepCopy()
	e.refresh(pod, &in)
	// A prober may set Ready and Started (the kubelet's prober_manager.go
	// UpdatePodStatus sets them on every status it is handed).
	if !reflect.DeepEqual(withoutReadiness(&in), withoutReadiness(want)) {
		e.failf("RefreshPodStatus changed the status of a pod the provider does not know (beyond Ready and Started):\nbefore: %+v\nafter:  %+v", *want, in)
	}
}

// withoutReadiness returns a copy of ps without the Ready and Started of its
// container statuses.
func withoutReadiness(ps *v1.PodStatus) *v1.PodStatus {
	cp := ps.DeepCopy()
	for _, list := range [][]v1.ContainerStatus{cp.ContainerStatuses, cp.InitContainerStatuses, cp.EphemeralContainerStatuses} {
		for i := range list {
			list[i].Ready, list[i].Started = false, nil
		}
	}
	return cp
}

func podRefreshContainers(e *podEnv) {
	e.step("running a pod with one running and one exited container, then refreshing the status the agent builds")
	pod := e.newPod("refresh", v1.RestartPolicyNever, named("run", e.w().RunsUntilKilled()), named("done", e.w().ExitsWithCode(3)))
	e.syncUntil(pod, "run running and done exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "run")).NotTo(gomega.BeNil(), "run is not running: %s", describeStatus(st))
		g.Expect(exitedOf(st, "done")).NotTo(gomega.BeEmpty(), "done has not exited: %s", describeStatus(st))
	})
	ps := e.publish(pod, e.status(pod))
	if len(ps.InitContainerStatuses) > 0 {
		e.failf("RefreshPodStatus reports init containers %v for a pod without any", statusNames(ps.InitContainerStatuses))
	}
	got := map[string]v1.ContainerStatus{}
	for _, cs := range ps.ContainerStatuses {
		if cs.Name != "run" && cs.Name != "done" {
			e.failf("RefreshPodStatus names container %q, which is not in the pod's spec (statuses: %v)", cs.Name, statusNames(ps.ContainerStatuses))
		}
		got[cs.Name] = cs
	}
	if run, ok := got["run"]; !ok || run.State.Running == nil {
		e.failf("RefreshPodStatus does not report the running container run as Running: %+v", run.State)
	}
	done, ok := got["done"]
	if !ok || done.State.Terminated == nil {
		e.failf("RefreshPodStatus does not report the exited container done as Terminated: %+v", done.State)
	}
	if done.State.Terminated.ExitCode != 3 {
		e.failf("RefreshPodStatus reports container done terminated with exit code %d, want 3", done.State.Terminated.ExitCode)
	}
}

func podRefreshWaiting(e *podEnv) {
	e.step("syncing a pod whose container cannot start, refreshing the status the agent builds each round")
	pod := e.newPod("waiting", v1.RestartPolicyAlways, named("app", e.w().FailsToStart()))
	// SyncPod's error and the ReasonCache are the business of KRI-POD-012;
	// here only RefreshPodStatus counts.
	e.trySyncUntil(pod, "RefreshPodStatus reports app Waiting with a reason", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "app")).To(gomega.BeNil(), "container app runs although its executable is missing: %s", describeStatus(st))
		ps := e.publish(pod, st)
		var app *v1.ContainerStatus
		for i, cs := range ps.ContainerStatuses {
			if cs.Name == "app" {
				app = &ps.ContainerStatuses[i]
			}
		}
		g.Expect(app).NotTo(gomega.BeNil(), "RefreshPodStatus reports no status for container app, whose start failed (statuses: %v)", statusNames(ps.ContainerStatuses))
		g.Expect(app.State.Waiting).NotTo(gomega.BeNil(), "RefreshPodStatus reports the container whose start failed as %+v, want Waiting", app.State)
		g.Expect(app.State.Waiting.Reason).NotTo(gomega.BeEmpty(), "RefreshPodStatus reports the container whose start failed as Waiting without a reason")
	})
}

func podRefreshAfterRestart(e *podEnv) {
	const code = 3
	pod := e.newPod("lastterm", v1.RestartPolicyAlways, named("app", e.w().ExitsWithCode(code)))
	e.step(fmt.Sprintf("syncing a container that exits %d until it has restarted, then refreshing the status the agent builds", code))
	h := e.restarted(pod, "app", 2)
	ps, st := e.refreshSettled(pod, h)
	// A runtime's garbage collector may remove the previous run before the
	// status is read: kuberuntime_gc.go evictContainers counts a created,
	// not yet running instance as the newest dead one, so with the
	// kubelet's MaxPerPodContainer 1 the previous run goes. The kubelet
	// then has no last termination to report either
	// (convertToAPIContainerStatuses takes it from the runtime's second
	// instance), so the spec waits for the next run. Each run is a new
	// chance, but the collection races the next run's start, which a
	// loaded machine slows (a runtime that collects every second was seen
	// to collect the previous run three times in a row): the spec waits
	// for runs for as long as the state timeout, at least twice.
	collected := 0
	for deadline := time.Now().Add(e.st.t.State); previousRunCollected(ps, st, h) && (collected < 2 || time.Now().Before(deadline)); {
		collected++
		e.step(fmt.Sprintf("the runtime no longer reports the previous run of app (%d times now), and RefreshPodStatus reports no last termination; syncing until app restarts again", collected))
		e.restartedOnceMore(pod, h)
		ps, st = e.refreshSettled(pod, h)
	}
	newest := newestOf(st, "app")
	cs := apiStatusOf(ps.ContainerStatuses, "app")
	switch {
	case cs == nil:
		e.failf("RefreshPodStatus dropped the status of container app (statuses: %v)", statusNames(ps.ContainerStatuses))
	case newest == nil:
		e.failf("GetPodStatus reports no instance of the restarted container app: %s", describeStatus(st))
	case !sameContainer(cs.ContainerID, newest.ID):
		e.failf("RefreshPodStatus reports ContainerID %q for container app, want its newest instance's %q; %s", cs.ContainerID, newest.ID.String(), h)
	}
	last := cs.LastTerminationState.Terminated
	switch {
	case last == nil:
		e.failf("RefreshPodStatus reports no LastTerminationState.Terminated for container app, which has restarted (state %+v; runs waited for because the runtime had collected the previous one: %d); %s", cs.State, collected, h)
	case last.ExitCode != code:
		e.failf("RefreshPodStatus reports LastTerminationState.Terminated of container app with exit code %d, want %d; %s", last.ExitCode, code, h)
	case last.ContainerID == "" || !h.exitedOrUnseen(last.ContainerID):
		e.failf("RefreshPodStatus reports LastTerminationState.Terminated of container app with ContainerID %q, which names no exited run; %s", last.ContainerID, h)
	case cs.State.Waiting == nil && last.ContainerID == cs.ContainerID:
		// Waiting in back-off, the newest run is the last termination;
		// otherwise it is the current run and cannot be.
		e.failf("RefreshPodStatus reports container app %s as its newest run %q and as its LastTerminationState; %s",
			stateName(cs.State), cs.ContainerID, h)
	}
}

// previousRunCollected reports whether RefreshPodStatus reported no last
// termination for the container while the runtime status it was given holds
// only its newest instance, although an earlier exited instance was seen:
// the runtime collected the previous run.
func previousRunCollected(ps v1.PodStatus, st *pkgcontainer.PodStatus, h *history) bool {
	cs := apiStatusOf(ps.ContainerStatuses, h.name)
	inst := instancesOf(st, h.name)
	if cs == nil || cs.LastTerminationState.Terminated != nil || len(inst) != 1 {
		return false
	}
	for id, c := range h.latest {
		if id != inst[0].ID && c.State == pkgcontainer.ContainerStateExited {
			return true
		}
	}
	return false
}

// restartedOnceMore syncs pod until h has seen its container restart once
// more than it had.
func (e *podEnv) restartedOnceMore(pod *v1.Pod, h *history) {
	want := h.restarts() + 1
	e.syncUntil(pod, fmt.Sprintf("container %s restarted %d times", h.name, want), func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		h.observe(st)
		g.Expect(h.restarts()).To(gomega.BeNumerically(">=", want), "container %s has restarted %d times: %s", h.name, h.restarts(), h)
	})
}

// exitedOrUnseen reports whether the instance with ContainerID id
// (ID.String()) was last seen in another state than running, or was never
// seen: a provider that shows only the newest instance may name a run no
// round saw, and one that shows a run waiting to be restarted as Created
// (KRI-POD-008 and 009 judge that) may name one it never showed exited.
func (h *history) exitedOrUnseen(id string) bool {
	for cid, c := range h.latest {
		if sameContainer(id, cid) {
			return c.State != pkgcontainer.ContainerStateRunning
		}
	}
	return true
}

// stateName names the state of an API container status.
func stateName(s v1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "Running"
	case s.Terminated != nil:
		return "Terminated"
	case s.Waiting != nil:
		return "Waiting"
	}
	return "without state"
}
