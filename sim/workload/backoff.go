package workload

import "time"

// BackOff is the crash-loop back-off of a Pod: the first restart of a
// container waits Initial after its exit (or failed start), every further
// one twice as long as the one before, at most Max; a container that has
// not been backed off for 2×Max starts again from Initial, as the
// kubelet's flowcontrol.Backoff does. BackOffState keeps it for one
// container.
type BackOff struct {
	Initial time.Duration
	Max     time.Duration
}

// KubeletBackOff is the kubelet's crash-loop back-off
// (k8s.io/kubernetes/pkg/kubelet/kubelet.go: initialCrashLoopBackOff, 10s,
// and MaxCrashLoopBackOff, 300s, its alpha gates off), which a Pod and the
// fake's WithCrashLoopBackOff both run on a BackOffState.
// internal/kubeletequiv checks both figures against the kubelet's source.
var KubeletBackOff = BackOff{Initial: 10 * time.Second, Max: 300 * time.Second}

// KubeletImageBackOff is the kubelet's image-pull back-off
// (k8s.io/kubernetes/pkg/kubelet/kubelet.go: imageBackOffPeriod, 10s, and
// MaxImageBackOff, 300s), one BackOffState per pod and image, which the
// fake's WithImagePullBackOff runs. Unlike the crash-loop back-off it is
// read since its latest move (InBackOffSinceUpdate), not since an exit.
var KubeletImageBackOff = BackOff{Initial: 10 * time.Second, Max: 300 * time.Second}

// BackOffState is the crash-loop back-off of one container (or the
// image-pull back-off of one image of a pod): the delay of its latest
// back-off and when that was set. It is the kit's one
// implementation of the arithmetic of the kubelet's back-off, one entry of
// client-go's flowcontrol.Backoff as the kubelet's doBackOff
// (pkg/kubelet/kuberuntime/kuberuntime_manager.go) reads and moves it
// (InBackOffSince, Next, Delay), and of the image manager's image-pull
// back-off as pullImage (pkg/kubelet/images/image_manager.go) reads it
// (InBackOffSinceUpdate, Next); a Pod plans its restarts with it and the
// fake's kubelet-style syncs check theirs against it. The zero value has
// no back-off yet (as a key flowcontrol.Backoff does not hold, or one it
// deleted); a zero delay never holds a restart back, so with Max 0 and a
// positive Initial the delays go Initial, 0, Initial, … where
// flowcontrol.Backoff stays at 0.
type BackOffState struct {
	delay   time.Duration // the latest back-off; zero: none
	updated time.Time     // when delay was set (Next's now)
}

// expired reports whether an event at t comes more than 2×Max after the
// latest back-off was set: the container counts as stable, and its
// back-off starts over.
func (s *BackOffState) expired(b BackOff, t time.Time) bool {
	return t.Sub(s.updated) > 2*b.Max
}

// Next moves the back-off on for an event at t (a container's exit or
// failed start) and stamps it with now, returning the new delay: Initial
// for the first back-off and for one whose event is more than 2×Max after
// the previous stamp, else twice the previous delay, at most Max. The
// kubelet stamps with its clock's now; a Pod, which plans the restart at
// the event, stamps with t.
func (s *BackOffState) Next(b BackOff, t, now time.Time) time.Duration {
	if s.delay == 0 || s.expired(b, t) {
		s.delay = b.Initial
	} else {
		s.delay = min(2*s.delay, b.Max)
	}
	s.updated = now
	return s.delay
}

// InBackOffSince reports whether, at now, a container whose latest
// instance exited at t is in back-off: it has one, not expired for an
// event at t, and less than Delay has passed since t. The back-off then
// ends at t.Add(Delay()).
func (s *BackOffState) InBackOffSince(b BackOff, t, now time.Time) bool {
	return s.delay != 0 && !s.expired(b, t) && now.Sub(t) < s.delay
}

// InBackOffSinceUpdate reports whether, at now, the back-off holds since
// it was last moved on: it has one, now is not more than 2×Max after the
// stamp of the latest Next, and less than Delay has passed since that
// stamp. It is the kubelet image manager's reading of its image-pull
// back-off (pullImage in pkg/kubelet/images/image_manager.go, with
// flowcontrol.Backoff.IsInBackOffSinceUpdate), which refuses a pull for
// Delay after the failed pull that moved the back-off on (Next, stamped
// with the time of that pull); the back-off then ends at that stamp plus
// Delay.
func (s *BackOffState) InBackOffSinceUpdate(b BackOff, now time.Time) bool {
	return s.delay != 0 && !s.expired(b, now) && now.Sub(s.updated) < s.delay
}

// Delay returns the delay of the latest back-off, zero if there was none.
func (s *BackOffState) Delay() time.Duration { return s.delay }
