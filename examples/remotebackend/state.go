package remotebackend

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

// podState is the Service's record of one pod: its containers run by
// workload.Pod (start order, restarts with back-off, stops with grace,
// probes, lifecycle hooks, sidecars). Its GracePeriod is the pod's
// TerminationGracePeriodSeconds as submitted. Every field is guarded by
// Service.mu.
type podState struct {
	*workload.Pod
	submittedAt time.Time
	// generation grows whenever a stopped pod is submitted again, so that
	// Stop notices that it was resumed while it waited.
	generation int
	// reported is the view the watchers were last told of (Service.Watch),
	// nil before the first.
	reported *PodView
}

func validatePod(pod *v1.Pod) error {
	if pod == nil {
		return fmt.Errorf("remotebackend: %w: nil pod", ErrInvalidPod)
	}
	if pod.UID == "" {
		return fmt.Errorf("remotebackend: %w: pod %s/%s has no UID", ErrInvalidPod, pod.Namespace, pod.Name)
	}
	seen := map[string]bool{}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if c.Name == "" {
			return fmt.Errorf("remotebackend: %w: pod %s/%s has a container without name", ErrInvalidPod, pod.Namespace, pod.Name)
		}
		if seen[c.Name] {
			return fmt.Errorf("remotebackend: %w: pod %s/%s has two containers named %q", ErrInvalidPod, pod.Namespace, pod.Name, c.Name)
		}
		seen[c.Name] = true
	}
	for _, c := range pod.Spec.Containers {
		if c.RestartPolicy != nil {
			return fmt.Errorf("remotebackend: %w: pod %s/%s: app container %q has a restart policy of its own (container restart rules), which the Service does not support", ErrInvalidPod, pod.Namespace, pod.Name, c.Name)
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
			return fmt.Errorf("remotebackend: %w: pod %s/%s: init container %q has restart policy %q; the Service supports only Always (a sidecar)", ErrInvalidPod, pod.Namespace, pod.Name, c.Name, *c.RestartPolicy)
		}
	}
	return nil
}

func newPodState(pod *v1.Pod, now time.Time, b BackOff) *podState {
	// workload.NewPod takes the grace period from the spec, the API
	// server's default (DefaultGracePeriod) when it has none.
	p := &podState{Pod: workload.NewPod(pod), submittedAt: now}
	p.BackOff = workload.BackOff(b)
	p.CheckStart = startError
	// SIGTERM does what the command's handler says (Pod.Shutdown nil:
	// Behaviour.Shutdown as a host process; see Stop).
	return p
}

// startError is why a start of c fails in the Service: an invalid image
// reference, an image that cannot be pulled (whatever the pull policy), a
// missing executable.
func startError(c *workload.PodContainer) (string, error) {
	if _, err := normalizeImage(c.Image); err != nil {
		return fmt.Sprintf("Failed to apply default image tag %q: %v", c.Image, err), errInvalidImageName
	}
	if workload.ImageMissing(c.Image) {
		return fmt.Sprintf("Failed to pull image %q: the registry %s does not resolve", c.Image, workload.MissingImageDomain), workload.ErrImagePull
	}
	return workload.StartError(c)
}

// update applies a resubmission of the pod: image changes, and the end of a
// stop.
func (p *podState) update(pod *v1.Pod, now time.Time) error {
	if !sameNames(p.Init, pod.Spec.InitContainers) || !sameNames(p.App, pod.Spec.Containers) {
		return fmt.Errorf("remotebackend: %w: pod %s/%s was submitted with other containers than before; only their images may change", ErrInvalidPod, p.Namespace, p.Name)
	}
	if p.Stopped {
		p.Stopped = false
		p.generation++
	}
	for _, spec := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		p.SetImage(p.Container(spec.Name), spec.Image, now, p.GracePeriod)
	}
	return nil
}

func sameNames(have []*workload.PodContainer, want []v1.Container) bool {
	if len(have) != len(want) {
		return false
	}
	names := map[string]bool{}
	for _, c := range have {
		names[c.Name] = true
	}
	for _, c := range want {
		if !names[c.Name] {
			return false
		}
	}
	return true
}

// view returns a copy of what the Service reports of p.
func (p *podState) view() PodView {
	v := PodView{
		UID: p.UID, Namespace: p.Namespace, Name: p.Name,
		SubmittedAt: p.submittedAt, GracePeriod: p.GracePeriod, Stopped: p.Stopped,
	}
	for _, c := range p.Init {
		v.InitContainers = append(v.InitContainers, containerView(c))
	}
	for _, c := range p.App {
		v.Containers = append(v.Containers, containerView(c))
	}
	return v
}

func containerView(c *workload.PodContainer) ContainerView {
	v := ContainerView{Name: c.Name, Image: c.Image, Started: c.Started(), Ready: c.Ready()}
	if image, err := normalizeImage(c.Image); err == nil {
		v.Image = image
	}
	if r := c.Current; r != nil {
		v.RestartCount = r.Restarts
		run := runOf(r)
		if r.Image != c.Image {
			// Started from the image before a change: normalised when it
			// started (it was valid, or the start had failed).
			run.Image, _ = normalizeImage(r.Image)
		} else {
			run.Image = v.Image
		}
		v.Current = &run
	}
	if r := c.Previous; r != nil {
		v.LastTermination = &Termination{RunID: r.ID, ExitCode: r.ExitCode(), Reason: workload.ExitReason(r.ExitCode()), StartedAt: r.StartedAt(), FinishedAt: r.FinishedAt()}
	}
	if w := c.Waiting; w != nil {
		v.Waiting = &Waiting{Reason: w.Err.Error(), Message: w.Message, Until: w.Until}
	}
	return v
}

// runOf is what the Service reports of run r, but its image.
func runOf(r *workload.Run) Run {
	run := Run{ID: r.ID, State: RunRunning, StartedAt: r.StartedAt(), HookFailure: r.HookMessage}
	if !r.Running() {
		run.State, run.FinishedAt, run.ExitCode, run.Reason = RunExited, r.FinishedAt(), r.ExitCode(), workload.ExitReason(r.ExitCode())
	}
	return run
}
