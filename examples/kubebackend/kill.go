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

	"github.com/kri-kit/testkit/kri"
)

// KillPod deletes the pod's mirror with the grace period the kubelet's
// runtime would give (kri.RuntimeGracePeriod: gracePeriodOverride, else the
// pod's DeletionGracePeriodSeconds, else its TerminationGracePeriodSeconds,
// else 2s; never less than the runtime's 2s, so that the backend's kubelet
// sends SIGTERM and a deletion is never immediate) and waits until the
// mirror is gone from the API server and from the informer, or ctx is done.
// The backend's kubelet stops the containers (SIGTERM, SIGKILL once the
// grace period is over) and finishes the deletion. Afterwards the provider
// has forgotten the pod, as kuscia's K8sProvider has: GetPodStatus reports
// it as unknown and GetPods does not list it. A pod without mirror is
// killed at once (nil).
//
// With a nil pod (an orphan), runningPod names the pod (ID, namespace,
// name), and the grace periods are the mirror's, as the kubelet's runtime
// reads an orphan's from its containers' labels. A context that ends first
// returns its error, wrapped; the deletion goes on in the backend.
func (p *Provider) KillPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error {
	uid, namespace, name := runningPod.ID, runningPod.Namespace, runningPod.Name
	if pod != nil {
		uid, namespace, name = pod.UID, pod.Namespace, pod.Name
	}
	if uid == "" {
		return fmt.Errorf("kubebackend: KillPod of pod %s/%s without UID", namespace, name)
	}
	bkName := MirrorName(namespace, name, uid)
	spec := pod
	if spec == nil {
		spec, _ = p.lister.Get(bkName) // none: RuntimeGracePeriod's default
	}
	grace := kri.RuntimeGracePeriod(spec, gracePeriodOverride)
	err := p.client.CoreV1().Pods(p.namespace).Delete(ctx, bkName, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("KillPod of pod %s/%s: deleting its mirror %s/%s: %w", namespace, name, p.namespace, bkName, err)
	}
	if err := p.waitGone(ctx, bkName, uid); err != nil {
		return fmt.Errorf("KillPod of pod %s/%s: waiting for its mirror %s/%s to go: %w", namespace, name, p.namespace, bkName, err)
	}
	return nil
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
