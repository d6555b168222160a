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
	"github.com/kri-kit/testkit/sim/workload"
)

func (c *core) KillPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error {
	uid := runningPod.ID
	if uid == "" && pod != nil {
		uid = pod.UID
	}
	ns, name := runningPod.Namespace, runningPod.Name
	if runningPod.ID == "" && pod != nil {
		ns, name = pod.Namespace, pod.Name
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fake: KillPod of pod %q: %w", podKey(ns, name), err)
	}
	p := c.p
	p.mu.Lock()
	defer p.unlock()
	if err := p.scripts.takeMethodFault(MethodKillPod, ns, name); err != nil {
		return err
	}
	ps := p.pods[uid]
	if ps == nil {
		return nil
	}
	now := p.clock.Now()
	if !p.advancePod(ps, now) {
		return nil
	}
	pickContainer, pickSandbox := p.runningPodPicks(runningPod)
	deadline := p.terminate(ps, now, gracePeriod(pod, ps.pod, gracePeriodOverride), pickContainer)
	p.stopSandboxes(ps, now, pickSandbox)
	// The exit of each container it stops notifies the agent (podsync.go),
	// the last one's once they have all stopped, whether KillPod waits for
	// it or returns early.
	if err := p.waitLocked(ctx, deadline); err != nil {
		return fmt.Errorf("fake: KillPod of pod %q: containers still terminating: %w", podKey(ns, name), err)
	}
	if ps := p.pods[uid]; ps != nil {
		p.advancePod(ps, p.clock.Now())
	}
	return nil
}

// runningPodPicks returns the selectors of terminate and stopSandboxes for
// a KillPod of runningPod: nil (everything) by default, the listed IDs with
// WithRunningPodKill.
func (p *PodProvider) runningPodPicks(runningPod pkgcontainer.Pod) (func(*instance) bool, func(*sandboxState) bool) {
	if !p.runningPodKill {
		return nil, nil
	}
	listed := func(list []*pkgcontainer.Container, id string) bool {
		for _, c := range list {
			if c != nil && c.ID.ID == id {
				return true
			}
		}
		return false
	}
	return func(in *instance) bool { return listed(runningPod.Containers, in.ID) },
		func(sb *sandboxState) bool { return listed(runningPod.Sandboxes, sb.id) }
}

// terminate stops every active instance of the pod that pick selects
// (every one when pick is nil) at now with grace before SIGKILL, as the
// pod simulation stops them (workload.Pod.StopRuns: EventContainerKilling,
// the preStop hook, then SIGTERM; the restartable init containers last,
// the last in spec order first, each in its turn, given what is left of
// grace then, at least 2s under WithMinimumGracePeriod), and returns when
// the last of them will have exited (now if none is left running). The
// caller holds p.mu.
func (p *PodProvider) terminate(ps *podState, now time.Time, grace time.Duration, pick func(*instance) bool) time.Time {
	deadline := ps.sim.StopRuns(now, grace, func(c *workload.PodContainer, r *workload.Run) bool {
		in := instanceOf(r)
		return in != nil && in.active() && (pick == nil || pick(in))
	})
	p.armWake(ps, now)
	return deadline
}

// stopSandboxes stops the ready sandboxes of the pod that pick selects
// (every one when pick is nil), as a CRI runtime's StopPodSandbox does: a
// container still created or running in such a sandbox that no kill is
// stopping already (one the running pod handed to KillPod left out, say)
// is killed with it at once, exit code 137 (reason Error), with no SIGTERM,
// preStop hook or grace period, as containerd stops the containers of a
// sandbox. Containers a kill is stopping keep their grace period. The
// caller holds p.mu.
func (p *PodProvider) stopSandboxes(ps *podState, now time.Time, pick func(*sandboxState) bool) {
	for _, sb := range ps.sandboxes {
		if !sb.ready || (pick != nil && !pick(sb)) {
			continue
		}
		for in := range ps.instances() {
			if in.sandboxID == sb.id && in.active() && !in.terminating() {
				ps.sim.ExitRun(ps.sim.Container(in.name()), in.Run, now, workload.ExitCodeSIGKILL)
			}
		}
		sb.ready = false
		p.publish(Event{At: now, Type: EventSandboxStopped, Pod: ps.ref, ContainerID: sb.id})
	}
}

// waitLocked waits, on the provider's clock, until deadline: the end of a
// grace period that terminate returned. The caller holds p.mu; waitLocked
// releases it while waiting and holds it again when it returns. The timer
// is set before the lock is released, so a test that sees a container
// terminating knows the wait has begun. Its length comes from a fresh
// reading, so that a clock stepped since deadline was computed does not
// make the wait longer than the grace period.
func (p *PodProvider) waitLocked(ctx context.Context, deadline time.Time) error {
	wait := deadline.Sub(p.clock.Now())
	if wait <= 0 {
		return nil
	}
	timer := p.clock.NewTimer(wait)
	p.unlock()
	defer p.mu.Lock()
	defer timer.Stop()
	select {
	case <-timer.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// minimumGracePeriod is the kubelet runtime's minimumGracePeriodInSeconds,
// the pod simulation's MinimumGracePeriod under WithMinimumGracePeriod
// (newSim): the floor after the preStop hook.
const minimumGracePeriod = kri.RuntimeMinimumGracePeriodSeconds * time.Second

// gracePeriod picks the grace period KillPod gives a container: the
// override, else the pod's DeletionGracePeriodSeconds, else its
// TerminationGracePeriodSeconds (the pod as handed in, else as last synced),
// else 30s: the order of the kubelet's runtime (kuberuntime_container.go
// setTerminationGracePeriod and killContainer; workload.GracePeriod). The
// 2-second floor of WithMinimumGracePeriod is the pod simulation's, after
// the preStop hook.
func gracePeriod(pod, stored *v1.Pod, override *int64) time.Duration {
	if pod == nil {
		pod = stored
	}
	return workload.GracePeriod(pod, override)
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
	defer p.unlock()
	if err := p.scripts.takeMethodFault(MethodDeletePod, pod.Namespace, pod.Name); err != nil {
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
	ps.stopWake()
	p.forgetBackOff(ps)
	p.forgetImageBackOff(ps)
	p.forgetNotifications(ps)
	delete(p.pods, uid)
	if p.byKey[ps.key] == uid {
		delete(p.byKey, ps.key)
		p.byKeyGen++
	}
	p.publish(Event{At: p.clock.Now(), Type: EventPodDeleted, Pod: ps.ref})
}

func (c *core) CleanupPods(ctx context.Context, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fake: CleanupPods: %w", err)
	}
	keep := kri.PodsToKeep(pods, runningPods, possiblyRunningPods)
	p := c.p
	p.mu.Lock()
	defer p.unlock()
	if err := p.scripts.takeMethodFault(MethodCleanupPods, "", ""); err != nil {
		return err
	}
	var orphans []types.UID
	for uid := range p.pods {
		if !keep.Has(uid) {
			orphans = append(orphans, uid)
		}
	}
	slices.Sort(orphans)
	now := p.clock.Now()
	for _, uid := range orphans {
		ps := p.pods[uid]
		if !p.advancePod(ps, now) {
			continue
		}
		// As the kubelet's pod workers kill a pod no longer desired, with
		// the grace period of its spec (killContainer in
		// pkg/kubelet/kuberuntime/kuberuntime_container.go), then forget it.
		p.terminate(ps, now, gracePeriod(nil, ps.pod, nil), nil)
		p.stopSandboxes(ps, now, nil)
		ps.orphan = true
		p.advancePod(ps, now)
	}
	return nil
}
