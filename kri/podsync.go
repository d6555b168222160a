package kri

import "k8s.io/apimachinery/pkg/types"

// PodSyncHandler is the part of the node agent a provider tells that a pod
// needs a sync. It is the one method of kuscia's framework.SyncHandler
// (pkg/agent/framework/pods_controller.go) a provider calls, and kuscia's
// PodsController implements it: kuscia's provider factory
// (provider_factory.go BuildPodProvider) hands every provider the
// controller as its PodSyncHandler.
//
// HandlePodSyncByUID asks the agent to sync the pod of uid: its pod worker
// reads GetPodStatus, publishes the status built from it and, for a pod
// that is not terminal, calls SyncPod; for a pod being terminated it tries
// the termination again. A uid the agent does not know (a pod gone from
// the API server, an orphan) is ignored. It returns at once: the sync runs
// in the pod's worker, and calls that come while it runs are folded into
// one more sync after it. It may be called from any goroutine, also from
// within a call of the provider's methods.
type PodSyncHandler interface {
	HandlePodSyncByUID(uid types.UID)
}

// PodSyncNotifier is implemented by a provider that keeps its duty to tell
// the agent when a pod needs a sync, which every provider run by kuscia's
// agent has.
//
// kuscia's agent syncs a pod when the pod is added to the node, when its
// spec changes or its deletion is requested, and when the provider calls
// HandlePodSyncByUID; never on a timer. Its sync loop
// (pods_controller.go syncLoopIteration) reads only config updates and
// housekeeping, which cleans up but syncs no pod, and its pod workers
// queue their resyncs and error back-offs where nothing reads them. So
// the provider owns the agent's cadence: a container that exits, a
// restart, a readiness change reach the status the agent publishes only
// when the provider calls HandlePodSyncByUID for the pod, and so does a
// start that failed and is due to be tried again.
//
// The agent calls SetPodSyncHandler once, before Start and before any
// other method; h is never nil. From then on the provider calls
// h.HandlePodSyncByUID(pod.UID) soon after anything the agent publishes or
// acts on changes for a pod it was handed by SyncPod or KillPod:
//
//   - a container was created, started, exited or restarted, or a sandbox
//     stopped (what a kubelet's PLEG reports as container events: kuscia's
//     CRIProvider relays its PLEG's);
//   - a probe result changed a container's Started or Ready (kuscia's
//     CRIProvider relays its prober's readiness and startup updates);
//   - a back-off that made SyncPod fail or skip a start has ended: a
//     crash-loop back-off (CrashLoopBackOff), an image pull back-off
//     (ImagePullBackOff), or any failed start the provider will retry, so
//     that the agent calls SyncPod again and publishes the outcome;
//   - a remote backend reported a change of the pod (kuscia's K8sProvider
//     relays its informer's updates);
//   - a KillPod that returned before every container had stopped has seen
//     them stop, so that the agent finishes the termination.
//
// The duty holds for each pod on its own: a KillPod under way for one pod,
// which may run out a grace period, neither drops nor holds back the calls
// for another, since the agent kills a pod in that pod's worker while the
// workers of the other pods go on syncing them.
//
// Calls that change nothing are harmless, and the provider may fold
// several changes into one call, or call from another goroutine a little
// later; it should not call in a busy loop. A provider that never calls
// leaves a pod as the agent first published it: Pending, its containers
// Waiting with ContainerCreating, for as long as the pod lives.
//
// What a migrating provider asks (package podsync's Notifier does the
// bookkeeping; the examples show a poll-only backend and a wrapper):
//
//   - A backend that can only be polled: the provider polls it itself, on a
//     ticker its Start runs, since nothing else will, and calls for each
//     pod whose state as GetPodStatus reports it (container IDs, states,
//     exit codes, restart counts, Started, Ready) changed since the last
//     poll, and only for those. The interval is how late a change reaches
//     the agent: about a second for a local backend (the kubelet's PLEG
//     relists every second), a few seconds for a remote one; the
//     conformance suite waits a minute at most.
//   - A start the provider retries at every sync, with no back-off of its
//     own: SyncPod reports the failure (ReasonCache, or its error) and the
//     provider asks for the sync that retries, NotifyAfter(uid, d) with the
//     delay it wants before the retry: the kubelet's back-off (10s,
//     doubling to 5m) or a fixed one of its own, never a call from within
//     SyncPod itself, which would have the agent sync without pause.
//   - A change the provider can compute in advance (a simulated container
//     that exits after a known time, a deadline): NotifyAfter for that time
//     is the call; a provider that observes the change as well (a real
//     process exits) calls Notify when it does, for the two may differ.
//   - A wrapper: a provider that wraps another by embedding PodProvider (or
//     holding it in a field) has only the interface's methods and hides
//     the inner provider's SetPodSyncHandler, so the agent sees a provider
//     that never calls. The wrapper forwards SetPodSyncHandler to the inner
//     provider (see the example), or is built with
//     interceptor.NewPodProvider (package kri/interceptor), which does.
//   - podsync.Notifier's Stop is not the provider's: it only cancels the
//     pending NotifyAfter calls. A provider that embeds a Notifier has
//     its own Stop (which ends Start, PodLifecycleHandler) and calls the
//     Notifier's from it; one that defined none would get the Notifier's
//     as its PodLifecycleHandler.Stop, and its Start would never end.
//
// The conformance suite says at the start of a run when the provider does
// not implement PodSyncNotifier, and fails at once every spec that needs a
// sync only the provider's call brings.
type PodSyncNotifier interface {
	// SetPodSyncHandler keeps h, the agent's handler, for the provider's
	// calls of h.HandlePodSyncByUID.
	SetPodSyncHandler(h PodSyncHandler)
}

// PodSyncHandlerFunc adapts a function to PodSyncHandler.
type PodSyncHandlerFunc func(uid types.UID)

// HandlePodSyncByUID calls f(uid).
func (f PodSyncHandlerFunc) HandlePodSyncByUID(uid types.UID) { f(uid) }
