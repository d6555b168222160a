package remotebackend

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

// KillPod stops the pod on the Service (Service.Stop) and returns once
// none of its containers runs: SIGTERM first, SIGKILL for what still runs
// when the grace period is over. The grace period is gracePeriodOverride,
// else the pod's DeletionGracePeriodSeconds, else its
// TerminationGracePeriodSeconds (the kubelet's runtime,
// kuberuntime_container.go killContainer), else, for a nil pod, the one
// the pod was submitted with; there is no minimum. kuscia's
// K8sProvider.KillPod deletes its backend pod with the override in the same
// way.
//
// The pod is runningPod.ID when pod is nil. Stopped, the pod's containers
// do not restart until it is submitted again. Killing a pod the Service
// does not know returns nil; naming no pod at all is an error.
func (p *Provider) KillPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error {
	uid := runningPod.ID
	if pod != nil && pod.UID != "" {
		uid = pod.UID
	}
	if uid == "" {
		return errors.New("remotebackend: KillPod names no pod: neither pod nor runningPod has a UID")
	}
	var seconds *int64
	switch {
	case gracePeriodOverride != nil:
		seconds = gracePeriodOverride
	case pod != nil && pod.DeletionGracePeriodSeconds != nil:
		seconds = pod.DeletionGracePeriodSeconds
	case pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil:
		seconds = pod.Spec.TerminationGracePeriodSeconds
	}
	var grace *time.Duration
	if seconds != nil {
		g := time.Duration(*seconds) * time.Second
		grace = &g
	}
	if err := p.svc.Stop(ctx, uid, grace); err != nil {
		return fmt.Errorf("KillPod of pod %s: %w", uid, err)
	}
	return nil
}

// DeletePod removes the pod from the Service (Service.Delete), killing at
// once anything of it that still runs; it is forgotten at once. Deleting a
// pod the Service does not know returns nil; a nil pod is an error.
func (p *Provider) DeletePod(ctx context.Context, pod *v1.Pod) error {
	if pod == nil {
		return errors.New("remotebackend: DeletePod of a nil pod")
	}
	return p.svc.Delete(ctx, pod.UID)
}

// CleanupPods deletes from the Service every pod that none of pods,
// runningPods and possiblyRunningPods names (an orphan), killing at once
// whatever of it runs: the agent no longer knows the pod, so nothing else
// would ever stop it. Pods named by any of the three are left untouched.
func (p *Provider) CleanupPods(ctx context.Context, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error {
	keep := kri.PodsToKeep(pods, runningPods, possiblyRunningPods)
	views, err := p.svc.List(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, v := range views {
		if keep.Has(v.UID) {
			continue
		}
		if err := p.svc.Delete(ctx, v.UID); err != nil {
			errs = append(errs, fmt.Errorf("deleting orphan pod %s/%s: %w", v.Namespace, v.Name, err))
		}
	}
	return errors.Join(errs...)
}
