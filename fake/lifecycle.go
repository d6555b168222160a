package fake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/workload"
)

var errRunContainer = pkgcontainer.ErrRunContainer

func (c *core) SyncPod(ctx context.Context, pod *v1.Pod, podStatus *pkgcontainer.PodStatus, reasonCache *kri.ReasonCache) error {
	if err := validatePod(pod); err != nil {
		return err
	}
	if reasonCache == nil {
		return fmt.Errorf("fake: SyncPod of pod %q: reasonCache is nil", podKey(pod.Namespace, pod.Name))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fake: SyncPod of pod %q: %w", podKey(pod.Namespace, pod.Name), err)
	}
	p := c.p
	if p.statusDriven && podStatus != nil {
		if err := validateStatus(pod, podStatus); err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.unlock()
	if err := p.scripts.takeMethodFault(MethodSyncPod, pod.Namespace, pod.Name); err != nil {
		return err
	}
	now := p.clock.Now()
	ps := p.podFor(pod, now)
	p.advancePod(ps, now)

	s := syncer{p: p, ps: ps, pod: pod, now: now}
	defer func() { p.paceSyncNotification(ps, now, s.restarted) }() // podsync.go
	if p.statusDriven {
		s.status = podStatus
		if s.status == nil {
			s.status = &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
		}
	}
	if err := s.resize(ctx); err != nil {
		return err
	}
	if p.statusDriven {
		if err := s.syncFromStatus(ctx); err != nil {
			return err
		}
	} else {
		s.sync()
	}
	reasonCache.Update(pod.UID, s.result)
	return s.result.Error()
}

// podFor returns the state of pod, made if the fake does not know it yet,
// with the pod's spec as handed in. The caller holds p.mu.
func (p *PodProvider) podFor(pod *v1.Pod, now time.Time) *podState {
	ps := p.pods[pod.UID]
	if ps == nil {
		ps = &podState{createdAt: now}
		ps.sim = p.newSim()
		p.pods[pod.UID] = ps
	}
	ps.orphan = false
	if ps.pod == nil || !sameSpec(ps.pod, pod) {
		ps.pod = specCopy(pod)
		ps.ref = refOf(pod)
		ps.sim.UID, ps.sim.Namespace, ps.sim.Name = pod.UID, pod.Namespace, pod.Name
		// The grace period of the kills the pod decides (a failed probe
		// or postStart hook), with the floor of WithMinimumGracePeriod.
		ps.sim.GracePeriod = p.gracePeriod(nil, ps.pod, nil)
		if key := ps.ref.Key(); key != ps.key {
			if ps.key != "" && p.byKey[ps.key] == pod.UID {
				delete(p.byKey, ps.key)
			}
			ps.key = key
		}
	}
	p.byKey[ps.key] = pod.UID
	return ps
}

// syncer performs one SyncPod of one pod under the provider's lock.
type syncer struct {
	p   *PodProvider
	ps  *podState
	pod *v1.Pod // as handed in: read during the call only
	// status is what a status-driven sync acts on (never nil then).
	status *pkgcontainer.PodStatus
	// sandbox is the sandbox containers start in, once chosen.
	sandbox *sandboxState
	now     time.Time
	result  pkgcontainer.PodSyncResult
	// cursor is when the next container started may run: the end of the
	// postStart hooks of those started before it (postStart).
	cursor time.Time
	// quiet is set while failStart records a failed start: its events do
	// not notify the agent by themselves (podsync.go).
	quiet bool
	// restarted is set once the sync has started a container again (an
	// instance with a restart count): its notification is paced
	// (podsync.go).
	restarted bool
}

// sync reconciles from the fake's own state.
func (s *syncer) sync() {
	spec := &s.ps.pod.Spec
	// Init containers: one at a time, in order, each to success.
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if isSidecar(c) {
			if !s.syncSidecar(c, i) {
				return
			}
			continue
		}
		cur := s.ps.current(c.Name)
		switch {
		case cur == nil:
		case cur.active():
			return
		case cur.ExitCode() == 0:
			continue
		case !workload.Restarts(spec.RestartPolicy, true, false, cur.ExitCode()):
			return // the pod has failed
		}
		if !s.start(c, true) {
			return
		}
		if cur := s.ps.current(c.Name); cur.active() || cur.ExitCode() != 0 {
			return
		}
	}
	// App containers: start what is missing, restart per policy.
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if s.reportHookFailure(c) {
			continue
		}
		cur := s.ps.current(c.Name)
		if cur != nil && !shouldRestart(cur, spec.RestartPolicy) {
			continue
		}
		s.start(c, false)
	}
	s.stopSidecarsIfDone()
}

// Native sidecars: restartable init containers (restartPolicy Always), as
// the kubelet's runtime manager runs them. computeInitContainerActions
// (kuberuntime_container.go) starts one in spec order and the next init
// container once it runs, and restarts it whenever it exits, whatever the
// pod's restart policy; computePodActions (kuberuntime_manager.go) kills
// the pod, sidecars included, once no app container is left to keep or
// start; killContainersWithSyncResult stops the sidecars after the app
// containers, the last first (kuberuntime_termination_order.go), which the
// pod simulation does (workload.Pod.StopRuns, through terminate).

// isSidecar reports whether c is a restartable init container.
func isSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// sidecarNames returns the names of the restartable init containers of the
// pod's spec as last synced, in spec order.
func (ps *podState) sidecarNames() []string {
	if ps.pod == nil {
		return nil
	}
	var names []string
	for i := range ps.pod.Spec.InitContainers {
		if c := &ps.pod.Spec.InitContainers[i]; isSidecar(c) {
			names = append(names, c.Name)
		}
	}
	return names
}

// appsDone reports whether every app container has run and exited for
// good: none is active and none is to be restarted under the pod's policy.
func (ps *podState) appsDone() bool {
	spec := &ps.pod.Spec
	for i := range spec.Containers {
		cur := ps.current(spec.Containers[i].Name)
		if cur == nil || cur.active() || shouldRestart(cur, spec.RestartPolicy) {
			return false
		}
	}
	return len(spec.Containers) > 0
}

// syncSidecar does what sync does for restartable init container c, the
// i-th init container: it starts it unless it is active or the app
// containers are done, and reports whether the next init container may
// follow: c runs and, when it has a startup probe, that probe has
// succeeded, unless a later container already started (computeInitContainerActions
// in kuberuntime_container.go waits for a running restartable init
// container's startup probe before it starts the next one, but only the
// first time: a container started after it means the pod was initialized
// past it).
func (s *syncer) syncSidecar(c *v1.Container, i int) bool {
	cur := s.ps.current(c.Name)
	switch {
	case cur != nil && cur.Running():
		return cur.Prober.Started() || s.ps.startedAfterInit(i)
	case cur != nil && cur.active():
		return false // created: wait for it to run
	case s.ps.appsDone():
		return true // not restarted: the pod is done
	}
	if !s.start(c, true) {
		return false
	}
	cur = s.ps.current(c.Name)
	return cur.Running() && cur.Prober.Started()
}

// startedAfterInit reports whether a container after the i-th init
// container (a later init container, or an app container) has an instance.
func (ps *podState) startedAfterInit(i int) bool {
	spec := &ps.pod.Spec
	for _, c := range slices.Concat(spec.InitContainers[i+1:], spec.Containers) {
		if ps.current(c.Name) != nil {
			return true
		}
	}
	return false
}

// stopSidecarsIfDone stops the pod once its app containers are done for
// good while a sidecar is active, as the kubelet's runtime kills such a pod:
// its sidecars get SIGTERM in the order of KillPod, with the pod's grace
// period, and its sandbox stops. SyncPod does not wait for them.
func (s *syncer) stopSidecarsIfDone() {
	ps := s.ps
	active := slices.ContainsFunc(ps.sidecarNames(), func(name string) bool {
		cur := ps.current(name)
		return cur != nil && cur.active()
	})
	if !active || !ps.appsDone() {
		return
	}
	s.p.terminate(ps, s.now, s.p.gracePeriod(s.pod, ps.pod, nil), nil)
	s.p.stopSandboxes(ps, s.now, nil)
}

// startedByProbe reports whether the instance id of container name has
// passed its startup probe (an instance the fake does not know has not).
func (ps *podState) startedByProbe(name, id string) bool {
	if in := ps.instanceByID(name, id); in != nil {
		return in.Prober.Started()
	}
	return false
}

// shouldRestart reports whether an app container whose current instance
// is cur must be started again under policy (workload.Restarts).
func shouldRestart(cur *instance, policy v1.RestartPolicy) bool {
	return !cur.active() && workload.Restarts(policy, false, false, cur.ExitCode())
}

// ensureSandbox returns the sandbox containers start in: the one chosen
// for this sync, else the pod's ready sandbox, else a new one.
func (s *syncer) ensureSandbox() *sandboxState {
	if s.sandbox == nil {
		s.sandbox = s.ps.activeSandbox()
	}
	if s.sandbox == nil {
		attempt := uint32(0)
		if len(s.ps.sandboxes) > 0 {
			attempt = s.ps.sandboxes[0].attempt + 1
		}
		s.sandbox = s.newSandbox(attempt)
	}
	return s.sandbox
}

// newSandbox creates a ready sandbox with the given attempt number.
func (s *syncer) newSandbox(attempt uint32) *sandboxState {
	ps := s.ps
	sb := &sandboxState{id: s.p.ids(), createdAt: s.now, ready: true, attempt: attempt}
	if s.p.podIPs != nil && !s.pod.Spec.HostNetwork {
		sb.ip = s.p.podIPs.take()
	}
	ps.sandboxes = append([]*sandboxState{sb}, ps.sandboxes...)
	if len(ps.sandboxes) > maxSandboxes {
		ps.sandboxes = ps.sandboxes[:maxSandboxes]
	}
	s.p.publish(Event{At: s.now, Type: EventSandboxCreated, Pod: ps.ref, ContainerID: sb.id})
	return sb
}

// start makes one start attempt of c and reports whether it succeeded.
func (s *syncer) start(c *v1.Container, init bool) bool {
	p, ps := s.p, s.ps
	sb := s.ensureSandbox()
	if s.reportHookFailure(c) {
		return false
	}
	res := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
	s.result.AddSyncResult(res)
	if s.inBackOff(res, c) || s.inImageBackOff(res, c) {
		return false
	}

	script := p.scripts.containers[containerKey{pod: ps.key, name: c.Name}]
	b := workload.OfEnv(c)
	if fault, ok := script.takeStartFault(); ok {
		s.failStart(res, c, init, sb, fault.err, fault.message)
		return false
	}
	if message, err := workload.StartFailure(c.Image, c.ImagePullPolicy, b); err != nil {
		s.failStart(res, c, init, sb, err, message)
		return false
	}
	delete(ps.lastStartErr, c.Name)

	// It runs once the postStart hooks of the containers started before
	// it in this sync have ended (postStart), after the script's latency.
	startsAt := s.now
	if script != nil {
		startsAt = s.now.Add(script.latency)
	}
	opts := workload.RunOptions{StartsAt: maxTime(startsAt, s.cursor)}
	if script != nil {
		if run, ok := script.takeExitRun(); ok {
			opts.Exit = &workload.RunExit{After: run.after, Code: run.code}
		} else if script.exit != nil {
			opts.Exit = &workload.RunExit{After: script.exit.after, Code: script.exit.code}
		}
		opts.IgnoreSIGTERM = script.ignoreTERM
	}
	in := s.newInstance(c, init, sb, opts, nil)
	p.advanceSim(ps, s.now)
	return s.postStart(c, in, res)
}

// newInstance creates an instance of c in sandbox sb, the container's
// current one from now on, and publishes EventContainerCreated. Its run is
// the pod simulation's (workload.Pod.StartRun), started with opts: the
// pod plays its start, its exit, its signals' ends and its probes
// (probeFunc), and tells the fake of each (onRunEvent). With failed, a
// start the runtime created but could not run: its run exited at once
// (workload.Pod.StartFailed).
func (s *syncer) newInstance(c *v1.Container, init bool, sb *sandboxState, opts workload.RunOptions, failed *kri.ReasonItem) *instance {
	p, ps := s.p, s.ps
	p.seq++
	in := &instance{
		pod:       ps,
		imageID:   p.imageID(c.Image),
		hash:      pkgcontainer.HashContainer(c),
		sandboxID: sb.id,
		seq:       p.seq,
	}
	if r := s.resourcesOf(c.Name); r.Requests != nil || r.Limits != nil {
		in.resources = &r
	}
	restarts := s.restartCount(c.Name)
	opts.ID, opts.Restarts, opts.Data = p.ids(), &restarts, in
	if failed != nil {
		in.Run = ps.sim.StartFailed(ps.storedSpec(c), init, s.now, opts, exitCodeStartError, failed.Message)
		in.message, in.exited = failed.Message, true
	} else {
		in.Run = ps.sim.StartRun(ps.storedSpec(c), init, s.now, opts)
	}
	s.restarted = s.restarted || restarts > 0
	s.publish(Event{At: s.now, Type: EventContainerCreated, Pod: ps.ref, Container: c.Name, ContainerID: in.ID})
	return in
}

// restartCount is the restart count of a new instance of the container:
// one more than the newest instance's, taken from the podStatus in a
// status-driven sync (as startContainer in kuberuntime_container.go does).
func (s *syncer) restartCount(name string) int {
	if s.status != nil {
		if st := findStatus(s.status.ContainerStatuses, name); st != nil {
			return st.RestartCount + 1
		}
		return 0
	}
	if prev := s.ps.current(name); prev != nil {
		return prev.Restarts + 1
	}
	return 0
}

// failStart records a failed start attempt of c. With
// WithStartErrorInstances, a failure to run a created container leaves an
// exited instance. The agent is notified as failedStart says (podsync.go),
// the instance's events included: the start is tried again after the image
// back-off for a failed pull with WithImagePullBackOff, else after
// podWorkerBackOff (or the crash-loop back-off the next sync meets).
func (s *syncer) failStart(res *pkgcontainer.SyncResult, c *v1.Container, init bool, sb *sandboxState, err error, message string) {
	prev, had := s.ps.lastStartErr[c.Name]
	s.quiet = true
	defer func() { s.quiet = false }()
	var in *instance
	if s.p.startErrorInstances && errors.Is(err, errRunContainer) {
		in = s.newInstance(c, init, sb, workload.RunOptions{}, &kri.ReasonItem{Err: err, Message: message})
	}
	res.Fail(err, message)
	retryAt, pulling := s.pullFailed(c, err, message)
	if !pulling {
		retryAt = s.now.Add(podWorkerBackOff)
	}
	s.ps.setStartErr(c.Name, kri.ReasonItem{Err: err, Message: message})
	s.p.publish(Event{At: s.now, Type: EventContainerStartFailed, Pod: s.ps.ref, Container: c.Name, Message: fmt.Sprintf("%v: %s", err, message)})
	if in != nil {
		s.publish(Event{At: s.now, Type: EventContainerExited, Pod: s.ps.ref, Container: c.Name, ContainerID: in.ID, ExitCode: exitCodeStartError})
	}
	s.failedStart(c.Name, prev, had, retryAt)
}

// Lifecycle hooks, run by the pod simulation (workload.Pod: PostStart,
// PreStop, the kill after a failed postStart hook; workload/pod_hooks.go)
// on the provider's clock as the kubelet's runtime manager runs them
// (k8s.io/kubernetes/pkg/kubelet/kuberuntime/kuberuntime_container.go:
// startContainer step 4, killContainer, executePreStopHook), with the
// hooks a ContainerScript imposes (hookFunc). What is the fake's:
//
//   - the containers SyncPod starts after one with a postStart hook run
//     only once it has ended, as the kubelet starts them one after
//     another; when it fails, the pod simulation kills the container at
//     its end with the pod's grace period (its preStop hook first, then
//     SIGTERM; EventPreStopHook is published at that end, when the clock
//     reaches it), and the start is reported to the ReasonCache as
//     workload.ErrPostStartHook: by the SyncPod that started it when the
//     hook fails at once, else by the first SyncPod after its end;
//   - KillPod and CleanupPods run the preStop hook of a running container
//     they stop with a grace period above 0, for as long as its command
//     says but at most the grace period; SIGTERM comes when it ends, and
//     the container gets what is left of the grace period (at least 2s
//     under WithMinimumGracePeriod);
//   - EventPostStartHook and EventPreStopHook (publishHook).
//
// What a hook of the spec does is workload.RunHook's: an exec command of
// the vocabulary takes its sleeps and fails with a non-zero exit code or a
// missing executable (one outside the vocabulary succeeds at once); an
// HTTP GET action is answered by the server the container's command runs
// (httpd -f -p PORT: workload.HTTPHookAt), which logs it, and succeeds at
// once when something listens on its port, whatever the status; a sleep
// action takes its seconds; any other (tcpSocket) fails at once. A command
// that runs until killed takes the whole grace period as a preStop hook
// and, as a postStart hook, succeeds at once (the kubelet would block for
// ever). What a hook writes goes to the instance's files, at the times it
// writes it (workload.Instance.RecordHook).

// postStart runs the postStart hook of c, whose instance in has just been
// started (workload.Pod.PostStart: the pod simulation kills it at the end
// of a hook that fails, with the pod's grace period), has the containers
// started after it in this sync wait for its end (s.cursor), and reports
// whether the start still counts as a success: a hook that fails at once
// fails it; one that fails later is reported by the first SyncPod after
// its end (reportHookFailure). The caller holds p.mu.
func (s *syncer) postStart(c *v1.Container, in *instance, res *pkgcontainer.SyncResult) bool {
	end := s.ps.sim.PostStart(s.ps.sim.Container(c.Name), in.Run, s.now)
	s.cursor = maxTime(s.cursor, end)
	_, failure, failed := in.PostStartFailure()
	if !failed {
		return true
	}
	if end.After(s.now) {
		in.hookFailPending = true
		s.p.notifyAt(s.ps, end, s.now) // podsync.go: the next sync reports it
		return true
	}
	res.Fail(workload.ErrPostStartHook, failure)
	s.p.advanceSim(s.ps, s.now)
	return false
}

// reportHookFailure reports to the ReasonCache the failed postStart hook of
// container c's current instance, once its end has come, and reports
// whether it did: the container is then not started again in this sync.
// The caller holds p.mu.
func (s *syncer) reportHookFailure(c *v1.Container) bool {
	cur := s.ps.current(c.Name)
	if cur == nil || !cur.hookFailPending {
		return false
	}
	end, failure, _ := cur.PostStartFailure()
	if end.After(s.now) {
		return false
	}
	cur.hookFailPending = false
	res := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
	res.Fail(workload.ErrPostStartHook, failure)
	s.result.AddSyncResult(res)
	// The start this sync leaves out is due at the next: the agent is
	// asked for it (podsync.go), as for any failed start to be retried.
	s.p.notifyPod(s.ps.ref.UID)
	return true
}

// wake is run by the clock when a scheduled transition is due. It runs with
// the clock's own lock held (FakeClock.Step calls it synchronously), so it
// must neither call the clock nor take p.mu.
func (p *PodProvider) wake() {
	select {
	case p.wakeCh <- struct{}{}:
	default:
	}
	p.events.wake()
}

// advanceAll applies every transition that is due.
func (p *PodProvider) advanceAll() {
	p.mu.Lock()
	defer p.unlock()
	now := p.clock.Now()
	uids := make([]types.UID, 0, len(p.pods))
	for uid := range p.pods {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	for _, uid := range uids {
		if ps := p.pods[uid]; ps != nil {
			p.advancePod(ps, now)
		}
	}
}

// advancePod applies the transitions of one pod that are due at now and
// reports whether the fake still knows the pod: an orphan is forgotten once
// none of its containers is active. The caller holds p.mu.
func (p *PodProvider) advancePod(ps *podState, now time.Time) bool {
	p.advanceSim(ps, now)
	p.dueRetries(ps, now) // podsync.go
	if ps.orphan && !ps.anyActive() {
		p.forget(ps.ref.UID)
		return false
	}
	return true
}

// advanceSim carries out the events of the pod's runs due by now, each at
// its own instant (workload.Pod.Advance, which reports them to
// onRunEvent), and sets the wake-up of its next one. The caller holds
// p.mu.
func (p *PodProvider) advanceSim(ps *podState, now time.Time) {
	next, ok := ps.sim.Advance(now)
	p.setWake(ps, now, next, ok)
}

// armWake sets the wake-up of the pod's next event (none when nothing is
// planned), after a change of its runs. The caller holds p.mu.
func (p *PodProvider) armWake(ps *podState, now time.Time) {
	next, ok := ps.sim.Next()
	p.setWake(ps, now, next, ok)
}

// setWake sets the wake-up of the pod's next event at next (none unless
// ok). The caller holds p.mu.
func (p *PodProvider) setWake(ps *podState, now, next time.Time, ok bool) {
	if !ok {
		next = time.Time{}
	}
	if next.Equal(ps.wakeAt) {
		return
	}
	ps.stopWake()
	ps.wakeAt = next
	if ok {
		ps.wake = p.clock.AfterFunc(max(next.Sub(now), 0), p.wake)
	}
}

// stopWake stops the wake-up of the pod's next event, if any.
func (ps *podState) stopWake() {
	if ps.wake != nil {
		ps.wake.Stop()
		ps.wake = nil
	}
	ps.wakeAt = time.Time{}
}

// newSim returns the simulation of the runs of a pod (workload.Pod), in
// the mode where the fake's syncs start them: it plays them as the fake's
// options say (WithPID1Signals, WithMinimumGracePeriod), with the scripted
// probe results (probeFunc) and hooks (hookFunc), tells the fake of each
// of their events (onRunEvent) and kills a run whose liveness or startup
// probe failed as KillPod does (killForProbe). Its callbacks are the
// provider's (simFuncs), the same for every pod.
func (p *PodProvider) newSim() *workload.Pod {
	f := &p.simFuncs
	if f.shutdown == nil {
		// Every run of a pod simulation is started by newInstance, with
		// its instance as Data.
		pod := func(r *workload.Run) *podState { return r.Data.(*instance).pod }
		f.shutdown = func(b workload.Behaviour) workload.Shutdown { return b.Shutdown(p.pid1Signals) }
		f.probe = func(c *workload.PodContainer, r *workload.Run) workload.ProbeFunc { return p.probeFunc(pod(r), c, r) }
		f.event = func(e workload.PodEvent) { p.onRunEvent(pod(e.Run), e) }
		f.hook = func(c *workload.PodContainer, r *workload.Run, kind workload.HookKind, at time.Time) (workload.Hook, bool) {
			return p.hookFunc(pod(r), c, r, kind, at)
		}
		f.kill = func(c *workload.PodContainer, r *workload.Run, at time.Time, grace time.Duration) {
			p.killForProbe(pod(r), c, r, at, grace)
		}
	}
	sim := &workload.Pod{CallerStarts: true, Shutdown: f.shutdown, ProbeFunc: f.probe, OnEvent: f.event, HookFunc: f.hook, Kill: f.kill}
	if p.minimumGracePeriod {
		sim.MinimumGracePeriod = minimumGracePeriod
	}
	return sim
}

// simFuncs are the callbacks of the pod simulations of the provider's pods
// (newSim), made once: each finds its pod through the run's instance.
type simFuncs struct {
	shutdown func(workload.Behaviour) workload.Shutdown
	probe    func(*workload.PodContainer, *workload.Run) workload.ProbeFunc
	event    func(workload.PodEvent)
	hook     func(*workload.PodContainer, *workload.Run, workload.HookKind, time.Time) (workload.Hook, bool)
	kill     func(*workload.PodContainer, *workload.Run, time.Time, time.Duration)
}

// The probes of a container run on the provider's clock as the pod
// simulation runs them (workload.Pod: a workload.Prober per run, the
// kubelet's prober workers, k8s.io/kubernetes/pkg/kubelet/prober/worker.go):
// every probe due since the pod was last brought up to date runs at its own
// moment, in order, so the outcome does not depend on when the fake is
// read, and the fake's wake-up at the pod's next event (advanceSim) lets
// WaitFor and Subscribe see probe results without polling.

// probeFunc returns the results of the probes of run r of container c of
// pod ps: the script's, if the container's probe of that kind is scripted,
// else workload.InstanceProbes's: an exec command run against the
// container's files at that moment, an HTTP or TCP probe answered by the
// server the container's command runs, as if the fake had the pod's
// network, a gRPC probe a success. The caller holds p.mu.
func (p *PodProvider) probeFunc(ps *podState, c *workload.PodContainer, r *workload.Run) workload.ProbeFunc {
	exec := workload.DefaultProbeFunc(c, r)
	return func(kind workload.ProbeKind, probe *v1.Probe, at time.Time) bool {
		if script := p.scripts.containers[containerKey{pod: ps.key, name: c.Name}]; script != nil {
			if ok, scripted := script.probes[ProbeKind(kind)]; scripted {
				return ok
			}
		}
		return exec(kind, probe, at)
	}
}

// killForProbe kills run r of container c, whose liveness or startup
// probe failed at at, as KillPod would, with grace (the probe's
// terminationGracePeriodSeconds, else the pod's grace period: the pod
// simulation's GracePeriod, which podFor keeps), at least 2s under
// WithMinimumGracePeriod; the next SyncPod restarts it as the restart
// policy (and back-off) allow, as the kubelet's computePodActions does.
// The caller holds p.mu.
func (p *PodProvider) killForProbe(ps *podState, c *workload.PodContainer, r *workload.Run, at time.Time, grace time.Duration) {
	in := instanceOf(r)
	if in == nil {
		return
	}
	if p.minimumGracePeriod {
		grace = max(grace, minimumGracePeriod)
	}
	p.terminate(ps, at, grace, func(x *instance) bool { return x == in })
}

// hookFunc returns what the hook of kind of run r of container c of pod ps
// does, run at at: the scripted hook, if the container's script imposes
// one, else the spec's (workload.DefaultHook). It is the pod
// simulation's HookFunc (lifecycle.go newSim). The caller holds p.mu.
func (p *PodProvider) hookFunc(ps *podState, c *workload.PodContainer, r *workload.Run, kind workload.HookKind, at time.Time) (workload.Hook, bool) {
	if script := p.scripts.containers[containerKey{pod: ps.key, name: c.Name}]; script != nil {
		if sh := script.postStart; kind == workload.HookPostStart && sh != nil {
			return sh.hook(), true
		}
		if sh := script.preStop; kind == workload.HookPreStop && sh != nil {
			return sh.hook(), true
		}
	}
	return workload.DefaultHook(c, r, kind, at)
}

// storedSpec returns the fake's private copy of container c (ps.pod, as
// this sync's pod was copied: c may be the caller's, which the fake reads
// during the call only), the spec the pod simulation keeps for its runs;
// ps.pod is replaced, never modified, when the spec changes.
func (ps *podState) storedSpec(c *v1.Container) *v1.Container {
	for _, list := range [2][]v1.Container{ps.pod.Spec.InitContainers, ps.pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == c.Name {
				return &list[i]
			}
		}
	}
	return c.DeepCopy()
}

// instanceByID returns the instance id of container name, nil if the fake
// does not remember it.
func (ps *podState) instanceByID(name, id string) *instance {
	for _, in := range [2]*instance{ps.current(name), ps.previous(name)} {
		if in != nil && in.ID == id {
			return in
		}
	}
	return nil
}
