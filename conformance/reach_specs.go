package conformance

import (
	"fmt"
	"slices"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The specs of pods with several containers, several restarts and recreated
// names, and of kills mid-way (KRI-POD-051 to 056), and of what
// RefreshNodeStatus keeps (KRI-NODE-016): each where one realistic provider
// mistake would otherwise pass the suite.

var reachPodSpecs = []*specDef{
	{id: "KRI-POD-051", level: Must, kind: kindPod, groups: []string{"restart", "status"}, caps: []Capability{CapRestartPolicies}, pod: podOneOfSeveralRestarts,
		text: "in a pod of several containers, a restarting container counts its own restarts while the others keep their single instance, ID and RestartCount 0"},
	{id: "KRI-POD-052", level: Must, kind: kindPod, groups: []string{"reason-cache", "sync"}, caps: []Capability{CapStartFailures}, pod: podOneStartFails,
		note: "Since the suite models kuscia's agent, the MUST is what it publishes: the failed container Waiting with the failure's reason, the other Running and left alone. Which containers SyncPod's error and the ReasonCache name is KRI-POD-085's (SHOULD): the agent reads the ReasonCache only for containers it will start again, never for a running one.",
		text: "when one container fails to start and another starts, the agent publishes the failed one Waiting with the failure's reason and the other Running, and the other keeps running"},
	{id: "KRI-POD-053", level: Must, kind: kindPod, groups: []string{"restart", "status"}, caps: []Capability{CapRestartPolicies}, pod: podReplacedInstancesKeepTheirState,
		note: "Formerly every run exited 0, so a provider that reported replaced instances with exit code 0 whatever their code, or with the running newest instance's, passed; now every run exits 3 and every exited instance must report 3. Formerly GetPods(true) also had to list every such instance; kuscia's agent never calls GetPods(true), so that is KRI-POD-044's (SHOULD) now.",
		text: "after several restarts of a container that exits non-zero, every replaced instance GetPodStatus still reports keeps its own ID, exit code and timestamps"},
	{id: "KRI-POD-054", level: Must, kind: kindPod, groups: []string{"status", "kill"}, pod: podRecreatedUnderSameName,
		text: "a pod created again under the same namespace and name with a new UID starts afresh: nothing of the old pod shows in its status, and killing the old one leaves it running"},
	{id: "KRI-POD-055", level: Must, kind: kindPod, groups: []string{"kill", "init"}, caps: []Capability{CapInitContainers}, pod: podKillDuringInit,
		text: "KillPod while an init container runs stops it, and no app container starts"},
	{id: "KRI-POD-056", level: Must, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillRuntimeOnlyPod,
		note: "Formerly each killed container had to be reported exited; then a provider could forget the pod as it kills it, and what was still reported had to be exited non-zero, as GetPods(true) reported it too. Since the suite models kuscia's agent, the running pod comes from GetPods(false), as kuscia's housekeeping (pod.go HandlePodCleanups) finds orphans, and the MUST is what that housekeeping needs: the kill returns without the pod's own grace period, nothing runs afterwards, and GetPods(false) stops listing the pod. The agent publishes nothing of an orphan; what is reported of its killed containers is KRI-POD-086's.",
		text: "KillPod of an orphan as the agent's housekeeping kills it (the running pod GetPods(false) lists, pod = runningPod.ToAPIPod()) stops its SIGTERM-ignoring and SIGTERM-honouring containers without waiting for the pod's own grace period, and GetPods(false) then stops listing it"},
}

var reachNodeSpecs = []*specDef{
	{id: "KRI-NODE-016", level: Must, kind: kindNode, groups: []string{"refresh"}, node: nodeRefreshKeepsForeignFields,
		text: "RefreshNodeStatus keeps what other components set in the status: conditions of other types, attached and in-use volumes, images, daemon endpoints"},
}

func init() {
	podSpecs = append(podSpecs, reachPodSpecs...)
	nodeSpecs = append(nodeSpecs, reachNodeSpecs...)
}

func podOneOfSeveralRestarts(e *podEnv) {
	pod := e.newPod("onerestarts", v1.RestartPolicyAlways,
		named("steady", e.w().RunsUntilKilled()), named("flaky", e.w().ExitsWithCode(1)), named("calm", e.w().RunsUntilKilled()))
	e.step("syncing a pod of three containers, one of which (flaky) exits 1, until flaky has restarted twice")
	steady, calm := newHistory("steady"), newHistory("calm")
	flaky := newHistory("flaky")
	e.syncUntil(pod, "flaky restarted twice", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		for _, h := range []*history{steady, calm, flaky} {
			h.observe(st)
		}
		g.Expect(flaky.restarts()).To(gomega.BeNumerically(">=", 2), "container flaky has restarted %d times: %s", flaky.restarts(), flaky)
	})
	if flaky.maxRestarts < 2 {
		e.failf("container flaky restarted %d times, but reports RestartCount %d: %s", flaky.restarts(), flaky.maxRestarts, flaky)
	}
	e.step("checking that the containers that did not exit kept their only instance")
	for _, h := range []*history{steady, calm} {
		if len(h.order) != 1 || h.maxRestarts != 0 {
			e.failf("container %s never exited, but shows %d instances and RestartCount %d while its sibling flaky restarted: %s", h.name, len(h.order), h.maxRestarts, h)
		}
		if n := h.newest(); n.State != pkgcontainer.ContainerStateRunning {
			e.failf("container %s never exits, but is %s while its sibling flaky restarts: %s", h.name, n.State, h)
		}
	}
	e.step("refreshing the status the agent builds: restart counts per container")
	ps, _ := e.refreshSettled(pod, flaky)
	for _, name := range []string{"steady", "calm"} {
		if cs := apiStatusOf(ps.ContainerStatuses, name); cs == nil || cs.RestartCount != 0 {
			e.failf("RefreshPodStatus reports container %s, which never restarted, as %+v", name, cs)
		}
	}
	if cs := apiStatusOf(ps.ContainerStatuses, "flaky"); cs == nil || cs.RestartCount < 2 {
		e.failf("RefreshPodStatus reports container flaky, which restarted %d times, as %+v", flaky.restarts(), cs)
	}
}

func podOneStartFails(e *podEnv) {
	pod := e.newPod("onefails", v1.RestartPolicyAlways, named("good", e.w().RunsUntilKilled()), named("bad", e.w().FailsToStart()))
	e.step("syncing a pod whose container good starts and bad cannot (missing executable), as kuscia's agent does")
	e.eventually(fmt.Sprintf("pod %s: good running, bad's failed start published", podRef(pod)), func(g gomega.Gomega) {
		st, _ := e.agentSync(pod)
		g.Expect(runningOf(st, "good")).NotTo(gomega.BeNil(), "container good is not running next to bad, whose start fails: %s", describeStatus(st))
		s := e.publish(pod, st)
		good, bad := apiStatusOf(s.ContainerStatuses, "good"), apiStatusOf(s.ContainerStatuses, "bad")
		g.Expect(good != nil && good.State.Running != nil).To(gomega.BeTrue(), "kuscia's agent would publish container good, which runs, as not running while bad fails to start: %s", describeAPIStatus(s))
		g.Expect(bad != nil && bad.State.Waiting != nil && !defaultWaiting(bad.State.Waiting.Reason)).To(gomega.BeTrue(),
			"kuscia's agent would publish container bad, whose start fails, without the failure's reason (neither the ReasonCache nor RefreshPodStatus gave one): %s", describeAPIStatus(s))
	})
	e.step("syncing on: good must keep running, its ID unchanged")
	id := runningOf(e.lastStatus(pod), "good").ID
	e.holdSync(pod, true, "good keeps running while bad keeps failing", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		r := runningOf(st, "good")
		g.Expect(r).NotTo(gomega.BeNil(), "container good stopped while the start of bad kept failing: %s", describeStatus(st))
		g.Expect(r.ID).To(gomega.Equal(id), "container good was restarted (was %s) while the start of bad kept failing: %s", id.ID, describeStatus(st))
	})
}

// frozen is what an instance reports once it has exited: nothing of it may
// change afterwards.
type frozen struct {
	code               int
	started, finished  time.Time
	createdAt, restart string
}

func freeze(c *pkgcontainer.Status) frozen {
	return frozen{code: c.ExitCode, started: c.StartedAt, finished: c.FinishedAt,
		createdAt: stamp(c.CreatedAt), restart: fmt.Sprint(c.RestartCount)}
}

func podReplacedInstancesKeepTheirState(e *podEnv) {
	// Every instance exits with the same non-zero code: a provider that
	// reports replaced instances with code 0 (lost), or with the running
	// newest instance's, is seen at once; one whose codes change once
	// reported is seen by the freeze.
	const code = 3
	pod := e.newPod("replaced", v1.RestartPolicyAlways, named("app", e.w().ExitsWithCode(code)))
	e.step(fmt.Sprintf("syncing a container that exits %d until it has restarted three times, remembering each exited instance", code))
	h := newHistory("app")
	exited := map[pkgcontainer.ContainerID]frozen{}
	check := func(st *pkgcontainer.PodStatus) {
		for _, c := range instancesOf(st, "app") {
			was, ok := exited[c.ID]
			switch {
			case c.State == pkgcontainer.ContainerStateExited && c.ExitCode != code:
				e.failf("instance %s of container app, whose every run exits %d, is reported exited with code %d (restart count %d); %s",
					c.ID.ID, code, c.ExitCode, c.RestartCount, h)
			case ok && c.State != pkgcontainer.ContainerStateExited:
				e.failf("instance %s of container app was reported exited, now %s: %s", c.ID.ID, c.State, describeStatus(st))
			case ok && freeze(c) != was:
				e.failf("instance %s of container app changed after it exited: was %+v, now %+v (the newest instance's state leaking into replaced ones?); %s",
					c.ID.ID, was, freeze(c), h)
			case !ok && c.State == pkgcontainer.ContainerStateExited:
				exited[c.ID] = freeze(c)
			}
		}
	}
	e.syncUntil(pod, "app restarted three times", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		h.observe(st)
		check(st)
		g.Expect(h.restarts()).To(gomega.BeNumerically(">=", 3), "container app has restarted %d times: %s", h.restarts(), h)
	})
	check(e.status(pod))
	// Whether GetPods(true) lists them too is KRI-POD-044's (SHOULD): kuscia's
	// agent never calls GetPods(true).
}

func podRecreatedUnderSameName(e *podEnv) {
	old := e.newPod("stateful", v1.RestartPolicyAlways, named("app", e.w().ExitsWithCode(2)))
	e.step("running pod " + podRef(old) + " until its container has exited and restarted")
	oldHist := e.restarted(old, "app", 2)
	e.step("creating the pod again under the same namespace and name with a new UID, as a StatefulSet does, while the old one still exists")
	fresh := old.DeepCopy()
	fresh.UID = newUID()
	fresh.Spec.Containers[0] = named("app", e.w().RunsUntilKilled())
	defaultPod(fresh)
	e.track(fresh)
	st := e.syncUntilRunning(fresh)
	oldIDs := map[pkgcontainer.ContainerID]bool{}
	for _, id := range oldHist.order {
		oldIDs[id] = true
	}
	ownStatus := func(st *pkgcontainer.PodStatus, when string) {
		for _, c := range st.ContainerStatuses {
			switch {
			case oldIDs[c.ID]:
				e.failf("%s, GetPodStatus of the new pod %s (UID %s) reports instance %s of the old pod with the same name (UID %s): %s",
					when, podRef(fresh), fresh.UID, c.ID.ID, old.UID, describeStatus(st))
			case c.RestartCount != 0 || c.State != pkgcontainer.ContainerStateRunning:
				e.failf("%s, the new pod %s reports container %s %s with RestartCount %d; it never exited (the old pod's history leaking into it?): %s",
					when, podRef(fresh), c.Name, c.State, c.RestartCount, describeStatus(st))
			}
		}
		if len(st.ContainerStatuses) != 1 {
			e.failf("%s, the new pod %s reports %d container instances, want its one: %s", when, podRef(fresh), len(st.ContainerStatuses), describeStatus(st))
		}
	}
	ownStatus(st, "once it runs")
	if item, ok := e.rc.Get(fresh.UID, "app"); ok {
		e.failf("the ReasonCache holds a failure for the new pod's container app, which started: %v: %s", item.Err, item.Message)
	}
	e.step("killing the old pod: the new one must keep running")
	runningID := runningOf(st, "app").ID
	e.killAsAgent(old)
	e.hold(fresh, "the new pod keeps running after the old one with its name was killed", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		r := runningOf(st, "app")
		g.Expect(r).NotTo(gomega.BeNil(), "KillPod of the old pod %s (UID %s) stopped the new pod with the same name (UID %s): %s", podRef(old), old.UID, fresh.UID, describeStatus(st))
		g.Expect(r.ID).To(gomega.Equal(runningID), "the new pod's container was replaced when the old pod was killed: %s", describeStatus(st))
	})
	ownStatus(e.status(fresh), "after the old pod was killed")
	e.step("deleting the old pod: the new one must keep running")
	e.noError("DeletePod", e.deletePod(old))
	if r := runningOf(e.status(fresh), "app"); r == nil || r.ID != runningID {
		e.failf("DeletePod of the old pod %s (UID %s) stopped or replaced the new pod with the same name: %s", podRef(old), old.UID, describeStatus(e.status(fresh)))
	}
}

func podKillDuringInit(e *podEnv) {
	pod := e.newPod("killinit", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	setInitContainers(pod, named("setup", e.w().RunsUntilKilled()))
	e.step("syncing a pod whose init container setup runs until killed")
	e.syncUntil(pod, "init container setup running", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "setup")).NotTo(gomega.BeNil(), "init container setup is not running: %s%s", describeStatus(st), initHidden(pod, st))
	})
	e.step("killing the pod while setup runs")
	e.killAsAgent(pod)
	e.expectNothingRunning(pod, "after KillPod of a pod whose init container was running returned nil")
	e.hold(pod, "nothing runs and app never starts after KillPod (no SyncPod in between)", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(instancesOf(st, "app")).To(gomega.BeEmpty(), "app container started after KillPod stopped the pod during its init container: %s", describeStatus(st))
		g.Expect(runningOf(st, "setup")).To(gomega.BeNil(), "init container setup runs again after KillPod: %s", describeStatus(st))
	})
}

func podKillRuntimeOnlyPod(e *podEnv) {
	pod := e.newPod("runtimeonly", v1.RestartPolicyAlways, named("stubborn", e.w().IgnoresSIGTERM()), named("polite", e.w().RunsUntilKilled()))
	long := 3*e.st.graceSecs + minimumGraceSecs
	pod.Spec.TerminationGracePeriodSeconds = &long
	e.syncUntilRunning(pod)
	e.settle(pod, "stubborn")
	killed := e.killedIDs(pod)
	// kuscia's housekeeping kills an orphan with the running pod
	// GetPods(false) lists (pod.go HandlePodCleanups), through
	// syncTerminatingPod with pod = runningPod.ToAPIPod().
	running, listed := e.housekept(pod)
	if !listed {
		e.diagnose("GetPods(false) does not list the running pod %s: kuscia's housekeeping would never find it as an orphan (KRI-POD-005 checks the listing); killing it by UID", podRef(pod))
	}
	apiPod := running.ToAPIPod()
	grace := e.st.graceSecs
	e.step(fmt.Sprintf("killing the pod as an orphan: the running pod of GetPods(false), pod = runningPod.ToAPIPod() (container names and images only), gracePeriodOverride %d", grace))
	start := time.Now()
	e.noError("KillPod", e.killPod(apiPod, running, &grace))
	elapsed := time.Since(start)
	if limit := time.Duration(long) * time.Second; elapsed >= limit {
		e.failf("KillPod of the runtime-only pod with gracePeriodOverride %d took %s: it waited for the pod's own grace period of %ds, and kuscia's housekeeping waits with it", grace, elapsed, long)
	}
	// The agent publishes nothing of an orphan: what it needs is that the
	// orphan stops and leaves GetPods(false), or its housekeeping kills it
	// again at every pass. What is still reported of the killed containers
	// is KRI-POD-086's (SHOULD).
	after := fmt.Sprintf("after KillPod of the pod known only as running pod %s (pod = runningPod.ToAPIPod()) returned nil", podRef(pod))
	// kuscia's housekeeping checks nothing after an orphan's KillPod; it
	// kills again what GetPods(false) lists at its next pass.
	e.eventuallyFor(e.st.t.State+time.Duration(grace)*time.Second, fmt.Sprintf("%s, nothing of it runs and GetPods(false) no longer lists it", after), func(g gomega.Gomega) {
		st := e.status(pod)
		for _, name := range []string{"stubborn", "polite"} {
			g.Expect(runningOf(st, name)).To(gomega.BeNil(), "container %s of the killed orphan still runs: kuscia's housekeeping would find it again and again; %s", name, describeStatus(st))
		}
		list := e.getPods(false)
		g.Expect(listedByUID(list, pod)).To(gomega.BeNil(), "GetPods(false) still lists the killed orphan %s: kuscia's housekeeping would kill it again at every pass; listed: %s", podRef(pod), describePods(list))
	})
	for _, c := range e.status(pod).ContainerStatuses {
		if _, ok := killed[c.ID]; ok && (c.State != pkgcontainer.ContainerStateExited || c.ExitCode == 0 || c.FinishedAt.Before(c.StartedAt)) {
			e.diagnose("%s, GetPodStatus reports killed container %s as %s (exit code %d, StartedAt %s, FinishedAt %s): no agent publishes an orphan's status, KRI-POD-086 judges what a provider reports of killed containers", after, c.Name, c.State, c.ExitCode, stamp(c.StartedAt), stamp(c.FinishedAt))
		}
	}
}

func nodeRefreshKeepsForeignFields(e *nodeEnv) {
	node := e.configure(e.name())
	st := node.Status.DeepCopy()
	foreign := v1.NodeCondition{
		Type: "example.com/NetworkProblem", Status: v1.ConditionFalse, Reason: "SetByNodeProblemDetector",
		Message: "set by another component", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}
	attached := v1.AttachedVolume{Name: "kubernetes.io/csi/example^vol-1", DevicePath: "/dev/xvdb"}
	image := v1.ContainerImage{Names: []string{"example.com/kept:1"}, SizeBytes: 1 << 20}
	st.Conditions = append(st.Conditions, foreign)
	st.VolumesAttached = append(st.VolumesAttached, attached)
	st.VolumesInUse = append(st.VolumesInUse, attached.Name)
	st.Images = append(st.Images, image)
	st.DaemonEndpoints.KubeletEndpoint.Port = 10250
	e.step("refreshing a status that carries a condition, volumes and an image other components set")
	e.refresh(st)
	e.refresh(st)
	switch {
	case !slices.ContainsFunc(st.Conditions, func(c v1.NodeCondition) bool { return c.Type == foreign.Type && c.Reason == foreign.Reason }):
		e.failf("RefreshNodeStatus dropped or rewrote the condition %s another component set (conditions now: %v); the agent's next status update would erase it from the API server", foreign.Type, conditionTypes(st.Conditions))
	case !slices.Contains(st.VolumesAttached, attached) || !slices.Contains(st.VolumesInUse, attached.Name):
		e.failf("RefreshNodeStatus dropped the attached volume %s (attached: %v, in use: %v); the attach-detach controller owns it", attached.Name, st.VolumesAttached, st.VolumesInUse)
	case !slices.ContainsFunc(st.Images, func(i v1.ContainerImage) bool { return slices.Equal(i.Names, image.Names) }):
		e.failf("RefreshNodeStatus dropped the image %v from the status (images now: %d)", image.Names, len(st.Images))
	case st.DaemonEndpoints.KubeletEndpoint.Port != 10250:
		e.failf("RefreshNodeStatus changed the kubelet endpoint port from 10250 to %d", st.DaemonEndpoints.KubeletEndpoint.Port)
	}
}
