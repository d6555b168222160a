package conformance

import (
	"fmt"
	"slices"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The restart specs: the pod's restart policy (Never, OnFailure, Always)
// and what the agent reads of restarts: restart counts, timestamps and exit
// codes of replaced instances, in pods of one container and of several.
var podRestartSpecs = []*specDef{
	{id: "KRI-POD-007", level: Must, kind: kindPod, groups: []string{"restart"}, caps: []Capability{CapRestartPolicies}, pod: podRestartNever,
		note: "Since the suite models kuscia's agent, which stops syncing a pod once its phase is terminal, the pod keeps a third container running, so that SyncPod is still called after the two others exited.",
		text: "with RestartPolicy Never, an exited container is not restarted, whatever its exit code"},
	{id: "KRI-POD-008", level: Must, kind: kindPod, groups: []string{"restart"}, caps: []Capability{CapRestartPolicies}, pod: podRestartOnFailure,
		note: "Formerly both instances had to be in one GetPodStatus; now restarts are seen across polls (a new container ID or a higher RestartCount), as a remote backend shows one run at a time.",
		text: "with RestartPolicy OnFailure, a container that exits non-zero is restarted as a new instance and one that exits 0 is not"},
	{id: "KRI-POD-009", level: Must, kind: kindPod, groups: []string{"restart"}, caps: []Capability{CapRestartPolicies}, pod: podRestartAlways,
		note: "Formerly both instances had to be in one GetPodStatus; now restarts are seen across polls.",
		text: "with RestartPolicy Always, a container that exits 0 is restarted as a new instance"},
	{id: "KRI-POD-037", level: Must, kind: kindPod, groups: []string{"restart", "status"}, caps: []Capability{CapRestartPolicies}, pod: podRestartCount,
		note: "Formerly RefreshPodStatus was called with an empty status and had to fill it; now it is called with the status the agent built (package podstatus) and must keep the counts. Formerly the first instance of the restarting container the suite saw had to report 0, but the suite cannot know it saw the first: a provider that reports only the newest run (kuscia's K8sProvider) and whose cache shows the pod only after the first restart rightly reports 1. Now the first instance is judged on a container of the same pod that never exits, whose one instance is its first.",
		text: "RestartCount is 0 for the first instance of a container, grows with every restart and never decreases across calls of GetPodStatus, and RefreshPodStatus reports at least the newest instance's"},
	{id: "KRI-POD-038", level: Must, kind: kindPod, groups: []string{"restart", "status"}, caps: []Capability{CapRestartPolicies}, pod: podRestartTimestamps,
		note: "Met by providers that mirror pods into a backend cluster too: the API keeps whole seconds and no creation time, so a restart within the second the previous run finished in ties with it. Such a provider converts the backend's v1.PodStatus with podstatus.RuntimeStatus, which orders a container's runs by their restart counts. Since the suite models kuscia's agent, CreatedAt is judged only between instances one GetPodStatus reports together, which the agent sorts by it (pod.go convertToAPIContainerStatuses): a provider that reports one instance per container, as kuscia's K8sProvider does, may leave it unset.",
		text: "an exited instance has StartedAt and FinishedAt set, neither before its CreatedAt; of the instances of a container one GetPodStatus reports together, each has CreatedAt set and one that replaces another is created after it and not before it finished"},
	{id: "KRI-POD-051", level: Must, kind: kindPod, groups: []string{"restart", "status"}, caps: []Capability{CapRestartPolicies}, pod: podOneOfSeveralRestarts,
		text: "in a pod of several containers, a restarting container counts its own restarts while the others keep their single instance, ID and RestartCount 0"},
	{id: "KRI-POD-053", level: Must, kind: kindPod, groups: []string{"restart", "status"}, caps: []Capability{CapRestartPolicies}, pod: podReplacedInstancesKeepTheirState,
		note: "Formerly every run exited 0, so a provider that reported replaced instances with exit code 0 whatever their code, or with the running newest instance's, passed; now every run exits 3 and every exited instance must report 3. Formerly GetPods(true) also had to list every such instance; kuscia's agent never calls GetPods(true), so that is KRI-POD-044's (SHOULD) now.",
		text: "after several restarts of a container that exits non-zero, every replaced instance GetPodStatus still reports keeps its own ID, exit code and timestamps"},
}

// bothExited waits until containers ok and bad have exited.
func bothExited(g gomega.Gomega, st *pkgcontainer.PodStatus) {
	for _, name := range []string{"ok", "bad"} {
		g.Expect(exitedOf(st, name)).NotTo(gomega.BeEmpty(), "%s has not exited: %s", name, describeStatus(st))
	}
}

func podRestartNever(e *podEnv) {
	e.step("syncing a pod whose containers exit 0 and 3 under RestartPolicy Never while a third runs on, then syncing on")
	// run keeps the pod Running: kuscia's agent stops syncing a pod whose
	// phase is terminal, so only a pod still running shows what SyncPod
	// does with the exited containers.
	pod := e.newPod("never", v1.RestartPolicyNever, named("ok", e.w().ExitsWithCode(0)), named("bad", e.w().ExitsWithCode(3)), named("run", e.w().RunsUntilKilled()))
	st := e.syncUntil(pod, "ok and bad exited", bothExited)
	ids := map[string]pkgcontainer.ContainerID{}
	for _, name := range []string{"ok", "bad"} {
		ids[name] = exitedOf(st, name)[0].ID
	}
	e.syncHolding(pod, "no container restarted", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		for _, name := range []string{"ok", "bad"} {
			inst := instancesOf(st, name)
			g.Expect(inst).To(gomega.HaveLen(1), "container %s was restarted under RestartPolicy Never: %s", name, describeStatus(st))
			g.Expect(inst[0].ID).To(gomega.Equal(ids[name]), "container %s was restarted under RestartPolicy Never (was %s): %s", name, ids[name].ID, describeStatus(st))
		}
	})
}

func podRestartOnFailure(e *podEnv) {
	pod := e.newPod("onfailure", v1.RestartPolicyOnFailure, named("ok", e.w().ExitsWithCode(0)), named("bad", e.w().ExitsWithCode(3)))
	e.step("syncing a pod whose container ok exits 0 and bad exits 3, under RestartPolicy OnFailure")
	ok, bad := newHistory("ok"), newHistory("bad")
	e.syncUntil(pod, "bad exited 3 and restarted, ok exited 0", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		ok.observe(st)
		bad.observe(st)
		g.Expect(ok.exitedWith(0)).To(gomega.BeTrue(), "ok has not been seen exited 0: %s%s", ok, ok.exitHidden())
		g.Expect(bad.exitedWith(3)).To(gomega.BeTrue(), "bad has not been seen exited 3: %s%s", bad, bad.exitHidden())
		g.Expect(bad.restarts()).To(gomega.BeNumerically(">=", 1), "container bad, which exited 3, was not restarted: %s", bad)
	})
	e.step("syncing on: ok, which exited 0, must not be restarted")
	e.syncHolding(pod, "ok not restarted", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		ok.observe(st)
		g.Expect(ok.restarts()).To(gomega.BeZero(), "container ok exited 0 and was restarted under RestartPolicy OnFailure: %s", ok)
	})
}

func podRestartAlways(e *podEnv) {
	pod := e.newPod("always", v1.RestartPolicyAlways, named("ok", e.w().ExitsWithCode(0)))
	e.step("syncing a pod whose container ok exits 0, under RestartPolicy Always")
	ok := newHistory("ok")
	e.syncUntil(pod, "ok exited 0 and restarted", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		ok.observe(st)
		g.Expect(ok.exitedWith(0)).To(gomega.BeTrue(), "ok has not been seen exited 0: %s%s", ok, ok.exitHidden())
		g.Expect(ok.restarts()).To(gomega.BeNumerically(">=", 1), "container ok, which exited 0, was not restarted: %s", ok)
	})
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

// exitedWith reports whether an instance was seen exited with code.
func (h *history) exitedWith(code int) bool {
	for _, c := range h.latest {
		if c.State == pkgcontainer.ContainerStateExited && c.ExitCode == code {
			return true
		}
	}
	return false
}

// exitHidden says, when every instance seen of the container after its
// first was reported Created (a provider that shows a run waiting to be
// restarted as Created, as kuscia's K8sProvider turns a backend's
// CrashLoopBackOff into), what kuscia's agent makes of it; "" otherwise.
func (h *history) exitHidden() string {
	if len(h.order) < 2 {
		return ""
	}
	for _, c := range h.latest {
		if c.State != pkgcontainer.ContainerStateCreated {
			return ""
		}
	}
	return fmt.Sprintf("; GetPodStatus reports every run of %s as Created, never exited: kuscia's agent, which computes the phase before RefreshPodStatus (pod.go getPhase), would publish the pod Pending while the container restarts, and hand SyncPod a status without its exit code", h.name)
}

// unsetTime reports whether t is unset: zero, or the Unix epoch, which is
// how a CRI runtime reports the StartedAt of a container that never
// started (0 nanoseconds; the kubelet's convertToKubeContainerStatus keeps
// it).
func unsetTime(t time.Time) bool { return t.IsZero() || t.Equal(time.Unix(0, 0)) }

func podRestartCount(e *podEnv) {
	// steady never exits, so a correct provider never restarts it: its
	// instance is its first, whenever the suite sees it. Which instance of
	// app the suite sees first it cannot know: a provider that reports
	// only the newest run (kuscia's K8sProvider, from the backend pod's
	// status) and whose cache shows the pod only after app's first restart
	// rightly reports that run with RestartCount 1.
	pod := e.newPod("restarts", v1.RestartPolicyAlways, named("app", e.w().ExitsWithCode(1)), named("steady", e.w().RunsUntilKilled()))
	e.step("syncing a container that exits 1 until it has restarted twice, beside one that runs on, watching RestartCount")
	h, steady := newHistory("app"), newHistory("steady")
	e.syncUntil(pod, "container app restarted 2 times while steady runs", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		h.observe(st)
		steady.observe(st)
		g.Expect(h.restarts()).To(gomega.BeNumerically(">=", 2), "container app has restarted %d times: %s", h.restarts(), h)
		g.Expect(runningOf(st, "steady")).NotTo(gomega.BeNil(), "container steady is not running: %s", describeStatus(st))
	})
	if first := steady.instances()[0]; first.RestartCount != 0 {
		e.failf("the first instance of container steady, which never exits, reports RestartCount %d, want 0; %s", first.RestartCount, steady)
	}
	inst := h.instances()
	for i := 1; i < len(inst); i++ {
		if inst[i].RestartCount <= inst[i-1].RestartCount {
			e.failf("instance #%d of container app reports RestartCount %d, not more than the %d of the instance #%d it replaced; %s",
				i, inst[i].RestartCount, inst[i-1].RestartCount, i-1, h)
		}
	}
	if h.decreased != "" {
		e.failf("RestartCount of container app went down between two GetPodStatus calls: %s; %s", h.decreased, h)
	}
	if h.maxRestarts < 2 {
		e.failf("container app restarted %d times but its newest instance reports RestartCount %d; %s", h.restarts(), h.maxRestarts, h)
	}
	e.step("refreshing the status the agent builds from GetPodStatus")
	ps, st := e.refreshSettled(pod, h)
	newest := newestOf(st, "app")
	cs := apiStatusOf(ps.ContainerStatuses, "app")
	switch {
	case cs == nil:
		e.failf("RefreshPodStatus dropped the status of container app (statuses: %v)", statusNames(ps.ContainerStatuses))
	case newest != nil && cs.RestartCount < int32(newest.RestartCount):
		e.failf("RefreshPodStatus reports RestartCount %d for container app, whose newest instance reports %d; %s", cs.RestartCount, newest.RestartCount, h)
	}
}

func podRestartTimestamps(e *podEnv) {
	e.step("syncing a container that exits 1 until it has restarted twice, then comparing the timestamps of its instances")
	pod := e.newPod("stamps", v1.RestartPolicyAlways, named("app", e.w().ExitsWithCode(1)))
	h := e.restarted(pod, "app", 3)
	inst := h.instances()
	// kuscia's agent orders the instances of one GetPodStatus answer by
	// CreatedAt (pod.go convertToAPIContainerStatuses) to take the newest
	// as the current run and the next as its last termination: CreatedAt
	// matters between instances reported together, not for a provider
	// that reports one instance per container.
	together := map[string]bool{}
	if now := instancesOf(e.status(pod), "app"); len(now) > 1 {
		for _, c := range now {
			together[c.ID.String()] = true
		}
		// The answer itself, ordered by restart count: each run
		// created after the one it replaced.
		byRun := slices.Clone(now)
		slices.SortFunc(byRun, func(a, b *pkgcontainer.Status) int { return a.RestartCount - b.RestartCount })
		for i := 1; i < len(byRun); i++ {
			if prev, c := byRun[i-1], byRun[i]; c.RestartCount > prev.RestartCount && !c.CreatedAt.After(prev.CreatedAt) {
				e.failf("GetPodStatus reports instance %s of container app (restart count %d) beside %s (restart count %d), which it replaced, but not created after it (%s, %s): kuscia's agent, which sorts the instances of one GetPodStatus by CreatedAt, could publish the old run as the current one; %s",
					c.ID.ID, c.RestartCount, prev.ID.ID, prev.RestartCount, c.CreatedAt.Format(time.RFC3339Nano), prev.CreatedAt.Format(time.RFC3339Nano), describeStatus(&pkgcontainer.PodStatus{ContainerStatuses: now}))
			}
		}
	}
	for i, c := range inst {
		switch {
		case together[c.ID.String()] && c.CreatedAt.IsZero():
			e.failf("instance #%d of container app has no CreatedAt, and GetPodStatus reports it beside another instance: kuscia's agent sorts them by CreatedAt to find the current run; %s", i, h)
		case !unsetTime(c.StartedAt) && c.StartedAt.Before(c.CreatedAt):
			e.failf("instance #%d of container app started before it was created; %s", i, h)
		case c.State == pkgcontainer.ContainerStateExited && (c.StartedAt.IsZero() || c.FinishedAt.IsZero()):
			e.failf("exited instance #%d of container app lacks StartedAt or FinishedAt: kuscia's agent would publish its termination without times; %s", i, h)
		case !c.FinishedAt.IsZero() && c.FinishedAt.Before(c.CreatedAt):
			// Not StartedAt: app exits at once, and a CRI runtime may
			// record its StartedAt after the exit (kri: GetPodStatus).
			e.failf("instance #%d of container app finished before it was created; %s", i, h)
		}
		if i == 0 || !together[c.ID.String()] || !together[inst[i-1].ID.String()] {
			continue
		}
		prev := inst[i-1]
		switch {
		case !c.CreatedAt.After(prev.CreatedAt):
			e.failf("instance #%d of container app replaced #%d but was not created after it, so kuscia's agent, which sorts the instances of one GetPodStatus by CreatedAt, would publish the old run as the current one; %s", i, i-1, h)
		case c.CreatedAt.Before(prev.FinishedAt):
			e.failf("instance #%d of container app was created before instance #%d, which it replaced, finished; %s", i, i-1, h)
		}
	}
}
