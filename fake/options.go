package fake

import (
	"fmt"
	"sync/atomic"

	"k8s.io/utils/clock"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// Option configures a PodProvider made by NewPodProvider.
type Option func(*podConfig)

type podConfig struct {
	clock               clock.WithDelayedExecution
	ids                 IDSource
	interceptors        interceptor.PodFuncs
	callLogSize         int
	statusDriven        bool
	crashLoopBackOff    bool
	startErrorInstances bool
	runningPodKill      bool
	imagePullBackOff    bool
	podIPs              bool
	pid1Signals         bool
	minimumGracePeriod  bool
	podSyncHandler      kri.PodSyncHandler
}

// kubelet reports whether every behaviour WithKubeletSemantics turns on is
// on.
func (cfg *podConfig) kubelet() bool {
	return cfg.statusDriven && cfg.crashLoopBackOff && cfg.startErrorInstances && cfg.runningPodKill &&
		cfg.imagePullBackOff && cfg.podIPs && cfg.pid1Signals && cfg.minimumGracePeriod
}

// DefaultCallLogSize is the number of calls a PodProvider remembers unless
// WithCallLogSize says otherwise.
const DefaultCallLogSize = 10000

// WithClock makes every simulated duration (start latency, a container's run
// time, grace periods) and every timestamp come from c. Pass a
// k8s.io/utils/clock/testing FakeClock and step it to drive the simulation
// without sleeping. The default is the real clock.
func WithClock(c clock.WithDelayedExecution) Option {
	return func(cfg *podConfig) {
		if c != nil {
			cfg.clock = c
		}
	}
}

// WithIDSource makes container and sandbox IDs come from ids. The default,
// SequentialIDs(""), already gives the same IDs on every run of a test that
// makes the same calls in the same order.
func WithIDSource(ids IDSource) Option {
	return func(cfg *podConfig) {
		if ids != nil {
			cfg.ids = ids
		}
	}
}

// WithInterceptors wraps the fake's own behaviour in funcs from the start,
// as PodProvider.SetInterceptors does, which replaces them later.
func WithInterceptors(i interceptor.PodFuncs) Option {
	return func(cfg *podConfig) { cfg.interceptors = i }
}

// WithCallLogSize bounds the call log to the latest n calls (n < 1 keeps
// DefaultCallLogSize).
func WithCallLogSize(n int) Option {
	return func(cfg *podConfig) {
		if n > 0 {
			cfg.callLogSize = n
		}
	}
}

// WithStatusDrivenSync makes SyncPod decide what to do from the podStatus
// handed to it, as the kubelet's runtime does (computePodActions in
// pkg/kubelet/kuberuntime/kuberuntime_manager.go, played by
// podactions.ActionsFromStatus), instead of from the
// fake's own, always current state. A controller that passes a stale or
// empty status then sees what the kubelet's runtime would do with it:
//
//   - a container the status shows running is left alone even if it has
//     exited since: its restart waits for a sync with a fresh status;
//   - a status without a ready sandbox (nil or empty, say, for a pod that
//     runs) makes SyncPod kill what the status shows running, stop the
//     sandboxes it shows, create a new sandbox and start the containers
//     again; a container the status did not show keeps running if its
//     sandbox is not among them (so the pod may run two instances of a
//     container), and is killed with its sandbox (exit code 137) if it is;
//   - restart counts continue from the status's RestartCount;
//   - init containers start one per sync, and a pod whose app containers
//     have all ended for good (per its restart policy) has its sandbox
//     stopped.
//
// A Created container in the status counts as starting (the kubelet's
// runtime, whose starts are synchronous, would start it again). Without
// this option SyncPod ignores the podStatus; either way the call log
// records a stale one (Call.StaleStatus).
func WithStatusDrivenSync() Option {
	return func(cfg *podConfig) { cfg.statusDriven = true }
}

// WithCrashLoopBackOff makes SyncPod refuse to restart a container still in
// crash-loop back-off, as the kubelet's runtime does (doBackOff in
// pkg/kubelet/kuberuntime/kuberuntime_manager.go), on the provider's clock:
// the first restart after an exit is immediate; each later one waits, from
// the exit, 10s, then 20s, 40s, ... up to 300s; a container that exits more
// than 10 minutes after its last restart starts over at 10s. A refused restart
// fails the container's StartContainer result with an error for which
// errors.Is(err, pkgcontainer.ErrCrashLoopBackOff) holds and errors.As
// finds the *pkgcontainer.BackoffError with the time the back-off ends;
// its Error() is "CrashLoopBackOff", the reason the kubelet shows. It is
// recorded in the ReasonCache, reported by RefreshPodStatus as Waiting
// with that reason and returned by SyncPod, and the fake publishes
// EventContainerBackOff. PodProvider.SetCrashLoopBackOff turns it on or off
// later.
func WithCrashLoopBackOff() Option {
	return func(cfg *podConfig) { cfg.crashLoopBackOff = true }
}

// WithStartErrorInstances makes a start that fails with
// pkgcontainer.ErrRunContainer (a missing executable, or FailStarts with
// that error) leave an exited instance, as the kubelet over containerd
// shows one: the runtime created the container, then could not start it
// (startContainer in pkg/kubelet/kuberuntime/kuberuntime_container.go).
// The instance has exit code 128, reason "StartError" and the failure as
// message; it counts as a run, so the next attempt has a restart count one
// higher, the restart policy applies to it (under Never the pod is done)
// and so does crash-loop back-off. Failures of other kinds (an image pull,
// say) happen before the container exists and leave no instance, with or
// without this option.
func WithStartErrorInstances() Option {
	return func(cfg *podConfig) { cfg.startErrorInstances = true }
}

// WithKubeletSemantics makes the fake behave as the kubelet's runtime
// manager (pkg/kubelet/kuberuntime over a CRI runtime) wherever a node
// agent could tell the difference. It is every option below together:
//
//   - WithStatusDrivenSync: SyncPod acts on the podStatus handed to it;
//   - WithCrashLoopBackOff: restarts wait out the crash-loop back-off;
//   - WithStartErrorInstances: a container that cannot run leaves an exited
//     instance (exit code 128, StartError);
//   - WithRunningPodKill: KillPod stops only the containers and sandboxes
//     of the running pod it is handed, and a sandbox it stops takes every
//     container left in it along (SIGKILL, exit code 137);
//   - WithImagePullBackOff: a failed pull is retried only after the image
//     back-off (10s doubling to 300s), ImagePullBackOff meanwhile;
//   - WithPodIPs: a sandbox has an IP (none for host-network pods);
//   - WithPID1Signals: a container's command runs as PID 1, which ignores
//     SIGTERM unless it installs a handler;
//   - WithMinimumGracePeriod: a container gets at least 2s after SIGTERM.
//
// The package documentation lists what the fake still does not simulate.
func WithKubeletSemantics() Option {
	return func(cfg *podConfig) {
		cfg.statusDriven, cfg.crashLoopBackOff, cfg.startErrorInstances = true, true, true
		cfg.runningPodKill, cfg.imagePullBackOff, cfg.podIPs = true, true, true
		cfg.pid1Signals, cfg.minimumGracePeriod = true, true
	}
}

// WithRunningPodKill makes KillPod stop only what the running pod handed to
// it lists, as the kubelet's runtime does (KillPod, then
// killContainersWithSyncResult and killPodWithSyncResult in
// pkg/kubelet/kuberuntime/kuberuntime_manager.go): the instances of the pod
// named by runningPod.ID whose IDs are in runningPod.Containers, and the
// sandboxes in runningPod.Sandboxes. IDs the fake does not know for that
// pod are ignored, as the runtime ignores containers that are not found. An
// agent that passes an empty running pod stops nothing. A container the
// running pod leaves out keeps running only if its sandbox does: stopping a
// sandbox the running pod lists kills every container still created or
// running in it, at once, with exit code 137 and reason Error (SIGKILL,
// without SIGTERM or grace period), as the CRI's StopPodSandbox requires
// and containerd does. Without this option KillPod stops every container
// and sandbox of the pod and does not read the lists; either way the call
// log records them (Call.RunningContainers, Call.RunningSandboxes).
func WithRunningPodKill() Option {
	return func(cfg *podConfig) { cfg.runningPodKill = true }
}

// WithImagePullBackOff makes a failed image pull back off as the kubelet's
// image manager does (pullImage in pkg/kubelet/images/image_manager.go,
// with the kubelet's image back-off of 10s doubling to 300s), on the
// provider's clock and per pod UID and image: a start whose pull fails
// (an image under workload.MissingImageDomain, or FailStarts with
// ErrImagePull or another error whose text is "ErrImagePull") fails with
// that error and starts a back-off; until it
// ends, starts of a container of that image in that pod do not pull and
// fail with ErrImagePullBackOff, with the message
// `Back-off pulling image "IMAGE": ErrImagePull: <the pull's message>`,
// consuming no scripted fault. After a failure at 0s pulls happen at 10s,
// 30s, 70s, ... Without this option every start pulls again.
func WithImagePullBackOff() Option {
	return func(cfg *podConfig) { cfg.imagePullBackOff = true }
}

// WithPodIPs gives each sandbox an IP address, as a CNI plugin does, from
// the fake range 10.88.0.0/16 (containerd's default bridge network), in the
// order sandboxes are created, starting at 10.88.0.2: GetPodStatus reports
// it in PodStatus.IPs while the sandbox is the pod's newest and ready (as
// the kubelet's runtime reads it, determinePodSandboxIPs) and in the
// sandbox's Network status. A pod with Spec.HostNetwork gets none: its
// sandbox shares the node's network, and the agent reports the node's
// addresses (package kri/podstatus does so from the pod's HostIPs). Without
// this option sandboxes carry no network status.
func WithPodIPs() Option {
	return func(cfg *podConfig) { cfg.podIPs = true }
}

// WithPID1Signals makes a container's command react to SIGTERM as PID 1 of
// a container does (workload.Behaviour.OnSIGTERM with pid1 true): a process
// without a handler ignores it and is killed with 137 when the grace period
// ends ("sleep infinity", "sh -c 'sleep 5; exit 0'"); a script that traps
// it and waits (sh -c "trap 'exit 143' TERM; sleep infinity & wait") exits
// with its handler's code at once; a command outside the vocabulary is
// taken to handle it and exits 143. Without this option the commands act as
// host processes do: without a handler SIGTERM ends them with 143.
func WithPID1Signals() Option {
	return func(cfg *podConfig) { cfg.pid1Signals = true }
}

// WithMinimumGracePeriod gives every container at least 2 seconds between
// SIGTERM and SIGKILL, whatever the override or the pod says, as the
// kubelet's runtime does (minimumGracePeriodInSeconds in
// pkg/kubelet/kuberuntime/kuberuntime_manager.go, applied in killContainer).
// Without it a grace period of 0 kills a container that ignores SIGTERM at
// once.
func WithMinimumGracePeriod() Option {
	return func(cfg *podConfig) { cfg.minimumGracePeriod = true }
}

// WithPodSyncHandler has the fake call h.HandlePodSyncByUID for a pod
// whenever something an agent publishes or acts on changes for it, as
// PodProvider.SetPodSyncHandler, which an agent calls itself, does.
func WithPodSyncHandler(h kri.PodSyncHandler) Option {
	return func(cfg *podConfig) { cfg.podSyncHandler = h }
}

// IDSource returns a new, unique ID each time it is called. It is called
// with the provider's lock held, so it must not call back into the
// provider.
type IDSource func() string

// SequentialIDs returns an IDSource that yields prefix followed by a
// zero-padded counter: prefix+"00000001", prefix+"00000002", ... It is safe
// for concurrent use.
func SequentialIDs(prefix string) IDSource {
	var n atomic.Uint64
	return func() string { return fmt.Sprintf("%s%08d", prefix, n.Add(1)) }
}

// Interceptors is interceptor.PodFuncs (package kri/interceptor) under its
// former name, kept for one release so that code written for it still
// builds (CHANGELOG.md).
//
// Deprecated: use interceptor.PodFuncs, which has the same fields. This
// alias stays through v0.1.x and goes no earlier than v0.2.0.
type Interceptors = interceptor.PodFuncs
