package hostprocess

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

func (h *host) killPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	uid := runningPod.ID
	if uid == "" && pod != nil {
		uid = pod.UID
	}
	if uid == "" || h.lookup(uid) == nil {
		return nil // unknown pod: nothing runs
	}
	grace := gracePeriod(pod, gracePeriodOverride)
	ps, release, err := h.lockPod(ctx, uid, nil)
	if err != nil {
		return fmt.Errorf("kill pod %s: %w", uid, err)
	}
	if ps == nil {
		return nil // deleted while we waited
	}
	defer release()

	h.mu.Lock()
	for _, sb := range ps.sandboxes {
		sb.ready = false
	}
	h.mu.Unlock()
	h.mu.Lock()
	sidecars := ps.sidecars
	h.mu.Unlock()
	if pod != nil {
		sidecars = sidecarNames(pod)
	}
	err = h.stopContainers(ctx, ps, pod, sidecars, grace)
	// The sandbox is NOTREADY and, unless ctx ended first, every
	// container has exited: the agent can finish the termination. (Each
	// exit was reported by its reaper already; an early return leaves
	// the rest to them.)
	h.Notify(uid)
	if err != nil {
		return fmt.Errorf("kill pod %s: %w", uid, err)
	}
	return nil
}

// gracePeriod is the time KillPod gives a container between SIGTERM and
// SIGKILL: the override, else the pod's DeletionGracePeriodSeconds, else its
// TerminationGracePeriodSeconds (the order of the kubelet's runtime,
// kuberuntime_container.go setTerminationGracePeriod), else 30 seconds. Zero
// or less means SIGKILL at once.
func gracePeriod(pod *v1.Pod, override *int64) time.Duration {
	switch {
	case override != nil:
		return time.Duration(*override) * time.Second
	case pod != nil && pod.DeletionGracePeriodSeconds != nil:
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return defaultGracePeriod
}

// stopContainers stops every running container of ps, each as the
// kubelet's killContainer does (stopInstance: its preStop hook, then
// SIGTERM, then SIGKILL once the rest of its grace period is over; SIGKILL
// at once for grace <= 0). pod gives the preStop hooks (nil: those the
// containers started with). The containers named in sidecars (restartable
// init containers, in spec order) stop after all the others, one at a
// time, the last first, as the kubelet's termination ordering does: each
// gets what is left of the grace period when its turn comes, and one whose
// turn comes after the grace period still gets minimumSidecarGrace; their
// preStop hooks run when their turn comes. It returns nil once all of them
// have been reaped, or ctx's error. The caller holds ps's operation lock,
// so no container starts meanwhile.
func (h *host) stopContainers(ctx context.Context, ps *podState, pod *v1.Pod, sidecars []string, grace time.Duration) error {
	h.mu.Lock()
	stages := ps.stopStages(sidecars)
	if grace <= 0 {
		// SIGKILL at once, whatever the order.
		all := slices.Concat(stages...)
		stages = [][]*instance{all}
	}
	h.mu.Unlock()
	deadline := time.Now().Add(grace)
	for i, stage := range stages {
		wait := grace
		if grace > 0 {
			wait = time.Until(deadline)
			if i > 0 {
				wait = max(wait, minimumSidecarGrace)
			}
		}
		if err := h.stopStage(ctx, pod, stage, wait); err != nil {
			return err
		}
	}
	return nil
}

// stopStage stops the instances at the same time, each with stopInstance
// and the grace period grace, and returns once every one has been reaped,
// or with ctx's error.
func (h *host) stopStage(ctx context.Context, pod *v1.Pod, running []*instance, grace time.Duration) error {
	errs := make([]error, len(running))
	var wg sync.WaitGroup
	for i, inst := range running {
		hook, ok := preStopOf(pod, inst)
		wg.Go(func() { errs[i] = h.stopInstance(ctx, inst, hook, ok, grace) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (h *host) deletePod(ctx context.Context, pod *v1.Pod) error {
	if pod == nil {
		return fmt.Errorf("%w: nil pod", ErrInvalidPod)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := h.podDir(pod.UID); err != nil {
		return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if err := h.forget(ctx, pod.UID); err != nil {
		return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// forget stops the containers of the pod with the given UID, removes its
// directory and forgets it. An unknown pod is left alone.
func (h *host) forget(ctx context.Context, uid types.UID) error {
	ps, release, err := h.lockPod(ctx, uid, nil)
	if err != nil || ps == nil {
		return err
	}
	defer release()
	if err := h.stopContainers(ctx, ps, nil, nil, cleanupGracePeriod); err != nil {
		return err
	}
	// Every process has been reaped, so no log file is open any more.
	if err := os.RemoveAll(ps.dir); err != nil {
		return err // still known: a later call can retry
	}
	h.Forget(uid) // no retry of a start for a pod that is gone
	h.mu.Lock()
	ps.deleted = true
	for _, sb := range ps.sandboxes {
		sb.ready = false
	}
	if h.pods[uid] == ps {
		delete(h.pods, uid)
	}
	h.mu.Unlock()
	return nil
}

func (h *host) cleanupPods(ctx context.Context, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	keep := kri.PodsToKeep(pods, runningPods, possiblyRunningPods)

	h.mu.Lock()
	var orphans []types.UID
	for uid := range h.pods {
		if !keep.Has(uid) {
			orphans = append(orphans, uid)
		}
	}
	h.mu.Unlock()

	errs := make([]error, len(orphans))
	var wg sync.WaitGroup
	for i, uid := range orphans {
		wg.Go(func() {
			if err := h.forget(ctx, uid); err != nil {
				errs[i] = fmt.Errorf("remove orphaned pod %s: %w", uid, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
