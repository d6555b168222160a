// Package kri defines KRI, the small interface set through which a node agent
// in the virtual-kubelet family hands pod and node work to a pluggable
// provider, and the ReasonCache in which container-start failures are kept.
//
// The interfaces use the upstream kubelet runtime types from
// k8s.io/kubernetes/pkg/kubelet/container, so that a provider speaks the same
// language as the kubelet's own container runtime layer.
//
// The doc comment of every method is its contract: who calls it, when, and
// what must hold once it has returned. The conformance package checks these
// contracts against a provider; the fake package implements them in memory.
//
// # Calling model
//
// A node agent drives a PodProvider the way the kubelet's pod workers drive a
// container runtime:
//
//   - Start is run once, in its own goroutine, for the lifetime of the
//     provider; Stop ends it.
//   - SetPodSyncHandler (PodSyncNotifier) hands the provider the agent's
//     PodSyncHandler before Start.
//   - For each pod, a sync reads GetPodStatus, publishes the status built
//     from it and calls SyncPod with that status. kuscia's agent syncs a pod
//     when it is added, when its spec changes or its deletion is requested,
//     and when the provider calls HandlePodSyncByUID, never on a timer: the
//     provider owns the cadence (PodSyncNotifier says when it must call).
//     SyncPod is level-triggered: it compares the pod spec with the observed
//     status and performs only what is missing.
//   - To stop a pod, KillPod is called with the running pod built from its
//     status (pkgcontainer.ConvertPodStatusToRunningPod), then DeletePod once
//     the pod is gone from the API server.
//   - Periodically, CleanupPods is called with the desired set of pods so that
//     the provider can drop what is no longer wanted.
//
// A provider must be safe for concurrent use. Methods are called concurrently
// for different pods. For one pod, SyncPod, KillPod and DeletePod come from
// the pod's single worker, one at a time, while GetPodStatus, GetPods,
// RefreshPodStatus and CleanupPods may run alongside them.
//
// Methods that take a context must return promptly once the context is done,
// with nil or an error. The error need not carry the context's: a remote
// call reports it as a gRPC status, and the kubelet's runtime manager turns
// that into a message of its own; the agent logs the error and tries again.
package kri
