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
type PodSyncNotifier interface {
	// SetPodSyncHandler keeps h, the agent's handler, for the provider's
	// calls of h.HandlePodSyncByUID.
	SetPodSyncHandler(h PodSyncHandler)
}

// PodSyncHandlerFunc adapts a function to PodSyncHandler.
type PodSyncHandlerFunc func(uid types.UID)

// HandlePodSyncByUID calls f(uid).
func (f PodSyncHandlerFunc) HandlePodSyncByUID(uid types.UID) { f(uid) }
