package fake

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/util/format"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

// SetCrashLoopBackOff turns crash-loop back-off (see WithCrashLoopBackOff)
// on or off, at any time; turning it on starts every container afresh.
func (p *PodProvider) SetCrashLoopBackOff(on bool) {
	p.mu.Lock()
	defer p.unlock()
	switch {
	case !on:
		p.backOff = nil
	case p.backOff == nil:
		p.backOff = map[string]workload.BackOffState{}
	}
}

// backOffKey names container c of the pod for the back-off: a new image
// starts the back-off over, as in the kubelet's GetBackoffKey
// (pkg/kubelet/kuberuntime/helpers.go).
func backOffKey(uid types.UID, c *v1.Container) string {
	return string(uid) + "/" + c.Name + "/" + c.Image
}

// crashLoopError is what a restart refused in back-off reports: Error() is
// "CrashLoopBackOff", the reason the kubelet shows; errors.Is finds
// pkgcontainer.ErrCrashLoopBackOff and errors.As the
// *pkgcontainer.BackoffError with the time the back-off ends.
type crashLoopError struct{ be *pkgcontainer.BackoffError }

func (e *crashLoopError) Error() string   { return e.be.Error() }
func (e *crashLoopError) Unwrap() []error { return []error{pkgcontainer.ErrCrashLoopBackOff, e.be} }

// inBackOff reports whether the restart of c must wait for its crash-loop
// back-off to end, failing res then, as doBackOff in
// pkg/kubelet/kuberuntime/kuberuntime_manager.go does: the back-off runs
// from the end of the container's latest exited instance; a restart that
// may go ahead lengthens the next back-off. The caller holds p.mu.
func (s *syncer) inBackOff(res *pkgcontainer.SyncResult, c *v1.Container) bool {
	bo := s.p.backOff
	if bo == nil {
		return false
	}
	finished, ok := s.lastExit(c.Name)
	if !ok {
		return false
	}
	key, now := backOffKey(s.ps.ref.UID, c), s.p.clock.Now()
	st := bo[key]
	if !st.InBackOffSince(workload.KubeletBackOff, finished, now) {
		st.Next(workload.KubeletBackOff, finished, now)
		bo[key] = st
		return false
	}
	delay := st.Delay()
	err := &crashLoopError{be: pkgcontainer.NewBackoffError(pkgcontainer.ErrCrashLoopBackOff, finished.Add(delay))}
	msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", delay, c.Name, format.Pod(s.pod))
	res.Fail(err, msg)
	prev, had := s.ps.lastStartErr[c.Name]
	s.ps.setStartErr(c.Name, kri.ReasonItem{Err: err, Message: msg})
	s.p.publish(Event{At: s.now, Type: EventContainerBackOff, Pod: s.ps.ref, Container: c.Name, Message: msg})
	s.failedStart(c.Name, prev, had, finished.Add(delay)) // podsync.go: the agent syncs when the back-off ends
	return true
}

// lastExit returns when the latest exited instance of the container ended:
// as podStatus shows it in a status-driven sync, else as the fake knows it.
func (s *syncer) lastExit(name string) (time.Time, bool) {
	if s.status != nil {
		for _, st := range s.status.ContainerStatuses {
			if st != nil && st.Name == name && st.State == pkgcontainer.ContainerStateExited {
				return st.FinishedAt, true
			}
		}
		return time.Time{}, false
	}
	for _, in := range [2]*instance{s.ps.current(name), s.ps.previous(name)} {
		if in != nil && !in.active() {
			return in.FinishedAt(), true
		}
	}
	return time.Time{}, false
}

// forgetBackOff drops the back-off of every container of a pod being
// forgotten, the only time entries go: the fake has no counterpart of the
// kubelet's periodic flowcontrol.Backoff.GC. The caller holds p.mu.
func (p *PodProvider) forgetBackOff(ps *podState) {
	if p.backOff == nil || ps.pod == nil {
		return
	}
	for _, list := range [][]v1.Container{ps.pod.Spec.InitContainers, ps.pod.Spec.Containers} {
		for i := range list {
			delete(p.backOff, backOffKey(ps.ref.UID, &list[i]))
		}
	}
}
