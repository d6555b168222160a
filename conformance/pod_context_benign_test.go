package conformance_test

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podContextBenign are the benign variants of the group "context"
// (pod_context.go): the fake taking one freedom each, which the suite must
// pass.
func podContextBenign() []*benign {
	return []*benign{
		{
			name:    "cancelled-error-as-text",
			freedom: "the error of a call whose context is done: a message in which neither the context's error nor a gRPC status survives, as the kubelet's runtime manager over containerd returns it (failed to \"CreatePodSandbox\" ... rpc error: code = Canceled)",
			pod:     func(*fake.PodProvider) interceptor.PodFuncs { return cancelledAsText() },
		},
	}
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
func cancelledAsText() interceptor.PodFuncs {
	text := func(method string) error {
		return errors.New(method + ": rpc error: code = Canceled desc = context canceled")
	}
	return interceptor.PodFuncs{
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
