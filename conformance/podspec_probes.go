package conformance

import (
	"fmt"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/sim/workload"
)

// The probe specs (KRI-POD-072..077, 101, 107): in KRI the provider runs the probes,
// as kuscia's CRIProvider runs the kubelet's prober manager. Their probes
// are exec probes in the vocabulary of package workload (test -e FILE, for
// a file the container writes and removes), with a period of one second.
// Their waits are the state timeout plus the probe periods the behaviour
// may take, so that they hold on a loaded machine; what must not happen
// early is checked against the container's StartedAt with a margin of a
// period or more.
var podspecProbesSpecs = []*specDef{
	{id: "KRI-POD-072", level: Must, kind: kindPod, groups: []string{"pod-spec", "probes"}, caps: []Capability{CapProbes}, pod: podReadinessUntilSuccess,
		text: "a running container with a readiness probe is not Ready in RefreshPodStatus until its probe first succeeds, then Ready"},
	{id: "KRI-POD-073", level: Must, kind: kindPod, groups: []string{"pod-spec", "probes"}, caps: []Capability{CapProbes}, pod: podReadinessFailure,
		text: "a Ready container whose readiness probe fails failureThreshold times in a row is not Ready again, and keeps running (readiness restarts nothing)"},
	{id: "KRI-POD-074", level: Must, kind: kindPod, groups: []string{"pod-spec", "probes"}, caps: []Capability{CapProbes}, pod: podLivenessRestart,
		note: "Since issue 38 its probe has failureThreshold 2 and, in virtual time, the kill must come at the 2nd failure in a row exactly (the time the killed instance ran, within a period); before, any kill within the state timeout passed, one a failure late too.",
		text: "a container whose liveness probe fails failureThreshold times is killed and started again: a new instance, the killed one exited by a signal (137 or 143), the restart counted"},
	{id: "KRI-POD-075", level: Must, kind: kindPod, groups: []string{"pod-spec", "probes"}, caps: []Capability{CapProbes}, pod: podLivenessPasses,
		text: "a container whose liveness probe passes once initialDelaySeconds are over (and would fail before) is left running: same instance, no restart"},
	{id: "KRI-POD-076", level: Must, kind: kindPod, groups: []string{"pod-spec", "probes"}, caps: []Capability{CapProbes}, pod: podStartupProbe,
		text: "until its startup probe succeeds a container is not Started nor Ready and its liveness probe does not run; then it is Started, and Ready once its readiness probe succeeds"},
	{id: "KRI-POD-077", level: Must, kind: kindPod, groups: []string{"pod-spec", "probes"}, caps: []Capability{CapProbes}, pod: podProbesStopOnKill,
		text: "once KillPod has stopped a pod, its probes stop: a liveness probe that then fails starts nothing again, and RefreshPodStatus reports no container Ready"},
	{id: "KRI-POD-101", level: Must, kind: kindPod, groups: []string{"pod-spec", "probes"}, caps: []Capability{CapProbes, CapRestartPolicies}, pod: podReadinessPerInstance,
		text: "a container with a readiness probe that exits and is started again is not Ready until its new instance's probe succeeds (nothing of the previous instance's result carries over), then Ready"},
	{id: "KRI-POD-107", level: Must, kind: kindPod, groups: []string{"pod-spec", "probes"}, caps: []Capability{CapProbes}, pod: podReadinessTimeout,
		text: "a running container whose exec readiness probe's command outlasts timeoutSeconds (it would exit 0 later) is never Ready: a probe that times out has failed; and it keeps running"},
}

// crashLoopBackOff is the kubelet's first restart back-off of a container
// that exited (kubelet.go, initialCrashLoopBackOff: 10s, doubling up to 5 minutes),
// which a provider built on its runtime manager waits before a restart.
const crashLoopBackOff = 10 * time.Second

// probePeriod is the periodSeconds of the specs' probes.
const probePeriod = time.Second

// execProbe is an exec probe that succeeds while the file at path exists.
// Its timeout is generous: an exec into a container takes a while on a
// loaded machine.
func execProbe(path string, failureThreshold int32) *v1.Probe {
	return specProbe(v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "test -e " + path}}}, failureThreshold)
}

// specProbe is a probe of the specs with handler h: one period a second,
// failureThreshold failures in a row to fail.
func specProbe(h v1.ProbeHandler, failureThreshold int32) *v1.Probe {
	return &v1.Probe{
		ProbeHandler:     h,
		PeriodSeconds:    int32(probePeriod / time.Second),
		TimeoutSeconds:   5,
		SuccessThreshold: 1,
		FailureThreshold: failureThreshold,
	}
}

// probed is the container "web" running script (a trap makes it exit on
// SIGTERM, as PID 1 too) until killed.
func (e *podEnv) probed(script string) v1.Container {
	return e.shell("web", "trap 'exit 143' TERM; "+script+"sleep infinity & wait")
}

// round is one round; noSync leaves SyncPod out (a killed pod). In a
// replay (until) it returns what the agent's last sync published instead.
func (r *probeRun) round(noSync bool) (*pkgcontainer.PodStatus, *v1.ContainerStatus) {
	if r.replay && !noSync {
		return r.lastSt, r.lastCS
	}
	var st *pkgcontainer.PodStatus
	if noSync {
		st = r.e.status(r.pod)
	} else {
		st = r.e.sync(r.pod)
	}
	r.prev = r.e.publish(r.pod, st)
	cs := apiStatusOf(r.prev.ContainerStatuses, "web")
	if cs == nil {
		r.e.failf("kuscia's agent would publish no status of container web of pod %s (after RefreshPodStatus): %+v", podRef(r.pod), r.prev.ContainerStatuses)
	}
	if !noSync {
		r.lastSt, r.lastCS = st, cs
	}
	return st, cs
}

// until runs f, whose rounds sync, at the agent's cadence (untilAsAgent)
// until it passes; it passes at once when it does for what the agent's
// last sync published.
func (r *probeRun) until(within time.Duration, desc string, f func(g gomega.Gomega)) {
	if !r.passesAsPublished(f) {
		r.e.untilAsAgent(r.pod, within, desc, f)
	}
}

// tryUntil is until that reports whether f passed within instead of
// failing the spec.
func (r *probeRun) tryUntil(within time.Duration, desc string, f func(g gomega.Gomega)) bool {
	return r.passesAsPublished(f) || r.e.tryUntilAsAgent(r.pod, within, desc, f).ok
}

// passesAsPublished reports whether f passes for what the agent's last
// sync of the pod published (its rounds replay that sync), when no update
// is due.
func (r *probeRun) passesAsPublished(f func(g gomega.Gomega)) bool {
	if st := r.e.syncedStatus(r.pod); r.lastSt == nil && st != nil {
		// The pod was synced before the run's first round.
		r.prev = r.e.publishedOf(r.pod)
		r.lastSt, r.lastCS = st, apiStatusOf(r.prev.ContainerStatuses, "web")
	}
	if r.lastSt == nil || r.lastCS == nil || r.e.updateDue(r.pod) != "" {
		return false
	}
	r.replay = true
	defer func() { r.replay = false }()
	failed, _ := attempt(f)
	return failed == nil
}

// hold checks for window that f passes at every sync of the agent
// meanwhile and, every poll interval, for a round without a sync
// (holdAsAgent); f's rounds are made with r.round(!sync).
func (r *probeRun) hold(window time.Duration, desc string, f func(g gomega.Gomega, sync bool)) {
	r.e.holdAsAgent(r.pod, window, desc, f)
}

// expectPodReady fails the spec unless the pod's Ready condition, as the
// agent brings it up to date after RefreshPodStatus
// (podstatus.UpdateReadiness), is want: it must follow the container's
// Ready.
func (r *probeRun) expectPodReady(want bool) {
	status := v1.ConditionFalse
	if want {
		status = v1.ConditionTrue
	}
	for _, c := range r.prev.Conditions {
		if c.Type == v1.PodReady && c.Status != status {
			r.e.failf("the pod's Ready condition is %s while container web's Ready is %v (RefreshPodStatus, then podstatus.UpdateReadiness): %+v", c.Status, want, c)
		}
	}
}

// periods is n probe periods.
func periods(n int) time.Duration { return time.Duration(n) * probePeriod }

// sinceStart is how long the instance has been running by the test's clock.
func sinceStart(s *pkgcontainer.Status) time.Duration { return time.Since(s.StartedAt) }

func podReadinessUntilSuccess(e *podEnv) {
	path := e.w().ProbeFilePath()
	const writeAfter = 2 * time.Second
	c := e.probed(fmt.Sprintf("sleep %s; echo ok > %s; ", seconds(writeAfter), path))
	c.ReadinessProbe = execProbe(path, 1)
	pod := e.newPod("ready", v1.RestartPolicyAlways, c)
	e.step(fmt.Sprintf("syncing a pod whose readiness probe tests for %s, which its container writes %s after it starts", path, writeAfter))
	r := &probeRun{e: e, pod: pod}
	first := r.running()
	early := 0
	r.until(e.st.t.State+writeAfter+periods(3), fmt.Sprintf("pod %s: container web Ready", podRef(pod)), func(g gomega.Gomega) {
		st, cs := r.round(false)
		run := runningOf(st, "web")
		g.Expect(run).NotTo(gomega.BeNil(), "container web is not running: %s", describeStatus(st))
		if run.ID != first.ID {
			e.failf("container web was restarted (instance %s, then %s) although it has no liveness probe: %s", first.ID, run.ID, describeStatus(st))
		}
		// One period of margin: the file is written writeAfter after the
		// process started, which is at or after StartedAt.
		if ran := sinceStart(run); ran < writeAfter-probePeriod {
			early++
			if cs.Ready {
				e.failf("RefreshPodStatus reports container web Ready %s after it started, before its readiness probe could succeed (the file is written after %s)", ran.Round(time.Millisecond), writeAfter)
			}
		}
		g.Expect(cs.Ready).To(gomega.BeTrue(), "container web is not Ready %s after it started", sinceStart(run).Round(time.Millisecond))
		r.expectPodReady(true)
	})
	if early == 0 {
		e.note("no round ran in the first " + (writeAfter - probePeriod).String() + " of the container (a loaded machine): Ready before the first success was not checked")
	}
}

func podReadinessFailure(e *podEnv) {
	path := e.w().ProbeFilePath()
	readinessOnThenOff(e, path, execTarget(path))
}

// probeTarget is what a probe spec's container serves its health with and
// how its probes read it: an exec probe tests for the file, an HTTP probe
// GETs it from the container's httpd, a TCP probe connects to httpd.
type probeTarget struct {
	// serve starts what the probe reads (a statement of the container's
	// script, before the file is written; "" for an exec probe).
	serve string
	// probe returns the probe, with failureThreshold.
	probe func(failureThreshold int32) *v1.Probe
	// how says what the probe does, for the steps.
	how string
}

// execTarget is the exec probe that succeeds while the file at path
// exists.
func execTarget(path string) probeTarget {
	return probeTarget{probe: func(n int32) *v1.Probe { return execProbe(path, n) }, how: "tests for " + path}
}

// readinessOnThenOff checks that a container whose readiness probe reads
// target is Ready while the file at path exists, not Ready once its
// container has removed it (failureThreshold 2), and keeps running. The
// container removes the file 3s after it starts: a real server slow to
// listen, or a prober whose first rounds land late on a loaded machine,
// may not see it before then, so a pod never seen Ready while its file was
// there is tried again with more time (slowTries).
func readinessOnThenOff(e *podEnv, path string, target probeTarget) {
	e.slowTries(3*time.Second, func(n int, removeAfter time.Duration, last bool) (*v1.Pod, string) {
		c := e.probed(fmt.Sprintf("%secho ok > %s; sleep %s; rm -f %s; ", target.serve, path, seconds(removeAfter), path))
		c.ReadinessProbe = target.probe(2)
		pod := e.newPod(fmt.Sprintf("unready%d", n), v1.RestartPolicyAlways, c)
		e.step(fmt.Sprintf("syncing a pod whose readiness probe (failureThreshold 2) %s, which its container removes %s after it starts", target.how, removeAfter))
		r := &probeRun{e: e, pod: pod}
		first := r.running()
		sameInstance := func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
			run := runningOf(st, "web")
			if run == nil || run.ID != first.ID {
				e.failf("container web (instance %s) no longer runs; readiness failures must restart nothing: %s", first.ID, describeStatus(st))
			}
		}
		readyDesc := fmt.Sprintf("pod %s: container web Ready", podRef(pod))
		ready := func(g gomega.Gomega) {
			st, cs := r.round(false)
			sameInstance(g, st)
			g.Expect(cs.Ready).To(gomega.BeTrue(), "container web is not Ready %s after it started", sinceStart(first).Round(time.Millisecond))
		}
		if !last {
			// Ready must come while the file is there: after that, only
			// a retry with more time can tell.
			if !r.tryUntil(removeAfter+periods(3), readyDesc, ready) {
				return pod, fmt.Sprintf("container web was not seen Ready within %s, while its file was there", removeAfter+periods(3))
			}
		} else {
			r.until(removeAfter+periods(3), readyDesc+fmt.Sprintf(" while its file was there (the second try: the container removes it %s after it starts)", removeAfter), ready)
		}
		e.step("waiting for the probe to fail twice in a row once the file is gone")
		r.until(e.st.t.State+removeAfter+periods(4), fmt.Sprintf("pod %s: container web no longer Ready", podRef(pod)), func(g gomega.Gomega) {
			st, cs := r.round(false)
			sameInstance(g, st)
			g.Expect(cs.Ready).To(gomega.BeFalse(), "container web is still Ready %s after it started (the file was removed after %s)", sinceStart(first).Round(time.Millisecond), removeAfter)
			r.expectPodReady(false)
		})
		return pod, ""
	})
}

// killedBySignal reports whether code is the exit code of a process ended
// by SIGTERM or SIGKILL.
func killedBySignal(code int) bool {
	return code == workload.ExitCodeSIGTERM || code == workload.ExitCodeSIGKILL
}

func podLivenessRestart(e *podEnv) {
	path := e.w().ProbeFilePath()
	livenessRestart(e, path, execTarget(path))
}

// livenessRestart checks that a container whose liveness probe reads
// target is killed and started again once its container has removed the
// file at path. In virtual time it also bounds when: the probes run every
// period, the first that fails comes within a period of the removal (half
// a period off the probes' whole seconds, so that no probe and removal
// fall on one moment), and the kill at the failureThreshold-th failure in
// a row, no earlier and no later. On the real clock a prober's periods
// drift under load: only the restart is checked, within the state timeout.
func livenessRestart(e *podEnv, path string, target probeTarget) {
	const removeAfter = 1500 * time.Millisecond
	const threshold = 2
	c := e.probed(fmt.Sprintf("%secho ok > %s; sleep %s; rm -f %s; ", target.serve, path, seconds(removeAfter), path))
	c.LivenessProbe = target.probe(threshold)
	pod := e.newPod("liveness", v1.RestartPolicyAlways, c)
	e.step(fmt.Sprintf("syncing a pod whose liveness probe (failureThreshold %d) %s, which its container removes %s after it starts", threshold, target.how, removeAfter))
	r := &probeRun{e: e, pod: pod}
	first := r.running()
	ran, seen := r.expectRestarted(first, removeAfter+periods(threshold), "its liveness probe failed")
	if e.vt == nil {
		return
	}
	// The first failure comes in (removeAfter, removeAfter+period]
	// whatever the probes' offset; a probe at the very moment of the
	// removal may still pass, hence the closed bounds.
	lo, hi := removeAfter+periods(threshold-1), removeAfter+periods(threshold)
	switch {
	case !seen:
		e.note("neither GetPodStatus nor RefreshPodStatus told when the killed instance of web ran: the time of the kill was not checked")
	case ran <= 0:
		// Timestamps that contradict each other are KRI-POD-006's.
		e.note(fmt.Sprintf("the killed instance of web reports a FinishedAt %s after its StartedAt: the time of the kill was not checked", ran))
	case ran < lo || ran > hi:
		e.failf("in virtual time, container web was killed %s after it started: its liveness probe (periodSeconds 1, failureThreshold %d) fails from %s after the start on, so its %s failure in a row, which must kill it, comes %s to %s after the start (a kill %s earlier or later is a failure more or fewer)",
			ran, threshold, removeAfter, ordinal(threshold), lo, hi, probePeriod)
	}
}

// ordinal is n as "1st", "2nd", "3rd", "4th"...
func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// expectRestarted waits until the first instance of container web has
// been killed (it fails the spec when that instance exited otherwise than
// by a signal) and started again, which its probe makes happen about
// after d; why says why it is killed. It returns how long the killed
// instance ran (from its StartedAt to its FinishedAt, in GetPodStatus or
// in RefreshPodStatus's LastTerminationState), when a status told.
func (r *probeRun) expectRestarted(first *pkgcontainer.Status, after time.Duration, why string) (ran time.Duration, seen bool) {
	e, pod := r.e, r.pod
	// The kill shows in the exit code of the first instance while
	// GetPodStatus still reports it, and in RefreshPodStatus's
	// LastTerminationState (a provider that keeps only the newest
	// instance, a remote backend, shows it there alone). Neither need
	// last until the new instance is seen: the kubelet's garbage
	// collector keeps one dead instance per container and counts one
	// created but not yet started among them (kuberuntime_gc.go
	// evictableContainers), so it may remove the killed instance while
	// its successor starts, and kuscia's agent then publishes no last
	// termination (it takes it from the runtime alone,
	// podstatus.AsKusciaAgent). So what the agent's syncs saw is
	// gathered over the wait: a new instance, and the kill.
	var restarted, killed bool
	r.until(e.st.t.State+after+periods(4), fmt.Sprintf("pod %s: container web killed and started again", podRef(pod)), func(g gomega.Gomega) {
		st, cs := r.round(false)
		for _, s := range instancesOf(st, "web") {
			restarted = restarted || s.ID != first.ID
			if s.ID != first.ID || s.State != pkgcontainer.ContainerStateExited {
				continue
			}
			if !killedBySignal(s.ExitCode) {
				e.failf("the first instance %s exited with %d after %s, want the exit code of a kill (%d or %d): %s", first.ID, s.ExitCode, why, workload.ExitCodeSIGTERM, workload.ExitCodeSIGKILL, describeStatus(st))
			}
			killed = true
			if !s.StartedAt.IsZero() && !s.FinishedAt.IsZero() {
				ran, seen = s.FinishedAt.Sub(s.StartedAt), true
			}
		}
		if t := cs.LastTerminationState.Terminated; t != nil {
			if code := int(t.ExitCode); !killedBySignal(code) {
				e.failf("RefreshPodStatus reports the last termination of web with exit code %d, want %d or %d (killed after %s)", code, workload.ExitCodeSIGTERM, workload.ExitCodeSIGKILL, why)
			}
			killed = true
			if !seen && cs.RestartCount == 1 && !t.StartedAt.IsZero() && !t.FinishedAt.IsZero() {
				ran, seen = t.FinishedAt.Sub(t.StartedAt.Time), true
			}
		}
		g.Expect(restarted).To(gomega.BeTrue(), "no new instance of web %s after it started: %s", sinceStart(first).Round(time.Millisecond), describeStatus(st))
		g.Expect(cs.RestartCount).To(gomega.BeNumerically(">=", 1), "RefreshPodStatus reports RestartCount %d", cs.RestartCount)
		g.Expect(killed).To(gomega.BeTrue(), "no sync saw web killed: neither GetPodStatus reported the first instance %s exited nor RefreshPodStatus a last termination of web: %+v", first.ID, cs)
	})
	return ran, seen
}

func podLivenessPasses(e *podEnv) {
	path := e.w().ProbeFilePath()
	const writeAfter = time.Second
	// The container writes its file a second after it starts, its probe
	// first runs initialDelaySeconds after: a shell slow to get there on a
	// loaded machine can miss the 2s of the first try, so a restart is
	// tried again with a longer delay (slowTries). A provider that ignores
	// the delay probes at once and restarts the container in both.
	e.slowTries(3*time.Second, func(n int, d time.Duration, last bool) (*v1.Pod, string) {
		delay := int32((d + time.Second - 1) / time.Second)
		c := e.probed(fmt.Sprintf("sleep %s; echo ok > %s; ", seconds(writeAfter), path))
		c.LivenessProbe = execProbe(path, 1)
		c.LivenessProbe.InitialDelaySeconds = delay
		pod := e.newPod(fmt.Sprintf("alive%d", n), v1.RestartPolicyAlways, c)
		e.step(fmt.Sprintf("syncing a pod whose liveness probe (initialDelaySeconds %d) tests for %s, which its container writes %s after it starts", delay, path, writeAfter))
		r := &probeRun{e: e, pod: pod}
		first := r.running()
		restarted := ""
		window := time.Duration(delay)*time.Second + periods(2)
		r.hold(window, "container web keeps running, not restarted", func(g gomega.Gomega, sync bool) {
			st, cs := r.round(!sync)
			if restarted != "" && !last {
				return // the try is over: only a retry can tell
			}
			run := runningOf(st, "web")
			switch {
			case run == nil:
				restarted = fmt.Sprintf("container web (instance %s) no longer runs %s after it started: %s", first.ID, sinceStart(first).Round(time.Millisecond), describeStatus(st))
			case run.ID != first.ID:
				restarted = fmt.Sprintf("container web was started again %s after its first start: %s", sinceStart(first).Round(time.Millisecond), describeStatus(st))
			case cs.RestartCount != 0:
				restarted = fmt.Sprintf("RefreshPodStatus reports RestartCount %d", cs.RestartCount)
			default:
				return
			}
			g.Expect(last).To(gomega.BeFalse(), "%s (initialDelaySeconds %d: the container wrote the file its liveness probe tests for %s after it started)", restarted, delay, writeAfter)
		})
		return pod, restarted
	})
}

func podStartupProbe(e *podEnv) {
	path := e.w().ProbeFilePath()
	const writeAfter = 2 * time.Second
	c := e.probed(fmt.Sprintf("sleep %s; echo ok > %s; ", seconds(writeAfter), path))
	c.StartupProbe = execProbe(path, 30)
	c.LivenessProbe = execProbe(path, 1)
	c.ReadinessProbe = execProbe(path, 1)
	pod := e.newPod("startup", v1.RestartPolicyAlways, c)
	e.step(fmt.Sprintf("syncing a pod whose startup, liveness and readiness probes test for %s, which its container writes %s after it starts", path, writeAfter))
	r := &probeRun{e: e, pod: pod}
	first := r.running()
	check := func(g gomega.Gomega, sync bool) (*v1.ContainerStatus, time.Duration) {
		st, cs := r.round(!sync)
		run := runningOf(st, "web")
		if run == nil || run.ID != first.ID {
			e.failf("container web (instance %s) was killed or restarted %s after it started, before or right after its startup probe succeeded (the liveness probe must not run before): %s",
				first.ID, sinceStart(first).Round(time.Millisecond), describeStatus(st))
		}
		started := cs.Started != nil && *cs.Started
		if ran := sinceStart(run); ran < writeAfter-probePeriod && started {
			e.failf("RefreshPodStatus reports container web Started %s after it started, before its startup probe could succeed (the file is written after %s)", ran.Round(time.Millisecond), writeAfter)
		}
		if !started && cs.Ready {
			e.failf("RefreshPodStatus reports container web Ready but not Started %s after it started: the readiness probe must wait for the startup probe", sinceStart(run).Round(time.Millisecond))
		}
		return cs, sinceStart(run)
	}
	r.until(e.st.t.State+writeAfter+periods(3), fmt.Sprintf("pod %s: container web Started and Ready", podRef(pod)), func(g gomega.Gomega) {
		cs, ran := check(g, true)
		g.Expect(cs.Started).To(gomega.HaveValue(gomega.BeTrue()), "container web is not Started %s after it started", ran.Round(time.Millisecond))
		g.Expect(cs.Ready).To(gomega.BeTrue(), "container web is Started but not Ready %s after it started", ran.Round(time.Millisecond))
	})
	e.step("checking that the liveness probe, which passes now, leaves the container alone")
	r.hold(periods(2), "container web keeps running", func(g gomega.Gomega, sync bool) { check(g, sync) })
}

func podProbesStopOnKill(e *podEnv) {
	path := e.w().ProbeFilePath()
	const removeAfter = time.Second
	c := e.probed(fmt.Sprintf("echo ok > %s; sleep %s; rm -f %s; ", path, seconds(removeAfter), path))
	c.LivenessProbe = execProbe(path, 1)
	c.ReadinessProbe = execProbe(path, 1)
	pod := e.newPod("killed", v1.RestartPolicyAlways, c)
	e.step(fmt.Sprintf("syncing a pod whose liveness and readiness probes test for %s, which its container removes %s after it starts, then killing it at once", path, removeAfter))
	r := &probeRun{e: e, pod: pod}
	r.running()
	e.killUntilStopped(pod, agentGrace(pod))
	after := r.e.status(pod)
	count := len(instancesOf(after, "web"))
	e.step("checking, without SyncPod, that nothing starts again once the liveness probe would have failed")
	e.consistentlyFor(removeAfter+periods(2), fmt.Sprintf("pod %s: nothing runs after KillPod, no new instance, nothing Ready", podRef(pod)), func(g gomega.Gomega) {
		st, cs := r.round(true)
		for _, s := range instancesOf(st, "web") {
			g.Expect(s.State).NotTo(gomega.Equal(pkgcontainer.ContainerStateRunning), "container web (instance %s) runs after KillPod: %s", s.ID, describeStatus(st))
		}
		g.Expect(len(instancesOf(st, "web"))).To(gomega.BeNumerically("<=", count), "container web has %d instances after KillPod, %d right after it: %s", len(instancesOf(st, "web")), count, describeStatus(st))
		g.Expect(cs.Ready).To(gomega.BeFalse(), "RefreshPodStatus reports container web Ready after KillPod")
	})
}

// probeRun drives a pod of the probe specs as kuscia's agent does: each
// round is one sync of the agent (sync) and the status the agent publishes
// from the runtime status it ends with (the first step of the next sync:
// the conversion, RefreshPodStatus, the Ready conditions).
type probeRun struct {
	e    *podEnv
	pod  *v1.Pod
	prev v1.PodStatus // what the agent published last
	// lastSt and lastCS are what the last sync read and published of web;
	// replay makes round return them (until).
	lastSt *pkgcontainer.PodStatus
	lastCS *v1.ContainerStatus
	replay bool
}

// running syncs until container web runs and returns its instance.
func (r *probeRun) running() *pkgcontainer.Status {
	st := r.e.syncUntilRunning(r.pod)
	r.prev = r.e.publishedOf(r.pod)
	r.lastSt, r.lastCS = st, apiStatusOf(r.prev.ContainerStatuses, "web")
	return runningOf(st, "web")
}

func podReadinessPerInstance(e *podEnv) {
	path := e.w().ProbeFilePath()
	// Every instance writes the file writeAfter after it starts, keeps it
	// readyFor, removes it and exits 1: the restarted instance starts
	// without the file (a real runtime gives it a new file system, a host
	// process finds it removed) and must not be Ready before it writes it.
	// Its Ready must be seen while it runs: a prober slow on a loaded
	// machine may miss the first try's window, so a restarted instance
	// never seen Ready is tried again with more time (slowTries).
	const writeAfter = 2 * time.Second
	e.slowTries(3*time.Second, func(n int, readyFor time.Duration, last bool) (*v1.Pod, string) {
		c := e.shell("web", fmt.Sprintf("trap 'exit 143' TERM; sleep %s & wait; echo ok > %s; sleep %s & wait; rm -f %s; exit 1",
			seconds(writeAfter), path, seconds(readyFor), path))
		c.ReadinessProbe = execProbe(path, 1)
		pod := e.newPod(fmt.Sprintf("reready%d", n), v1.RestartPolicyAlways, c)
		e.step(fmt.Sprintf("syncing a pod whose container writes %s %s after it starts, which its readiness probe tests for, removes it %s later and exits 1, to be started again", path, writeAfter, readyFor))
		r := &probeRun{e: e, pod: pod}
		first := r.running()
		early := 0
		// restarted returns the running instance of web when it is not the
		// first, after failing the spec when RefreshPodStatus reports it
		// Ready before its own probe could succeed.
		restarted := func(st *pkgcontainer.PodStatus, cs *v1.ContainerStatus) *pkgcontainer.Status {
			run := runningOf(st, "web")
			if run == nil || run.ID == first.ID || !sameContainer(cs.ContainerID, run.ID) {
				return nil
			}
			// One period of margin: the file is written writeAfter after
			// the process started, at or after StartedAt.
			if ran := sinceStart(run); ran < writeAfter-probePeriod {
				early++
				if cs.Ready {
					e.failf("RefreshPodStatus reports container web Ready %s after its instance %s started (restart count %d), before that instance's readiness probe could succeed (it writes the file %s after it starts): a restarted container must not take its previous instance's (%s) Ready",
						ran.Round(time.Millisecond), run.ID, cs.RestartCount, writeAfter, first.ID)
				}
			}
			return run
		}
		// Each sync, and a read right after it: the SyncPod that starts
		// the new instance is followed by no sync until the provider
		// calls, and the status it reports meanwhile is what any sync
		// would publish.
		round := func(g gomega.Gomega) {
			st, cs := r.round(false)
			if run := restarted(st, cs); run != nil && cs.Ready {
				r.expectPodReady(true)
				return
			}
			st, cs = r.round(true)
			run := restarted(st, cs)
			g.Expect(run).NotTo(gomega.BeNil(), "container web (instance %s) has not been started again %s after it started, or RefreshPodStatus does not report the new instance (%q): %s",
				first.ID, sinceStart(first).Round(time.Millisecond), cs.ContainerID, describeStatus(st))
			g.Expect(cs.Ready).To(gomega.BeTrue(), "container web (instance %s) is not Ready %s after it started", run.ID, sinceStart(run).Round(time.Millisecond))
			r.expectPodReady(true)
		}
		desc := fmt.Sprintf("pod %s: container web started again and Ready", podRef(pod))
		// The first instance's run, the restart back-off a kubelet-like
		// runtime gives a container that exited (10s), the new
		// instance's run up to its first Ready probe, and a margin.
		within := writeAfter + readyFor + crashLoopBackOff + writeAfter + periods(3)
		if !last {
			if !r.tryUntil(within, desc, round) {
				return pod, fmt.Sprintf("container web was not seen started again and Ready within %s", within)
			}
		} else {
			r.until(e.st.t.State+within, desc, round)
		}
		if early == 0 {
			e.note("no status was read in the first " + (writeAfter - probePeriod).String() + " of the restarted instance (a loaded machine): Ready before its probe's first success was not checked")
		}
		return pod, ""
	})
}

// podReadinessTimeout mirrors the node e2e test "should not be ready with
// an exec readiness probe timeout": the readiness probe's command, sh -c
// "sleep 5" (the e2e test's sleeps 10), would exit 0 but outlasts the
// probe's timeoutSeconds (1), and a probe that times out has failed (the
// kubelet's exec prober, pkg/probe/exec, counts remote.ErrCommandTimedOut
// as a failure). The container must stay not Ready for as long as a
// prober that waited for the command would take to report it Ready: the
// command's sleep, a period for the first probe to start and one for its
// result, and the Stable timeout on top.
func podReadinessTimeout(e *podEnv) {
	const probeSleep = 5 * time.Second
	const probeTimeout = time.Second
	c := e.probed("")
	c.ReadinessProbe = specProbe(v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "sleep " + seconds(probeSleep)}}}, 1)
	c.ReadinessProbe.TimeoutSeconds = int32(probeTimeout / time.Second)
	pod := e.newPod("timeout", v1.RestartPolicyAlways, c)
	e.step(fmt.Sprintf("syncing a pod whose readiness probe runs sh -c \"sleep %s\" with timeoutSeconds %s (periodSeconds %s)", seconds(probeSleep), seconds(probeTimeout), seconds(probePeriod)))
	r := &probeRun{e: e, pod: pod}
	first := r.running()
	window := probeSleep + periods(2) + e.st.t.Stable
	r.hold(window, "container web keeps running and is never Ready", func(g gomega.Gomega, sync bool) {
		st, cs := r.round(!sync)
		run := runningOf(st, "web")
		if run == nil || run.ID != first.ID {
			e.failf("container web (instance %s) no longer runs %s after it started; readiness failures must restart nothing: %s", first.ID, sinceStart(first).Round(time.Millisecond), describeStatus(st))
		}
		if cs.Ready {
			e.failf("RefreshPodStatus reports container web Ready %s after it started, though its readiness probe's command (sleep %s) outlasts its timeoutSeconds (%s) at every run: a probe that times out has failed",
				sinceStart(run).Round(time.Millisecond), seconds(probeSleep), seconds(probeTimeout))
		}
		r.expectPodReady(false)
	})
}
