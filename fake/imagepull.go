package fake

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

// imagePullBackOffs is the image manager's back-off of WithImagePullBackOff
// (workload.KubeletImageBackOff): per pod UID and image, with the message
// of the pull that failed last.
type imagePullBackOffs map[string]*imageBackOffEntry

// imageBackOffEntry is the back-off of one image of a pod.
type imageBackOffEntry struct {
	st workload.BackOffState
	// lastErr is "ErrImagePull: <message>" of the latest failed pull, for
	// the message of the back-off (prevPullErrMsg in
	// pkg/kubelet/images/image_manager.go).
	lastErr string
	// until is when the back-off ends, to notify the agent then
	// (podsync.go).
	until time.Time
}

// imageBackOffKey names an image of a pod for the back-off, as pullImage
// does.
func imageBackOffKey(uid types.UID, image string) string {
	return string(uid) + "_" + image
}

// inImageBackOff reports whether the start of c must not pull its image
// yet, failing res with ErrImagePullBackOff then. The caller holds p.mu.
func (s *syncer) inImageBackOff(res *pkgcontainer.SyncResult, c *v1.Container) bool {
	if s.p.imageBackOff == nil {
		return false
	}
	e := s.p.imageBackOff[imageBackOffKey(s.ps.ref.UID, c.Image)]
	if e == nil || !e.st.InBackOffSinceUpdate(workload.KubeletImageBackOff, s.now) {
		return false
	}
	msg := fmt.Sprintf("Back-off pulling image %q: %s", c.Image, e.lastErr)
	res.Fail(ErrImagePullBackOff, msg)
	prev, had := s.ps.lastStartErr[c.Name]
	s.ps.setStartErr(c.Name, kri.ReasonItem{Err: ErrImagePullBackOff, Message: msg})
	s.p.publish(Event{At: s.now, Type: EventContainerBackOff, Pod: s.ps.ref, Container: c.Name, Message: msg})
	s.failedStart(c.Name, prev, had, e.until) // podsync.go: the agent syncs when the back-off ends
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
	e := ib[key]
	if e == nil {
		e = &imageBackOffEntry{}
		ib[key] = e
	}
	e.until = s.now.Add(e.st.Next(workload.KubeletImageBackOff, s.now, s.now))
	e.lastErr = fmt.Sprintf("%s: %s", ErrImagePull, message)
	return e.until, true
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
			delete(p.imageBackOff, imageBackOffKey(ps.ref.UID, list[i].Image))
		}
	}
}
