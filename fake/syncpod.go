package fake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podactions"
	"github.com/kri-kit/testkit/sim/workload"
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
	p.advanced(ps, now)

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
	if ps.pod == nil || !sameStoredSpec(ps.pod, ps.steady, pod) {
		ps.settled = 0 // the pod simulation changes below
		ps.pod = specCopy(pod)
		ps.steady = steadyFieldsOf(ps.pod)
		ps.ref = refOf(pod)
		ps.sim.UID, ps.sim.Namespace, ps.sim.Name = pod.UID, pod.Namespace, pod.Name
		ps.sim.RestartPolicy = pod.Spec.RestartPolicy
		// The grace period of the kills the pod decides (a failed probe
		// or postStart hook); the pod simulation adds the floor of
		// WithMinimumGracePeriod after the preStop hook.
		ps.sim.GracePeriod = gracePeriod(nil, ps.pod, nil)
		if key := ps.ref.Key(); key != ps.key {
			if ps.key != "" && p.byKey[ps.key] == pod.UID {
				delete(p.byKey, ps.key)
				p.byKeyGen++
			}
			ps.key = key
			ps.byKeyGen = 0
		}
	}
	// byKey names this pod under its key unless another pod took the key
	// since (a change of byKey) or the key is new.
	if ps.byKeyGen == 0 || ps.byKeyGen != p.byKeyGen {
		if p.byKey[ps.key] != pod.UID {
			p.byKey[ps.key] = pod.UID
			p.byKeyGen++
		}
		ps.byKeyGen = p.byKeyGen
	}
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

// syncFromStatus reconciles the pod from s.status, as the kubelet's runtime
// does (podactions.ActionsFromStatus: computePodActions, then SyncPod, in
// pkg/kubelet/kuberuntime/kuberuntime_manager.go). Effects land on the
// fake's real state: a container the status wrongly shows exited is
// started once more, next to the instance still running. The caller holds
// p.mu; killing with a grace period releases it while waiting.
func (s *syncer) syncFromStatus(ctx context.Context) error {
	a := podactions.ActionsFromStatus(ctx, s.pod, s.status, s.ps.startedByProbe)
	if a.KillPod {
		if err := s.killShown(ctx); err != nil {
			return err
		}
	}
	if a.CreateSandbox {
		s.sandbox = s.newSandbox(a.Attempt)
	}
	for _, c := range a.StartInit {
		s.start(c, true)
	}
	for _, c := range a.StartApps {
		s.start(c, false)
	}
	return nil
}

// killShown kills what the status shows — its running containers, with the
// pod's grace period, and its sandboxes — and waits for that, as the
// kubelet's runtime does when SyncPod must kill the pod. The caller holds
// p.mu; it is released while waiting.
func (s *syncer) killShown(ctx context.Context) error {
	p, st := s.p, s.status
	deadline := p.terminate(s.ps, s.now, gracePeriod(s.pod, s.ps.pod, nil), func(in *instance) bool {
		for _, cs := range st.ContainerStatuses {
			if cs.ID.ID == in.ID && cs.State == pkgcontainer.ContainerStateRunning {
				return true
			}
		}
		return false
	})
	p.stopSandboxes(s.ps, s.now, func(sb *sandboxState) bool {
		for _, ss := range st.SandboxStatuses {
			if ss.GetId() == sb.id {
				return true
			}
		}
		return false
	})
	if err := p.waitLocked(ctx, deadline); err != nil {
		return fmt.Errorf("fake: SyncPod of pod %q: containers still terminating: %w", podKey(s.pod.Namespace, s.pod.Name), err)
	}
	if now := p.clock.Now(); now.After(s.now) {
		// The wait let others in: start over from the state as it is now.
		s.now = now
		s.ps = p.podFor(s.pod, now)
		p.advancePod(s.ps, now)
		s.sandbox = nil
	}
	return nil
}

// sync reconciles from the fake's own state, in the kubelet's start order
// (workload.Pod.StartInTurn, on the pod simulation's runs): each container
// whose turn has come gets one start attempt (start: it may fail, or wait
// out a back-off). A container whose failed postStart hook this sync
// reports is not started again until the next (reportHookFailure). Once
// the app containers are done for good while a sidecar is active, the pod
// is stopped as the kubelet's runtime kills such a pod: its sidecars get
// SIGTERM in the order of KillPod, with the pod's grace period, and its
// sandbox stops; SyncPod does not wait for them.
func (s *syncer) sync() {
	ps := s.ps
	spec := &ps.pod.Spec
	var reported []string
	for i := range spec.Containers {
		if c := &spec.Containers[i]; s.reportHookFailure(c) {
			reported = append(reported, c.Name)
		}
	}
	done := ps.sim.StartInTurn(spec, func(c *v1.Container, init bool) {
		if !slices.Contains(reported, c.Name) {
			s.start(c, init)
		}
	})
	if done && ps.anySidecarActive() {
		s.p.terminate(ps, s.now, gracePeriod(s.pod, ps.pod, nil), nil)
		s.p.stopSandboxes(ps, s.now, nil)
	}
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
	opts.ID, opts.Data = p.ids(), in
	if s.status != nil {
		// The status's count; else the pod simulation's: one more than
		// the current run's (workload.RunOptions.Restarts).
		restarts := s.restartCount(c.Name)
		opts.Restarts = &restarts
	}
	if failed != nil {
		in.Run = ps.sim.StartFailed(ps.storedSpec(c), init, s.now, opts, workload.ExitCodeStartError, failed.Message)
		in.message, in.exited = failed.Message, true
	} else {
		in.Run = ps.sim.StartRun(ps.storedSpec(c), init, s.now, opts)
	}
	s.restarted = s.restarted || in.Restarts > 0
	s.publish(Event{At: s.now, Type: EventContainerCreated, Pod: ps.ref, Container: c.Name, ContainerID: in.ID})
	return in
}

// restartCount is the restart count of a new instance of the container in
// a status-driven sync: one more than the newest instance's as the
// podStatus shows it, 0 when it shows none (as startContainer in
// kuberuntime_container.go reads it).
func (s *syncer) restartCount(name string) int {
	if st := findStatus(s.status.ContainerStatuses, name); st != nil {
		return st.RestartCount + 1
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
		s.publish(Event{At: s.now, Type: EventContainerExited, Pod: s.ps.ref, Container: c.Name, ContainerID: in.ID, ExitCode: workload.ExitCodeStartError})
	}
	s.failedStart(c.Name, prev, had, retryAt)
}

// Lifecycle hooks, run by the pod simulation (workload.Pod: PostStart,
// PreStop, the kill after a failed postStart hook; sim/workload/pod_hooks.go)
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

// findStatus returns the first (newest) status of the named container,
// skipping nil entries.
func findStatus(statuses []*pkgcontainer.Status, name string) *pkgcontainer.Status {
	for _, cs := range statuses {
		if cs != nil && cs.Name == name {
			return cs
		}
	}
	return nil
}

// startedByProbe reports whether the instance id of container name has
// passed its startup probe (an instance the fake does not know has not).
func (ps *podState) startedByProbe(name, id string) bool {
	if in := ps.instanceByID(name, id); in != nil {
		return in.Prober.Started()
	}
	return false
}

// maxTime returns the later of a and b.
func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// validatePod rejects what SyncPod cannot work with, naming the problem. It
// does not allocate for a valid pod.
func validatePod(pod *v1.Pod) error {
	if pod == nil {
		return errors.New("fake: pod is nil")
	}
	if pod.UID == "" {
		return fmt.Errorf("fake: pod %q has no UID", podKey(pod.Namespace, pod.Name))
	}
	spec := &pod.Spec
	n := len(spec.InitContainers) + len(spec.Containers)
	for i := range n {
		name := containerAt(spec, i).Name
		if name == "" {
			return fmt.Errorf("fake: pod %q has a container without name", podKey(pod.Namespace, pod.Name))
		}
		for j := range i {
			if containerAt(spec, j).Name == name {
				return fmt.Errorf("fake: pod %q has more than one container named %q", podKey(pod.Namespace, pod.Name), name)
			}
		}
	}
	return nil
}

// containerAt returns container i of the spec counting init containers
// first.
func containerAt(spec *v1.PodSpec, i int) *v1.Container {
	if i < len(spec.InitContainers) {
		return &spec.InitContainers[i]
	}
	return &spec.Containers[i-len(spec.InitContainers)]
}

// validateStatus rejects a status SyncPod cannot act on, naming the
// problem, where the kubelet's runtime would crash.
func validateStatus(pod *v1.Pod, st *pkgcontainer.PodStatus) error {
	for _, list := range []struct {
		field    string
		statuses []*pkgcontainer.Status
	}{{"ContainerStatuses", st.ContainerStatuses}, {"ActiveContainerStatuses", st.ActiveContainerStatuses}} {
		for i, cs := range list.statuses {
			if cs == nil {
				return fmt.Errorf("fake: SyncPod of pod %q: podStatus.%s[%d] is nil", podKey(pod.Namespace, pod.Name), list.field, i)
			}
		}
	}
	for i, ss := range st.SandboxStatuses {
		if ss == nil {
			return fmt.Errorf("fake: SyncPod of pod %q: podStatus.SandboxStatuses[%d] is nil", podKey(pod.Namespace, pod.Name), i)
		}
	}
	return nil
}
