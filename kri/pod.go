package kri

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// PodLifecycleHandler is the pod half of a provider: it runs the containers
// of the pods bound to the node and reports their state.
//
// Unless a method says otherwise, pods and statuses handed in belong to the
// caller and must not be kept or mutated, and every object returned belongs
// to the caller: the provider must not keep a reference to it.
type PodLifecycleHandler interface {
	// SyncPod drives pod towards its spec, given podStatus, the status that
	// GetPodStatus last returned for it (nil or empty for a pod not yet
	// started). It is level-triggered and called repeatedly until the pod is
	// in the desired state, so it must be idempotent: it creates the pod's
	// sandbox if missing, runs init containers one at a time in spec order,
	// each to successful completion before the next and before any app
	// container, then starts every app container that is not running, and
	// restarts exited ones only as the pod's RestartPolicy allows. It never
	// restarts or duplicates a container that is running; a running
	// container keeps its ID.
	//
	// Every container start attempt is reported to reasonCache with
	// reasonCache.Update(pod.UID, result), where result holds a
	// pkgcontainer.StartContainer SyncResult per container (Target: the
	// container name): with Error and Message set when the start failed
	// (pkgcontainer.ErrRunContainer or a more specific error), without when
	// it succeeded, so that a later success clears an earlier failure.
	//
	// SyncPod returns nil when every action it attempted succeeded and an
	// error naming the failed actions otherwise. A nil pod, a pod without
	// UID or a nil reasonCache is rejected with an error and changes
	// nothing. A pod with two containers of the same name should be
	// rejected the same way; the API server's validation forbids such pods,
	// so a provider may rely on it instead.
	SyncPod(ctx context.Context, pod *v1.Pod, podStatus *pkgcontainer.PodStatus, reasonCache *ReasonCache) error

	// KillPod stops every container of runningPod, and its sandboxes, giving
	// each container gracePeriodOverride seconds (when non-nil), else the
	// pod's TerminationGracePeriodSeconds (when pod and the field are
	// non-nil), else 30 seconds, to exit after SIGTERM before it is killed.
	// A grace period of 0 kills at once. pod may be nil when the agent only
	// knows the running pod.
	//
	// After KillPod returns nil, GetPodStatus reports no running container
	// and no ready sandbox for the pod. Killing a pod the provider does not
	// know, or one whose containers have all stopped already, returns nil.
	KillPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error

	// DeletePod forgets pod: it releases everything the provider keeps for
	// it (stopping containers still running). Afterwards the pod is no
	// longer listed by GetPods and GetPodStatus reports it as unknown.
	// Deleting a pod the provider does not know returns nil.
	DeletePod(ctx context.Context, pod *v1.Pod) error

	// CleanupPods is called periodically with the desired pods, the running
	// pods the agent knows of and the UIDs of pods that may still be
	// running. The provider must leave every pod named by any of the three
	// untouched and may stop and forget every other pod it knows (orphans).
	// A provider that cleans up orphans stops each soon after CleanupPods
	// returns; GetPods then no longer lists it and GetPodStatus reports it as
	// unknown.
	CleanupPods(ctx context.Context, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error

	// RefreshPodStatus fills the container and init-container statuses of
	// podStatus from the provider's view of pod, in any order. It names only
	// containers of pod's spec. Each status describes the newest instance of
	// its container: Running for a running container, Terminated with its
	// exit code for an exited one, Waiting (with the reason of the last
	// failed start, if any) otherwise. Terminated should carry a reason, as
	// in GetPodStatus. Image is the image of the container's spec. ContainerID
	// is the newest instance's ID as GetPodStatus reports it (ID.String()).
	// RestartCount is the newest instance's RestartCount. Once the container
	// has restarted, LastTerminationState.Terminated describes the instance
	// the newest one replaced, with its exit code and ContainerID. For a pod
	// the provider does not know it leaves podStatus unchanged.
	RefreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus)

	// GetPodStatus returns the runtime status of pod: its UID, name and
	// namespace, its sandboxes and a status per container instance it has
	// created (several per name once containers restart). The lists are in
	// no particular order; a caller that needs the newest instance first
	// sorts them by CreatedAt, as the kubelet does
	// (pkgcontainer.SortContainerStatusesByCreationTime).
	//
	// Container IDs are non-empty, unique and stable for the life of the
	// container instance. State is Running or Exited once the instance has
	// started, and an exited instance reports its exit code. Timestamps are
	// ordered: CreatedAt is set, StartedAt is not before CreatedAt, and
	// FinishedAt is not before StartedAt. An instance that replaces an
	// exited one of the same name is created after that one's CreatedAt and
	// not before its FinishedAt. Image is the image of the container spec
	// the instance was created from, as the spec names it. RestartCount is 0
	// for the first instance of a container name and one more than that of
	// the instance it replaces for every restart. Reason of an exited
	// instance should say why it exited (by the CRI convention "Completed"
	// for exit code 0 and "Error" otherwise, or a more specific one such as
	// "OOMKilled").
	//
	// While a container of the pod runs, exactly one of SandboxStatuses is
	// ready. ActiveContainerStatuses may be left empty; when it is not, it
	// holds the instances of the ready sandbox, every running instance among
	// them, each with the ID, name and state it has in ContainerStatuses.
	//
	// For a pod the provider never saw, or has forgotten, it returns a
	// non-nil status with only ID, Name and Namespace set, and no error.
	GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error)

	// GetPods lists the pods the provider knows. With all false it lists
	// only pods that have a running container, each with only its running
	// containers; with all true it lists every pod and every container,
	// exited ones included. Each container carries the ID, name and state
	// GetPodStatus reports for it (a node agent's PLEG derives container
	// events from them). Pods and containers are in no particular order.
	GetPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error)

	// Start runs the provider's background work. It blocks until ctx is
	// done or Stop is called, then returns nil (or an error if the provider
	// failed). The agent runs it in its own goroutine; calls to the other
	// methods made before or while Start is starting must work.
	Start(ctx context.Context) error

	// Stop ends Start and returns once Start has returned (at once if Start
	// was never called). It may be called more than once; later calls are
	// harmless no-ops.
	Stop()
}

// PodProvider is the interface a provider implements to run pods. It is
// PodLifecycleHandler under the name node agents register it by.
type PodProvider interface {
	PodLifecycleHandler
}
