package kubebackend

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// KillPod deletes the pod's mirror with the grace period the kubelet would
// give (gracePeriodOverride, else the pod's DeletionGracePeriodSeconds, else
// its TerminationGracePeriodSeconds, else the API server's default of 30s;
// at least 1s, so that the backend's kubelet sends SIGTERM before it kills)
// and waits until the mirror is gone from the API server and from the
// informer, or ctx is done. The backend's kubelet stops the containers
// (SIGTERM, SIGKILL once the grace period is over) and finishes the
// deletion. Afterwards the provider has forgotten the pod, as kuscia's
// K8sProvider has: GetPodStatus reports it as unknown and GetPods does not
// list it. A pod without mirror is killed at once (nil).
//
// With a nil pod (an orphan), runningPod names the pod (ID, namespace,
// name). A context that ends first returns its error, wrapped; the deletion
// goes on in the backend.
func (p *Provider) KillPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error {
	uid, namespace, name := runningPod.ID, runningPod.Namespace, runningPod.Name
	if pod != nil {
		uid, namespace, name = pod.UID, pod.Namespace, pod.Name
	}
	if uid == "" {
		return fmt.Errorf("kubebackend: KillPod of pod %s/%s without UID", namespace, name)
	}
	grace := max(effectiveGrace(pod, gracePeriodOverride), 1)
	bkName := MirrorName(namespace, name, uid)
	err := p.client.CoreV1().Pods(p.namespace).Delete(ctx, bkName, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("KillPod of pod %s/%s: deleting its mirror %s/%s: %w", namespace, name, p.namespace, bkName, err)
	}
	if err := p.waitGone(ctx, bkName, uid); err != nil {
		return fmt.Errorf("KillPod of pod %s/%s: waiting for its mirror %s/%s to go: %w", namespace, name, p.namespace, bkName, err)
	}
	return nil
}

// effectiveGrace is the grace period the kubelet gives when it kills pod
// (killPodWithSyncResult's callers, kuberuntime's killContainer): the
// override, else the pod's DeletionGracePeriodSeconds, else its
// TerminationGracePeriodSeconds, else the default.
func effectiveGrace(pod *v1.Pod, override *int64) int64 {
	switch {
	case override != nil:
		return *override
	case pod == nil:
	case pod.DeletionGracePeriodSeconds != nil:
		return *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return v1.DefaultTerminationGracePeriodSeconds
}

// waitGone waits until the API server no longer has the mirror named name
// of the agent's pod uid, then until the informer has seen it go.
func (p *Provider) waitGone(ctx context.Context, name string, uid types.UID) error {
	pods := p.client.CoreV1().Pods(p.namespace)
	return wait.PollUntilContextCancel(ctx, p.poll, true, func(ctx context.Context) (bool, error) {
		bk, err := pods.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return false, err
		case bk.Annotations[AnnotationPodUID] == string(uid):
			return false, nil
		}
		cached, err := p.lister.Get(name)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && cached.Annotations[AnnotationPodUID] != string(uid), err
	})
}

// DeletePod does nothing, as kuscia's K8sProvider: KillPod has deleted the
// mirror already. It returns nil.
func (p *Provider) DeletePod(context.Context, *v1.Pod) error { return nil }

// CleanupPods does nothing, as kuscia's K8sProvider: the provider declares
// no orphan cleanup (the agent kills the orphans GetPods lists itself, as
// the kubelet's HandlePodCleanups does). It returns nil.
func (p *Provider) CleanupPods(context.Context, []*v1.Pod, []*pkgcontainer.Pod, map[types.UID]sets.Empty) error {
	return nil
}
