package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

// The agent's cadence. kuscia's agent syncs a pod when its pod worker is
// handed work, and only then (kri.PodSyncNotifier): when the pod is added
// (pods_controller.go HandlePodAdditions), when its spec, metadata or
// deletion changes (HandlePodUpdates), and when the provider calls
// HandlePodSyncByUID. Its sync loop (syncLoopIteration) has no resync and
// no PLEG, and what its pod workers queue after a sync (resyncs, error
// back-offs: pod_workers.go completeWork) nothing reads. Calls that come
// while the worker is busy are folded into one more sync
// (lastUndeliveredWorkUpdate).
//
// The model does the agent's syncs of a pod while the spec waits on it
// (syncUntil, untilAsAgent, syncHolding, killUntilStopped): at once when
// one is due (the pod is new to it, or the spec changed it), else at the
// provider's next HandlePodSyncByUID for the pod. A call that comes between
// two waits is kept, folded with others into one, and served at the next
// wait. A wait that ends without its state fails; when one more sync would
// have shown the state, the message says that the provider did not call.

// syncCalls is the kri.PodSyncHandler the suite hands the provider: a
// call marks a sync of the pod as pending.
type syncCalls struct {
	mu      sync.Mutex
	pending map[types.UID]chan struct{} // one slot: calls fold into one sync
	count   map[types.UID]int
	last    map[types.UID]time.Time
}

func newSyncCalls() *syncCalls {
	return &syncCalls{pending: map[types.UID]chan struct{}{}, count: map[types.UID]int{}, last: map[types.UID]time.Time{}}
}

// HandlePodSyncByUID records the call and marks a sync of uid as pending.
// It never blocks.
func (c *syncCalls) HandlePodSyncByUID(uid types.UID) {
	c.mu.Lock()
	c.count[uid]++
	c.last[uid] = time.Now()
	ch := c.chLocked(uid)
	c.mu.Unlock()
	select {
	case ch <- struct{}{}:
	default:
	}
}

// ch is the channel on which a pending sync of uid waits.
func (c *syncCalls) ch(uid types.UID) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.chLocked(uid)
}

func (c *syncCalls) chLocked(uid types.UID) chan struct{} {
	ch := c.pending[uid]
	if ch == nil {
		ch = make(chan struct{}, 1)
		c.pending[uid] = ch
	}
	return ch
}

// take takes the pending sync of uid, if any.
func (c *syncCalls) take(uid types.UID) bool {
	select {
	case <-c.ch(uid):
		return true
	default:
		return false
	}
}

// stats returns how many calls came for uid and when the last came.
func (c *syncCalls) stats(uid types.UID) (int, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count[uid], c.last[uid]
}

var _ kri.PodSyncHandler = (*syncCalls)(nil)

// agentSeen is a pod as the agent's pod worker last synced it.
type agentSeen struct {
	pod    *v1.Pod                 // the pod handed to that sync
	status *pkgcontainer.PodStatus // the runtime status it read and published
	at     time.Time
}

// handOver gives the provider the suite's PodSyncHandler, as kuscia's
// provider factory builds every provider with the PodsController
// (provider_factory.go BuildPodProvider), before Start.
//
// A provider that does not implement kri.PodSyncNotifier is said once, at
// the first pod spec of the run, on the console (noNotifierText), and is
// the first reason of the verdict (entryNoNotifier); its specs that need
// a sync the provider would have to ask for fail at once instead of
// waiting out their timeouts (tryUntilAsAgent, killUntilStopped).
func (e *podEnv) handOver() {
	n, ok := e.p.(kri.PodSyncNotifier)
	if !ok {
		typ := fmt.Sprintf("%T", e.p)
		e.reportEntry(entryNoNotifier, typ, ginkgo.ReportEntryVisibilityNever)
		noNotifierOnce.Do(func() {
			fmt.Fprintf(os.Stdout, "\n%s\n\n", noNotifierText(typ))
		})
		return
	}
	e.notifier = true
	e.do("SetPodSyncHandler", func(context.Context) { n.SetPodSyncHandler(e.calls) })
}

// entryNoNotifier is the report entry of a pod spec whose provider does
// not implement kri.PodSyncNotifier; its value is the provider's type.
const entryNoNotifier = "kri:no-notifier"

// noNotifierOnce prints noNotifierText once per process.
var noNotifierOnce sync.Once

// noNotifierRef is what a spec that fails for the missing duty points to.
const noNotifierRef = "the provider does not implement kri.PodSyncNotifier (the duty to notify: the first reason of the verdict, and 'go doc github.com/kri-kit/testkit/kri.PodSyncNotifier')"

// noNotifierText explains the missing duty: what kuscia's agent does
// without the provider's calls, and the wrapper trap.
func noNotifierText(typ string) string {
	return fmt.Sprintf(`KRI conformance: the pod provider (%s) does not implement kri.PodSyncNotifier, so it can never call HandlePodSyncByUID. `+
		`kuscia's agent syncs a pod only when it is added, when its spec changes or its deletion is requested, and when the provider calls HandlePodSyncByUID for it: never on a timer. `+
		`Without the calls no exit, restart, readiness change or end of a back-off ever reaches the status the agent publishes, and a KillPod that returned before the containers stopped is never finished. `+
		`The verdict is "not conformant"; every spec that needs such a sync fails at once, pointing here, instead of waiting out its timeout. `+
		`To keep the duty: implement SetPodSyncHandler(h kri.PodSyncHandler), keep h and call h.HandlePodSyncByUID(pod.UID) when a pod changes (embed a podsync.Notifier from github.com/kri-kit/testkit/kri/podsync, which does this and NotifyAfter for back-offs). `+
		`If your provider has the method, a wrapper hides it: a type that embeds kri.PodProvider (or holds the provider in a field) has only the interface's methods, so it must forward SetPodSyncHandler to the provider it wraps, or be built with interceptor.NewPodProvider (github.com/kri-kit/testkit/kri/interceptor), which forwards it.`, typ)
}

// noNotifierReason is the verdict's reason for a run in which providers of
// the types typs did not implement kri.PodSyncNotifier ("" for none).
func noNotifierReason(typs []string) string {
	if len(typs) == 0 {
		return ""
	}
	return fmt.Sprintf("the pod provider (%s) does not implement kri.PodSyncNotifier: it never calls HandlePodSyncByUID, so kuscia's agent never syncs its pods again after the first sync (forward SetPodSyncHandler in a wrapper; embed a podsync.Notifier; see go doc kri.PodSyncNotifier)", strings.Join(typs, ", "))
}

// markSynced records that the agent synced pod from st.
func (e *podEnv) markSynced(pod *v1.Pod, st *pkgcontainer.PodStatus) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen[pod.UID] = agentSeen{pod: pod.DeepCopy(), status: st, at: time.Now()}
	e.last[pod.UID] = st
}

// syncedStatus returns the runtime status the agent's last sync of pod
// published, nil before the first.
func (e *podEnv) syncedStatus(pod *v1.Pod) *pkgcontainer.PodStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s, ok := e.seen[pod.UID]; ok {
		return s.status
	}
	return nil
}

// syncPods returns how many times the agent's syncs called SyncPod for
// pod.
func (e *podEnv) syncPods(pod *v1.Pod) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.syncPodCalls[pod.UID]
}

// updateDue reports why the agent syncs pod without a call of the
// provider ("" when it does not): its pod worker never saw it
// (HandlePodAdditions), or its spec, metadata or deletion changed since
// the last sync (HandlePodUpdates; a change of the status alone is a
// RECONCILE, which syncs nothing).
func (e *podEnv) updateDue(pod *v1.Pod) string {
	e.mu.Lock()
	s, ok := e.seen[pod.UID]
	e.mu.Unlock()
	switch {
	case !ok:
		return "the pod is new to the agent"
	case !apiequality.Semantic.DeepEqual(s.pod.Spec, pod.Spec):
		return "the pod's spec changed"
	case !apiequality.Semantic.DeepEqual(s.pod.ObjectMeta, pod.ObjectMeta):
		return "the pod's metadata or deletion changed"
	}
	return ""
}

// syncDue reports whether the agent syncs pod now: an update is due, or
// the provider called HandlePodSyncByUID since the last sync (the call is
// taken).
func (e *podEnv) syncDue(pod *v1.Pod) bool {
	return e.updateDue(pod) != "" || e.calls.take(pod.UID)
}

// untilAsAgent runs round, one sync of pod with the spec's checks of what
// it saw, each time kuscia's agent would sync pod, until round passes. A
// round that fails waits for the next sync: the next call of the provider.
// When within has passed the spec fails (cadenceFailure).
func (e *podEnv) untilAsAgent(pod *v1.Pod, within time.Duration, desc string, round func(g gomega.Gomega)) {
	if w := e.tryUntilAsAgent(pod, within, desc, round); !w.ok {
		e.cadenceFailure(pod, desc, within, w, round)
	}
}

// agentWait is how a wait of tryUntilAsAgent went.
type agentWait struct {
	ok     bool
	start  time.Time
	rounds int
	last   *recorded // the last round's failure
	// noNotifier: the wait ended at once, as it needed a sync only a call
	// of the provider brings and the provider does not implement
	// kri.PodSyncNotifier.
	noNotifier bool
}

// tryUntilAsAgent is untilAsAgent that reports a wait that timed out
// instead of failing the spec.
func (e *podEnv) tryUntilAsAgent(pod *v1.Pod, within time.Duration, desc string, round func(g gomega.Gomega)) agentWait {
	w := agentWait{start: time.Now()}
	timer := time.NewTimer(within)
	defer timer.Stop()
	// On the real clock a long wait says, every progressEvery, what it
	// waits for (a step: on the console under -v, in the report's timeline).
	var progress <-chan time.Time
	if e.vt == nil {
		tk := time.NewTicker(progressEvery)
		defer tk.Stop()
		progress = tk.C
	}
	var lastRound time.Time
	for {
		due := e.syncDue(pod)
		if due && w.rounds > 0 {
			// The provider keeps calling: the wait still ends in time.
			select {
			case <-timer.C:
				return w
			default:
			}
		}
		if !due {
			if !e.notifier {
				// No call can come: the wait could only time out.
				w.noNotifier = true
				return w
			}
		wait:
			for {
				select {
				case <-e.calls.ch(pod.UID):
					break wait
				case <-timer.C:
					return w
				case <-progress:
					e.sayProgress(e.waitingText(pod, desc, within, w))
				}
			}
		}
		e.spaceSyncs(&lastRound)
		w.rounds++
		e.advanced()
		if w.last, _ = attempt(round); w.last == nil {
			w.ok = true
			return w
		}
		if w.last.stopped {
			e.failHandler(fmt.Sprintf("%s: gave up after %d syncs in %s: %s%s",
				desc, w.rounds, time.Since(w.start).Round(time.Millisecond), gist(w.last.message), w.last.rest()), 3)
		}
	}
}

// progressEvery is how often a wait on the real clock says what it waits
// for (a variable for the tests).
var progressEvery = 10 * time.Second

// waitingText says what a wait of tryUntilAsAgent waits for.
func (e *podEnv) waitingText(pod *v1.Pod, desc string, within time.Duration, w agentWait) string {
	seen := "no sync yet"
	if w.last != nil {
		seen = "the last sync saw: " + gist(w.last.message)
	}
	return fmt.Sprintf("still waiting (%s of %s) for %s: kuscia's agent syncs the pod again at the provider's next HandlePodSyncByUID for it; %d syncs so far, %s; %s",
		time.Since(w.start).Round(time.Second), within, desc, w.rounds, e.callsSince(pod, w.start), seen)
}

// cadenceFailure fails a wait of untilAsAgent that timed out (or ended at
// once for a provider without kri.PodSyncNotifier). More rounds, syncs the
// agent would not have made (every poll interval for twice the stable
// window, as an agent with a resync would), tell why: when they reach the
// state, the provider did not call HandlePodSyncByUID when it should have,
// so kuscia's agent never got there.
func (e *podEnv) cadenceFailure(pod *v1.Pod, desc string, within time.Duration, w agentWait, round func(g gomega.Gomega)) {
	published := e.publishedOf(pod)
	calls := e.callsSince(pod, w.start)
	var whatIf *recorded
	extra := 0
	deadline := time.Now().Add(2 * e.st.t.Stable)
	for {
		extra++
		e.advanced()
		if whatIf, _ = attempt(round); whatIf == nil || whatIf.stopped || !time.Now().Before(deadline) {
			break
		}
		time.Sleep(e.st.t.Poll)
	}
	seen := "no sync came"
	if w.last != nil {
		seen = "the last sync saw: " + gist(w.last.message)
	}
	syncs := fmt.Sprintf("%d sync", w.rounds)
	if w.rounds != 1 {
		syncs += "s"
	}
	waited := fmt.Sprintf("in the wait (%s) the agent made %s of the pod", within, syncs)
	if w.noNotifier {
		waited = fmt.Sprintf("the spec failed at once instead of waiting out %s; the agent made %s of the pod", within, syncs)
	}
	if whatIf == nil {
		why := fmt.Sprintf("kuscia's agent never got there, because the provider did not ask for a sync: %s", calls)
		if w.noNotifier {
			why = "needs a sync of kuscia's agent that only the provider's HandlePodSyncByUID brings, and " + noNotifierRef
		}
		e.failHandler(fmt.Sprintf("%s: %s.\n\n"+
			"kuscia's agent syncs a pod again only when its provider calls HandlePodSyncByUID for it (kri.PodSyncNotifier): when a container starts, exits or restarts, a probe result changes, a back-off ends or the backend reports a change; it has no resync (pods_controller.go syncLoopIteration). "+
			"%s and publishes %s; %s. With %d more syncs, every %s, which the agent would never make, the suite reached the state: the provider's call was all that was missing.",
			desc, why, strings.ToUpper(waited[:1])+waited[1:], describeAPIStatus(published), seen, extra, e.st.t.Poll), 2)
	}
	lastSeen := "no sync came"
	if w.last != nil {
		lastSeen = "last seen: " + gist(w.last.message)
	}
	lastSeen += e.backOffHint(pod)
	duty := ""
	if n, _ := e.calls.stats(pod.UID); !e.notifier || n == 0 {
		duty = fmt.Sprintf("\n\n%s: kuscia's agent syncs a pod again only when its provider calls HandlePodSyncByUID (kri.PodSyncNotifier), and a restart, an exit or the end of a back-off reaches the pod only at such a sync.", calls)
	}
	reached := "not reached within " + within.String()
	if w.noNotifier {
		reached = fmt.Sprintf("not reached (failed at once instead of waiting out %s: %s)", within, noNotifierRef)
	}
	e.failHandler(fmt.Sprintf("%s: %s; %s%s\n\n"+
		"The agent synced the pod %d times in %s (%s); %d more syncs made after that, every %s, saw at the last%s:\n%s",
		desc, reached, lastSeen, duty, w.rounds, time.Since(w.start).Round(time.Millisecond), calls, extra, e.st.t.Poll,
		whatIf.at(), strings.TrimSpace(whatIf.message)), 2)
}

// backOffHint says, when a back-off the provider reported to the
// ReasonCache for a container of pod ends after now, that it holds the
// state past the wait ("" otherwise).
func (e *podEnv) backOffHint(pod *v1.Pod) string {
	var out []string
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		item, ok := e.rc.Get(pod.UID, c.Name)
		var be *pkgcontainer.BackoffError
		if !ok || !errors.As(item.Err, &be) || !be.BackoffTime().After(time.Now()) {
			continue
		}
		out = append(out, fmt.Sprintf("container %s is in back-off (%v) until %s from now", c.Name, item.Err, time.Until(be.BackoffTime()).Round(time.Millisecond)))
	}
	if len(out) == 0 {
		return ""
	}
	return "; " + strings.Join(out, ", ") + ": the back-off holds it past the wait (Timeouts.State), which a provider with the kubelet's back-off (10s, doubling) needs longer"
}

// callsSince says what the provider called for pod since start.
func (e *podEnv) callsSince(pod *v1.Pod, start time.Time) string {
	if !e.notifier {
		return noNotifierRef + ", so it never calls HandlePodSyncByUID"
	}
	n, last := e.calls.stats(pod.UID)
	e.mu.Lock()
	s, synced := e.seen[pod.UID]
	e.mu.Unlock()
	lastSync := "never synced"
	if synced {
		lastSync = fmt.Sprintf("its last sync was %s ago", time.Since(s.at).Round(time.Millisecond))
	}
	switch {
	case n == 0:
		return "the provider never called HandlePodSyncByUID for the pod; " + lastSync
	case last.Before(start):
		return fmt.Sprintf("the provider called HandlePodSyncByUID for the pod %d times, the last %s ago, none during the wait; %s", n, time.Since(last).Round(time.Millisecond), lastSync)
	}
	return fmt.Sprintf("the provider called HandlePodSyncByUID for the pod %d times, the last %s ago; %s", n, time.Since(last).Round(time.Millisecond), lastSync)
}

// holdAsAgent checks for window that round passes: round(g, true), which
// syncs pod, at every sync the agent makes of it meanwhile (at each call of
// the provider, and at once when an update is due), and round(g, false),
// which only reads, every poll interval (what the runtime does whether the
// provider calls or not). The first failing round fails the spec.
func (e *podEnv) holdAsAgent(pod *v1.Pod, window time.Duration, desc string, round func(g gomega.Gomega, sync bool)) {
	desc = fmt.Sprintf("pod %s: %s", podRef(pod), desc)
	start := time.Now()
	check := func(sync bool) {
		e.advanced()
		if failed, _ := attempt(func(g gomega.Gomega) { round(g, sync) }); failed != nil {
			how := "in GetPodStatus, read without a sync"
			if sync {
				how = "in a sync of the agent"
			}
			e.failHandler(fmt.Sprintf("%s: did not hold for %s; after %s (%s) saw: %s\n\nThe check failed%s:\n%s",
				desc, window, time.Since(start).Round(time.Millisecond), how, gist(failed.message),
				failed.at(), strings.TrimSpace(failed.message)), 3)
		}
	}
	end := time.NewTimer(window)
	defer end.Stop()
	poll := time.NewTicker(e.st.t.Poll)
	defer poll.Stop()
	var lastSync time.Time
	for {
		if e.syncDue(pod) {
			e.spaceSyncs(&lastSync)
			check(true)
			select {
			case <-end.C:
				return
			default:
				continue
			}
		}
		select {
		case <-e.calls.ch(pod.UID):
			e.spaceSyncs(&lastSync)
			check(true)
		case <-poll.C:
			check(false)
		case <-end.C:
			return
		}
	}
}

// spaceSyncs keeps the model's syncs of a pod at least a poll interval
// apart (*last is when the previous began; it is set to now): a provider
// that calls HandlePodSyncByUID from within every sync would otherwise
// keep the model syncing without pause, and in virtual time without the
// clock ever moving.
func (e *podEnv) spaceSyncs(last *time.Time) {
	if !last.IsZero() {
		if wait := e.st.t.Poll - time.Since(*last); wait > 0 {
			time.Sleep(wait)
		}
	}
	*last = time.Now()
}

// awaitCall waits until the provider calls HandlePodSyncByUID for pod (or
// has called since the last sync) or until the timer fires; it reports
// whether a call came.
// On the real clock it says every progressEvery what it waits for.
func (e *podEnv) awaitCall(pod *v1.Pod, timer <-chan time.Time) bool {
	var progress <-chan time.Time
	if e.vt == nil {
		tk := time.NewTicker(progressEvery)
		defer tk.Stop()
		progress = tk.C
	}
	start := time.Now()
	for {
		select {
		case <-e.calls.ch(pod.UID):
			return true
		case <-timer:
			return false
		case <-progress:
			e.sayProgress(fmt.Sprintf("still waiting (%s) for pod %s to finish terminating: something still runs after KillPod returned, and kuscia's agent tries the termination again only at the provider's next HandlePodSyncByUID for the pod; %s",
				time.Since(start).Round(time.Second), podRef(pod), e.callsSince(pod, start)))
		}
	}
}
