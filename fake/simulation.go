package fake

import (
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kri-kit/testkit/sim/workload"
)

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

// settle records that pod ps has just been brought up to date at now
// (advancePod) by a lock section that changes nothing of the fake after
// it: until that section's release of p.mu, nothing can change the pod, so
// advancing it again at now would do nothing (Advance leaves no event due
// by now, dueRetries no wake-up, and an orphan is forgotten at once).
// GetPodStatus and the staleness check settle the pod they read, and the
// lock section that follows (SyncPod's, as a pod worker calls them) skips
// the advance (advanced). The caller holds p.mu.
func (p *PodProvider) settle(ps *podState, now time.Time) {
	ps.settled, ps.settledAt = p.releases+1, now
}

// advanced brings pod ps up to date at now (advancePod) unless a lock
// section that ended last settled it at now (settle), and reports whether
// the fake still knows it. The caller holds p.mu.
func (p *PodProvider) advanced(ps *podState, now time.Time) bool {
	if ps.settled != 0 && ps.settled == p.releases && ps.settledAt.Equal(now) {
		return true
	}
	return p.advancePod(ps, now)
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
// simulation's GracePeriod, which podFor keeps), at least 2s after the
// preStop hook under WithMinimumGracePeriod; the next SyncPod restarts it as the restart
// policy (and back-off) allow, as the kubelet's computePodActions does.
// The caller holds p.mu.
func (p *PodProvider) killForProbe(ps *podState, c *workload.PodContainer, r *workload.Run, at time.Time, grace time.Duration) {
	in := instanceOf(r)
	if in == nil {
		return
	}
	p.terminate(ps, at, grace, func(x *instance) bool { return x == in })
}

// hookFunc returns what the hook of kind of run r of container c of pod ps
// does, run at at: the scripted hook, if the container's script imposes
// one, else the spec's (workload.DefaultHook). It is the pod
// simulation's HookFunc (newSim). The caller holds p.mu.
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
