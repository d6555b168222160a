package fake

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/utils/clock"

	"github.com/kri-kit/testkit/kri"
)

// The kubelet's image back-off (pkg/kubelet/kubelet.go imageBackOffPeriod
// and MaxImageBackOff).
const (
	imagePullBackOffInitial = 10 * time.Second
	imagePullBackOffMax     = 300 * time.Second
)

// imagePullBackOff is the image manager's back-off of WithImagePullBackOff:
// per pod UID and image, with the message of the pull that failed last.
type imagePullBackOff struct {
	bo *flowcontrol.Backoff
	// lastErr holds "ErrImagePull: <message>" of the latest failed pull
	// per key, for the message of the back-off (prevPullErrMsg in
	// pkg/kubelet/images/image_manager.go).
	lastErr map[string]string
	// until holds when the back-off of each key ends, to notify the agent
	// then (podsync.go).
	until map[string]time.Time
}

func newImagePullBackOff(c clock.Clock) *imagePullBackOff {
	return &imagePullBackOff{bo: flowcontrol.NewFakeBackOff(imagePullBackOffInitial, imagePullBackOffMax, c), lastErr: map[string]string{}, until: map[string]time.Time{}}
}

// imageBackOffKey names an image of a pod for the back-off, as pullImage
// does.
func imageBackOffKey(uid types.UID, image string) string {
	return string(uid) + "_" + image
}

// inImageBackOff reports whether the start of c must not pull its image
// yet, failing res with ErrImagePullBackOff then. The caller holds p.mu.
func (s *syncer) inImageBackOff(res *pkgcontainer.SyncResult, c *v1.Container) bool {
	ib := s.p.imageBackOff
	if ib == nil {
		return false
	}
	key := imageBackOffKey(s.ps.ref.UID, c.Image)
	if !ib.bo.IsInBackOffSinceUpdate(key, s.now) {
		return false
	}
	msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
	if prev, ok := ib.lastErr[key]; ok {
		msg += ": " + prev
	}
	res.Fail(ErrImagePullBackOff, msg)
	prev, had := s.ps.lastStartErr[c.Name]
	s.ps.setStartErr(c.Name, kri.ReasonItem{Err: ErrImagePullBackOff, Message: msg})
	s.p.publish(Event{At: s.now, Type: EventContainerBackOff, Pod: s.ps.ref, Container: c.Name, Message: msg})
	until := ib.until[key]
	if until.IsZero() {
		until = s.now.Add(ib.bo.Get(key))
	}
	s.failedStart(c.Name, prev, had, until) // podsync.go: the agent syncs when the back-off ends
	return true
}

// pullFailed starts or lengthens the back-off of c's image after a start
// that failed with err, if err is a failed pull, and returns when that
// back-off ends and true; without a back-off it returns false. The caller
// holds p.mu.
func (s *syncer) pullFailed(c *v1.Container, err error, message string) (time.Time, bool) {
	ib := s.p.imageBackOff
	if ib == nil || !isPullError(err) {
		return time.Time{}, false
	}
	key := imageBackOffKey(s.ps.ref.UID, c.Image)
	ib.bo.Next(key, s.now)
	ib.lastErr[key] = fmt.Sprintf("%s: %s", ErrImagePull, message)
	ib.until[key] = s.now.Add(ib.bo.Get(key))
	return ib.until[key], true
}

// isPullError reports whether err is a failed pull: ErrImagePull, or an
// error with its text (as a test may script it).
func isPullError(err error) bool {
	return errors.Is(err, ErrImagePull) || err.Error() == ErrImagePull.Error()
}

// forgetImageBackOff drops the image back-off of every container of a pod
// being forgotten. The caller holds p.mu.
func (p *PodProvider) forgetImageBackOff(ps *podState) {
	if p.imageBackOff == nil || ps.pod == nil {
		return
	}
	for _, list := range [][]v1.Container{ps.pod.Spec.InitContainers, ps.pod.Spec.Containers} {
		for i := range list {
			key := imageBackOffKey(ps.ref.UID, list[i].Image)
			p.imageBackOff.bo.DeleteEntry(key)
			delete(p.imageBackOff.lastErr, key)
			delete(p.imageBackOff.until, key)
		}
	}
}
