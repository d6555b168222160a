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
	clock        clock.WithDelayedExecution
	ids          IDSource
	interceptors Interceptors
	callLogSize  int
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
