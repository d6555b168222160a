package hostprocess

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

// startRetryDelay is how long after a SyncPod whose start failed the
// provider asks the agent for the SyncPod that tries again (kri's "any
// failed start the provider will retry"). The provider has no back-off of
// its own; this only paces the retries, about as often as the kubelet's
// pod worker retries a failed sync (pod_workers.go, backOffPeriod) but
// shorter, for a test kit.
const startRetryDelay = time.Second

func (h *host) syncPod(ctx context.Context, pod *v1.Pod, reasonCache *kri.ReasonCache) error {
	if err := validatePod(pod); err != nil {
		return err
	}
	if reasonCache == nil {
		return fmt.Errorf("%w: pod %s/%s: nil reasonCache", ErrInvalidPod, pod.Namespace, pod.Name)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := h.podDir(pod.UID); err != nil {
		return err
	}
	ps, release, err := h.lockPod(ctx, pod.UID, pod)
	if err != nil {
		return fmt.Errorf("sync pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	defer release()

	h.mu.Lock()
	ps.name, ps.namespace = pod.Name, pod.Namespace
	ps.sidecars = sidecarNames(pod)
	h.mu.Unlock()

	var result pkgcontainer.PodSyncResult
	err = h.reconcile(ctx, ps, pod, &result)
	reasonCache.Update(pod.UID, result)
	if result.Error() != nil && h.Pending(pod.UID) == 0 {
		// A start failed (or the sandbox could not be made): the next
		// SyncPod tries again, and the agent calls it only when asked.
		// One retry pending per pod, so that syncs for other reasons do
		// not pile retries up.
		h.NotifyAfter(pod.UID, startRetryDelay)
	}
	err = errors.Join(err, result.Error())
	if err != nil {
		return fmt.Errorf("sync pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// reconcile performs what is missing for pod, adding to result a
// StartContainer result for every start it attempts (and a CreatePodSandbox
// one if the sandbox cannot be made). It returns the errors that end a sync
// early: ctx done, provider stopped.
func (h *host) reconcile(ctx context.Context, ps *podState, pod *v1.Pod, result *pkgcontainer.PodSyncResult) error {
	policy := pod.Spec.RestartPolicy
	if policy == "" {
		policy = v1.RestartPolicyAlways
	}

	h.mu.Lock()
	ps.grace = gracePeriod(pod, nil)
	sb := ps.currentSandbox()
	needSandbox := sb == nil || !sb.ready
	if needSandbox && sb != nil && (policy == v1.RestartPolicyNever && ps.hasInstances() || ps.appsDone(pod, policy)) {
		// KillPod stopped a pod that must not restart, or one whose app
		// containers are done for good: it is done.
		h.mu.Unlock()
		return nil
	}
	h.mu.Unlock()
	if needSandbox {
		var err error
		if sb, err = h.createSandbox(ps, sb); err != nil {
			r := pkgcontainer.NewSyncResult(pkgcontainer.CreatePodSandbox, pod.Name)
			r.Fail(pkgcontainer.ErrCreatePodSandbox, err.Error())
			result.AddSyncResult(r)
			return nil
		}
	}

	// start attempts one start and reports whether it succeeded; a
	// non-nil error ends the sync (ctx done or provider stopped).
	start := func(c *v1.Container, sidecar bool) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
		err := h.startContainer(ps, sb, c, sidecar)
		if err == nil {
			err = h.postStart(ctx, ps, pod, c)
		}
		if errors.Is(err, ErrStopped) {
			return false, err
		}
		if err != nil {
			reason := pkgcontainer.ErrRunContainer
			switch {
			case errors.Is(err, workload.ErrImagePull):
				reason = workload.ErrImagePull
			case errors.Is(err, workload.ErrImageNeverPull):
				reason = workload.ErrImageNeverPull
			case errors.Is(err, workload.ErrPostStartHook):
				reason = workload.ErrPostStartHook
			}
			r.Fail(reason, err.Error())
			h.mu.Lock()
			if cs := ps.containers[c.Name]; reason != workload.ErrPostStartHook || restartsAfterHook(cs, policy, sidecar) {
				cs.startErr = &kri.ReasonItem{Err: reason, Message: err.Error()}
			}
			h.mu.Unlock()
		}
		result.AddSyncResult(r)
		return err == nil, nil
	}

	// Init containers, one at a time, in order.
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		h.mu.Lock()
		cur := ps.containers[c.Name].current()
		inSandbox := cur != nil && cur.sandboxID == sb.id
		running := inSandbox && !cur.exited
		succeeded := inSandbox && cur.exited && cur.exitCode == 0
		h.mu.Unlock()

		if isSidecar(c) {
			if !running {
				// A sidecar is (re)started whatever the pod's policy.
				if ok, err := start(c, true); !ok {
					return err
				}
			}
			// The next init container (or the app containers, after
			// the last) follows once it runs and, when it has a
			// startup probe, once that has succeeded: the kubelet's
			// computeInitContainerActions (kuberuntime_container.go)
			// breaks off at a running restartable init container with
			// a startup probe whose result is not Success, so that
			// neither the next init container is started nor the pod
			// counted initialized.
			if !h.sidecarStarted(ps, c.Name) {
				return nil
			}
			continue
		}
		switch {
		case succeeded:
			continue
		case running:
			return nil // wait for it to finish
		case inSandbox && policy == v1.RestartPolicyNever:
			return nil // failed for good: the app containers never start
		}
		// Not run yet in this sandbox, or failed and to be retried.
		_, err := start(c, false)
		return err
	}

	// App containers.
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		h.mu.Lock()
		cur := ps.containers[c.Name].current()
		want := cur == nil || (cur.exited && shouldRestart(policy, cur.exitCode))
		h.mu.Unlock()
		if !want {
			continue
		}
		if _, err := start(c, false); err != nil {
			return err
		}
	}
	// Sidecars keep a pod alive only while an app container runs or
	// will run again.
	return h.stopSidecarsIfDone(ctx, ps, pod, policy)
}

// createSandbox makes a new sandbox for ps, replacing old (nil for the
// first), and creates the pod directory.
func (h *host) createSandbox(ps *podState, old *sandbox) (*sandbox, error) {
	if err := os.MkdirAll(ps.dir, 0o755); err != nil {
		return nil, err
	}
	sb := &sandbox{id: newID(), ready: true}
	if old != nil {
		sb.attempt = old.attempt + 1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	sb.createdAt = time.Now()
	ps.sandboxes = append([]*sandbox{sb}, ps.sandboxes...)
	if len(ps.sandboxes) > 2 {
		ps.sandboxes = ps.sandboxes[:2:2]
	}
	return sb, nil
}

// isSidecar reports whether c is a restartable init container.
func isSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// shouldRestart reports whether an exited app container with the given
// exit code is started again under policy.
func shouldRestart(policy v1.RestartPolicy, exitCode int) bool {
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	default:
		return true
	}
}
