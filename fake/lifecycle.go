package fake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/workload"
)

// defaultGracePeriod is the grace period when neither the caller nor the pod
// gives one, as in the API's default TerminationGracePeriodSeconds.
const defaultGracePeriod = 30 * time.Second

var errRunContainer = pkgcontainer.ErrRunContainer

// validatePod rejects what SyncPod cannot work with, naming the problem.
func validatePod(pod *v1.Pod) error {
	if pod == nil {
		return errors.New("fake: pod is nil")
	}
	if pod.UID == "" {
		return fmt.Errorf("fake: pod %q has no UID", podKey(pod.Namespace, pod.Name))
	}
	seen := map[string]bool{}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			if c.Name == "" {
				return fmt.Errorf("fake: pod %q has a container without name", podKey(pod.Namespace, pod.Name))
			}
			if seen[c.Name] {
				return fmt.Errorf("fake: pod %q has more than one container named %q", podKey(pod.Namespace, pod.Name), c.Name)
			}
			seen[c.Name] = true
		}
	}
	return nil
}

func (c *core) SyncPod(ctx context.Context, pod *v1.Pod, _ *pkgcontainer.PodStatus, reasonCache *kri.ReasonCache) error {
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
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.scripts.takeMethodFault(MethodSyncPod, podKey(pod.Namespace, pod.Name)); err != nil {
		return err
	}
	now := p.clock.Now()
	ps := p.pods[pod.UID]
	if ps == nil {
		ps = &podState{
			createdAt:    now,
			containers:   map[string]*containerHistory{},
			lastStartErr: map[string]kri.ReasonItem{},
		}
		p.pods[pod.UID] = ps
	}
	ps.ref = refOf(pod)
	ps.pod = pod.DeepCopy()
	p.byKey[ps.ref.Key()] = pod.UID
	p.advancePod(ps, now)

	var result pkgcontainer.PodSyncResult
	s := syncer{p: p, ps: ps, now: now, result: &result}
	s.sync()
	reasonCache.Update(pod.UID, result)
	return result.Error()
}

// syncer performs one SyncPod of one pod under the provider's lock.
type syncer struct {
	p      *PodProvider
	ps     *podState
	now    time.Time
	result *pkgcontainer.PodSyncResult
}

func (s *syncer) sync() {
	spec := &s.ps.pod.Spec
	// Init containers: one at a time, in order, each to success.
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		cur := s.ps.containers[c.Name].current()
		switch {
		case cur == nil:
		case cur.active():
			return
		case cur.exitCode == 0:
			continue
		case spec.RestartPolicy == v1.RestartPolicyNever:
			return // the pod has failed
		}
		if !s.start(c, true) {
			return
		}
		if cur := s.ps.containers[c.Name].current(); cur.active() || cur.exitCode != 0 {
			return
		}
	}
	// App containers: start what is missing, restart per policy.
	for i := range spec.Containers {
		c := &spec.Containers[i]
		cur := s.ps.containers[c.Name].current()
		if cur != nil && !shouldRestart(cur, spec.RestartPolicy) {
			continue
		}
		s.start(c, false)
	}
}

// shouldRestart reports whether a container whose current instance is cur
// must be started again under policy.
func shouldRestart(cur *instance, policy v1.RestartPolicy) bool {
	if cur.active() {
		return false
	}
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return cur.exitCode != 0
	default:
		return true
	}
}

// ensureSandbox returns the ready sandbox, creating one if needed.
func (s *syncer) ensureSandbox() *sandboxState {
	ps := s.ps
	if sb := ps.activeSandbox(); sb != nil {
		return sb
	}
	sb := &sandboxState{id: s.p.ids(), createdAt: s.now, ready: true}
	if len(ps.sandboxes) > 0 {
		sb.attempt = ps.sandboxes[0].attempt + 1
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
	res := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
	s.result.AddSyncResult(res)

	script := p.scripts.containers[containerKey{pod: ps.ref.Key(), name: c.Name}]
	b := workload.Of(c)
	if fault, ok := script.takeStartFault(); ok {
		s.fail(res, c.Name, fault.err, fault.message)
		return false
	}
	if workload.ImageMissing(c.Image) {
		s.fail(res, c.Name, workload.ErrImagePull, fmt.Sprintf("failed to pull image %q: dial tcp: lookup %s: no such host", c.Image, workload.MissingImageDomain))
		return false
	}
	if b.FailsToStart() {
		s.fail(res, c.Name, errRunContainer, fmt.Sprintf("exec: %q: stat %s: no such file or directory", b.MissingExecutable, b.MissingExecutable))
		return false
	}
	delete(ps.lastStartErr, c.Name)

	h := ps.containers[c.Name]
	if h == nil {
		h = &containerHistory{}
		ps.containers[c.Name] = h
		ps.names = append(ps.names, c.Name)
	}
	p.seq++
	in := &instance{
		id:             p.ids(),
		name:           c.Name,
		init:           init,
		image:          c.Image,
		hash:           pkgcontainer.HashContainer(c),
		sandboxID:      sb.id,
		seq:            p.seq,
		state:          pkgcontainer.ContainerStateCreated,
		createdAt:      s.now,
		runningAt:      s.now,
		runsForever:    b.RunsUntilKilled,
		plannedCode:    b.ExitCode,
		ignoresSIGTERM: b.IgnoresSIGTERM,
	}
	runFor := b.RunFor
	if script != nil {
		in.runningAt = s.now.Add(script.latency)
		if script.exit != nil {
			in.runsForever, runFor, in.plannedCode = false, script.exit.after, script.exit.code
		}
		in.ignoresSIGTERM = in.ignoresSIGTERM || script.ignoreTERM
	}
	if prev := h.current(); prev != nil {
		in.restartCount = prev.restartCount + 1
	}
	if !in.runsForever {
		in.exitAt = in.runningAt.Add(runFor)
	}
	h.instances = append(h.instances, in)
	if len(h.instances) > maxInstancesPerContainer {
		h.instances[0].stopTimers()
		h.instances = slices.Delete(h.instances, 0, 1)
	}
	p.publish(Event{At: s.now, Type: EventContainerCreated, Pod: ps.ref, Container: c.Name, ContainerID: in.id})
	p.schedule(in, in.runningAt)
	if !in.runsForever {
		p.schedule(in, in.exitAt)
	}
	p.advanceInstance(ps, in, s.now)
	return true
}

func (s *syncer) fail(res *pkgcontainer.SyncResult, name string, err error, message string) {
	res.Fail(err, message)
	s.ps.lastStartErr[name] = kri.ReasonItem{Err: err, Message: message}
	s.p.publish(Event{At: s.now, Type: EventContainerStartFailed, Pod: s.ps.ref, Container: name, Message: fmt.Sprintf("%v: %s", err, message)})
}

func (c *core) KillPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error {
	uid := runningPod.ID
	if uid == "" && pod != nil {
		uid = pod.UID
	}
	key := podKey(runningPod.Namespace, runningPod.Name)
	if runningPod.ID == "" && pod != nil {
		key = podKey(pod.Namespace, pod.Name)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fake: KillPod of pod %q: %w", key, err)
	}
	p := c.p
	p.mu.Lock()
	if err := p.scripts.takeMethodFault(MethodKillPod, key); err != nil {
		p.mu.Unlock()
		return err
	}
	ps := p.pods[uid]
	if ps == nil {
		p.mu.Unlock()
		return nil
	}
	grace := gracePeriod(pod, ps.pod, gracePeriodOverride)
	now := p.clock.Now()
	p.advancePod(ps, now)
	deadline := now
	for _, name := range ps.names {
		in := ps.containers[name].current()
		if in == nil || !in.active() {
			continue
		}
		p.publish(Event{At: now, Type: EventContainerKilling, Pod: ps.ref, Container: in.name, ContainerID: in.id})
		if script := p.scripts.containers[containerKey{pod: ps.ref.Key(), name: name}]; script != nil && script.ignoreTERM {
			in.ignoresSIGTERM = true
		}
		switch {
		case in.state == pkgcontainer.ContainerStateRunning && in.ignoresSIGTERM && grace > 0:
			if !in.terminating || in.killAt.After(now.Add(grace)) {
				in.terminating, in.killAt = true, now.Add(grace)
				p.schedule(in, in.killAt)
			}
			deadline = maxTime(deadline, in.killAt)
		case in.state == pkgcontainer.ContainerStateRunning && in.ignoresSIGTERM:
			p.exitNow(ps, in, now, exitCodeSIGKILL)
		default:
			p.exitNow(ps, in, now, exitCodeSIGTERM)
		}
	}
	for _, sb := range ps.sandboxes {
		if sb.ready {
			sb.ready = false
			p.publish(Event{At: now, Type: EventSandboxStopped, Pod: ps.ref, ContainerID: sb.id})
		}
	}
	if !deadline.After(now) {
		p.mu.Unlock()
		return nil
	}
	// Wait, on the provider's clock, for the grace period to end. The timer
	// is set before the lock is released, so a test that sees the container
	// terminating knows KillPod is already waiting on the clock. Its length
	// comes from a fresh reading, so that a clock stepped since now does not
	// make the wait longer than the grace period.
	wait := deadline.Sub(p.clock.Now())
	if wait <= 0 {
		p.advancePod(ps, p.clock.Now())
		p.mu.Unlock()
		return nil
	}
	timer := p.clock.NewTimer(wait)
	p.mu.Unlock()
	defer timer.Stop()
	select {
	case <-timer.C():
	case <-ctx.Done():
		return fmt.Errorf("fake: KillPod of pod %q: containers still terminating: %w", key, ctx.Err())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ps := p.pods[uid]; ps != nil {
		p.advancePod(ps, p.clock.Now())
	}
	return nil
}

// exitNow ends a container at once with code. The caller holds p.mu.
func (p *PodProvider) exitNow(ps *podState, in *instance, now time.Time, code int) {
	in.exit(now, code)
	in.stopTimers()
	p.publish(Event{At: now, Type: EventContainerExited, Pod: ps.ref, Container: in.name, ContainerID: in.id, ExitCode: code})
}

// gracePeriod picks the grace period KillPod gives a container: the
// override, else the pod's DeletionGracePeriodSeconds, else its
// TerminationGracePeriodSeconds (the pod as handed in, else as last synced),
// else 30s — the order of the kubelet's runtime (kuberuntime_container.go
// setTerminationGracePeriod), without its 2-second floor.
func gracePeriod(pod, stored *v1.Pod, override *int64) time.Duration {
	if pod == nil {
		pod = stored
	}
	secs := func(s int64) time.Duration { return time.Duration(max(s, 0)) * time.Second }
	switch {
	case override != nil:
		return secs(*override)
	case pod != nil && pod.DeletionGracePeriodSeconds != nil:
		return secs(*pod.DeletionGracePeriodSeconds)
	case pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil:
		return secs(*pod.Spec.TerminationGracePeriodSeconds)
	}
	return defaultGracePeriod
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (c *core) DeletePod(ctx context.Context, pod *v1.Pod) error {
	if pod == nil {
		return errors.New("fake: DeletePod: pod is nil")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fake: DeletePod of pod %q: %w", podKey(pod.Namespace, pod.Name), err)
	}
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.scripts.takeMethodFault(MethodDeletePod, podKey(pod.Namespace, pod.Name)); err != nil {
		return err
	}
	p.forget(pod.UID)
	return nil
}

// forget drops everything known of a pod. The caller holds p.mu.
func (p *PodProvider) forget(uid types.UID) {
	ps := p.pods[uid]
	if ps == nil {
		return
	}
	for _, h := range ps.containers {
		for _, in := range h.instances {
			in.stopTimers()
		}
	}
	delete(p.pods, uid)
	if p.byKey[ps.ref.Key()] == uid {
		delete(p.byKey, ps.ref.Key())
	}
	p.publish(Event{At: p.clock.Now(), Type: EventPodDeleted, Pod: ps.ref})
}

func (c *core) CleanupPods(ctx context.Context, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fake: CleanupPods: %w", err)
	}
	keep := sets.New[types.UID]()
	for _, pod := range pods {
		if pod != nil {
			keep.Insert(pod.UID)
		}
	}
	for _, rp := range runningPods {
		if rp != nil {
			keep.Insert(rp.ID)
		}
	}
	for uid := range possiblyRunningPods {
		keep.Insert(uid)
	}
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.scripts.takeMethodFault(MethodCleanupPods, ""); err != nil {
		return err
	}
	var orphans []types.UID
	for uid := range p.pods {
		if !keep.Has(uid) {
			orphans = append(orphans, uid)
		}
	}
	slices.Sort(orphans)
	for _, uid := range orphans {
		p.forget(uid)
	}
	return nil
}

// schedule arranges for the simulation to be advanced when the clock
// reaches at. The caller holds p.mu.
func (p *PodProvider) schedule(in *instance, at time.Time) {
	d := at.Sub(p.clock.Now())
	if d <= 0 {
		return
	}
	in.timers = append(in.timers, p.clock.AfterFunc(d, p.wake))
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
	defer p.mu.Unlock()
	now := p.clock.Now()
	uids := make([]types.UID, 0, len(p.pods))
	for uid := range p.pods {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	for _, uid := range uids {
		p.advancePod(p.pods[uid], now)
	}
}

// advancePod applies the transitions of one pod that are due at now. The
// caller holds p.mu.
func (p *PodProvider) advancePod(ps *podState, now time.Time) {
	for _, name := range ps.names {
		if in := ps.containers[name].current(); in != nil {
			p.advanceInstance(ps, in, now)
		}
	}
}

func (p *PodProvider) advanceInstance(ps *podState, in *instance, now time.Time) {
	in.advance(now, func(t EventType, in *instance) {
		e := Event{Type: t, Pod: ps.ref, Container: in.name, ContainerID: in.id}
		switch t {
		case EventContainerStarted:
			e.At = in.startedAt
		case EventContainerExited:
			e.At, e.ExitCode = in.finishedAt, in.exitCode
		}
		p.publish(e)
	})
}

func (p *PodProvider) publish(e Event) {
	p.events.publish(e)
}
