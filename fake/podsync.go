package fake

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kri-kit/testkit/kri"
)

// Notifications to the node agent (kri.PodSyncNotifier). The fake tells
// the agent's handler that a pod needs a sync on every transition it
// publishes (events.go) but EventPodDeleted, on failed or refused starts
// (failedStart) and when they are due to be tried again (notifyAt), and
// when a KillPod has stopped the pod's containers.
//
// Transitions happen under p.mu; the handler is never called under it. A
// transition appends the pod to p.pending, and unlock, which releases p.mu
// everywhere in the fake, calls the handler for each pod pending then, in
// the goroutine that held the lock: the caller of SyncPod or KillPod for
// what its call did, the Start loop for what time brought (its wake-ups
// run advanceAll), a reader (GetPodStatus, Snapshot, ...) that brought a
// pod up to date first.
//
// A back-off's end is a wake-up of the fake (p.wake, as for a container's
// exit), which notifies when advancePod passes its time, rather than a
// podsync.Notifier.NotifyAfter timer: on a clocktesting.FakeClock, Step
// runs timer callbacks with the clock's lock held, so a handler called from
// one could not read the clock (GetPodStatus does), and the Notifier's
// timer callback takes the Notifier's lock, which NotifyAfter holds while
// it calls the clock.

// podWorkerBackOff is how long after a failed start, without a back-off of
// its own, the fake notifies the agent to try again: the kubelet's
// backOffPeriod (pkg/kubelet/kubelet.go), after which its pod workers sync
// a pod whose sync failed (pod_workers.go completeWork), where kuscia's
// agent queues the retry in a queue nothing reads.
const podWorkerBackOff = 10 * time.Second

// plegRelistPeriod is the kubelet's genericPlegRelistPeriod
// (pkg/kubelet/kubelet.go): its PLEG, whose events kuscia's CRIProvider
// relays to the agent, sees container changes at most once a second.
const plegRelistPeriod = time.Second

// paceSyncNotification keeps the changes of a SyncPod of pod ps that
// restarted a container (restarted) from notifying the agent at once when
// such a SyncPod's notification of the pod came, or is due, less than
// plegRelistPeriod before, without crash-loop back-off: the notification
// comes when that period has passed. Without back-off every sync restarts
// an exited container, so a container that exits as it starts (exit 1, a
// liveness probe that fails at once) would otherwise keep an agent that
// syncs on every call restarting it in a loop, without time passing; so
// paced, it restarts once a second. With crash-loop back-off the back-off
// bounds the restarts, and SyncPod's changes notify at once; so do those
// of a SyncPod that restarted nothing (a first start, a kill after a
// failed postStart hook). The caller holds p.mu.
func (p *PodProvider) paceSyncNotification(ps *podState, now time.Time, restarted bool) {
	if !restarted || p.backOff != nil || !slices.Contains(p.pending, ps.ref.UID) {
		return
	}
	if next := ps.syncNotifiedAt.Add(plegRelistPeriod); !ps.syncNotifiedAt.IsZero() && now.Before(next) {
		p.pending = slices.DeleteFunc(p.pending, func(uid types.UID) bool { return uid == ps.ref.UID })
		p.notifyAt(ps, next, now)
		ps.syncNotifiedAt = next
		return
	}
	ps.syncNotifiedAt = now
}

// SetPodSyncHandler makes the fake call h.HandlePodSyncByUID(pod UID)
// whenever something the agent publishes or acts on changes for a pod, as
// kri.PodSyncNotifier asks (see "Notifying the agent" in the package
// documentation); a nil h ends the calls. The calls come from the goroutine
// that made the change (a call of the fake, or Start's loop for what time
// brings), never while the fake holds its lock: h may call the fake back.
// After Stop the fake calls no handler.
func (p *PodProvider) SetPodSyncHandler(h kri.PodSyncHandler) {
	p.chain().(kri.PodSyncNotifier).SetPodSyncHandler(h)
}

// SetPodSyncHandler is the fake's own SetPodSyncHandler, without
// interceptors.
func (c *core) SetPodSyncHandler(h kri.PodSyncHandler) {
	p := c.p
	p.notifier.SetPodSyncHandler(h)
	p.mu.Lock()
	p.notifying = h != nil && !p.notifyStopped
	if !p.notifying {
		p.pending = nil
	}
	p.unlock()
}

// unlock releases p.mu and then notifies the agent of the pods whose
// changes are pending. Every release of p.mu goes through it.
func (p *PodProvider) unlock() {
	uids := p.pending
	p.pending = nil
	p.releases++
	p.mu.Unlock()
	for i, uid := range uids {
		if !slices.Contains(uids[:i], uid) {
			p.notifier.Notify(uid)
		}
	}
}

// retryTimer is a wake-up at which the fake notifies the agent of a pod:
// the end of a back-off, or a start due to be tried again.
type retryTimer struct {
	at    time.Time
	timer clock.Timer
}

// notifyAt arranges for the agent to be notified of pod ps when the clock
// reaches at (at the next unlock when at has come). One wake-up per moment
// and pod. The caller holds p.mu.
func (p *PodProvider) notifyAt(ps *podState, at, now time.Time) {
	if !p.notifying {
		return
	}
	if !at.After(now) {
		p.notifyPod(ps.ref.UID)
		return
	}
	for _, r := range ps.retries {
		if r.at.Equal(at) {
			return
		}
	}
	ps.retries = append(ps.retries, retryTimer{at: at, timer: p.clock.AfterFunc(at.Sub(now), p.wake)})
}

// dueRetries notifies the agent of pod ps if one of its wake-ups has come
// by now. The caller holds p.mu.
func (p *PodProvider) dueRetries(ps *podState, now time.Time) {
	if len(ps.retries) == 0 {
		return
	}
	due := false
	ps.retries = slices.DeleteFunc(ps.retries, func(r retryTimer) bool {
		if r.at.After(now) {
			return false
		}
		due = true
		r.timer.Stop()
		return true
	})
	if due {
		p.notifyPod(ps.ref.UID)
	}
}

// stopRetries stops the wake-ups of pod ps: it is forgotten, or the fake
// stops. The caller holds p.mu.
func (ps *podState) stopRetries() {
	for _, r := range ps.retries {
		r.timer.Stop()
	}
	ps.retries = nil
}

// forgetNotifications drops what the fake was to tell the agent of pod ps,
// which it forgets. The caller holds p.mu.
func (p *PodProvider) forgetNotifications(ps *podState) {
	ps.stopRetries()
	p.pending = slices.DeleteFunc(p.pending, func(uid types.UID) bool { return uid == ps.ref.UID })
}

// failedStart notifies the agent of a start of container name that failed
// or was refused (a back-off), which RefreshPodStatus now reports as
// lastStartErr holds it: at once when that differs from what it reported
// before (prev, had), so that the agent publishes the new reason, and in
// any case at retryAt, when the start is due to be tried again, so that the
// agent syncs then. A start that fails the same way at every sync is thus
// tried once per back-off (or podWorkerBackOff), not in a loop. The caller
// holds p.mu.
func (s *syncer) failedStart(name string, prev kri.ReasonItem, had bool, retryAt time.Time) {
	item := s.ps.lastStartErr[name]
	if !had || prev.Message != item.Message || reasonOf(prev.Err) != reasonOf(item.Err) {
		s.p.notifyPod(s.ps.ref.UID)
	}
	s.p.notifyAt(s.ps, retryAt, s.now)
}

func reasonOf(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// stopNotifying ends the notifications for good: the fake's Stop.
func (p *PodProvider) stopNotifying() {
	p.mu.Lock()
	p.notifying, p.notifyStopped, p.pending = false, true, nil
	for _, ps := range p.pods {
		ps.stopRetries()
	}
	p.unlock()
	p.notifier.Stop()
}
