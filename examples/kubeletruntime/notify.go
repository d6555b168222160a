package kubeletruntime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
	crierrors "k8s.io/cri-api/pkg/errors"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/images"
	"k8s.io/kubernetes/pkg/kubelet/pleg"
	proberesults "k8s.io/kubernetes/pkg/kubelet/prober/results"
	"k8s.io/kubernetes/pkg/util/parsers"
	"k8s.io/utils/clock"
)

// The kubelet's PLEG settings (pkg/kubelet/kubelet.go
// genericPlegRelistPeriod, and plegChannelCapacity, which kuscia's
// CRIProvider uses too).
const (
	// RelistPeriod is how often Start relists the runtime's pods with the
	// kubelet's GenericPLEG.
	RelistPeriod        = time.Second
	plegRelistThreshold = 3 * time.Minute
	plegChannelCapacity = 1000
)

// notifier is what tells the agent a pod needs a sync: the kubelet's
// GenericPLEG, relisted every RelistPeriod, the probe results managers'
// updates and the ends of the back-offs SyncPod met.
type notifier struct {
	pleg *pleg.GenericPLEG
	// relistNow asks the relist loop for a relist at once (requestRelist).
	relistNow chan struct{}
	liveness  proberesults.Manager
	readiness proberesults.Manager
	startup   proberesults.Manager
	// imageBackOff is the image manager's back-off (the runtime manager's
	// imageBackOff), read for when a pull may be tried again.
	imageBackOff *flowcontrol.Backoff

	// pullRetry is when each image pull back-off (by the image manager's
	// key) ends, as seen after the SyncPod whose pull failed.
	mu        sync.Mutex
	pullRetry map[string]time.Time
}

func newNotifier(runtime pkgcontainer.Runtime, liveness, readiness, startup proberesults.Manager, imageBackOff *flowcontrol.Backoff) *notifier {
	g := pleg.NewGenericPLEG(runtime, make(chan *pleg.PodLifecycleEvent, plegChannelCapacity),
		&pleg.RelistDuration{RelistPeriod: RelistPeriod, RelistThreshold: plegRelistThreshold},
		pkgcontainer.NewCache(), clock.RealClock{})
	return &notifier{
		pleg:      g.(*pleg.GenericPLEG),
		relistNow: make(chan struct{}, 1),
		liveness:  liveness, readiness: readiness, startup: startup,
		imageBackOff: imageBackOff,
		pullRetry:    map[string]time.Time{},
	}
}

// relist runs the PLEG's Relist every RelistPeriod, and at once when
// requestRelist asks, until stop is closed, as GenericPLEG.Start does
// (which this provider does not call: its goroutine cannot be waited for).
func (p *Provider) relist(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(RelistPeriod)
	defer t.Stop()
	for {
		p.events.pleg.Relist(ctx)
		select {
		case <-stop:
			return
		case <-t.C:
		case <-p.events.relistNow:
		}
	}
}

// requestRelist asks for a relist at once after a SyncPod that did something
// and failed in nothing, as the kubelet's SyncPod does (kubelet.go SyncPod's
// postSync, RequestPodRelist): the PLEG then sees at once the containers it
// started, also one that runs for less than RelistPeriod (a sidecar that
// exits soon, whose start lets the app containers start).
func (p *Provider) requestRelist(result pkgcontainer.PodSyncResult) {
	if len(result.SyncResults) == 0 || result.Error() != nil {
		return
	}
	select {
	case p.events.relistNow <- struct{}{}:
	default:
	}
}

// relay tells the agent of the pods the PLEG and the probe results managers
// report, until stop is closed: what kuscia's CRIProvider.syncLoopIteration
// (pkg/agent/provider/pod/cri_provider.go) and the kubelet's
// syncLoopIteration (pkg/kubelet/kubelet.go) do with them: every PLEG event
// but ContainerRemoved, a liveness failure, every readiness and startup
// update.
func (p *Provider) relay(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case e := <-p.events.pleg.Watch():
			if e.Type != pleg.ContainerRemoved {
				p.Notify(e.ID)
			}
		case u := <-p.events.liveness.Updates():
			if u.Result == proberesults.Failure {
				p.Notify(u.PodUID)
			}
		case u := <-p.events.readiness.Updates():
			p.Notify(u.PodUID)
		case u := <-p.events.startup.Updates():
			p.Notify(u.PodUID)
		}
	}
}

// notifyBackOffEnds asks for a sync of pod when the back-offs and failures
// of result are over, which the kubelet gets from its pod workers
// (pod_workers.go completeWork requeues a failed sync at the error's
// MinBackoffExpiration, else after backOffPeriod) and kuscia's agent never
// does:
//
//   - a crash-loop back-off (a pkgcontainer.BackoffError): at its
//     expiration, which the runtime manager computed from its back-off
//     (kuberuntime_manager.go doBackOff);
//   - a failed image pull (ErrImagePull and the like) and an image pull
//     back-off (ImagePullBackOff): when the image manager's back-off entry
//     for the pod and image ends (images/image_manager.go pullImage: key
//     "<pod UID>_<image with its default tag>"), counted from the SyncPod
//     whose pull failed;
//   - any other failure (a container that failed to start, a sandbox that
//     could not be made): after retry, the kubelet's backOffPeriod, which
//     is its crash-loop back-off's initial period too (Options.InitialBackOff).
func (p *Provider) notifyBackOffEnds(pod *v1.Pod, result pkgcontainer.PodSyncResult, retry time.Duration) {
	now := time.Now()
	var at []time.Time
	if result.SyncError != nil {
		at = append(at, now.Add(retry))
	}
	for _, r := range result.SyncResults {
		if r == nil || r.Error == nil {
			continue
		}
		if end, ok := pkgcontainer.MinBackoffExpiration(r.Error); ok {
			at = append(at, end)
			continue
		}
		if r.Action == pkgcontainer.StartContainer {
			if end, ok := p.events.pullRetryAt(pod, r, now); ok {
				at = append(at, end)
				continue
			}
		}
		at = append(at, now.Add(retry))
	}
	if len(at) == 0 {
		return
	}
	// One call when the first is over: the sync it brings meets the
	// others again, and asks anew.
	p.NotifyAfter(pod.UID, time.Until(slices.MinFunc(at, time.Time.Compare)))
}

// pullRetryAt returns when the image of r's container may be pulled again,
// when r failed on the image: for a pull that failed in this SyncPod, now
// plus the image manager's back-off of the image (its entry was set during
// the pull, so this is a little late, never early); for a pull in back-off,
// the time noted then (or now plus the back-off, for one not noted).
func (n *notifier) pullRetryAt(pod *v1.Pod, r *pkgcontainer.SyncResult, now time.Time) (time.Time, bool) {
	// The pulls that failed and set the back-off (pullImage: ErrImagePull
	// and the two CRI errors evalCRIPullErr keeps).
	failedPull := errors.Is(r.Error, images.ErrImagePull) || errors.Is(r.Error, crierrors.ErrRegistryUnavailable) ||
		errors.Is(r.Error, crierrors.ErrSignatureValidationFailed)
	backedOff := errors.Is(r.Error, images.ErrImagePullBackOff)
	if !failedPull && !backedOff {
		return time.Time{}, false
	}
	name, _ := r.Target.(string)
	i := slices.IndexFunc(slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers), func(c v1.Container) bool { return c.Name == name })
	if i < 0 {
		return time.Time{}, false
	}
	key := imageBackOffKey(pod.UID, slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers)[i].Image)
	n.mu.Lock()
	defer n.mu.Unlock()
	end, noted := n.pullRetry[key]
	if failedPull || !noted || end.Before(now) {
		d := n.imageBackOff.Get(key)
		if d <= 0 {
			// No entry under that key (the image manager's key changed):
			// the caller's retry, rather than a busy loop.
			return time.Time{}, false
		}
		end = now.Add(d)
		n.pullRetry[key] = end
	}
	// Forget the ended ones, so that the map does not grow.
	for k, t := range n.pullRetry {
		if t.Before(now) {
			delete(n.pullRetry, k)
		}
	}
	return end, true
}

// imageBackOffKey is the image manager's back-off key of image for the pod
// uid (images/image_manager.go pullImage, with applyDefaultImageTag's tag).
func imageBackOffKey(uid types.UID, image string) string {
	if _, tag, digest, err := parsers.ParseImageName(image); err == nil && digest == "" && tag != "" && !strings.HasSuffix(image, ":"+tag) {
		image += ":" + tag
	}
	return fmt.Sprintf("%s_%s", uid, image)
}
