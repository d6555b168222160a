package conformance

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/sim/workload"
)

// The kill specs: KillPod as the agent's termination (syncTerminatingPod)
// and its housekeeping (HandlePodCleanups) call it: grace periods and their
// overrides, SIGTERM before SIGKILL, its nil and unknown pods, kills during
// init and of orphans, and what GetPodStatus and GetPods say afterwards.
var podKillSpecs = []*specDef{
	{id: "KRI-POD-014", level: Must, kind: kindPod, groups: []string{"kill"}, pod: podKillStopsAll,
		note: "Since the suite models kuscia's agent, this spec alone judges a KillPod that returns while containers still run (syncTerminatingPod's guard); every other spec retries the termination as the agent does. It also judges the exit codes of the killed containers still reported, from which the agent publishes the final status.",
		text: "after KillPod returns nil, GetPodStatus reports no running container of the pod, and each killed container it still reports exited with a non-zero code"},
	{id: "KRI-POD-015", level: Must, kind: kindPod, groups: []string{"kill"}, pod: podKillUnknownOrStopped,
		text: "KillPod of an unknown pod, of a pod whose containers have all exited and of an already killed pod returns nil"},
	{id: "KRI-POD-016", level: Must, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillGraceOne,
		note: "Formerly the override was 0 and KillPod had to return within the suite's grace period; node agents pass at least 1 and the kubelet's runtime gives at least 2 seconds, so now the override is 1 and KillPod must not wait for the pod's much longer grace period.",
		text: "KillPod with gracePeriodOverride 1 (what an agent passes for orphans) stops a SIGTERM-ignoring container without waiting for the pod's much longer grace period"},
	{id: "KRI-POD-017", level: Must, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillGraceOverride,
		text: "KillPod with gracePeriodOverride G does not stop a SIGTERM-ignoring container before G, and does not wait for the pod's longer grace period"},
	{id: "KRI-POD-018", level: Should, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillPodGrace,
		note: "Lowered to SHOULD: kuscia's agent passes an override to every kill it is asked for (pod_workers.go calculateEffectiveGracePeriod), and nil only to the KillPod that follows a pod ending by itself (completeSync queues that termination without KillPodOptions; syncTerminatingPod hands KillPod its nil grace period), when none of the pod's containers runs any more and the grace period stops nothing. Formerly this note said an agent always passes one; 47 of 204 KillPod calls of kuscia's real agent, run over the kit's providers, had nil.",
		text: "KillPod without override gives a SIGTERM-ignoring container the pod's TerminationGracePeriodSeconds, not less"},
	{id: "KRI-POD-041", level: Must, kind: kindPod, groups: []string{"kill", "status"}, pod: podSandboxes,
		note: "Formerly a running pod needed exactly one ready sandbox; a remote provider has none, and the agent needs only none after KillPod (isPodStatusCacheTerminal).",
		text: "after KillPod returns nil, GetPodStatus reports no ready sandbox"},
	{id: "KRI-POD-047", level: Must, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillSendsSIGTERM,
		note: "Formerly the container ran as PID 1 of its own PID namespace, where it exits on SIGTERM only once its shell has installed its trap; over a real containerd on a loaded machine SIGTERM came first now and then and the kill took the whole grace period. Now the pod shares its PID namespace (spec.shareProcessNamespace), so the container exits on SIGTERM from its first instant, trap or not, and the kill's time depends only on whether SIGTERM was sent first.",
		text: "KillPod sends SIGTERM first: a container that exits on SIGTERM (in a pod that shares its PID namespace) stops without waiting for a long grace period"},
	{id: "KRI-POD-048", level: Should, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillDeletionGrace,
		note: "Formerly a MUST about a pod without TerminationGracePeriodSeconds (30 s). Now a SHOULD: without override, DeletionGracePeriodSeconds outranks TerminationGracePeriodSeconds, as in the kubelet's runtime (setTerminationGracePeriod). kuscia's agent passes nil only after a pod ended by itself, when nothing of it runs (see KRI-POD-018), and an override to every deletion.",
		text: "KillPod without override gives a SIGTERM-ignoring container the pod's DeletionGracePeriodSeconds, not its longer TerminationGracePeriodSeconds"},
	{id: "KRI-POD-049", level: Should, kind: kindPod, groups: []string{"kill"}, pod: podKillNilPod,
		note: "Lowered to SHOULD: agents pass runningPod.ToAPIPod() when they know only the running pod.",
		text: "KillPod with a nil pod, given only the running pod, stops the pod's containers"},
	{id: "KRI-POD-055", level: Must, kind: kindPod, groups: []string{"kill", "init"}, caps: []Capability{CapInitContainers}, pod: podKillDuringInit,
		text: "KillPod while an init container runs stops it, and no app container starts"},
	{id: "KRI-POD-056", level: Must, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillRuntimeOnlyPod,
		note: "Formerly each killed container had to be reported exited; then a provider could forget the pod as it kills it, and what was still reported had to be exited non-zero, as GetPods(true) reported it too. Since the suite models kuscia's agent, the running pod comes from GetPods(false), as kuscia's housekeeping (pod.go HandlePodCleanups) finds orphans, and the MUST is what that housekeeping needs: the kill returns without the pod's own grace period, nothing runs afterwards, and GetPods(false) stops listing the pod. The agent publishes nothing of an orphan; what is reported of its killed containers is KRI-POD-086's.",
		text: "KillPod of an orphan as the agent's housekeeping kills it (the running pod GetPods(false) lists, pod = runningPod.ToAPIPod()) stops its SIGTERM-ignoring and SIGTERM-honouring containers without waiting for the pod's own grace period, and GetPods(false) then stops listing it"},
	{id: "KRI-POD-095", level: Must, kind: kindPod, groups: []string{"kill"}, pod: podKillReturnsWhenAllStopped,
		note: "Widens KRI-POD-014, whose two containers both exit on SIGTERM at once and have no hooks: a KillPod that returns once the first container has exited, or as soon as it has started the preStop hooks, passes it. The pod's containers here stop at different times: one at SIGTERM, one once its preStop hook has run (with capability lifecycle-hooks), one only at the end of the grace period.",
		text: "KillPod returns nil only once every container of the pod has stopped: right after it returns, GetPodStatus reports none running of a pod whose containers stop at different times (one at SIGTERM, one after a preStop hook that takes a while, one that ignores SIGTERM and is killed at the end of the grace period)"},
	{id: "KRI-POD-096", level: Should, kind: kindPod, groups: []string{"kill"}, pod: podKillFinishedAt,
		note: "A SHOULD: kuscia's agent publishes FinishedAt in the final status of a killed pod (pod.go generateAPIPodStatus, convertToAPIContainerStatuses: Terminated.FinishedAt from the runtime status), where a zero time reads 0001-01-01T00:00:00Z, but nothing of the agent decides on it: the phase, the pod worker and housekeeping read states and exit codes only. A provider that forgets the pod as it kills it reports no instance and passes.",
		text: "each container KillPod stopped that GetPodStatus still reports has FinishedAt set, not before its StartedAt"},
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
	elapsed := e.killUntilStopped(pod, agentGrace(pod))
	if limit := time.Duration(long) * time.Second * 2 / 3; elapsed >= limit {
		e.failf("KillPod with a grace period of %ds of a container that exits on SIGTERM took %s: it did not send SIGTERM first, or did not notice the exit", long, elapsed)
	}
	e.expectNothingRunning(pod, "after KillPod returned nil")
}

func podKillDeletionGrace(e *podEnv) {
	long := 3*e.st.graceSecs + minimumGraceSecs
	deletion := e.st.graceSecs
	pod, elapsed := e.killStubborn("deletiongrace", long, nil, func(pod *v1.Pod) {
		deletedAt := metav1.Now()
		pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &deletedAt, &deletion
		e.step(fmt.Sprintf("killing the pod without override: DeletionGracePeriodSeconds %ds, TerminationGracePeriodSeconds %ds", deletion, long))
	})
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

func podKillStopsAll(e *podEnv) {
	e.step("running a pod of two containers, then killing it")
	pod := e.newPod("kill", v1.RestartPolicyAlways,
		named("app", e.w().RunsUntilKilled()), named("sidecar", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	killed := e.killedIDs(pod)
	e.step("terminating it as kuscia's agent does: KillPod, then GetPodStatus at once")
	running, err := e.kill(pod, agentGrace(pod))
	e.noError("KillPod", err)
	if len(running) > 0 {
		e.fail(killGuardFailure(pod, running))
	}
	// kuscia's syncTerminatedPod publishes the final status from what is
	// still reported: a killed container that exited 0 would make a pod
	// of RestartPolicy Never read Succeeded (pod.go getPhase).
	e.expectKilledStopped(pod, e.status(pod), killed, "after KillPod returned nil")
}

// podKillReturnsWhenAllStopped terminates, as kuscia's agent does, a pod
// whose containers stop at different times: plain at SIGTERM, hooked once
// its preStop hook has slept (where the provider runs hooks), stubborn
// only when the grace period is over. The grace period leaves the hooked
// container the minimum a runtime gives after its hook. Nothing here is a
// bound on time: the check is what GetPodStatus says right after KillPod
// returned nil, however long it took.
func podKillReturnsWhenAllStopped(e *podEnv) {
	hook := time.Duration(e.st.graceSecs) * time.Second
	grace := e.st.graceSecs + minimumGraceSecs
	containers := []v1.Container{named("stubborn", e.w().IgnoresSIGTERM()), named("plain", e.w().RunsUntilKilled())}
	what := "plain exits on SIGTERM, stubborn ignores it"
	if e.st.caps[CapLifecycleHooks] {
		containers = append(containers, withPreStop(named("hooked", e.w().RunsUntilKilled()), "sleep "+seconds(hook)))
		what += fmt.Sprintf(", hooked exits on SIGTERM after its preStop hook has slept %s", hook)
	}
	pod := e.newPod("killall", v1.RestartPolicyAlways, containers...)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	// As in KRI-POD-047: in a shared PID namespace a container that traps
	// SIGTERM exits on it from its first instant.
	share := true
	pod.Spec.ShareProcessNamespace = &share
	e.syncUntilRunning(pod)
	e.settle(pod, "stubborn")
	e.step(fmt.Sprintf("terminating the pod as kuscia's agent does (KillPod with grace period %ds, then GetPodStatus at once): %s", grace, what))
	running, err := e.kill(pod, agentGrace(pod))
	e.noError("KillPod", err)
	if len(running) > 0 {
		e.fail(killGuardFailure(pod, running))
	}
}

// podKillFinishedAt kills a pod of a SIGTERM-honouring and a
// SIGTERM-ignoring container and reads what GetPodStatus still reports of
// them: each instance KillPod stopped that is reported exited carries the
// time it finished (whether it is exited at all is KRI-POD-014's).
func podKillFinishedAt(e *podEnv) {
	pod := e.newPod("finishedat", v1.RestartPolicyAlways, named("stubborn", e.w().IgnoresSIGTERM()), named("plain", e.w().RunsUntilKilled()))
	grace := e.st.graceSecs
	pod.Spec.TerminationGracePeriodSeconds = &grace
	e.syncUntilRunning(pod)
	e.settle(pod, "stubborn")
	killed := e.killedIDs(pod)
	e.step(fmt.Sprintf("killing the pod (grace period %ds) and reading the finish times of its killed containers", grace))
	e.killUntilStopped(pod, agentGrace(pod))
	st := e.status(pod)
	for _, c := range st.ContainerStatuses {
		name, ok := killed[c.ID]
		if !ok || c.State != pkgcontainer.ContainerStateExited {
			continue
		}
		switch {
		case c.FinishedAt.IsZero():
			e.failf("after KillPod returned nil, container %s (%s), which KillPod stopped, is reported exited without FinishedAt: kuscia's agent publishes it in the pod's final status (pod.go convertToAPIContainerStatuses) as finished at 0001-01-01T00:00:00Z; status: %s", name, c.ID.String(), describeStatus(st))
		case c.FinishedAt.Before(c.StartedAt):
			e.failf("after KillPod returned nil, container %s (%s), which KillPod stopped after it had run, is reported finished at %s, before it started at %s; status: %s", name, c.ID.String(), stamp(c.FinishedAt), stamp(c.StartedAt), describeStatus(st))
		}
	}
}

func podKillUnknownOrStopped(e *podEnv) {
	e.step("killing an unknown pod, a pod whose containers have all exited and a pod twice")
	unknown := e.newPod("unknown", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	err := e.killPod(unknown, pkgcontainer.Pod{ID: unknown.UID, Name: unknown.Name, Namespace: unknown.Namespace}, agentGrace(unknown))
	e.expectNil("KillPod", err, "KillPod of a pod the provider does not know")

	exited := e.newPod("exited", v1.RestartPolicyNever, named("done", e.w().ExitsWithCode(0)))
	e.syncUntil(exited, "done exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(exitedOf(st, "done")).NotTo(gomega.BeEmpty(), "done has not exited: %s", describeStatus(st))
	})
	e.expectNil("KillPod", e.killPod(exited, e.runningPod(exited), agentGrace(exited)), "KillPod of a pod whose containers have all exited")

	twice := e.newPod("twice", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.syncUntilRunning(twice)
	stale := e.runningPod(twice)
	e.expectNil("KillPod", e.killPod(twice, stale, agentGrace(twice)), "KillPod of a running pod")
	e.expectNil("KillPod", e.killPod(twice, stale, agentGrace(twice)), "KillPod of an already killed pod (same running pod as before)")
}

func (e *podEnv) stubbornPod(name string, graceSecs int64) *v1.Pod {
	pod := e.newPod(name, v1.RestartPolicyAlways, named("stubborn", e.w().IgnoresSIGTERM()))
	pod.Spec.TerminationGracePeriodSeconds = &graceSecs
	e.syncUntilRunning(pod)
	e.settle(pod, "stubborn")
	return pod
}

func podKillGraceOne(e *podEnv) {
	long := 3*e.st.graceSecs + 2*minimumGraceSecs
	pod := e.stubbornPod("grace1", long)
	one := int64(1)
	e.step(fmt.Sprintf("killing the pod, whose own grace period is %ds, with gracePeriodOverride 1", long))
	elapsed := e.killUntilStopped(pod, &one)
	if elapsed >= time.Duration(long)*time.Second {
		e.failf("KillPod with gracePeriodOverride 1 took %s: it waited for the pod's grace period of %ds (the agent passes 1 to stop orphans and force-deleted pods quickly)", elapsed, long)
	}
	e.expectNothingRunning(pod, "after KillPod with gracePeriodOverride 1 returned nil")
}

// killStubborn runs a grace-period spec on a pod named name whose container
// stubborn ignores SIGTERM (its shell sets an empty trap for TERM), with
// TerminationGracePeriodSeconds graceSecs: once the container has run for a
// while, kill (which also says the step) prepares the pod, and killObserved
// terminates it with override. It returns the pod and the time its
// termination took.
//
// A shell that has not yet run its trap when SIGTERM comes exits 143,
// SIGTERM's exit code, which no process that ignores SIGTERM can: that try
// shows nothing of the provider, and on a loaded machine a shell can wait
// that long for the CPU. It is tried again on a new pod left running
// longer first (slowTries). A provider that stops the container early with
// SIGKILL (exit code 137) fails the first try.
func (e *podEnv) killStubborn(name string, graceSecs int64, override *int64, kill func(pod *v1.Pod)) (pod *v1.Pod, elapsed time.Duration) {
	e.slowTries(min(e.st.t.ShortRun, e.st.t.Stable), func(n int, settle time.Duration, _ bool) (*v1.Pod, string) {
		pod = e.newPod(fmt.Sprintf("%s%d", name, n), v1.RestartPolicyAlways, named("stubborn", e.w().IgnoresSIGTERM()))
		pod.Spec.TerminationGracePeriodSeconds = &graceSecs
		e.syncUntilRunning(pod)
		e.settleFor(pod, "stubborn", settle)
		kill(pod)
		var early string
		elapsed, early = e.killObserved(pod, override)
		return pod, early
	})
	return pod, elapsed
}

// killObserved terminates the stubborn pod with override as kuscia's agent
// does and checks, while KillPod runs, that the container is still running
// halfway through the grace period G, and that it did not stop before G. A
// KillPod that returns while the container still runs is KRI-POD-014's: the
// agent tries the termination again, and the time counted is until the
// container stopped. It returns that time, and, when the container stopped
// before G with SIGTERM's exit code (its trap was not yet set: see
// killStubborn), what it saw.
func (e *podEnv) killObserved(pod *v1.Pod, override *int64) (elapsed time.Duration, early string) {
	running := e.runningPod(pod)
	var killErr error
	callErr := make(chan error, 1)
	start := time.Now()
	go func() {
		callErr <- e.try("KillPod", func(ctx context.Context) { killErr = e.p.KillPod(ctx, pod, running, override) })
	}()
	grace := e.st.t.GracePeriod
	time.Sleep(grace / 2)
	mid := e.status(pod)
	stoppedEarly := time.Since(start) < grace && runningOf(mid, "stubborn") == nil // the answer is from within the grace period
	if err := <-callErr; err != nil {
		e.fail(err.Error())
	}
	e.noError("KillPod", killErr)
	if st := e.status(pod); runningOf(st, "stubborn") != nil {
		e.diagnose("KillPod returned after %s while the SIGTERM-ignoring container still ran (KRI-POD-014 checks this): waiting for the termination kuscia's agent would try again", time.Since(start))
		e.killUntilStopped(pod, override)
	}
	elapsed = time.Since(start)
	if !stoppedEarly && elapsed >= grace {
		return elapsed, ""
	}
	st := e.status(pod)
	if c := newestOf(st, "stubborn"); c != nil && c.State == pkgcontainer.ContainerStateExited && c.ExitCode == workload.ExitCodeSIGTERM {
		return elapsed, fmt.Sprintf("the SIGTERM-ignoring container stopped within %s of KillPod, before the grace period of %s, with exit code %d: SIGTERM ended it, so its shell had not yet run trap '' TERM (or the provider reports a SIGKILL as SIGTERM's exit code): %s",
			elapsed, grace, c.ExitCode, describeStatus(st))
	}
	if stoppedEarly {
		e.failf("the SIGTERM-ignoring container stopped within %s of KillPod, before the grace period of %s: %s", grace/2, grace, describeStatus(mid))
	}
	e.failf("the SIGTERM-ignoring container was stopped %s after KillPod began, before the grace period of %s was over: %s", elapsed, grace, describeStatus(st))
	return elapsed, ""
}

func podKillGraceOverride(e *podEnv) {
	long := 3*e.st.graceSecs + minimumGraceSecs
	g := e.st.graceSecs
	pod, elapsed := e.killStubborn("grace-override", long, &g, func(*v1.Pod) {
		e.step(fmt.Sprintf("killing the pod, whose own grace period is %ds, with gracePeriodOverride %d", long, g))
	})
	if elapsed >= time.Duration(long)*time.Second {
		e.failf("KillPod with gracePeriodOverride %ds took %s: it waited for the pod's grace period of %ds", g, elapsed, long)
	}
	e.expectNothingRunning(pod, "after KillPod returned nil")
}

func podKillPodGrace(e *podEnv) {
	pod, _ := e.killStubborn("podgrace", e.st.graceSecs, nil, func(*v1.Pod) {
		e.step(fmt.Sprintf("killing the pod without override: TerminationGracePeriodSeconds %ds", e.st.graceSecs))
	})
	e.expectNothingRunning(pod, "after KillPod returned nil")
}

func podKillDuringInit(e *podEnv) {
	pod := e.newPod("killinit", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	setInitContainers(pod, named("setup", e.w().RunsUntilKilled()))
	e.step("syncing a pod whose init container setup runs until killed")
	e.syncUntil(pod, "init container setup running", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "setup")).NotTo(gomega.BeNil(), "init container setup is not running: %s%s", describeStatus(st), initHidden(pod, st))
	})
	e.step("killing the pod while setup runs")
	e.killUntilStopped(pod, agentGrace(pod))
	e.expectNothingRunning(pod, "after KillPod of a pod whose init container was running returned nil")
	e.statusHolding(pod, "nothing runs and app never starts after KillPod (no SyncPod in between)", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
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

// readySandboxes returns the IDs of the ready sandboxes of st.
func readySandboxes(st *pkgcontainer.PodStatus) []string {
	var out []string
	for _, sb := range st.SandboxStatuses {
		if sb != nil && sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			out = append(out, sb.Id)
		}
	}
	return out
}

func podSandboxes(e *podEnv) {
	pod := e.newPod("sandbox", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	e.step("killing the running pod: the agent's pod worker waits for no running container and no ready sandbox")
	e.killUntilStopped(pod, agentGrace(pod))
	if ready := readySandboxes(e.status(pod)); len(ready) > 0 {
		e.failf("after KillPod of pod %s returned nil, GetPodStatus still reports ready sandboxes %v: the agent's pod worker (isPodStatusCacheTerminal) would never see the pod terminated", podRef(pod), ready)
	}
}
