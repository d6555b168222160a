package conformance_test

import (
	"context"
	"errors"
	"slices"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podReasonCacheMutants are the mutants of the group "reason-cache"
// (pod_reason_cache.go): the fake with one contract violation each, and the
// specs it must fail.
func podReasonCacheMutants() []*mutant {
	return []*mutant{
		{
			name:      "reason-cache-never-updated",
			violation: "SyncPod reports container starts to a ReasonCache of its own",
			want:      []string{"KRI-POD-085"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if rc != nil {
						rc = kri.NewReasonCache()
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
		{
			name:      "reason-cache-never-cleared",
			violation: "SyncPod reports failed starts but never successful ones, so failures are never cleared",
			want:      []string{"KRI-POD-013"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if rc == nil || pod == nil {
						return next.SyncPod(ctx, pod, st, rc)
					}
					own := kri.NewReasonCache()
					err := next.SyncPod(ctx, pod, st, own)
					for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
						if item, ok := own.Get(pod.UID, c.Name); ok {
							r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
							r.Fail(item.Err, item.Message)
							rc.Update(pod.UID, pkgcontainer.PodSyncResult{SyncResults: []*pkgcontainer.SyncResult{r}})
						}
					}
					return err
				}}
			},
		},
		{
			name:      "sync-hides-start-failures",
			violation: "SyncPod returns nil although a container failed to start",
			want:      []string{"KRI-POD-085"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: afterFailedSync(func(pod *v1.Pod, rc *kri.ReasonCache, err error) error {
					for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
						if _, failed := rc.Get(pod.UID, c.Name); failed {
							return nil // hide the error of a failed start
						}
					}
					return err
				})}
			},
		},
		{
			name:      "waiting-without-reason",
			violation: "RefreshPodStatus drops the reason of a container whose start failed",
			want: []string{
				"KRI-POD-012", "KRI-POD-013", "KRI-POD-026", "KRI-POD-052", "KRI-POD-057", "KRI-POD-058",
				// KRI-POD-094 waits for the failed pull's Waiting reason.
				"KRI-POD-094",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
					next.RefreshPodStatus(pod, ps)
					if unknownPod(context.Background(), next, pod) {
						return
					}
					for i := range ps.ContainerStatuses {
						if w := ps.ContainerStatuses[i].State.Waiting; w != nil {
							w.Reason, w.Message = "", ""
						}
					}
				}}
			},
		},

		// Fields a node agent reads (KRI-POD-036 to 044).
		// Inputs (KRI-POD-045 to 050) and SyncPod's error.
		{
			name:      "sync-error-names-nothing",
			violation: "SyncPod's error does not say which container failed to start",
			want:      []string{"KRI-POD-085"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					err := next.SyncPod(ctx, pod, st, rc)
					if err != nil && !errors.Is(err, context.Canceled) {
						return errors.New("mutant: sync failed")
					}
					return err
				}}
			},
		},
		{
			name:      "start-failure-blames-every-container",
			violation: "a failed start is recorded in the ReasonCache for every container of the pod",
			want:      []string{"KRI-POD-085"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: afterFailedSync(func(pod *v1.Pod, rc *kri.ReasonCache, err error) error {
					var result pkgcontainer.PodSyncResult
					for _, c := range pod.Spec.Containers {
						if _, failed := rc.Get(pod.UID, c.Name); !failed {
							r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
							r.Fail(pkgcontainer.ErrRunContainer, "mutant: the pod failed to start")
							result.AddSyncResult(r)
						}
					}
					rc.Update(pod.UID, result)
					return err
				})}
			},
		},
	}
}
