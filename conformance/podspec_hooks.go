package conformance

import (
	"fmt"
	"slices"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The lifecycle hook specs (KRI-POD-062 to 065). KRI has no exec or log
// call, so a spec sees a hook through what the workload vocabulary lets it
// write, the container's termination message file (echo -n WORD >> PATH),
// and through the time KillPod takes. Timing checks are lower bounds, which
// load cannot upset, except one upper bound with the slack of the grace
// period and the stable window.
var podspecHooksSpecs = []*specDef{
	{id: "KRI-POD-062", level: Must, kind: kindPod, groups: []string{"pod-spec", "hooks"}, caps: []Capability{CapLifecycleHooks, CapTerminationMessage}, pod: podPostStartHook,
		text: "a container's postStart exec hook runs in the container once it has started and before the next container of the pod starts: what it writes to the termination message file is the message of the exited instance, and the next container starts no earlier than the hook's run after the first"},
	{id: "KRI-POD-063", level: Must, kind: kindPod, groups: []string{"pod-spec", "hooks"}, caps: []Capability{CapLifecycleHooks}, pod: podPostStartHookFails,
		note: "Formerly the ReasonCache had to hold PostStartHookError; since the suite models kuscia's agent, the MUST is what it publishes: the failure as a Waiting reason (from the ReasonCache or RefreshPodStatus) or as a run terminated with a non-zero code.",
		text: "a container whose postStart hook fails is killed: its instance exits non-zero, the agent publishes the failure (Waiting with PostStartHookError or CrashLoopBackOff, or the killed run terminated non-zero), and it is restarted only as the restart policy allows"},
	{id: "KRI-POD-064", level: Must, kind: kindPod, groups: []string{"pod-spec", "hooks", "kill"}, caps: []Capability{CapLifecycleHooks, CapTerminationMessage}, pod: podPreStopHook,
		text: "KillPod runs a container's preStop exec hook before it sends SIGTERM: a container that exits on SIGTERM is not stopped before the hook has run, and what the hook writes to the termination message file is the message of the killed instance"},
	{id: "KRI-POD-065", level: Must, kind: kindPod, groups: []string{"pod-spec", "hooks", "kill"}, caps: []Capability{CapLifecycleHooks}, pod: podPreStopHookGrace,
		text: "the time of a preStop hook counts against the grace period: a hook that would run far longer than the grace period does not keep KillPod from returning soon after the grace period (plus the minimum a runtime gives) is over"},
}

// reasonPostStartHookError is the text of the kubelet's
// kuberuntime.ErrPostStartHook, the start error of a container whose
// postStart hook failed.
const reasonPostStartHookError = "PostStartHookError"

// The words the hooks of the specs write.
const (
	postStartWord = "KRI-POSTSTART"
	preStopWord   = "KRI-PRESTOP"
)

// execHook is a lifecycle handler that runs script with sh -c in the
// container.
func execHook(script string) *v1.LifecycleHandler {
	return &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", script}}}
}

// withPostStart returns c with a postStart exec hook running script.
func withPostStart(c v1.Container, script string) v1.Container {
	if c.Lifecycle == nil {
		c.Lifecycle = &v1.Lifecycle{}
	}
	c.Lifecycle.PostStart = execHook(script)
	return c
}

// withPreStop returns c with a preStop exec hook running script.
func withPreStop(c v1.Container, script string) v1.Container {
	if c.Lifecycle == nil {
		c.Lifecycle = &v1.Lifecycle{}
	}
	c.Lifecycle.PreStop = execHook(script)
	return c
}

// withMessagePath returns c with a termination message path of its own.
func (e *podEnv) withMessagePath(c v1.Container) v1.Container {
	c.TerminationMessagePath = e.w().TerminationMessagePath()
	c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	return c
}

func podPostStartHook(e *podEnv) {
	// The hook sleeps at least a second whatever the scale: a provider
	// that starts the next container without waiting starts it a process
	// spawn later, which on a loaded machine was seen to exceed the 100ms
	// of a scaled-down ShortRun (the host mutant host-poststart-async then
	// passed the spec in a CI run). A longer hook only lengthens the gap a
	// correct provider leaves.
	hook := max(e.st.t.ShortRun, time.Second)
	// The container runs on well after its hook, so that the hook (started
	// at once on a real runtime, through exec) finds it running; an exec
	// was seen to start over a stable window late on a loaded machine
	// (load average 15), so a hook that wrote nothing is tried again with
	// a container that runs longer (slowTries).
	e.slowTries(2*hook+max(e.st.t.Stable, 2*time.Second), func(n int, run time.Duration, _ bool) (*v1.Pod, string) {
		first := e.withMessagePath(e.shell("hooked", fmt.Sprintf("sleep %s; exit 0", seconds(run))))
		first = withPostStart(first, fmt.Sprintf("sleep %s; echo -n %s >> %s", seconds(hook), postStartWord, first.TerminationMessagePath))
		next := named("next", e.w().RunsUntilKilled())
		pod := e.newPod(fmt.Sprintf("poststart%d", n), v1.RestartPolicyNever, first, next)
		e.step(fmt.Sprintf("syncing a pod whose first container runs %s and has a postStart hook that sleeps %s, then writes %s to its termination message file", run, hook, postStartWord))
		st := e.syncUntil(pod, "hooked exited and next started", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
			g.Expect(exitedOf(st, "hooked")).NotTo(gomega.BeEmpty(), "container hooked has not exited: %s", describeStatus(st))
			g.Expect(instancesOf(st, "next")).NotTo(gomega.BeEmpty(), "container next has not started: %s", describeStatus(st))
		})
		hooked, nxt := exitedOf(st, "hooked")[0], instancesOf(st, "next")[0]
		if hooked.ExitCode != 0 {
			e.failf("container hooked, whose postStart hook succeeds, exited with code %d (message %q), want 0: it was killed", hooked.ExitCode, hooked.Message)
		}
		// The hook sleeps for hook before it ends; a tenth of it covers
		// clocks that round (the runtime's StartedAt may be taken in
		// another process).
		if gap := nxt.StartedAt.Sub(hooked.StartedAt); gap < hook-hook/10 {
			e.failf("container next started %s after container hooked (StartedAt %s and %s), whose postStart hook sleeps %s: it did not wait for the hook to end",
				gap, nxt.StartedAt.Format(time.RFC3339Nano), hooked.StartedAt.Format(time.RFC3339Nano), hook)
		}
		if messageMatches(hooked.Message, postStartWord) {
			return pod, ""
		}
		return pod, fmt.Sprintf("container hooked, which ran %s, exited with message %q, want %q, which its postStart hook wrote to %s: the hook did not run in the container while it ran", run, hooked.Message, postStartWord, first.TerminationMessagePath)
	})
}

// failingHookContainer is a container that runs until killed with a
// postStart hook that fails.
func (e *podEnv) failingHookContainer() v1.Container {
	return withPostStart(named("app", e.w().RunsUntilKilled()), "exit 3")
}

// expectPostStartFailure checks that kuscia's agent publishes the failed
// postStart hook of container app of pod, whose runtime status is st:
// Waiting with one of reasons (PostStartHookError from the ReasonCache, or
// CrashLoopBackOff once a provider backs off the restart, or either from
// RefreshPodStatus), or the run the hook's failure killed, terminated with
// a non-zero exit code, as the state or the last termination. A missing
// ReasonCache entry is only noted: the agent reads it only for a container
// it will start again.
func (e *podEnv) expectPostStartFailure(g gomega.Gomega, pod *v1.Pod, st *pkgcontainer.PodStatus, reasons ...string) {
	if _, ok := e.rc.Get(pod.UID, "app"); !ok {
		e.diagnose("the ReasonCache has no entry for container app of pod %s, whose postStart hook failed: kuscia's agent shows the failure only as RefreshPodStatus reports it", podRef(pod))
	}
	ps := e.publish(pod, st)
	cs := apiStatusOf(ps.ContainerStatuses, "app")
	g.Expect(cs).NotTo(gomega.BeNil(), "kuscia's agent would publish no status for container app: %s", describeAPIStatus(ps))
	failedRun := func(t *v1.ContainerStateTerminated) bool { return t != nil && t.ExitCode != 0 }
	if w := cs.State.Waiting; w != nil && !defaultWaiting(w.Reason) {
		g.Expect(reasons).To(gomega.ContainElement(w.Reason), "kuscia's agent would publish container app, whose postStart hook failed, Waiting with reason %q (%s), want one of %q, as the kubelet's runtime manager reports it", w.Reason, w.Message, reasons)
		return
	}
	shown := failedRun(cs.State.Terminated) || failedRun(cs.LastTerminationState.Terminated)
	g.Expect(shown).To(gomega.BeTrue(), "kuscia's agent would publish container app, whose postStart hook failed, as %s: neither Waiting with one of %q nor a run terminated with a non-zero code", describeAPIStatus(ps), reasons)
}

func podPostStartHookFails(e *podEnv) {
	// keep holds the pod Running: kuscia's agent stops syncing a pod whose
	// phase is terminal, so only a pod still running shows whether SyncPod
	// starts app again.
	never := e.newPod("poststart-fails-never", v1.RestartPolicyNever, e.failingHookContainer(), named("keep", e.w().RunsUntilKilled()))
	e.step("syncing a pod with restartPolicy Never whose container's postStart hook exits 3")
	// st is the status of the sync that saw app killed: its SyncPod must
	// not start app again, and the instances counted are those before it.
	st := e.trySyncUntil(never, "app killed after its postStart hook failed", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "app")).To(gomega.BeNil(), "container app, whose postStart hook failed, still runs: %s", describeStatus(st))
		g.Expect(exitedOf(st, "app")).NotTo(gomega.BeEmpty(), "container app has no exited instance: %s", describeStatus(st))
		e.expectPostStartFailure(g, never, st, reasonPostStartHookError)
	})
	for _, c := range exitedOf(st, "app") {
		if c.ExitCode == 0 {
			e.failf("container app, killed because its postStart hook failed, exited with code 0: a pod with restartPolicy Never would read Succeeded; status: %s", describeStatus(st))
		}
	}
	ids := len(instancesOf(st, "app"))
	e.step("syncing again: restartPolicy Never, app is not started again")
	e.trySyncHolding(never, "app not restarted", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "app")).To(gomega.BeNil(), "container app was started again under restartPolicy Never: %s", describeStatus(st))
		g.Expect(instancesOf(st, "app")).To(gomega.HaveLen(ids), "container app was started again under restartPolicy Never: %s", describeStatus(st))
	})

	always := e.newPod("poststart-fails-always", v1.RestartPolicyAlways, e.failingHookContainer())
	e.step("syncing a pod with restartPolicy Always whose container's postStart hook exits 3, until it is restarted")
	e.trySyncUntil(always, "app restarted after its postStart hook failed", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		// A second instance, or (a provider that reports only the newest
		// instance) one with a restart count.
		insts := instancesOf(st, "app")
		restarted := len(insts) >= 2 || slices.ContainsFunc(insts, func(c *pkgcontainer.Status) bool { return c.RestartCount >= 1 })
		g.Expect(restarted).To(gomega.BeTrue(), "container app, whose postStart hook failed, has not been started again under restartPolicy Always: %s", describeStatus(st))
		e.expectPostStartFailure(g, always, st, reasonPostStartHookError, pkgcontainer.ErrCrashLoopBackOff.Error())
	})
}

// preStopPod returns a pod whose container c is running, with grace
// period graceSecs, sharing its PID namespace so that a container that
// traps SIGTERM exits on it from its first instant (see KRI-POD-047).
func (e *podEnv) preStopPod(name string, graceSecs int64, c v1.Container) *v1.Pod {
	pod := e.newPod(name, v1.RestartPolicyAlways, c)
	pod.Spec.TerminationGracePeriodSeconds = &graceSecs
	share := true
	pod.Spec.ShareProcessNamespace = &share
	e.syncUntilRunning(pod)
	e.settle(pod, c.Name)
	return pod
}

func podPreStopHook(e *podEnv) {
	hook := time.Duration(e.st.graceSecs) * time.Second
	grace := 2*e.st.graceSecs + 2*minimumGraceSecs
	c := e.withMessagePath(named("app", e.w().RunsUntilKilled()))
	c = withPreStop(c, fmt.Sprintf("sleep %s; echo -n %s >> %s", seconds(hook), preStopWord, c.TerminationMessagePath))
	pod := e.preStopPod("prestop", grace, c)
	e.step(fmt.Sprintf("killing the pod (grace period %ds), whose container exits on SIGTERM and has a preStop hook that sleeps %s, then writes %s", grace, hook, preStopWord))
	elapsed := e.killUntilStopped(pod, agentGrace(pod))
	if elapsed < hook {
		e.failf("KillPod returned after %s, before the preStop hook's sleep of %s was over: the container was stopped without its hook, or before it ended", elapsed, hook)
	}
	e.expectNothingRunning(pod, "after KillPod returned nil")
	// A provider may forget a killed pod (KRI-POD-005, 056): the message
	// is checked when the killed instance is still reported.
	st := e.status(pod)
	for _, inst := range exitedOf(st, "app") {
		if !messageMatches(inst.Message, preStopWord) {
			e.failf("the killed instance of app has message %q, want %q, which its preStop hook wrote before SIGTERM: the hook did not run, or ran after the container was stopped", inst.Message, preStopWord)
		}
	}
}

// podPreStopHookGrace kills a pod whose hook sleeps three times as long as
// KillPod may take. The most it may take is the grace period, the minimum a
// runtime gives the container after the hook (the kubelet's 2 seconds), and
// slack for a loaded machine: a grace period's worth and the stable
// window. A real runtime on a loaded machine can still take longer than
// that (seen: 4.4s of 4.2s beside four busy loops), so a try that takes too
// long is made again (slowTries) with the State timeout as the limit and a
// hook three times that long: a provider that waits for the hook takes the
// hook's time in both tries.
func podPreStopHookGrace(e *podEnv) {
	grace := e.st.graceSecs
	first := time.Duration(grace+minimumGraceSecs)*time.Second + time.Duration(grace)*time.Second + e.st.t.Stable
	e.slowTries(first, func(n int, limit time.Duration, _ bool) (*v1.Pod, string) {
		hook := max(e.st.t.Call, 3*limit)
		c := withPreStop(named("stubborn", e.w().IgnoresSIGTERM()), "sleep "+seconds(hook))
		pod := e.preStopPod(fmt.Sprintf("prestop-grace%d", n), grace, c)
		e.step(fmt.Sprintf("killing the pod (grace period %ds), whose container ignores SIGTERM and has a preStop hook that sleeps %s", grace, hook))
		elapsed := e.killUntilStopped(pod, agentGrace(pod))
		e.expectNothingRunning(pod, "after KillPod returned nil")
		if elapsed >= limit {
			return pod, fmt.Sprintf("KillPod with a grace period of %ds took %s (want less than %s), with a preStop hook that sleeps %s: the preStop hook's time was not taken from the grace period", grace, elapsed, limit, hook)
		}
		return pod, ""
	})
}
