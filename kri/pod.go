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
//
// Pods are told apart by UID. A pod created again under the same namespace
// and name with a new UID (a StatefulSet's) is another pod: it shares no
// container, status or ReasonCache entry with the old one, which may still
// be there, and what is done to one leaves the other alone.
type PodLifecycleHandler interface {
	// SyncPod drives pod towards its spec, given podStatus, the status that
	// GetPodStatus last returned for it (nil or empty for a pod not yet
	// started). It is level-triggered and called at every sync of the pod,
	// which the provider asks for (PodSyncNotifier) until the pod is in the
	// desired state, so it must be idempotent: it creates the pod's
	// sandbox if missing, runs init containers one at a time in spec order,
	// each to successful completion before the next and before any app
	// container, then starts every app container that is not running, and
	// restarts exited ones only as the pod's RestartPolicy allows. A provider
	// may delay a restart (crash-loop back-off, as the kubelet's runtime
	// does) or leave restarts to its backend. It never restarts or
	// duplicates a container that is running; a running container keeps its
	// ID.
	//
	// A failed container start must reach the status the agent publishes,
	// in one of two ways. Every container start attempt is reported to
	// reasonCache with reasonCache.Update(pod.UID, result), where result
	// holds a pkgcontainer.StartContainer SyncResult per container (Target:
	// the container name): with Error and Message set when the start failed
	// (pkgcontainer.ErrRunContainer or a more specific error), without when
	// it succeeded, so that a later success clears an earlier failure; the
	// agent turns an entry into the container's Waiting reason. Or, as a
	// provider whose backend reports its own container statuses may,
	// RefreshPodStatus reports the container Waiting with the failure's
	// reason, and the ReasonCache is left alone. A provider whose backend
	// starts containers asynchronously may report a success at the next
	// SyncPod, the first handed a podStatus that shows the container
	// running: the agent reads an entry only for a container that is not
	// running.
	//
	// SyncPod returns nil when every action it attempted succeeded, and
	// should return an error naming the failed actions otherwise (the agent
	// only logs it). A nil pod, a pod without
	// UID or a nil reasonCache should be rejected with an error that changes
	// nothing, and so should a pod with two containers of the same name; a
	// node agent passes none of them (its pods come from the API server,
	// whose validation forbids duplicate names).
	//
	// What the pod spec asks of whoever runs the containers is the
	// provider's part too, as the kubelet's runtime manager does it for the
	// kubelet, where the provider declares the conformance suite's
	// capability for it. A container with imagePullPolicy Never whose image
	// is not present fails to start with images.ErrImageNeverPull, and one
	// whose image cannot be pulled with images.ErrImagePull (or
	// ErrImagePullBackOff while the pulls back off), staying Waiting. Env
	// values reach the container's process, with $(VAR) references in env
	// values, Command and Args expanded as the kubelet expands them ($$
	// stands for $). What a container writes to the file at its
	// terminationMessagePath becomes the Message of its exited instance;
	// with terminationMessagePolicy FallbackToLogsOnError, a container that
	// exits non-zero without writing it gets the tail of its log instead.
	//
	// A restartable init container (restartPolicy Always, a native sidecar)
	// starts in spec order, the next init container and the app containers
	// start only once it has started, and it keeps running beside them. A
	// sidecar that exits is started again, with a higher restart count,
	// whatever the pod's RestartPolicy. Once every app container has exited
	// and will not be restarted, the pod's sidecars are stopped and not
	// started again. A sidecar with a startup probe has started once that
	// probe has succeeded: what follows it, the next init container or the
	// app containers, waits for it.
	//
	// A container's postStart hook runs once the container has started and
	// before the next container of the pod starts; when it fails, the
	// container is killed, its start fails with the kubelet's
	// ErrPostStartHook (PostStartHookError), and it is started again only
	// as the pod's RestartPolicy allows.
	//
	// A pod handed in again with other CPU or memory requests or limits
	// for a running app container (an in-place resize: the same UID, the
	// resources the agent allocated) has them applied to that container,
	// as the kubelet's runtime manager applies them, where the provider
	// declares the resize capability. A container whose resize policy is
	// NotRequired for every resource that changed keeps running, with the
	// same ID and restart count. One whose resize policy is
	// RestartContainer for a resource that changed is stopped and started
	// again as a new instance with one more restart, whatever the pod's
	// RestartPolicy. A provider may apply a resize at a later SyncPod than
	// the first that hands it in.
	//
	// A container's exec probes run while it runs, as the kubelet's prober
	// runs them (initialDelaySeconds, periodSeconds, timeoutSeconds,
	// successThreshold, failureThreshold): RefreshPodStatus reports a
	// container with a readiness probe Ready only from the first success of
	// its current instance's probe (a restarted container is not Ready until
	// its new instance's probe succeeds) until it has failed
	// failureThreshold times in a row. An exec probe whose command has not
	// exited within timeoutSeconds has failed, whatever it would exit with
	// later. A liveness probe that
	// fails failureThreshold times in a row gets the container killed and
	// started again as its restart policy allows, and one that passes
	// leaves it alone. A startup probe holds the liveness and readiness
	// probes off until it succeeds, and the container is Started from then
	// on. Once KillPod has stopped a pod, its probes stop. A container's
	// HTTP GET and TCP socket probes run alike where the provider declares
	// the network-probes capability, sent to the container's port as the
	// kubelet's prober sends them: an HTTP probe succeeds on a status from
	// 200 to 399, a TCP probe when the connection is accepted.
	SyncPod(ctx context.Context, pod *v1.Pod, podStatus *pkgcontainer.PodStatus, reasonCache *ReasonCache) error
	// KillPod stops every container of runningPod, and its sandboxes. It
	// sends each running container SIGTERM and kills it once
	// gracePeriodOverride seconds have passed if it has not exited by then;
	// it does not kill a container before that grace period is over.
	// KillPod returns nil once every container it stops has exited, and no
	// sooner: as soon as the last one has, without sitting out the grace
	// period when the containers exit on SIGTERM, and never while one still
	// runs, be it one that ignores SIGTERM or one whose preStop hook is
	// still running. A provider may give at least a minimum of its own
	// instead of a shorter grace period (the kubelet's runtime never gives
	// less than 2 seconds). A node agent passes an override, at least 1,
	// computed from the pod, to every kill it is asked for; kuscia's agent
	// passes nil to the KillPod that follows a pod ending by itself, when
	// none of its containers runs any more, and the kubelet to restart a
	// pod whose cgroup vanished. When it is nil, the provider should use the
	// pod's DeletionGracePeriodSeconds, else its
	// TerminationGracePeriodSeconds, as the kubelet's runtime does. pod
	// should not be nil; a provider should still stop runningPod's
	// containers when it is.
	//
	// KillPod runs a container's preStop hook before it sends SIGTERM, and
	// the hook's time counts against the grace period: the container gets
	// what is left of it (at least the provider's minimum) once the hook
	// has ended or the grace period is over, whichever comes first. An
	// HTTP GET preStop hook is sent to the container's port before SIGTERM
	// likewise, where the provider declares the network-probes capability.
	//
	// When the agent knows only the running pod (an orphan), pod is
	// runningPod.ToAPIPod(), whose spec has only the names and images of
	// runningPod's containers (no commands, restart policy, init containers
	// or grace period): KillPod stops the containers runningPod lists.
	//
	// The restartable init containers of pod are stopped only once its app
	// containers have exited, one at a time in reverse spec order, as the
	// kubelet's runtime orders them within the grace period.
	//
	// After KillPod returns nil, GetPodStatus reports no running container
	// and no ready sandbox for the pod, and no container of the pod starts
	// again until SyncPod is called for it. Killing a pod the provider does
	// not know, or one whose containers have all stopped already, returns
	// nil.
	//
	// A provider may forget the pod as it kills it, as one that deletes the
	// pod from a backend cluster does: GetPodStatus then reports it as
	// unknown and GetPods leaves it out, which the agent takes as every
	// container gone. What it still reports of the pod is stopped: each
	// instance it reports that had started is exited, one that KillPod
	// stopped with the exit code the signal gave it (non-zero, unless its
	// own SIGTERM handler exits 0), and GetPods(true) lists the same
	// containers as GetPodStatus. An instance KillPod stopped should also
	// report when it finished: FinishedAt set, and not before its
	// StartedAt.
	KillPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error
	// DeletePod releases what the provider keeps for a pod that KillPod has
	// stopped and that is gone from the API server. Afterwards no container
	// of the pod runs again, and the pod is forgotten soon: GetPods no
	// longer lists it and GetPodStatus reports it as unknown once its dead
	// containers are collected, which a provider may do later. Deleting a
	// pod the provider does not know returns nil.
	DeletePod(ctx context.Context, pod *v1.Pod) error
	// CleanupPods is called periodically with the desired pods, the running
	// pods the agent knows of and the UIDs of pods that may still be
	// running. The provider must leave every pod named by any of the three
	// untouched and may stop and forget every other pod it knows (orphans).
	// A provider that cleans up orphans stops each soon after CleanupPods
	// returns; GetPods then no longer lists it and GetPodStatus reports it as
	// unknown.
	CleanupPods(ctx context.Context, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error
	// RefreshPodStatus brings podStatus, the API status the agent has just
	// built from GetPodStatus and its ReasonCache (as package podstatus
	// does), up to date with what only the provider knows, in place. A
	// runtime provider refines it (Ready and Started, as the kubelet's
	// prober does); a remote provider may replace container statuses with
	// its backend's. Either way it names only containers of pod's spec,
	// init containers only in InitContainerStatuses, and keeps each
	// container's state true to GetPodStatus: Running for a running
	// container, Terminated with its exit code for one whose newest
	// instance exited and will not be restarted, otherwise Terminated, or
	// Waiting with the reason of the last failed start. Terminated should
	// carry a reason, as in GetPodStatus. It keeps ContainerID,
	// RestartCount and LastTerminationState true to GetPodStatus:
	// ContainerID is the newest instance's, RestartCount is at least the
	// newest instance's, and once the container has restarted
	// LastTerminationState.Terminated is its last finished run before the
	// current one, with its exit code. Image should stay the spec's image or
	// the runtime's name for it. Resources of a running container should
	// stay true to GetPodStatus: the CPU and memory it runs with. For a
	// pod the provider does not know it leaves podStatus unchanged, but for
	// the Ready and Started of its containers, which it may set as the
	// kubelet's prober does. A running restartable init container is
	// reported in InitContainerStatuses as Running, started and, without a
	// readiness probe, ready. A running app container without a readiness
	// probe is reported Ready once it runs, whether the provider runs
	// probes or not: the agent sets no Ready of its own.
	RefreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus)
	// GetPodStatus returns the runtime status of pod: its UID, name and
	// namespace, its sandboxes and a status per container instance it
	// reports. The lists are in no particular order; a caller that needs the
	// newest instance first sorts them by CreatedAt, as the kubelet does
	// (pkgcontainer.SortContainerStatusesByCreationTime).
	//
	// A runtime provider reports every instance it has not yet collected
	// (several per name once containers restart); a remote provider may
	// report only the newest instance of each name. Either way, the newest
	// instance of each name is there.
	//
	// Container IDs are non-empty, unique and stable for the life of the
	// container instance. State is Running or Exited once the instance has
	// started, and an exited instance reports its exit code. Timestamps are
	// ordered: CreatedAt is set, StartedAt is not before CreatedAt, and
	// FinishedAt is not before CreatedAt, nor before StartedAt for an
	// instance that ran until it was stopped; an instance that never started
	// (its start failed) may leave StartedAt unset, zero or the Unix epoch
	// as a CRI runtime reports it. An instance that exits as soon as it
	// starts may report a FinishedAt a little before its StartedAt: a CRI
	// runtime records StartedAt when its start call returns and FinishedAt
	// when the process exited, which can come first (containerd's
	// StartContainer does). An instance that replaces an exited one of the
	// same name is created after that one's CreatedAt and not before its
	// FinishedAt. Image should name the image the instance was created from:
	// the spec's reference or the runtime's normalised form of it.
	// RestartCount is 0 for the first instance of a container name and one
	// more than that of the instance it replaces for every restart, so it
	// never decreases from one call to the next. Reason of
	// an exited instance should say why it exited (by the CRI convention
	// "Completed" for exit code 0 and "Error" otherwise, or a more specific
	// one such as "OOMKilled"). Once an instance has exited, its ID, exit
	// code and timestamps stay as they are for as long as it is reported.
	// A provider that resizes containers (see SyncPod) reports in the
	// Resources of each instance the CPU and memory it runs with: at least
	// its CPU request or limit and its memory request or limit, the new
	// ones once it has been resized.
	//
	// A runtime provider reports the pod's sandboxes, one of them ready
	// while a container of the pod runs; a remote provider may report none.
	// After KillPod, no sandbox is ready. ActiveContainerStatuses may be
	// left empty; when it is not, it should hold the instances of the ready
	// sandbox, every running instance among them, each with the ID, name and
	// state it has in ContainerStatuses.
	//
	// For a pod the provider never saw, or has forgotten, it returns a
	// non-nil status with only ID, Name and Namespace set, and no error.
	GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error)
	// GetPods lists the pods the provider knows. With all false it lists
	// every pod that has a running container (an init container counts) or
	// a ready sandbox, each with its running containers (and may list its
	// exited ones too). With all true it should list every pod and every
	// container, exited ones included.
	// Each container carries the ID, name and state GetPodStatus reports for
	// it (a node agent's PLEG derives container events from them). Pods and
	// containers are in no particular order.
	GetPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error)
	// Start runs the provider's background work. The agent runs it once, in
	// its own goroutine; calls to the other methods made before or while
	// Start is starting must work. It blocks until Stop is called, then
	// returns nil (or an error if the provider failed); it should also
	// return once ctx is done.
	Start(ctx context.Context) error
	// Stop ends Start and returns once Start has returned. The agent calls
	// it once, after Start; it should also return at once when Start was
	// never called, and later calls should be harmless no-ops.
	Stop()
}

// PodProvider is the interface a provider implements to run pods. It is
// PodLifecycleHandler under the name node agents register it by.
type PodProvider interface {
	PodLifecycleHandler
}
