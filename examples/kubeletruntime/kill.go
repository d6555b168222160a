package kubeletruntime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/kuberuntime"

	"github.com/kri-kit/testkit/kri"
)

// orphanGracePeriod is the grace period the kubelet gives the containers of
// a running pod it does not know (kubelet_pods.go HandlePodCleanups).
const orphanGracePeriod = int64(1)

// KillPod hands the pod to the runtime manager's KillPod, which stops the
// running containers of runningPod and then its sandboxes. The runtime
// manager gives every container at least 2 seconds (its
// minimumGracePeriodInSeconds), even with an override of 0. A nil pod is
// replaced by runningPod.ToAPIPod(), as the kubelet's
// SyncTerminatingRuntimePod does: the runtime manager needs one.
func (p *Provider) KillPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error {
	if pod == nil {
		pod = runningPod.ToAPIPod()
	}
	// A pod that is being stopped is no longer probed for liveness and
	// startup; once its containers are stopped, no longer at all: as the
	// kubelet's SyncTerminatingPod (pkg/kubelet/kubelet.go,
	// probeManager.StopLivenessAndStartup, then RemovePod) and kuscia's
	// CRIProvider.KillPod (pkg/agent/provider/pod/cri_provider.go) do.
	p.probes.StopLivenessAndStartup(pod)
	if err := p.runtime.KillPod(ctx, pod, runningPod, gracePeriodOverride); err != nil {
		return err
	}
	p.probes.RemovePod(pod)
	return nil
}

// DeletePod makes sure nothing of pod runs any longer (killing it with its
// own grace period if something does; node agents kill pods before they
// delete them) and lets the pod go: its back-off entries are dropped and the
// garbage collector removes its dead containers and sandboxes on its next
// round. The kubelet's runtime has no DeletePod: dead containers stay until
// the garbage collector takes them, so GetPods(true) and GetPodStatus keep
// reporting them until then.
func (p *Provider) DeletePod(ctx context.Context, pod *v1.Pod) error {
	if err := validatePod("DeletePod", pod); err != nil {
		return err
	}
	st, err := p.GetPodStatus(ctx, pod)
	if err != nil {
		return err
	}
	if running := activePart(st); len(running.Containers) > 0 || len(running.Sandboxes) > 0 {
		running := pkgcontainer.ConvertPodStatusToRunningPod(p.runtimeName, st)
		if err := p.KillPod(ctx, pod, running, nil); err != nil {
			return err
		}
	}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			p.backOff.Reset(kuberuntime.GetBackoffKey(pod, &cs[i]))
		}
	}
	// Its probe workers end (KillPod ended them if it ran; a pod that
	// never ran or was killed by the agent with its own pod value may still
	// have some).
	p.probes.RemovePod(pod)
	p.statuses.remove(pod.UID)
	p.pods.markRemoved(pod.UID)
	return nil
}

// activePart returns the running containers and ready sandboxes of st.
func activePart(st *pkgcontainer.PodStatus) pkgcontainer.Pod {
	var out pkgcontainer.Pod
	for _, c := range st.ContainerStatuses {
		if c.State == pkgcontainer.ContainerStateRunning {
			out.Containers = append(out.Containers, &pkgcontainer.Container{ID: c.ID, Name: c.Name})
		}
	}
	for _, sb := range st.SandboxStatuses {
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			out.Sandboxes = append(out.Sandboxes, &pkgcontainer.Container{Name: sb.Id})
		}
	}
	return out
}

// CleanupPods does what the kubelet's HandlePodCleanups does with the
// runtime: it kills, with a grace period of 1 second (2 after the runtime
// manager's minimum), every pod that GetPods(false) lists (a running
// container or a ready sandbox) and that none of the arguments names, and
// lets it go as DeletePod does. The kills run concurrently, as the
// kubelet's pod workers run them, and are over when CleanupPods returns. It
// also drops expired back-off entries, as kuscia's CRIProvider.CleanupPods
// does.
func (p *Provider) CleanupPods(ctx context.Context, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error {
	p.backOff.GC()
	known := kri.PodsToKeep(pods, runningPods, possiblyRunningPods)
	// The probe workers of every other pod end, as the kubelet's
	// HandlePodCleanups (pkg/kubelet/kubelet_pods.go) and kuscia's
	// CRIProvider.CleanupPods call probeManager.CleanupPods with
	// possiblyRunningPods; here with every pod the arguments name, which
	// includes them.
	desired := make(map[types.UID]sets.Empty, len(known))
	for uid := range known {
		desired[uid] = sets.Empty{}
	}
	p.probes.CleanupPods(desired)
	p.statuses.retain(known)
	running, err := p.runtime.GetPods(ctx, false)
	if err != nil {
		return err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, rp := range running {
		if known.Has(rp.ID) {
			continue
		}
		wg.Go(func() {
			grace := orphanGracePeriod
			err := p.KillPod(ctx, nil, *rp, &grace)
			if err == nil {
				p.pods.markRemoved(rp.ID)
				return
			}
			mu.Lock()
			errs = append(errs, fmt.Errorf("orphan pod %s/%s (%s): %w", rp.Namespace, rp.Name, rp.ID, err))
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("kubeletruntime: CleanupPods: %w", errors.Join(errs...))
	}
	return nil
}
