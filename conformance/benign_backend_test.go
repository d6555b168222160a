package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// backendFreedoms are the freedoms of providers that front a backend: a
// backend cluster (secretflow/kuscia's K8sProvider) or a real CRI runtime
// behind the kubelet's runtime manager (kuscia's CRIProvider).
func backendFreedoms() []*benign {
	return []*benign{
		{
			name:    "forgets-on-kill",
			freedom: "forgetting a pod as KillPod stops it, as a provider that deletes the backend cluster's pod does (GetPodStatus then reports it unknown, GetPods leaves it out)",
			pod:     func(*fake.PodProvider) fake.Interceptors { return forgetOnKill() },
		},
		{
			name:    "cancelled-error-as-text",
			freedom: "the error of a call whose context is done: a message in which neither the context's error nor a gRPC status survives, as the kubelet's runtime manager over containerd returns it (failed to \"CreatePodSandbox\" ... rpc error: code = Canceled)",
			pod:     func(*fake.PodProvider) fake.Interceptors { return cancelledAsText() },
		},
		{
			name:    "start-success-one-sync-late",
			freedom: "a successful start reported to the ReasonCache at the next SyncPod, the first handed a status that shows the container running, as a backend that starts containers asynchronously learns of it",
			pod:     func(*fake.PodProvider) fake.Interceptors { return lateStartSuccess() },
		},
	}
}

// forgetOnKill makes KillPod forget the pod once it has stopped it (the
// fake's DeletePod), as kuscia's K8sProvider, whose KillPod deletes the
// backend pod: afterwards GetPodStatus reports the pod unknown and GetPods
// does not list it.
func forgetOnKill() fake.Interceptors {
	return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
		if err := next.KillPod(ctx, pod, rp, grace); err != nil {
			return err
		}
		if pod == nil {
			pod = rp.ToAPIPod()
		}
		if pod.UID == "" {
			return nil
		}
		return next.DeletePod(context.WithoutCancel(ctx), pod)
	}}
}

// canceledText is what the kubelet's runtime manager over containerd
// returns from SyncPod with a cancelled context: the SyncResult's error
// (ErrCreatePodSandbox) wraps nothing of the context, and the gRPC status
// survives only as text in the message.
func canceledText(pod *v1.Pod) error {
	target := "<nil>"
	if pod != nil {
		target = fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
	}
	r := pkgcontainer.NewSyncResult(pkgcontainer.CreatePodSandbox, target)
	r.Fail(pkgcontainer.ErrCreatePodSandbox, `rpc error: code = Canceled desc = context canceled`)
	result := pkgcontainer.PodSyncResult{SyncResults: []*pkgcontainer.SyncResult{r}}
	return result.Error()
}

// cancelledAsText makes every pod method called with a done context return
// at once with an error that is text only, as a remote runtime's error
// does once the kubelet's runtime manager has formatted it.
func cancelledAsText() fake.Interceptors {
	text := func(method string) error {
		return errors.New(method + ": rpc error: code = Canceled desc = context canceled")
	}
	return fake.Interceptors{
		SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
			if ctx.Err() != nil {
				return canceledText(pod)
			}
			return next.SyncPod(ctx, pod, st, rc)
		},
		GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
			if ctx.Err() != nil {
				return nil, text("ListPodSandbox")
			}
			return next.GetPodStatus(ctx, pod)
		},
		GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
			if ctx.Err() != nil {
				return nil, text("ListContainers")
			}
			return next.GetPods(ctx, all)
		},
		KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
			if ctx.Err() != nil {
				return fmt.Errorf("failed to %q for %q with %w: %q", pkgcontainer.KillContainer, "app", pkgcontainer.ErrKillContainer, "rpc error: code = Canceled desc = context canceled")
			}
			return next.KillPod(ctx, pod, rp, grace)
		},
		DeletePod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) error {
			if ctx.Err() != nil {
				return text("StopPodSandbox")
			}
			return next.DeletePod(ctx, pod)
		},
		CleanupPods: func(ctx context.Context, next kri.PodProvider, pods []*v1.Pod, rps []*pkgcontainer.Pod, possibly map[types.UID]sets.Empty) error {
			if ctx.Err() != nil {
				return text("ListPodSandbox")
			}
			return next.CleanupPods(ctx, pods, rps, possibly)
		},
	}
}

// lateStartSuccess reports container starts to the ReasonCache as a
// provider does whose backend starts containers asynchronously: a failed
// start at once, a successful one only at the next SyncPod, once the status
// handed in shows the container running. Until then an earlier failure
// stays in the cache.
func lateStartSuccess() fake.Interceptors {
	return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
		if pod == nil || rc == nil {
			return next.SyncPod(ctx, pod, st, rc)
		}
		own := kri.NewReasonCache()
		err := next.SyncPod(ctx, pod, st, own)
		var result pkgcontainer.PodSyncResult
		for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
			r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
			switch item, failed := own.Get(pod.UID, c.Name); {
			case failed:
				r.Fail(item.Err, item.Message)
			case st == nil || !slices.ContainsFunc(st.ContainerStatuses, func(s *pkgcontainer.Status) bool {
				return s != nil && s.Name == c.Name && s.State == pkgcontainer.ContainerStateRunning
			}):
				continue // started now, perhaps: the backend will tell
			}
			result.AddSyncResult(r)
		}
		rc.Update(pod.UID, result)
		return err
	}}
}
