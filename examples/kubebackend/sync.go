package kubebackend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
	"github.com/kri-kit/testkit/sim/workload"
)

// SyncPod creates the pod's mirror in the backend cluster when it has none
// (as kuscia's K8sProvider applies it), brings the images of an existing
// mirror up to date (the one change of a pod the API server allows), and
// reports to reasonCache what the backend's kubelet last reported of each
// container's start: success for a container that runs or has run; the
// failure for one Waiting with a start failure (ErrImagePull as
// workload.ErrImagePull, ImagePullBackOff as ErrImagePullBackOff,
// RunContainerError as pkgcontainer.ErrRunContainer, any other reason as an
// error of that text), and pkgcontainer.ErrCrashLoopBackOff for one in
// back-off. The backend starts containers on its own time: what SyncPod
// reports is the backend's status as the informer last saw it, so a start
// shows one SyncPod later than it happened.
//
// It returns an error naming every container whose latest start failed;
// waiting out a crash-loop back-off is not an error (kuscia's CRIProvider
// treats back-off the same way). podStatus is not needed: the backend knows
// what runs. A nil pod, a pod without UID, a nil reasonCache and a pod with
// two containers of the same name are rejected with an error, and nothing
// changes. When a call to the backend's API server fails, SyncPod returns
// its error and asks the agent for another sync SyncRetryPeriod later.
func (p *Provider) SyncPod(ctx context.Context, pod *v1.Pod, _ *pkgcontainer.PodStatus, reasonCache *kri.ReasonCache) error {
	if err := validatePod(pod); err != nil {
		return err
	}
	if reasonCache == nil {
		return errors.New("kubebackend: SyncPod needs a ReasonCache, got nil")
	}
	if err := p.informers(ctx); err != nil {
		return fmt.Errorf("SyncPod of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	bk, err := p.syncMirror(ctx, pod)
	if err != nil {
		// A call to the backend's API server failed: nothing the
		// informer will report follows, so the provider asks for the
		// retry itself, after the kubelet's pod worker back-off.
		p.NotifyAfter(pod.UID, SyncRetryPeriod)
		return fmt.Errorf("SyncPod of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if bk == nil {
		return nil // created: the backend has not started anything yet
	}
	if bk.DeletionTimestamp != nil {
		// The informer reports its deletion, and the agent syncs again.
		return fmt.Errorf("SyncPod of pod %s/%s: its mirror %s/%s is being deleted; a later SyncPod creates it again", pod.Namespace, pod.Name, bk.Namespace, bk.Name)
	}
	// A failed start is retried by the backend's kubelet, and the
	// informer reports it.
	return reportStarts(pod, bk, reasonCache)
}

// SyncRetryPeriod is how long after a SyncPod that failed on a call to the
// backend's API server (creating the namespace or the mirror, updating its
// images) the provider asks the agent to sync the pod again: the kubelet's
// pod worker back-off (pod_workers.go completeWork, kubelet.go
// backOffPeriod), which kuscia's agent never applies.
const SyncRetryPeriod = 10 * time.Second

// syncMirror creates pod's mirror when it has none (and returns nil), else
// brings its images up to date and returns it; an error says which call to
// the backend failed.
func (p *Provider) syncMirror(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if err := p.ensureNamespace(ctx); err != nil {
		return nil, err
	}
	bk, err := p.mirrorOf(pod.Namespace, pod.Name, pod.UID)
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading its mirror: %w", err)
	case bk == nil:
		return nil, p.create(ctx, pod)
	case bk.DeletionTimestamp != nil:
		return bk, nil
	}
	return bk, p.updateImages(ctx, pod, bk)
}

func validatePod(pod *v1.Pod) error {
	if pod == nil {
		return errors.New("kubebackend: nil pod")
	}
	if pod.UID == "" {
		return fmt.Errorf("kubebackend: pod %s/%s has no UID", pod.Namespace, pod.Name)
	}
	seen := map[string]bool{}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if seen[c.Name] {
			return fmt.Errorf("kubebackend: pod %s/%s has two containers named %q", pod.Namespace, pod.Name, c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// mirror is the backend pod for pod: its spec, bound to the provider's
// backend node (or left to the scheduler), its labels and annotations with
// the provider's own, in the backend namespace, without status.
func (p *Provider) mirror(pod *v1.Pod) *v1.Pod {
	bk := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   p.namespace,
			Name:        MirrorName(pod.Namespace, pod.Name, pod.UID),
			Labels:      map[string]string{},
			Annotations: map[string]string{},
		},
		Spec: *pod.Spec.DeepCopy(),
	}
	for k, v := range pod.Labels {
		bk.Labels[k] = v
	}
	for k, v := range pod.Annotations {
		bk.Annotations[k] = v
	}
	bk.Labels[LabelAgent] = p.agent
	bk.Annotations[AnnotationPodUID] = string(pod.UID)
	bk.Annotations[AnnotationPodNamespace] = pod.Namespace
	bk.Annotations[AnnotationPodName] = pod.Name
	// The agent's node, scheduler and service account mean nothing in the
	// backend cluster.
	bk.Spec.NodeName, bk.Spec.NodeSelector, bk.Spec.SchedulerName = p.nodeName, nil, ""
	bk.Spec.ServiceAccountName, bk.Spec.DeprecatedServiceAccount = "", ""
	return bk
}

// create creates pod's mirror. One that exists already (the informer had
// not seen it yet) is fine.
func (p *Provider) create(ctx context.Context, pod *v1.Pod) error {
	bk := p.mirror(pod)
	_, err := p.client.CoreV1().Pods(p.namespace).Create(ctx, bk, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating its mirror %s/%s: %w", bk.Namespace, bk.Name, err)
	}
	return nil
}

// updateImages sets the images of bk's containers to those of pod, retried
// on conflicts with the latest version of the mirror.
func (p *Provider) updateImages(ctx context.Context, pod, bk *v1.Pod) error {
	if sameImages(pod, bk) {
		return nil
	}
	pods := p.client.CoreV1().Pods(p.namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		latest, err := pods.Get(ctx, bk.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading mirror %s/%s to update its images: %w", bk.Namespace, bk.Name, err)
		}
		if latest.UID != bk.UID {
			return fmt.Errorf("mirror %s/%s was replaced while its images were updated", bk.Namespace, bk.Name)
		}
		setImages(latest, pod)
		if _, err := pods.Update(ctx, latest, metav1.UpdateOptions{}); err != nil {
			return err
		}
		return nil
	})
}

func sameImages(pod, bk *v1.Pod) bool {
	images := func(p *v1.Pod) map[string]string {
		m := map[string]string{}
		for _, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
			m[c.Name] = c.Image
		}
		return m
	}
	want, have := images(pod), images(bk)
	for name, image := range want {
		if h, ok := have[name]; ok && h != image {
			return false
		}
	}
	return true
}

func setImages(bk, pod *v1.Pod) {
	images := map[string]string{}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		images[c.Name] = c.Image
	}
	for _, list := range [][]v1.Container{bk.Spec.InitContainers, bk.Spec.Containers} {
		for i := range list {
			if image, ok := images[list[i].Name]; ok {
				list[i].Image = image
			}
		}
	}
}

// reportStarts reports to reasonCache the latest start of every container
// of pod as the backend's status bk shows it, and returns an error naming
// the containers whose start failed.
func reportStarts(pod, bk *v1.Pod, reasonCache *kri.ReasonCache) error {
	images := map[string]string{}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		images[c.Name] = c.Image
	}
	var result pkgcontainer.PodSyncResult
	var failed []string
	for _, cs := range slices.Concat(bk.Status.InitContainerStatuses, bk.Status.ContainerStatuses) {
		image, ok := images[cs.Name]
		if !ok {
			continue
		}
		r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, cs.Name)
		switch w := cs.State.Waiting; {
		case w != nil && (w.Reason == "" || w.Reason == podstatus.ReasonContainerCreating || w.Reason == podstatus.ReasonPodInitializing):
			continue // not tried yet
		case w != nil && cs.Image != "" && cs.Image != image:
			continue // a failure of the image before; the new one is not tried yet
		case w != nil:
			r.Fail(waitingError(w.Reason), w.Message)
			if w.Reason != pkgcontainer.ErrCrashLoopBackOff.Error() {
				failed = append(failed, fmt.Sprintf("container %q: %s: %s", cs.Name, w.Reason, w.Message))
			}
		case cs.State.Running == nil && cs.State.Terminated == nil:
			continue
		}
		result.AddSyncResult(r)
	}
	reasonCache.Update(pod.UID, result)
	if len(failed) > 0 {
		return fmt.Errorf("SyncPod of pod %s/%s: the backend failed to start %s", pod.Namespace, pod.Name, strings.Join(failed, "; "))
	}
	return nil
}

// waitingError is the error a node agent knows a Waiting reason by.
func waitingError(reason string) error {
	for _, err := range []error{
		pkgcontainer.ErrCrashLoopBackOff, pkgcontainer.ErrRunContainer, workload.ErrImagePull, ErrImagePullBackOff, workload.ErrImageNeverPull,
	} {
		if err.Error() == reason {
			return err
		}
	}
	return errors.New(reason)
}
