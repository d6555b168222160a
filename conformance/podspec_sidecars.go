package conformance

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// The native sidecar specs (KRI-POD-066..071): restartable init containers,
// initContainers[].restartPolicy Always, as the kubelet's runtime manager
// runs them (kuberuntime computeInitContainerActions and computePodActions,
// killContainersWithSyncResult with its terminationOrdering).
var podspecSidecarsSpecs = []*specDef{
	{id: "KRI-POD-066", level: Must, kind: kindPod, groups: []string{"pod-spec", "sidecars"}, caps: []Capability{CapSidecars}, pod: podSidecarOrder,
		text: "a restartable init container starts in spec order, the next init container and the app containers start only once it has started, and it keeps running beside the app containers"},
	{id: "KRI-POD-067", level: Must, kind: kindPod, groups: []string{"pod-spec", "sidecars"}, caps: []Capability{CapSidecars}, pod: podSidecarRestart,
		text: "a restartable init container that exits is started again, with a higher restart count, whatever the pod's restart policy (also Never), while the app containers keep running"},
	{id: "KRI-POD-068", level: Must, kind: kindPod, groups: []string{"pod-spec", "sidecars"}, caps: []Capability{CapSidecars}, pod: podSidecarStopsWithApp,
		text: "once the app containers of a RestartPolicy Never pod have exited, its restartable init containers are stopped, after them, and not started again, so that the pod reaches a terminal phase"},
	{id: "KRI-POD-069", level: Must, kind: kindPod, groups: []string{"pod-spec", "sidecars"}, caps: []Capability{CapSidecars}, pod: podSidecarKillAfterApps,
		text: "KillPod stops the restartable init containers only after the app containers have exited: a sidecar that exits at once on SIGTERM finishes no earlier than an app container whose shutdown takes a while"},
	{id: "KRI-POD-070", level: Must, kind: kindPod, groups: []string{"pod-spec", "sidecars"}, caps: []Capability{CapSidecars}, pod: podSidecarKillReverse,
		text: "KillPod stops the restartable init containers one at a time in reverse spec order: an earlier sidecar finishes no earlier than a later one whose shutdown takes a while"},
	{id: "KRI-POD-071", level: Must, kind: kindPod, groups: []string{"pod-spec", "sidecars"}, caps: []Capability{CapSidecars}, pod: podSidecarStatus,
		text: "RefreshPodStatus reports a running restartable init container in InitContainerStatuses as running, started and ready, as the kubelet does"},
	{id: "KRI-POD-091", level: Must, kind: kindPod, groups: []string{"pod-spec", "sidecars"}, caps: []Capability{CapSidecars, CapProbes}, pod: podSidecarStartupProbe,
		note: "Since issue 38 its pod has two sidecars with startup probes, the second followed by the app container: each holds what follows it (before, only the first sidecar's probe was checked).",
		text: "a restartable init container with a startup probe holds the next init container, or the app containers when it is the last, until the probe has succeeded, each such sidecar in turn"},
}

// sidecar returns c as a restartable init container named name.
func sidecar(name string, c v1.Container) v1.Container {
	always := v1.ContainerRestartPolicyAlways
	c.Name, c.RestartPolicy = name, &always
	return c
}

// slowStop is a container that runs until stopped and takes about d to
// exit slowStopCode after SIGTERM (its handler sleeps first): a shutdown that takes a
// while.
func (e *podEnv) slowStop(name string, d time.Duration) v1.Container {
	return e.shell(name, "trap 'sleep "+seconds(d)+"; exit "+strconv.Itoa(slowStopCode)+"' TERM; sleep infinity & wait")
}

// sidecarKillGrace is the grace period the KillPod specs of sidecars give:
// long enough for the shutdown of slowStop(ShortRun) and for the sidecars'
// turns after it, as the kubelet's termination ordering waits for them
// within the grace period only.
func (e *podEnv) sidecarKillGrace() int64 {
	return int64(math.Ceil(e.st.t.ShortRun.Seconds())) + minimumGraceSecs + 1
}

// startedBefore fails unless an instance of first started no later than
// every instance of later (an instance of later without one of first fails
// too).
func (e *podEnv) startedBefore(st *pkgcontainer.PodStatus, first, later string) {
	ls := instancesOf(st, later)
	if len(ls) == 0 {
		return
	}
	fs := instancesOf(st, first)
	if len(fs) == 0 {
		e.failf("container %s was created before restartable init container %s: %s", later, first, describeStatus(st))
	}
	earliest := fs[0].StartedAt
	for _, f := range fs[1:] {
		if f.StartedAt.Before(earliest) {
			earliest = f.StartedAt
		}
	}
	for _, l := range ls {
		if !l.StartedAt.IsZero() && l.StartedAt.Before(earliest) {
			e.failf("container %s started at %s, before restartable init container %s started at %s",
				later, l.StartedAt.Format(time.RFC3339Nano), first, earliest.Format(time.RFC3339Nano))
		}
	}
}

func podSidecarOrder(e *podEnv) {
	e.step("syncing a pod whose init containers are a sidecar, a short init container and a second sidecar, checking the order in every round")
	pod := e.newPod("sidecars", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	setInitContainers(pod, sidecar("proxy", e.w().RunsUntilKilled()),
		named("setup", e.w().RunsFor(e.st.t.ShortRun)),
		sidecar("logger", e.w().RunsUntilKilled()))
	check := func(st *pkgcontainer.PodStatus) {
		e.startedBefore(st, "proxy", "setup")
		e.startedBefore(st, "proxy", "logger")
		e.startedBefore(st, "logger", "app")
		e.startedBefore(st, "proxy", "app")
		if ls := instancesOf(st, "logger"); len(ls) > 0 {
			done := succeededOf(st, "setup")
			if done == nil {
				e.failf("restartable init container logger was created before init container setup completed: %s", describeStatus(st))
			}
			for _, l := range ls {
				if !l.StartedAt.IsZero() && l.StartedAt.Before(done.FinishedAt) {
					e.failf("restartable init container logger started at %s, before init container setup finished at %s",
						l.StartedAt.Format(time.RFC3339Nano), done.FinishedAt.Format(time.RFC3339Nano))
				}
			}
		}
	}
	running := func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		for _, name := range []string{"proxy", "logger", "app"} {
			g.Expect(runningOf(st, name)).NotTo(gomega.BeNil(), "container %s is not running: %s", name, describeStatus(st))
		}
	}
	st := e.syncUntil(pod, "both sidecars and the app container running", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		check(st)
		running(g, st)
	})
	ids := map[string]pkgcontainer.ContainerID{}
	for _, name := range []string{"proxy", "logger", "app"} {
		ids[name] = runningOf(st, name).ID
	}
	e.step("syncing on: the sidecars keep running beside the app container, none started again")
	e.syncHolding(pod, "sidecars and app container running, not restarted", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		check(st)
		running(g, st)
		for name, id := range ids {
			g.Expect(runningOf(st, name).ID).To(gomega.Equal(id), "container %s runs as another instance than %s: %s", name, id, describeStatus(st))
		}
		g.Expect(instancesOf(st, "setup")).To(gomega.HaveLen(1), "init container setup ran again: %s", describeStatus(st))
	})
}

func podSidecarRestart(e *podEnv) {
	e.step("syncing a RestartPolicy Never pod whose sidecar exits 1 after a short run")
	pod := e.newPod("sidecar-restart", v1.RestartPolicyNever, named("app", e.w().RunsUntilKilled()))
	setInitContainers(pod, sidecar("helper", e.shell("", "sleep "+seconds(e.st.t.ShortRun)+"; exit 1")))
	var appID, firstID pkgcontainer.ContainerID
	st := e.syncUntil(pod, "sidecar helper started again after it exited 1", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		if app := runningOf(st, "app"); app != nil && appID.ID == "" {
			appID = app.ID
		}
		// A remote provider may report only the newest instance: the
		// restart shows as a new instance with a higher restart count.
		var again, prev *pkgcontainer.Status
		for _, c := range instancesOf(st, "helper") {
			if firstID.ID == "" && c.RestartCount == 0 {
				firstID = c.ID
			}
			if c.RestartCount >= 1 && !c.StartedAt.IsZero() && c.ID != firstID && (again == nil || c.RestartCount > again.RestartCount) {
				again = c
			}
		}
		g.Expect(again).NotTo(gomega.BeNil(), "sidecar helper (exits 1 after %s) has not been started again with a restart count of 1 or more: %s", e.st.t.ShortRun, describeStatus(st))
		for _, c := range exitedOf(st, "helper") {
			if c.RestartCount < again.RestartCount && (prev == nil || c.RestartCount > prev.RestartCount) {
				prev = c
			}
		}
		if prev == nil {
			return
		}
		if prev.ExitCode != 1 {
			e.failf("sidecar helper's run with restart count %d exited %d, want 1: %s", prev.RestartCount, prev.ExitCode, describeStatus(st))
		}
		if again.StartedAt.Before(prev.FinishedAt) {
			e.failf("sidecar helper started again at %s, before its previous run finished at %s",
				again.StartedAt.Format(time.RFC3339Nano), prev.FinishedAt.Format(time.RFC3339Nano))
		}
	})
	app := runningOf(st, "app")
	if app == nil {
		e.failf("app container is not running beside its restarted sidecar: %s", describeStatus(st))
	}
	if n := len(instancesOf(st, "app")); n != 1 || (appID.ID != "" && app.ID != appID) || app.RestartCount != 0 {
		e.failf("the app container of a RestartPolicy Never pod ran again (%d instances, restart count %d) when its sidecar restarted: %s", n, app.RestartCount, describeStatus(st))
	}
}

func podSidecarStopsWithApp(e *podEnv) {
	e.step("syncing a RestartPolicy Never pod with a sidecar whose app container exits 0 after a short run")
	pod := e.newPod("sidecar-done", v1.RestartPolicyNever, named("app", e.w().RunsFor(e.st.t.ShortRun)))
	setInitContainers(pod, sidecar("helper", e.w().RunsUntilKilled()))
	done := func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(succeededOf(st, "app")).NotTo(gomega.BeNil(), "app container has not exited 0: %s", describeStatus(st))
		g.Expect(runningOf(st, "helper")).To(gomega.BeNil(), "sidecar helper still runs after the app container exited: %s", describeStatus(st))
		g.Expect(exitedOf(st, "helper")).NotTo(gomega.BeEmpty(), "sidecar helper never ran: %s", describeStatus(st))
	}
	st := e.syncUntil(pod, "app container exited 0 and sidecar helper stopped", done)
	app := succeededOf(st, "app")
	helpers := len(instancesOf(st, "helper"))
	for _, h := range exitedOf(st, "helper") {
		if h.FinishedAt.Before(app.FinishedAt) {
			e.failf("sidecar helper finished at %s, before the app container finished at %s: it was not stopped because the app container was done but exited on its own",
				h.FinishedAt.Format(time.RFC3339Nano), app.FinishedAt.Format(time.RFC3339Nano))
		}
	}
	e.step("syncing on: nothing starts again")
	e.syncHolding(pod, "sidecar helper and app container stay exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		done(g, st)
		g.Expect(instancesOf(st, "helper")).To(gomega.HaveLen(helpers), "sidecar helper was started again: %s", describeStatus(st))
		g.Expect(instancesOf(st, "app")).To(gomega.HaveLen(1), "app container was started again: %s", describeStatus(st))
	})
	st = e.status(pod)
	if got := podstatus.Generate(pod, st, e.rc).Phase; got != v1.PodSucceeded {
		e.failf("the API status built from GetPodStatus (podstatus.Generate) has phase %s, want %s: %s", got, v1.PodSucceeded, describeStatus(st))
	}
}

// slowStopCode is the exit code of slowStop's handler: non-zero, as a
// container KillPod stopped reports, and unlike the 143 of a shell killed
// by a SIGTERM that came before its trap was set.
const slowStopCode = 64

// killInOrder runs the pod build returns until every container in names
// has run for the stable window, then calls KillPod with the sidecar grace
// period and, while it runs and once it has returned, reads GetPodStatus
// (a provider may forget the pod as KillPod ends). It fails when a status
// shows container later stopped before container first: later exited while
// first still ran, or both exited and later's FinishedAt is before
// first's; and when a container still runs after KillPod returned.
// Container slow (a slowStop) must end by its handler (slowStopCode): a
// SIGTERM that arrives before sh has set its trap ends it at once, which
// tells nothing of the order, so such a run is a miss of slowTries, which
// repeats it once with a new pod held running for the State timeout (at
// least four stable windows) before the kill; when SIGTERM beats the trap
// that time too, the spec fails: the order was never seen. When no status
// showed first stopped (the pod forgotten at once), the order cannot be
// seen: the spec says so and passes.
func (e *podEnv) killInOrder(build func(attempt int) *v1.Pod, slow, first, later, why string, names ...string) {
	e.slowTries(e.st.t.Stable, func(attempt int, settle time.Duration, _ bool) (*v1.Pod, string) {
		pod := build(attempt)
		e.syncUntil(pod, "every container running", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
			for _, name := range names {
				g.Expect(runningOf(st, name)).NotTo(gomega.BeNil(), "container %s is not running: %s", name, describeStatus(st))
			}
		})
		var ids map[string]pkgcontainer.ContainerID
		e.consistentlyFor(settle, fmt.Sprintf("pod %s: every container running", podRef(pod)), func(g gomega.Gomega) {
			st := e.status(pod)
			ids = map[string]pkgcontainer.ContainerID{}
			for _, name := range names {
				r := runningOf(st, name)
				g.Expect(r).NotTo(gomega.BeNil(), "container %s is not running: %s", name, describeStatus(st))
				ids[name] = r.ID
			}
		})
		grace := e.sidecarKillGrace()
		e.step(fmt.Sprintf("calling KillPod with a grace period of %ds, reading GetPodStatus while it runs", grace))
		running := e.runningPod(pod)
		done := make(chan error, 1)
		var killErr error
		go func() {
			done <- e.try("KillPod", func(ctx context.Context) { killErr = e.p.KillPod(ctx, pod, running, &grace) })
		}()
		seen, slowCode := false, -1
		check := func(st *pkgcontainer.PodStatus) {
			inst := func(name string) *pkgcontainer.Status {
				for _, c := range st.ContainerStatuses {
					if c.ID == ids[name] {
						return c
					}
				}
				return nil
			}
			f, l := inst(first), inst(later)
			if s := inst(slow); s != nil && s.State == pkgcontainer.ContainerStateExited {
				slowCode = s.ExitCode
			}
			exited := func(c *pkgcontainer.Status) bool { return c != nil && c.State == pkgcontainer.ContainerStateExited }
			switch {
			case exited(l) && f != nil && f.State == pkgcontainer.ContainerStateRunning:
				e.failf("during KillPod, %s has exited while %s still runs: %s: %s", later, first, why, describeStatus(st))
			case exited(l) && exited(f) && l.FinishedAt.IsZero():
				e.failf("after KillPod, %s is reported exited without FinishedAt, so it cannot be seen to finish after %s (finished at %s): %s: %s",
					later, first, f.FinishedAt.Format(time.RFC3339Nano), why, describeStatus(st))
			case exited(l) && exited(f) && l.FinishedAt.Before(f.FinishedAt):
				e.failf("after KillPod, %s finished at %s, %s before %s finished at %s: %s: %s",
					later, l.FinishedAt.Format(time.RFC3339Nano), f.FinishedAt.Sub(l.FinishedAt), first, f.FinishedAt.Format(time.RFC3339Nano), why, describeStatus(st))
			case exited(f) && l != nil:
				seen = true
			}
		}
		// After KillPod returns the order is watched on until nothing runs:
		// a KillPod that returns while containers still stop is
		// KRI-POD-014's, and kuscia's agent tries the termination again.
		var returnedAt time.Time
		for stopped := false; !stopped; {
			select {
			case err := <-done:
				if err != nil {
					e.fail(err.Error())
				}
				e.noError("KillPod", killErr)
				returnedAt = time.Now()
				done = nil
			case <-time.After(e.st.t.Poll):
			}
			st := e.status(pod)
			check(st)
			if returnedAt.IsZero() {
				continue
			}
			stopped = true
			for _, c := range st.ContainerStatuses {
				if c.State != pkgcontainer.ContainerStateRunning {
					continue
				}
				stopped = false
				e.diagnose("after KillPod of pod %s returned, container %s still runs (KRI-POD-014 checks this)", podRef(pod), c.Name)
				if time.Since(returnedAt) > e.st.t.State {
					e.failf("after KillPod returned, container %s still runs %s later: %s", c.Name, e.st.t.State, describeStatus(st))
				}
			}
		}
		if slowCode == slowStopCode || slowCode == -1 {
			if !seen {
				e.note(fmt.Sprintf("no GetPodStatus during or after KillPod showed %s stopped beside %s (the pod was forgotten at once?): the order could not be seen", first, later))
			}
			return pod, ""
		}
		return pod, fmt.Sprintf("container %s, whose SIGTERM handler sleeps and then exits %d, exited %d when KillPod came after it had run for %s: SIGTERM came before its shell had set its trap, or the provider stopped it otherwise (without SIGTERM, or SIGKILL before the grace period of %ds was over) or reports another exit code, so the order could not be seen", slow, slowStopCode, slowCode, settle, grace)
	})
}

func podSidecarKillAfterApps(e *podEnv) {
	e.step("running a pod with a sidecar that exits at once on SIGTERM and an app container whose shutdown takes a while")
	e.killInOrder(func(attempt int) *v1.Pod {
		pod := e.newPod(fmt.Sprintf("sidecar-kill%d", attempt), v1.RestartPolicyAlways, e.slowStop("app", e.st.t.ShortRun))
		setInitContainers(pod, sidecar("helper", e.w().RunsUntilKilled()))
		return pod
	}, "app", "app", "helper", "a sidecar must be stopped only after the app containers have exited", "helper", "app")
}

func podSidecarKillReverse(e *podEnv) {
	e.step("running a pod with two sidecars, the later one's shutdown taking a while")
	e.killInOrder(func(attempt int) *v1.Pod {
		pod := e.newPod(fmt.Sprintf("sidecar-order%d", attempt), v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
		setInitContainers(pod, sidecar("first", e.w().RunsUntilKilled()), sidecar("second", e.slowStop("", e.st.t.ShortRun)))
		return pod
	}, "second", "second", "first", "sidecars must be stopped one at a time, the last in spec order first", "first", "second", "app")
}

func podSidecarStatus(e *podEnv) {
	e.step("running a pod with a sidecar and an app container")
	pod := e.newPod("sidecar-status", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	setInitContainers(pod, sidecar("helper", e.w().RunsUntilKilled()))
	st := e.syncUntil(pod, "sidecar helper and app container running", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		for _, name := range []string{"helper", "app"} {
			g.Expect(runningOf(st, name)).NotTo(gomega.BeNil(), "container %s is not running: %s", name, describeStatus(st))
		}
	})
	ps := e.publish(pod, st)
	if s := apiStatusOf(ps.ContainerStatuses, "helper"); s != nil {
		e.failf("RefreshPodStatus reports sidecar helper among the app containers' statuses: %+v", *s)
	}
	s := apiStatusOf(ps.InitContainerStatuses, "helper")
	if s == nil {
		e.failf("RefreshPodStatus reports no status for sidecar helper in InitContainerStatuses: %+v", ps.InitContainerStatuses)
	}
	id := runningOf(st, "helper").ID
	switch {
	case s.State.Running == nil:
		e.failf("RefreshPodStatus reports running sidecar helper in state %+v, want Running", s.State)
	case s.Started == nil || !*s.Started:
		e.failf("RefreshPodStatus reports running sidecar helper (no startup probe) with Started %v, want true", ptrString(s.Started))
	case !s.Ready:
		e.failf("RefreshPodStatus reports running sidecar helper (no readiness probe) not ready, want ready as the kubelet reports it")
	case !sameContainer(s.ContainerID, id):
		e.failf("RefreshPodStatus reports sidecar helper with container ID %q, GetPodStatus runs it as %q", s.ContainerID, id.String())
	case s.RestartCount != 0:
		e.failf("RefreshPodStatus reports sidecar helper with restart count %d, want 0", s.RestartCount)
	}
}

func ptrString(b *bool) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprint(*b)
}

func podSidecarStartupProbe(e *podEnv) {
	// Each sidecar is Started no sooner than writeAfter after its process
	// started, at or after its StartedAt; a period of margin for the probe.
	const writeAfter = 3 * time.Second
	probed := func(name string) (v1.Container, string) {
		path := e.w().ProbeFilePath()
		c := sidecar(name, e.shell("", fmt.Sprintf("trap 'exit 143' TERM; sleep %s; echo ok > %s; sleep infinity & wait", seconds(writeAfter), path)))
		c.StartupProbe = execProbe(path, 30)
		return c, path
	}
	proxy, proxyPath := probed("proxy")
	logger, loggerPath := probed("logger")
	pod := e.newPod("sidecar-startup", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	setInitContainers(pod, proxy, named("setup", e.w().ExitsWithCode(0)), logger)
	e.step(fmt.Sprintf("syncing a pod whose init containers are sidecar proxy, init container setup and sidecar logger, each sidecar with a startup probe that tests for a file it writes %s after it starts (%s, %s)", writeAfter, proxyPath, loggerPath))
	// Two waits, one per sidecar's startup probe: each within the state
	// timeout.
	e.syncUntil(pod, "setup completed and logger running", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(succeededOf(st, "setup")).NotTo(gomega.BeNil(), "init container setup has not completed: %s", describeStatus(st))
		g.Expect(runningOf(st, "logger")).NotTo(gomega.BeNil(), "sidecar logger is not running: %s", describeStatus(st))
	})
	st := e.syncUntil(pod, "app running", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "app")).NotTo(gomega.BeNil(), "container app is not running: %s", describeStatus(st))
	})
	// firstStart is the first start of container name.
	firstStart := func(name string) time.Time {
		var started time.Time
		for _, inst := range instancesOf(st, name) {
			if !inst.StartedAt.IsZero() && (started.IsZero() || inst.StartedAt.Before(started)) {
				started = inst.StartedAt
			}
		}
		if started.IsZero() {
			e.failf("GetPodStatus reports no started instance of %s although what follows it has run: %s", name, describeStatus(st))
		}
		return started
	}
	for _, held := range []struct{ sidecar, next string }{{"proxy", "setup"}, {"logger", "app"}} {
		if gap := firstStart(held.next).Sub(firstStart(held.sidecar)); gap < writeAfter-probePeriod {
			e.failf("%s started %s after sidecar %s, before %s's startup probe could succeed (the file it tests for is written %s after %s starts): the kubelet starts what follows a sidecar only once it is Started (kuberuntime computeInitContainerActions), each sidecar in turn; %s",
				held.next, gap.Round(time.Millisecond), held.sidecar, held.sidecar, writeAfter, held.sidecar, describeStatus(st))
		}
	}
}
