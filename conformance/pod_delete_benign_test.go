package conformance_test

import (
	"context"
	"errors"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podDeleteBenign are the benign variants of the group "delete"
// (pod_delete.go): the fake taking one freedom each, which the suite must
// pass.
func podDeleteBenign() []*benign {
	return []*benign{
		{
			name:    "delete-then-collect-later",
			freedom: "dead containers collected a while after DeletePod (the kubelet's runtime has no DeletePod; its GC runs later)",
			pod:     func(*fake.PodProvider) interceptor.PodFuncs { return collectLater() },
		},
	}
}

// collectDelay is how long the delete-then-collect-later variant keeps a
// deleted pod's dead containers.
const collectDelay = 300 * time.Millisecond

// collectLater makes DeletePod stop the pod's containers at once (a kill
// with grace 0) and forget the pod only collectDelay later.
func collectLater() interceptor.PodFuncs {
	return interceptor.PodFuncs{DeletePod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) error {
		if pod == nil {
			return next.DeletePod(ctx, pod)
		}
		zero := int64(0)
		if err := next.KillPod(ctx, pod, pkgcontainer.Pod{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}, &zero); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		pod = pod.DeepCopy()
		time.AfterFunc(collectDelay, func() { _ = next.DeletePod(context.Background(), pod) })
		return nil
	}}
}
