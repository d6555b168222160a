package fake

import (
	"context"
	"fmt"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/utils/clock"

	"github.com/kri-kit/testkit/kri"
)

// Option configures a PodProvider made by NewPodProvider.
type Option func(*podConfig)

type podConfig struct {
	clock               clock.WithDelayedExecution
	ids                 IDSource
	interceptors        Interceptors
	callLogSize         int
	statusDriven        bool
	crashLoopBackOff    bool
	startErrorInstances bool
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

// WithInterceptors installs hooks that wrap the fake's own behaviour; see
// Interceptors. PodProvider.SetInterceptors replaces them later.
func WithInterceptors(i Interceptors) Option {
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
// pkg/kubelet/kuberuntime/kuberuntime_manager.go), instead of from the
// fake's own, always current state. A controller that passes a stale or
// empty status then sees what the kubelet's runtime would do with it:
//
//   - a container the status shows running is left alone even if it has
//     exited since: its restart waits for a sync with a fresh status;
//   - a status without a ready sandbox (nil or empty, say, for a pod that
//     runs) makes SyncPod kill what the status shows running, create a new
//     sandbox and start the containers again; containers the status did not
//     show keep running, so the pod may run two instances of a container;
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

// Interceptors are optional hooks, one per method of kri.PodProvider, in the
// manner of controller-runtime's interceptor.Funcs. A hook that is set is
// called instead of the fake's method and receives next, the fake without
// interceptors (scripted faults included), so it can wrap the real
// behaviour: change arguments, add latency, return an error, block or panic.
// A nil hook means the fake's own behaviour.
type Interceptors struct {
	SyncPod          func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, podStatus *pkgcontainer.PodStatus, reasonCache *kri.ReasonCache) error
	KillPod          func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error
	DeletePod        func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) error
	CleanupPods      func(ctx context.Context, next kri.PodProvider, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error
	RefreshPodStatus func(next kri.PodProvider, pod *v1.Pod, podStatus *v1.PodStatus)
	GetPodStatus     func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error)
	GetPods          func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error)
	Start            func(ctx context.Context, next kri.PodProvider) error
	Stop             func(next kri.PodProvider)
}
