package conformance_test

import (
	"context"
	"slices"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podReasonCacheBenign are the benign variants of the group "reason-cache"
// (pod_reason_cache.go): the fake taking one freedom each, which the suite
// must pass.
func podReasonCacheBenign() []*benign {
	return []*benign{
		{
			name:    "start-success-one-sync-late",
			freedom: "a successful start reported to the ReasonCache at the next SyncPod, the first handed a status that shows the container running, as a backend that starts containers asynchronously learns of it",
			pod:     func(*fake.PodProvider) interceptor.PodFuncs { return lateStartSuccess() },
		},
		{
			name:    "start-failures-in-refresh-only",
			warns:   []string{"KRI-POD-034", "KRI-POD-085"},
			freedom: "a failed start neither written to the ReasonCache nor returned by SyncPod, the Waiting reason coming from RefreshPodStatus (the backend's status)",
			pod:     func(*fake.PodProvider) interceptor.PodFuncs { return startFailuresInRefreshOnly() },
		},
	}
}

// lateStartSuccess reports container starts to the ReasonCache as a
// provider does whose backend starts containers asynchronously: a failed
// start at once, a successful one only at the next SyncPod, once the status
// handed in shows the container running. Until then an earlier failure
// stays in the cache.
func lateStartSuccess() interceptor.PodFuncs {
	return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
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

// startFailuresInRefreshOnly hands SyncPod a ReasonCache of its own and
// swallows the error of a failed start: the agent learns of the failure
// only from RefreshPodStatus, which the fake fills with the failure's
// Waiting reason, as a backend cluster's status carries it.
func startFailuresInRefreshOnly() interceptor.PodFuncs {
	return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
		own := kri.NewReasonCache()
		err := next.SyncPod(ctx, pod, st, own)
		if err != nil && pod != nil {
			for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
				if _, failed := own.Get(pod.UID, c.Name); failed {
					return nil
				}
			}
		}
		return err
	}}
}
