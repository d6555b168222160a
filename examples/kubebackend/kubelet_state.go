package kubebackend

import (
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

// simPod is the simulated kubelet's record of one backend pod: its
// containers run by workload.Pod (start order, restarts with back-off,
// stops with grace), and what the Kubelet wrote of it. Every field is
// guarded by Kubelet.mu.
type simPod struct {
	*workload.Pod
	ip string
	// object is the latest version of the pod the Kubelet has seen (its
	// spec and the status last written).
	object *v1.Pod
	// written is the status last written (as the API keeps it); deleting
	// is set once the final delete has been sent.
	written  *v1.PodStatus
	deleting bool
	// retryAt: an API call failed; the Kubelet repeats it then.
	retryAt time.Time
}

func newSimPod(pod *v1.Pod, ip string, b BackOff) *simPod {
	p := &simPod{Pod: workload.NewPod(pod), ip: ip, object: pod}
	p.BackOff = workload.BackOff(b)
	// A container exits 143 on SIGTERM unless it ignores it (see Kubelet).
	p.Shutdown = workload.SimpleShutdown
	return p
}

// observe applies a new version of the pod object: a changed image (the one
// change of a container the API server allows) and the start of a graceful
// deletion.
func (p *simPod) observe(pod *v1.Pod, now time.Time) {
	p.object = pod
	for _, spec := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if c := p.Container(spec.Name); c != nil {
			p.SetImage(c, spec.Image, now, gracePeriod(pod, nil))
		}
	}
	if pod.DeletionTimestamp != nil {
		p.Stop(now, gracePeriod(pod, pod.DeletionGracePeriodSeconds))
	}
}

// gracePeriod is the grace period of pod's deletion: deletion, else the
// pod's TerminationGracePeriodSeconds, else the API server's default.
func gracePeriod(pod *v1.Pod, deletion *int64) time.Duration {
	switch {
	case deletion != nil:
		return time.Duration(max(*deletion, 0)) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(max(*pod.Spec.TerminationGracePeriodSeconds, 0)) * time.Second
	}
	return v1.DefaultTerminationGracePeriodSeconds * time.Second
}

// nextChange returns when the pod's status changes next on its own, after
// now: its earliest event, or a Waiting reason turning into
// ImagePullBackOff (once that has happened it is no longer a change to
// come: the kubelet's loop would otherwise wake at once, again and again,
// until the next pull).
func (p *simPod) nextChange(now time.Time) (time.Time, bool) {
	at, ok := p.Next()
	for _, c := range p.Containers() {
		if w := c.Waiting; w != nil && pulling(w) {
			if t := backOffShownAt(w); t.After(now) && (!ok || t.Before(at)) {
				at, ok = t, true
			}
		}
	}
	return at, ok
}

// pulling reports whether w is the wait after a failed image pull: its
// Waiting reason turns from ErrImagePull into ImagePullBackOff half-way to
// the next attempt, the way the kubelet shows a pull it backs off.
func pulling(w *workload.Waiting) bool { return errors.Is(w.Err, workload.ErrImagePull) }

func backOffShownAt(w *workload.Waiting) time.Time { return w.Since.Add(w.Until.Sub(w.Since) / 2) }

// runtimeStatus is what the simulated runtime knows of the pod at now, as a
// kubelet's runtime reports it: the current and the previous run of each
// container (exact times), and the ReasonCache of its latest starts.
func (p *simPod) runtimeStatus(now time.Time) (*pkgcontainer.PodStatus, *kri.ReasonCache) {
	st := &pkgcontainer.PodStatus{ID: p.UID, Name: p.Name, Namespace: p.object.Namespace, IPs: []string{p.ip}}
	reasons := kri.NewReasonCacheWithSize(len(p.Containers()) + 1)
	for _, c := range p.Containers() {
		for _, r := range []*workload.Run{c.Previous, c.Current} {
			if r != nil {
				st.ContainerStatuses = append(st.ContainerStatuses, runStatus(c, r))
			}
		}
		if w := c.Waiting; w != nil {
			err := w.Err
			if pulling(w) && !now.Before(backOffShownAt(w)) {
				err = ErrImagePullBackOff
			}
			r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
			r.Fail(err, w.Message)
			reasons.Update(p.UID, pkgcontainer.PodSyncResult{SyncResults: []*pkgcontainer.SyncResult{r}})
		}
	}
	return st, reasons
}

// runStatus is the runtime's status of run r of container c, with the
// termination message its command left once it has exited.
func runStatus(c *workload.PodContainer, r *workload.Run) *pkgcontainer.Status {
	st := &pkgcontainer.Status{
		ID:   pkgcontainer.ContainerID{Type: RuntimeType, ID: r.ID},
		Name: c.Name, Image: r.Image, ImageRef: imageRef(r.Image), RestartCount: r.Restarts,
		CreatedAt: r.StartedAt(), StartedAt: r.StartedAt(), State: pkgcontainer.ContainerStateRunning,
	}
	if !r.Running() {
		code := r.ExitCode()
		st.State, st.FinishedAt, st.ExitCode, st.Reason = pkgcontainer.ContainerStateExited, r.FinishedAt(), code, workload.ExitReason(code)
		st.Message = r.TerminationMessage(c.Spec)
	}
	return st
}

// imageRef is a made-up digest reference of image, stable per image.
func imageRef(image string) string {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(image); i++ {
		h = (h ^ uint64(image[i])) * 1099511628211
	}
	return fmt.Sprintf("sha256:%016x", h)
}
