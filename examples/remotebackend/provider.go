package remotebackend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podsync"
	"github.com/kri-kit/testkit/sim/workload"
)

// RuntimeName is the Type of the container IDs the provider reports
// ("remotebackend://<run ID>").
const RuntimeName = "remotebackend"

// Provider is a kri.PodProvider in front of a Service. It keeps nothing of
// its own about pods: every answer is the Service's, mapped to the KRI
// types. It is safe for concurrent use.
//
// It is a kri.PodSyncNotifier by its embedded podsync.Notifier: it watches
// the Service (Service.Watch) and calls the agent's HandlePodSyncByUID for
// every pod whose view the Service reports changed, as kuscia's
// K8sProvider relays its backend informer's updates.
type Provider struct {
	podsync.Notifier

	svc         *Service
	cancelWatch func()

	mu      sync.Mutex
	started bool
	stopped bool
	stop    chan struct{} // closed by the first Stop
	done    chan struct{} // closed when Start returns
}

var (
	_ kri.PodProvider     = (*Provider)(nil)
	_ kri.PodSyncNotifier = (*Provider)(nil)
)

// New returns a Provider in front of svc. Several providers may share one
// Service; each sees every pod of it.
func New(svc *Service) (*Provider, error) {
	if svc == nil {
		return nil, errors.New("remotebackend: New needs a Service, got nil")
	}
	p := &Provider{svc: svc, stop: make(chan struct{}), done: make(chan struct{})}
	// Calls before SetPodSyncHandler, and after Stop, do nothing.
	p.cancelWatch = svc.Watch(p.Notify)
	return p, nil
}

// Start runs the Service's loop (Service.Run) until Stop is called or ctx
// is done, then returns nil. Calls made before Start work: the Service is
// evaluated on every call. A second Start, or one after Stop, returns at
// once (an error for the former, nil for the latter).
func (p *Provider) Start(ctx context.Context) error {
	p.mu.Lock()
	switch {
	case p.stopped:
		p.mu.Unlock()
		return nil
	case p.started:
		p.mu.Unlock()
		return errors.New("remotebackend: Start called twice")
	}
	p.started = true
	p.mu.Unlock()
	defer close(p.done)
	_ = p.svc.run(ctx, p.stop) // only ever ctx's error
	return nil
}

// Stop ends Start and returns once Start has returned; without Start it
// returns at once, and later calls are no-ops. It ends the watch of the
// Service: the agent's PodSyncHandler is called no more. The Service and
// its pods are left alone: a remote backend's pods outlive the agent in
// front of it, as in kuscia's K8sProvider, whose Stop does nothing.
func (p *Provider) Stop() {
	p.mu.Lock()
	if !p.stopped {
		p.stopped = true
		close(p.stop)
		p.Notifier.Stop()
		p.cancelWatch()
	}
	started := p.started
	p.mu.Unlock()
	if started {
		<-p.done
	}
}

// SyncPod submits pod to the Service, or resubmits it (Service.Apply), and
// reports to reasonCache the outcome of the latest start of every container
// the Service has tried to start: a success, clearing an earlier failure; a
// failed start (pkgcontainer.ErrRunContainer for a missing executable,
// workload.ErrImagePull for an image that cannot be pulled,
// workload.ErrPostStartHook for a run killed because its postStart hook
// failed); or pkgcontainer.ErrCrashLoopBackOff while the Service waits to
// restart the container. It returns an error naming every container that
// waits after a failed start (a run killed for its postStart hook and not
// started again, under restart policy Never, is reported to the cache but
// not as an error); waiting out a back-off is not an error (as kuscia's
// CRIProvider turns back-off-only failures into nil).
//
// podStatus is not needed: the Service knows what runs. The Service starts
// and restarts containers itself; SyncPod only tells it what should run. A
// nil pod, a pod without UID, a nil reasonCache and a pod with two
// containers of the same name are rejected with an error, and nothing
// changes.
func (p *Provider) SyncPod(ctx context.Context, pod *v1.Pod, _ *pkgcontainer.PodStatus, reasonCache *kri.ReasonCache) error {
	if reasonCache == nil {
		return errors.New("remotebackend: SyncPod needs a ReasonCache, got nil")
	}
	view, err := p.svc.Apply(ctx, pod)
	if err != nil {
		return fmt.Errorf("SyncPod: %w", err)
	}
	var result pkgcontainer.PodSyncResult
	var failed []string
	for _, c := range slices.Concat(view.InitContainers, view.Containers) {
		r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
		switch {
		case c.Waiting != nil:
			r.Fail(waitingError(c.Waiting.Reason), c.Waiting.Message)
			if c.Waiting.Reason != ReasonCrashLoopBackOff {
				failed = append(failed, fmt.Sprintf("container %q: %s: %s", c.Name, c.Waiting.Reason, c.Waiting.Message))
			}
		case c.Current == nil:
			continue // not tried yet (behind an init container) or stopped before
		case c.Current.HookFailure != "":
			// Killed for its postStart hook and not started again: the
			// start failed, as the kubelet's runtime reports it, but
			// that is no news to return as an error.
			r.Fail(workload.ErrPostStartHook, c.Current.HookFailure)
		}
		result.AddSyncResult(r)
	}
	reasonCache.Update(pod.UID, result)
	if len(failed) > 0 {
		return fmt.Errorf("SyncPod of pod %s/%s: failed to start %s", pod.Namespace, pod.Name, strings.Join(failed, "; "))
	}
	return nil
}

// waitingError is the error a node agent knows the Waiting reason by.
func waitingError(reason string) error {
	switch reason {
	case ReasonCrashLoopBackOff:
		return pkgcontainer.ErrCrashLoopBackOff
	case ReasonRunContainerError:
		return pkgcontainer.ErrRunContainer
	case ReasonErrImagePull:
		return workload.ErrImagePull
	case ReasonInvalidImageName:
		return errInvalidImageName
	case ReasonPostStartHookError:
		return workload.ErrPostStartHook
	}
	return errors.New(reason)
}

// errInvalidImageName has the text of the kubelet's images.ErrInvalidImageName.
var errInvalidImageName = errors.New(ReasonInvalidImageName)
