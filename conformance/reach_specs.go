package conformance

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
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
		text: "when one container fails to start and another starts, SyncPod's error names only the failed one, the ReasonCache holds only its entry, and the other runs"},
	{id: "KRI-POD-053", level: Must, kind: kindPod, groups: []string{"restart", "status"}, caps: []Capability{CapRestartPolicies}, pod: podReplacedInstancesKeepTheirState,
		note: "Formerly every run exited 0, so a provider that reported replaced instances with exit code 0 whatever their code, or with the running newest instance's, passed; now every run exits 3 and every exited instance must report 3.",
		text: "after several restarts of a container that exits non-zero, every replaced instance GetPodStatus still reports keeps its own ID, exit code and timestamps, and GetPods(true) lists it"},
	{id: "KRI-POD-054", level: Must, kind: kindPod, groups: []string{"status", "kill"}, pod: podRecreatedUnderSameName,
		text: "a pod created again under the same namespace and name with a new UID starts afresh: nothing of the old pod shows in its status, and killing the old one leaves it running"},
	{id: "KRI-POD-055", level: Must, kind: kindPod, groups: []string{"kill", "init"}, caps: []Capability{CapInitContainers}, pod: podKillDuringInit,
		text: "KillPod while an init container runs stops it, and no app container starts"},
	{id: "KRI-POD-056", level: Must, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillRuntimeOnlyPod,
		note: "Formerly each killed container had to be reported exited; now a provider may forget the pod as it kills it (kuscia's K8sProvider deletes the backend pod; the kubelet's SyncTerminatingPod only checks that nothing runs, its PLEG takes a vanished container as died): what is still reported must be exited as before, and GetPods(true) must list the same containers as GetPodStatus.",
		text: "KillPod of a pod the agent knows only as a running pod (runningPod.ToAPIPod()) stops its SIGTERM-ignoring and SIGTERM-honouring containers: each is no longer reported, or reported exited with a non-zero code and FinishedAt not before StartedAt, as GetPods(true) reports it too"},
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
	ginkgo.By("syncing a pod of three containers, one of which (flaky) exits 1, until flaky has restarted twice")
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
	ginkgo.By("checking that the containers that did not exit kept their only instance")
	for _, h := range []*history{steady, calm} {
		if len(h.order) != 1 || h.maxRestarts != 0 {
			e.failf("container %s never exited, but shows %d instances and RestartCount %d while its sibling flaky restarted: %s", h.name, len(h.order), h.maxRestarts, h)
		}
		if n := h.newest(); n.State != pkgcontainer.ContainerStateRunning {
			e.failf("container %s never exits, but is %s while its sibling flaky restarts: %s", h.name, n.State, h)
		}
	}
	ginkgo.By("refreshing the status the agent builds: restart counts per container")
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
	ginkgo.By("syncing a pod whose container good starts and bad cannot (missing executable)")
	var err error
	e.eventually(fmt.Sprintf("pod %s: good running, bad's failed start reported", podRef(pod)), func(g gomega.Gomega) {
		err = e.syncPod(pod, e.lastStatus(pod))
		if err != nil {
			e.skipIfNotSupported("SyncPod", err)
		}
		st := e.status(pod)
		e.setLast(pod, st)
		g.Expect(runningOf(st, "good")).NotTo(gomega.BeNil(), "container good is not running next to bad, whose start fails: %s", describeStatus(st))
		g.Expect(err).To(gomega.HaveOccurred(), "SyncPod returned nil although container bad failed to start")
		_, ok := e.rc.Get(pod.UID, "bad")
		g.Expect(ok).To(gomega.BeTrue(), "the ReasonCache has no entry for container bad after its start failed")
	})
	if msg := err.Error(); !strings.Contains(msg, "bad") {
		e.failf("SyncPod's error does not name the container bad whose start failed: %v", err)
	} else if strings.Contains(msg, `"good"`) {
		e.failf("SyncPod's error names container good, which started: %v", err)
	}
	if item, ok := e.rc.Get(pod.UID, "good"); ok {
		e.failf("the ReasonCache holds a failure for container good, which started, while bad failed: %v: %s", item.Err, item.Message)
	}
	ginkgo.By("syncing on: good must keep running, its ID unchanged")
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
	ginkgo.By(fmt.Sprintf("syncing a container that exits %d until it has restarted three times, remembering each exited instance", code))
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
	st := e.syncUntil(pod, "app restarted three times", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		h.observe(st)
		check(st)
		g.Expect(h.restarts()).To(gomega.BeNumerically(">=", 3), "container app has restarted %d times: %s", h.restarts(), h)
	})
	ginkgo.By("checking that GetPods(true) lists every instance GetPodStatus reports")
	var listed *pkgcontainer.Pod
	for _, p := range e.getPods(true) {
		if p != nil && p.ID == pod.UID {
			listed = p
		}
	}
	if listed == nil {
		e.failf("GetPods(true) does not list pod %s", podRef(pod))
	}
	st = e.status(pod)
	check(st)
	for _, c := range instancesOf(st, "app") {
		if !slices.ContainsFunc(listed.Containers, func(lc *pkgcontainer.Container) bool { return lc != nil && lc.ID == c.ID }) {
			e.failf("GetPods(true) lists pod %s without instance %s (%s) of container app, which GetPodStatus reports: %s", podRef(pod), c.ID.ID, c.State, canonicalPod(listed))
		}
	}
}

func podRecreatedUnderSameName(e *podEnv) {
	old := e.newPod("stateful", v1.RestartPolicyAlways, named("app", e.w().ExitsWithCode(2)))
	ginkgo.By("running pod " + podRef(old) + " until its container has exited and restarted")
	oldHist := e.restarted(old, "app", 2)
	ginkgo.By("creating the pod again under the same namespace and name with a new UID, as a StatefulSet does, while the old one still exists")
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
	ginkgo.By("killing the old pod: the new one must keep running")
	runningID := runningOf(st, "app").ID
	e.killAsAgent(old)
	e.hold(fresh, "the new pod keeps running after the old one with its name was killed", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		r := runningOf(st, "app")
		g.Expect(r).NotTo(gomega.BeNil(), "KillPod of the old pod %s (UID %s) stopped the new pod with the same name (UID %s): %s", podRef(old), old.UID, fresh.UID, describeStatus(st))
		g.Expect(r.ID).To(gomega.Equal(runningID), "the new pod's container was replaced when the old pod was killed: %s", describeStatus(st))
	})
	ownStatus(e.status(fresh), "after the old pod was killed")
	ginkgo.By("deleting the old pod: the new one must keep running")
	e.noError("DeletePod", e.deletePod(old))
	if r := runningOf(e.status(fresh), "app"); r == nil || r.ID != runningID {
		e.failf("DeletePod of the old pod %s (UID %s) stopped or replaced the new pod with the same name: %s", podRef(old), old.UID, describeStatus(e.status(fresh)))
	}
}

func podKillDuringInit(e *podEnv) {
	pod := e.newPod("killinit", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	setInitContainers(pod, named("setup", e.w().RunsUntilKilled()))
	ginkgo.By("syncing a pod whose init container setup runs until killed")
	e.syncUntil(pod, "init container setup running", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "setup")).NotTo(gomega.BeNil(), "init container setup is not running: %s", describeStatus(st))
	})
	ginkgo.By("killing the pod while setup runs")
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
	running := e.runningPod(pod)
	apiPod := running.ToAPIPod()
	grace := e.st.graceSecs
	ginkgo.By(fmt.Sprintf("killing the pod as an orphan: pod = runningPod.ToAPIPod() (container names and images only), gracePeriodOverride %d", grace))
	start := time.Now()
	e.noError("KillPod", e.killPod(apiPod, running, &grace))
	elapsed := time.Since(start)
	if limit := time.Duration(long) * time.Second; elapsed >= limit {
		e.failf("KillPod of the runtime-only pod with gracePeriodOverride %d took %s: it waited for the pod's own grace period of %ds", grace, elapsed, long)
	}
	// A provider may forget the pod as it kills it (kuscia's K8sProvider
	// deletes the backend pod): a container gone is as good as exited.
	// What is still reported must be exited, non-zero, its FinishedAt not
	// before its StartedAt, and GetPods(true) must agree.
	after := fmt.Sprintf("after KillPod of the pod known only as running pod %s (pod = runningPod.ToAPIPod()) returned nil", podRef(pod))
	st := e.status(pod)
	for _, name := range []string{"stubborn", "polite"} {
		if r := runningOf(st, name); r != nil {
			e.failf("%s, container %s still runs: %s", after, name, describeStatus(st))
		}
	}
	st = e.expectKilledViews(pod, killed, after)
	for _, c := range st.ContainerStatuses {
		if _, ok := killed[c.ID]; ok && (c.FinishedAt.IsZero() || c.FinishedAt.Before(c.StartedAt)) {
			e.failf("killed container %s reports FinishedAt %s, StartedAt %s: want FinishedAt set and not before StartedAt", c.Name, stamp(c.FinishedAt), stamp(c.StartedAt))
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
	ginkgo.By("refreshing a status that carries a condition, volumes and an image other components set")
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
