package conformance

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The status specs: what GetPodStatus and GetPods report of a pod, the answers
// the agent builds its published status and its housekeeping from (IDs,
// exit codes, timestamps, reasons, images, sandboxes, active statuses, the
// pod's identity, pods recreated under the same name).
var podStatusSpecs = []*specDef{
	{id: "KRI-POD-002", level: Must, kind: kindPod, groups: []string{"status"}, pod: podStatusOfUnknownPod,
		note: "Formerly the status also had to carry the pod's UID, name and namespace; that is KRI-POD-084 (SHOULD) now.",
		text: "GetPodStatus of a pod the provider never saw returns a non-nil status without containers, sandboxes or IPs, and no error"},
	{id: "KRI-POD-004", level: Must, kind: kindPod, groups: []string{"status"}, pod: podContainerIDs,
		text: "container IDs are non-empty, unique across containers and pods, and stable while the container runs"},
	{id: "KRI-POD-005", level: Must, kind: kindPod, groups: []string{"status"}, pod: podGetPods,
		note: "Formerly GetPods(false) had to leave out pods without a running container and exited containers; then it listed every pod with a running container or a ready sandbox, exited containers allowed, and had to leave out killed pods (the kubelet's getPods, onlyRunningReady). Formerly GetPods(true) also had to list a killed pod with its containers even when GetPodStatus reported nothing of it; then a provider could forget a pod it kills. Since the suite models kuscia's agent, this MUST is what its housekeeping reads (pod.go HandlePodCleanups keys the pods of GetPods(false) by UID): the names, namespaces, containers and states of GetPods, GetPods(true) and what it reports of a killed pod are KRI-POD-086 (SHOULD).",
		text: "GetPods(false) lists, by UID, every pod with a running container, and soon stops listing a pod KillPod has stopped"},
	{id: "KRI-POD-006", level: Must, kind: kindPod, groups: []string{"status"}, pod: podExitedContainer,
		text: "a container that exits is reported exited with its exit code, with StartedAt and FinishedAt set and FinishedAt not before CreatedAt"},
	{id: "KRI-POD-039", level: Should, kind: kindPod, groups: []string{"status"}, pod: podExitReason,
		text: "an exited container carries a Reason in GetPodStatus and in the Terminated state RefreshPodStatus reports"},
	{id: "KRI-POD-040", level: Should, kind: kindPod, groups: []string{"status"}, pod: podInstanceImages,
		note: "Lowered to SHOULD, and a normalised name (docker.io/library/busybox:1.36 for busybox:1.36) now matches: the agent reports the runtime's string and compares it with nothing.",
		text: "every container instance, running or exited, reports the image of its container spec (or its normalised form), in GetPodStatus and in RefreshPodStatus"},
	{id: "KRI-POD-043", level: Should, kind: kindPod, groups: []string{"status"}, pod: podActiveStatuses,
		note: "Lowered to SHOULD: only the kubelet's runtime manager reads ActiveContainerStatuses (computePodActions), no node agent does.",
		text: "ActiveContainerStatuses is empty or holds every running instance, each with the ID, name and state it has in ContainerStatuses"},
	{id: "KRI-POD-044", level: Should, kind: kindPod, groups: []string{"status"}, pod: podGetPodsStates,
		note: "Lowered to SHOULD: kuscia's agent never calls GetPods(true); in KRI the PLEG that compares container states lives inside the provider (kuscia's CRIProvider). It now also compares the replaced instances of a restarted container, which KRI-POD-053 checked before.",
		text: "GetPods(true) reports every container instance with the name and state GetPodStatus reports for its ID"},
	{id: "KRI-POD-054", level: Must, kind: kindPod, groups: []string{"status", "kill"}, pod: podRecreatedUnderSameName,
		text: "a pod created again under the same namespace and name with a new UID starts afresh: nothing of the old pod shows in its status, and killing the old one leaves it running"},
	{id: "KRI-POD-084", level: Should, kind: kindPod, groups: []string{"status"}, pod: podStatusIdentity,
		note: "Split from KRI-POD-001 and KRI-POD-002, whose MUST checks stopped at it, and from the check every spec made of every GetPodStatus answer. A SHOULD: kuscia's agent reads ID, Name and Namespace of the runtime status only through pkgcontainer.ConvertPodStatusToRunningPod, into the running pod it hands KillPod with the API pod; a provider that kills by the API pod (kuscia's K8sProvider) never looks at them.",
		text: "GetPodStatus reports the pod's UID, name and namespace, for a pod the provider never saw and for one it runs"},
	{id: "KRI-POD-086", level: Should, kind: kindPod, groups: []string{"status"}, pod: podGetPodsDetails,
		note: "Split from KRI-POD-005 as a SHOULD: kuscia's agent never calls GetPods(true), keys the pods of GetPods(false) by UID and hands an orphan's running pod back to KillPod; in KRI the PLEG that reads container states lives inside the provider (kuscia's CRIProvider).",
		text: "GetPods(false) lists each running pod under its name and namespace with its running containers as running; GetPods(true) also lists exited containers; of a killed pod, GetPods(true) and GetPodStatus report the same containers (none once the provider forgets it), each exited with a non-zero code"},
	{id: "KRI-POD-097", level: Must, kind: kindPod, groups: []string{"status", "init"}, caps: []Capability{CapInitContainers}, pod: podGetPodsInitOnly,
		note: "Widens KRI-POD-005, whose pods run app containers: a provider that lists only pods with a running app container passes it. kuscia's housekeeping (pod.go HandlePodCleanups) finds orphans only in GetPods(false): an orphan whose init container runs until killed would never be killed.",
		text: "GetPods(false) lists, by UID, a pod whose only running container is an init container"},
	{id: "KRI-POD-098", level: Must, kind: kindPod, groups: []string{"status"}, pod: podGetPodsSandboxOnly,
		note: "Widens KRI-POD-005 to a pod that runs no container but keeps a ready sandbox, as a RestartPolicy Never pod whose containers have all exited keeps it until KillPod in the kubelet's runtime. kuscia's housekeeping (pod.go HandlePodCleanups) kills orphans only from GetPods(false): such an orphan's sandbox would never be stopped. A provider that reports no ready sandbox for such a pod (a remote provider reports none) passes.",
		text: "GetPods(false) lists, by UID, a pod none of whose containers runs while GetPodStatus reports a ready sandbox for it"},
	{id: "KRI-POD-100", level: Must, kind: kindPod, groups: []string{"status", "refresh"}, pod: podReadyWithoutProbe,
		text: "RefreshPodStatus reports every running app container without a readiness probe Ready once it runs (in virtual time within 2s of the sync that first saw it run, on the real clock within the state timeout), and the agent's Ready condition follows"},
}

// expectKilledViews checks what GetPodStatus and GetPods(true) report of pod
// once KillPod (of the containers in killed, by ID) returned nil: every
// instance of a killed container that is still reported is exited with a
// non-zero exit code, in every round, and within the state timeout the two
// views agree: GetPods(true) lists exactly the containers GetPodStatus
// reports, none running. A provider may have forgotten the pod: then both
// report nothing of it. It returns the last status read.
func (e *podEnv) expectKilledViews(pod *v1.Pod, killed map[pkgcontainer.ContainerID]string, after string) *pkgcontainer.PodStatus {
	var st *pkgcontainer.PodStatus
	e.eventually(fmt.Sprintf("%s, GetPodStatus and GetPods(true) agree on what is left of pod %s", after, podRef(pod)), func(g gomega.Gomega) {
		st = e.status(pod)
		e.expectKilledStopped(pod, st, killed, after)
		listed := map[string]string{}
		for _, p := range e.getPods(true) {
			if p == nil || p.ID != pod.UID {
				continue
			}
			for _, c := range p.Containers {
				if c == nil {
					continue
				}
				listed[c.ID.String()] = c.Name + "/" + string(c.State)
				if c.State == pkgcontainer.ContainerStateRunning {
					e.failf("%s, GetPods(true) lists container %s (%s) of pod %s as running: %v", after, c.Name, c.ID.String(), podRef(pod), listed)
				}
			}
		}
		reported := map[string]string{}
		for _, c := range st.ContainerStatuses {
			reported[c.ID.String()] = c.Name + "/" + string(c.State)
		}
		g.Expect(sortedKeys(listed)).To(gomega.Equal(sortedKeys(reported)),
			"GetPods(true) lists containers %v of pod %s, GetPodStatus reports %v: the two views must name the same containers (both none once the pod is forgotten)",
			listed, podRef(pod), reported)
	})
	return st
}

func sortedKeys(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return "[" + strings.Join(keys, " ") + "]"
}

func podStatusOfUnknownPod(e *podEnv) {
	e.step("asking GetPodStatus about a pod the provider never saw")
	pod := e.newPod("ghost", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	st := e.status(pod) // checks non-nil
	if len(st.ContainerStatuses) > 0 || len(st.ActiveContainerStatuses) > 0 || len(st.SandboxStatuses) > 0 || len(st.IPs) > 0 {
		e.failf("GetPodStatus of a pod the provider never saw reports containers %s, %d sandboxes, IPs %v: kuscia's agent would publish them for a pod nothing was started for, and hand them to its first SyncPod",
			describeStatus(st), len(st.SandboxStatuses), st.IPs)
	}
}

func podContainerIDs(e *podEnv) {
	e.step("running two pods of two containers each and comparing their container IDs")
	pods := []*v1.Pod{
		e.newPod("ids-a", v1.RestartPolicyAlways, named("one", e.w().RunsUntilKilled()), named("two", e.w().RunsUntilKilled())),
		e.newPod("ids-b", v1.RestartPolicyAlways, named("one", e.w().RunsUntilKilled()), named("two", e.w().RunsUntilKilled())),
	}
	seen := map[string]string{} // container ID -> pod/container
	want := map[types.UID]map[string]pkgcontainer.ContainerID{}
	for _, pod := range pods {
		st := e.syncUntilRunning(pod)
		want[pod.UID] = map[string]pkgcontainer.ContainerID{}
		for _, c := range st.ContainerStatuses {
			where := podRef(pod) + "/" + c.Name
			if c.ID.ID == "" {
				e.failf("container %s has an empty ID: %s", where, describeStatus(st))
			}
			if other, dup := seen[c.ID.String()]; dup {
				e.failf("containers %s and %s share the ID %s", other, where, c.ID.String())
			}
			seen[c.ID.String()] = where
			if c.State == pkgcontainer.ContainerStateRunning {
				want[pod.UID][c.Name] = c.ID
			}
		}
	}
	e.consistently("container IDs stay the same while the containers run", func(g gomega.Gomega) {
		for _, pod := range pods {
			st := e.status(pod)
			for name, id := range want[pod.UID] {
				r := runningOf(st, name)
				g.Expect(r).NotTo(gomega.BeNil(), "container %s/%s stopped running: %s", podRef(pod), name, describeStatus(st))
				g.Expect(r.ID).To(gomega.Equal(id), "container %s/%s changed its ID while running: %s", podRef(pod), name, describeStatus(st))
			}
		}
	})
}

// getPodsSetup runs pod mixed (one container running, one exited) and kills
// pod killed, as KRI-POD-005 and KRI-POD-086 need them.
func (e *podEnv) getPodsSetup() (mixed, killed *v1.Pod, mixedSt *pkgcontainer.PodStatus, killedIDs map[pkgcontainer.ContainerID]string) {
	e.step("running pod mixed (one container running, one exited) and killing pod killed")
	mixed = e.newPod("mixed", v1.RestartPolicyNever, named("run", e.w().RunsUntilKilled()), named("done", e.w().ExitsWithCode(0)))
	killed = e.newPod("killed", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	mixedSt = e.syncUntil(mixed, "run running and done exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "run")).NotTo(gomega.BeNil(), "run is not running: %s", describeStatus(st))
		g.Expect(exitedOf(st, "done")).NotTo(gomega.BeEmpty(), "done has not exited: %s", describeStatus(st))
	})
	e.syncUntilRunning(killed)
	killedIDs = e.killedIDs(killed)
	e.killUntilStopped(killed, agentGrace(killed))
	return mixed, killed, mixedSt, killedIDs
}

// containerIDsOf renders the containers of p by ID.
func containerIDsOf(p *pkgcontainer.Pod) map[string]string {
	out := map[string]string{}
	for _, c := range p.Containers {
		out[c.ID.String()] = c.Name + "/" + string(c.State)
	}
	return out
}

// podGetPods checks what kuscia's housekeeping reads of GetPods(false)
// (pod.go HandlePodCleanups): the UIDs of the pods that run something. A
// pod it does not list is never found as an orphan; a stopped pod it lists
// is killed again at every housekeeping once the API server has forgotten
// it.
func podGetPods(e *podEnv) {
	mixed, killed, _, _ := e.getPodsSetup()
	e.step("listing the pods with GetPods(false), as kuscia's housekeeping does")
	e.eventually(fmt.Sprintf("pod %s, killed, no longer listed by GetPods(false)", podRef(killed)), func(g gomega.Gomega) {
		if p := listedByUID(e.getPods(false), killed); p != nil {
			g.Expect(p).To(gomega.BeNil(), "GetPods(false) lists pod %s (UID %s) after KillPod stopped it (containers %v): once the pod is gone from the API server, kuscia's housekeeping (pod.go HandlePodCleanups) would take it for an orphan and kill it again at every pass", podRef(killed), killed.UID, containerIDsOf(p))
		}
	})
	running := e.getPods(false)
	if listedByUID(running, mixed) == nil {
		e.failf("GetPods(false) does not list pod %s (UID %s), whose container run is running: kuscia's housekeeping (pod.go HandlePodCleanups) keys running pods by UID and would never find it as an orphan; listed: %s", podRef(mixed), mixed.UID, describePods(running))
	}
}

// podGetPodsInitOnly runs a pod whose init container runs until killed, so
// that none of its app containers has started, and reads GetPods(false) as
// kuscia's housekeeping does.
func podGetPodsInitOnly(e *podEnv) {
	pod := e.newPod("initonly", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	setInitContainers(pod, named("setup", e.w().RunsUntilKilled()))
	e.step("syncing a pod whose init container setup runs until killed")
	// A provider that reports no instance of an init container (KRI-POD-010
	// judges that) still runs setup: the listing is checked all the same.
	st := e.syncUntil(pod, "init container setup running, or no init container reported", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		if len(instancesOf(st, "setup")) > 0 {
			g.Expect(runningOf(st, "setup")).NotTo(gomega.BeNil(), "init container setup is not running: %s", describeStatus(st))
		}
		g.Expect(runningOf(st, "app")).To(gomega.BeNil(), "app container runs while init container setup runs until killed: %s", describeStatus(st))
	})
	setup := "whose init container setup is running"
	if runningOf(st, "setup") == nil {
		setup = "whose init container setup should be running (GetPodStatus reports no instance of it; KRI-POD-010 judges that)"
	}
	e.step("listing the pods with GetPods(false), as kuscia's housekeeping does")
	// Housekeeping lists again at every pass: a listing that lags is
	// found at a later one.
	e.eventually(fmt.Sprintf("pod %s, whose init container setup runs, listed by GetPods(false)", podRef(pod)), func(g gomega.Gomega) {
		list := e.getPods(false)
		g.Expect(listedByUID(list, pod)).NotTo(gomega.BeNil(), "GetPods(false) does not list pod %s (UID %s), %s: kuscia's housekeeping (pod.go HandlePodCleanups) finds orphans only among the pods GetPods(false) lists, so once the pod is gone from the API server its init container would run for ever; listed: %s", podRef(pod), pod.UID, setup, describePods(list))
	})
}

// podGetPodsSandboxOnly runs a RestartPolicy Never pod whose only
// container exits 0 and, while GetPodStatus reports a ready sandbox for
// it, reads GetPods(false) as kuscia's housekeeping does.
func podGetPodsSandboxOnly(e *podEnv) {
	pod := e.newPod("sandboxonly", v1.RestartPolicyNever, named("done", e.w().ExitsWithCode(0)))
	e.step("syncing a RestartPolicy Never pod whose container done exits 0")
	st := e.syncUntil(pod, "done exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(exitedOf(st, "done")).NotTo(gomega.BeEmpty(), "done has not exited: %s", describeStatus(st))
		g.Expect(runningOf(st, "done")).To(gomega.BeNil(), "done runs again under RestartPolicy Never: %s", describeStatus(st))
	})
	if len(readySandboxes(st)) == 0 {
		e.step("GetPodStatus reports no ready sandbox for the pod, whose container has exited: nothing of it is left for housekeeping to find")
		return
	}
	e.step(fmt.Sprintf("listing the pods with GetPods(false), as kuscia's housekeeping does, while GetPodStatus reports sandbox %v ready and no container running", readySandboxes(st)))
	e.eventually(fmt.Sprintf("pod %s, which runs no container and has a ready sandbox, listed by GetPods(false)", podRef(pod)), func(g gomega.Gomega) {
		list := e.getPods(false)
		if listedByUID(list, pod) != nil {
			return
		}
		// A provider that has stopped the sandbox since leaves nothing
		// for housekeeping to find.
		st := e.status(pod)
		ready := readySandboxes(st)
		g.Expect(ready).To(gomega.BeEmpty(), "GetPods(false) does not list pod %s (UID %s), whose container has exited while GetPodStatus reports its sandbox %v ready: kuscia's housekeeping (pod.go HandlePodCleanups) kills orphans only from GetPods(false), so once the pod is gone from the API server its sandbox would never be stopped; listed: %s", podRef(pod), pod.UID, ready, describePods(list))
	})
}

// podGetPodsDetails checks what no agent path reads of GetPods: the
// names, namespaces, container lists and states (kuscia's housekeeping
// keys running pods by UID and hands an orphan's running pod back to
// KillPod; the PLEG that reads container states lives inside a CRI
// provider), and that GetPods(true) and GetPodStatus agree on a killed pod.
func podGetPodsDetails(e *podEnv) {
	mixed, killed, mixedSt, killedIDs := e.getPodsSetup()
	listed := func(list []*pkgcontainer.Pod, pod *v1.Pod, call string) *pkgcontainer.Pod {
		p := listedByUID(list, pod)
		if p == nil {
			e.failf("%s does not list pod %s (UID %s): %s", call, podRef(pod), pod.UID, describePods(list))
		}
		if p.Name != pod.Name || p.Namespace != pod.Namespace {
			e.failf("%s lists UID %s as %s/%s, want %s: kuscia's housekeeping would hand an orphan with this name to KillPod (runningPod.ToAPIPod())", call, pod.UID, p.Namespace, p.Name, podRef(pod))
		}
		return p
	}
	e.step("listing the pods with GetPods(false)")
	p := listed(e.getPods(false), mixed, "GetPods(false)")
	runID := runningOf(mixedSt, "run").ID
	got := containerIDsOf(p)
	if got[runID.String()] != "run/"+string(pkgcontainer.ContainerStateRunning) {
		e.failf("GetPods(false) lists pod %s with containers %v, want the running container run (%s) among them, running", podRef(mixed), got, runID.String())
	}
	for _, c := range p.Containers {
		if c.ID != runID && c.State == pkgcontainer.ContainerStateRunning {
			e.failf("GetPods(false) lists container %s (%s) of pod %s as running; GetPodStatus reports only %s running: %s",
				c.Name, c.ID.String(), podRef(mixed), runID.String(), describeStatus(mixedSt))
		}
	}
	e.step("listing every pod and container with GetPods(true)")
	p = listed(e.getPods(true), mixed, "GetPods(true)")
	got = containerIDsOf(p)
	for _, s := range mixedSt.ContainerStatuses {
		if _, ok := got[s.ID.String()]; !ok {
			e.failf("GetPods(true) lists pod %s with containers %v, missing %s (%s, %s)", podRef(mixed), got, s.Name, s.ID.String(), s.State)
		}
	}
	e.step("comparing what GetPods(true) and GetPodStatus still report of pod killed (a provider may forget it)")
	e.expectKilledViews(killed, killedIDs, "after KillPod of pod "+podRef(killed)+" returned nil")
}

func podExitedContainer(e *podEnv) {
	e.step("syncing a pod whose container exits 3 under RestartPolicy Never")
	pod := e.newPod("exits", v1.RestartPolicyNever, named("three", e.w().ExitsWithCode(3)))
	st := e.syncUntil(pod, "container three exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(exitedOf(st, "three")).NotTo(gomega.BeEmpty(), "three has not exited: %s", describeStatus(st))
	})
	c := exitedOf(st, "three")[0]
	switch {
	case c.ExitCode != 3:
		e.failf("container three exited with code %d, want 3", c.ExitCode)
	case c.StartedAt.IsZero() || c.FinishedAt.IsZero():
		e.failf("exited container three has StartedAt %v and FinishedAt %v, want both set", c.StartedAt, c.FinishedAt)
	case c.FinishedAt.Before(c.CreatedAt):
		// Not StartedAt: three exits at once, and a CRI runtime may record
		// its StartedAt after the exit (kri: GetPodStatus).
		e.failf("exited container three has FinishedAt %v before CreatedAt %v", c.FinishedAt, c.CreatedAt)
	}
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
	e.killUntilStopped(old, agentGrace(old))
	e.statusHolding(fresh, "the new pod keeps running after the old one with its name was killed", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
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

func podStatusIdentity(e *podEnv) {
	pod := e.newPod("identity", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	check := func(when string, st *pkgcontainer.PodStatus) {
		if st.ID != pod.UID || st.Name != pod.Name || st.Namespace != pod.Namespace {
			e.failf("GetPodStatus of pod %s (UID %s) %s reports UID %q, name %q, namespace %q: kuscia's agent hands these to KillPod as the running pod's (ConvertPodStatusToRunningPod in pods_controller.go syncTerminatingPod), so a provider that kills by them would stop another pod or none",
				podRef(pod), pod.UID, when, st.ID, st.Name, st.Namespace)
		}
	}
	e.step("asking GetPodStatus about a pod the provider never saw")
	check("before it was ever synced", e.status(pod))
	e.step("syncing the pod until it runs and asking again")
	check("while it runs", e.syncUntilRunning(pod))
}

func podExitReason(e *podEnv) {
	e.step("syncing a pod whose containers exit 0 and 3, then reading their reasons")
	pod := e.newPod("reasons", v1.RestartPolicyNever, named("done", e.w().ExitsWithCode(0)), named("bad", e.w().ExitsWithCode(3)))
	st := e.syncUntil(pod, "done and bad exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		for _, name := range []string{"done", "bad"} {
			g.Expect(exitedOf(st, name)).NotTo(gomega.BeEmpty(), "%s has not exited: %s", name, describeStatus(st))
		}
	})
	ps := e.publish(pod, e.status(pod))
	for _, name := range []string{"done", "bad"} {
		c := exitedOf(st, name)[0]
		if c.Reason == "" {
			e.failf("GetPodStatus reports container %s exited with code %d but no Reason (by the CRI convention \"Completed\" or \"Error\")", name, c.ExitCode)
		}
		cs := apiStatusOf(ps.ContainerStatuses, name)
		switch {
		case cs == nil || cs.State.Terminated == nil:
			e.failf("RefreshPodStatus does not report the exited container %s as Terminated (statuses: %v)", name, statusNames(ps.ContainerStatuses))
		case cs.State.Terminated.Reason == "":
			e.failf("RefreshPodStatus reports container %s Terminated with exit code %d but no reason", name, cs.State.Terminated.ExitCode)
		}
	}
}

func podInstanceImages(e *podEnv) {
	pod := e.newPod("images", v1.RestartPolicyNever, named("run", e.w().RunsUntilKilled()), named("done", e.w().ExitsWithCode(0)))
	e.step("running one container and letting the other exit, then reading their images")
	st := e.runningAndExited(pod)
	image := map[string]string{}
	for _, c := range pod.Spec.Containers {
		image[c.Name] = c.Image
	}
	for _, c := range st.ContainerStatuses {
		if want, ok := image[c.Name]; ok && !sameImage(c.Image, want) {
			e.failf("GetPodStatus reports %s instance %s of container %s with image %q, want the spec's %q (or its normalised form)", c.State, c.ID.ID, c.Name, c.Image, want)
		}
	}
	ps, _ := e.refreshSettled(pod, newHistory("done"))
	for _, c := range pod.Spec.Containers {
		cs := apiStatusOf(ps.ContainerStatuses, c.Name)
		switch {
		case cs == nil:
			e.failf("RefreshPodStatus dropped the status of container %s (statuses: %v)", c.Name, statusNames(ps.ContainerStatuses))
		case !sameImage(cs.Image, c.Image):
			e.failf("RefreshPodStatus reports container %s with image %q, want the spec's %q (or its normalised form)", c.Name, cs.Image, c.Image)
		}
	}
}

// runningAndExited syncs pod until container run is running and done has exited.
func (e *podEnv) runningAndExited(pod *v1.Pod) *pkgcontainer.PodStatus {
	return e.syncUntil(pod, "run running and done exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "run")).NotTo(gomega.BeNil(), "run is not running: %s", describeStatus(st))
		g.Expect(exitedOf(st, "done")).NotTo(gomega.BeEmpty(), "done has not exited: %s", describeStatus(st))
	})
}

func podActiveStatuses(e *podEnv) {
	e.step("running a pod with one running and one exited container, then reading ActiveContainerStatuses")
	pod := e.newPod("active", v1.RestartPolicyNever, named("run", e.w().RunsUntilKilled()), named("done", e.w().ExitsWithCode(0)))
	st := e.runningAndExited(pod)
	if len(st.ActiveContainerStatuses) == 0 {
		return // the provider leaves it empty, as it may
	}
	byID := map[pkgcontainer.ContainerID]*pkgcontainer.Status{}
	for _, c := range st.ContainerStatuses {
		byID[c.ID] = c
	}
	active := map[pkgcontainer.ContainerID]bool{}
	for _, a := range st.ActiveContainerStatuses {
		if a == nil {
			e.failf("GetPodStatus of pod %s has a nil entry in ActiveContainerStatuses", podRef(pod))
		}
		c := byID[a.ID]
		switch {
		case c == nil:
			e.failf("ActiveContainerStatuses of pod %s lists %s (%s), which ContainerStatuses does not: %s", podRef(pod), a.ID.String(), a.Name, describeStatus(st))
		case c.Name != a.Name || c.State != a.State:
			e.failf("ActiveContainerStatuses of pod %s lists %s as %s/%s, ContainerStatuses as %s/%s", podRef(pod), a.ID.String(), a.Name, a.State, c.Name, c.State)
		}
		active[a.ID] = true
	}
	for _, c := range st.ContainerStatuses {
		if c.State == pkgcontainer.ContainerStateRunning && !active[c.ID] {
			e.failf("ActiveContainerStatuses of pod %s leaves out the running instance %s of container %s", podRef(pod), c.ID.String(), c.Name)
		}
	}
}

func podGetPodsStates(e *podEnv) {
	e.step("running a pod with one running and one exited container, then comparing GetPods(true) with GetPodStatus")
	pod := e.newPod("pleg", v1.RestartPolicyNever, named("run", e.w().RunsUntilKilled()), named("done", e.w().ExitsWithCode(3)))
	st := e.runningAndExited(pod)
	e.expectListedAsReported(pod, st, st.ContainerStatuses)
	e.step("restarting a container twice, then comparing again: the replaced instances GetPodStatus reports too")
	restarting := e.newPod("pleg-restarts", v1.RestartPolicyAlways, named("app", e.w().ExitsWithCode(3)))
	e.restarted(restarting, "app", 3)
	// Only the replaced instances: the newest one changes state between
	// the two calls while the container keeps restarting.
	st = e.status(restarting)
	newest := newestOf(st, "app")
	replaced := slices.DeleteFunc(slices.Clone(st.ContainerStatuses), func(c *pkgcontainer.Status) bool {
		return c == newest || c.State != pkgcontainer.ContainerStateExited
	})
	e.expectListedAsReported(restarting, st, replaced)
}

// expectListedAsReported fails unless GetPods(true) lists each of the
// instances of pod that st, GetPodStatus's answer, reports, under its ID
// with its name and state.
func (e *podEnv) expectListedAsReported(pod *v1.Pod, st *pkgcontainer.PodStatus, instances []*pkgcontainer.Status) {
	listed := listedByUID(e.getPods(true), pod)
	if listed == nil {
		e.failf("GetPods(true) does not list pod %s", podRef(pod))
	}
	byID := map[pkgcontainer.ContainerID]*pkgcontainer.Container{}
	for _, c := range listed.Containers {
		if c != nil {
			byID[c.ID] = c
		}
	}
	for _, s := range instances {
		c := byID[s.ID]
		switch {
		case c == nil:
			e.failf("GetPods(true) lists pod %s without its container %s (%s, %s), which GetPodStatus reports; it lists %s", podRef(pod), s.Name, s.ID.String(), s.State, canonicalPod(listed))
		case c.Name != s.Name || c.State != s.State:
			e.failf("GetPods(true) lists container %s of pod %s as %s/%s, GetPodStatus as %s/%s", s.ID.String(), podRef(pod), c.Name, c.State, s.Name, s.State)
		}
	}
}

// podReadyWithoutProbe checks that the running app containers of a pod
// without probes are Ready in what the agent publishes: kuscia's own
// conversion sets no Ready (pod.go generateAPIPodStatus leaves it to
// RefreshPodStatus), and the kubelet's prober manager reports a running
// container without a readiness probe ready (UpdatePodStatus: no worker,
// ready). Two containers, so that a provider that sets it for one only
// fails. A provider may report it a moment late (a remote backend whose
// status lags its runtime's; benign variant unprobed-ready-a-second-late)
// but has no probe to wait for: in virtual time, where a wait costs
// nothing, 2s bound it, on the real clock the state timeout.
func podReadyWithoutProbe(e *podEnv) {
	names := []string{"first", "second"}
	e.step("syncing a pod of two app containers without probes until both run")
	pod := e.newPod("noprobe", v1.RestartPolicyAlways, named(names[0], e.w().RunsUntilKilled()), named(names[1], e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	within, bound := e.st.t.State, "the state timeout"
	if e.vt != nil {
		within, bound = 2*time.Second, "2s of virtual time"
	}
	ready := func(g gomega.Gomega, ps v1.PodStatus) {
		for _, name := range names {
			cs := apiStatusOf(ps.ContainerStatuses, name)
			g.Expect(cs).NotTo(gomega.BeNil(), "kuscia's agent publishes no status of container %s (after RefreshPodStatus): %s", name, describeAPIStatus(ps))
			g.Expect(cs.State.Running).NotTo(gomega.BeNil(), "kuscia's agent publishes container %s not running: %s", name, describeAPIStatus(ps))
			g.Expect(cs.Ready).To(gomega.BeTrue(), "RefreshPodStatus reports running container %s, which has no readiness probe, not Ready: kuscia's agent publishes it so and its Ready condition False (status/generate.go GeneratePodReadyCondition); the kubelet's prober reports such a container ready once it runs", name)
		}
		for _, c := range ps.Conditions {
			if c.Type == v1.PodReady {
				g.Expect(c.Status).To(gomega.Equal(v1.ConditionTrue), "the pod's Ready condition, which the agent computes from its containers' Ready: %+v", c)
			}
		}
	}
	e.step("checking, at every sync of the agent, that both are Ready within " + bound)
	if failed, _ := attempt(func(g gomega.Gomega) { ready(g, e.publishedOf(pod)) }); failed == nil && e.updateDue(pod) == "" {
		return // the sync that saw them run published them Ready
	}
	e.untilAsAgent(pod, within, fmt.Sprintf("pod %s: running containers without a readiness probe Ready", podRef(pod)), func(g gomega.Gomega) {
		ready(g, e.publish(pod, e.sync(pod)))
	})
}
