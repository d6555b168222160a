package conformance_test

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
	"github.com/kri-kit/testkit/sim/workload"
)

// podspecImageMutants are the mutants of the pod-spec capability "image"
// (podspec_image.go): the hostprocess example with one contract violation each
// (selftest_hostprocess_test.go), and the specs it must fail.
func podspecImageMutants() []*mutant {
	return []*mutant{
		{
			name:      "host-never-pull-ignored",
			violation: "imagePullPolicy Never is ignored: an absent image is pulled (and fails with ErrImagePull)",
			want:      []string{"KRI-POD-057"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					if c.ImagePullPolicy == v1.PullNever {
						c.ImagePullPolicy = v1.PullIfNotPresent
					}
				})}
			},
		},
		{
			name:      "host-pull-failure-as-run-error",
			violation: "a failed image pull is reported as RunContainerError, not ErrImagePull",
			want: []string{
				"KRI-POD-058",
				// KRI-POD-094 waits for the failed pull's Waiting reason.
				"KRI-POD-094",
			},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{
					SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
						err := next.SyncPod(ctx, pod, st, rc)
						if pod == nil || rc == nil {
							return err
						}
						var result pkgcontainer.PodSyncResult
						for _, c := range pod.Spec.Containers {
							if item, ok := rc.Get(pod.UID, c.Name); ok && errors.Is(item.Err, workload.ErrImagePull) {
								r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
								r.Fail(pkgcontainer.ErrRunContainer, item.Message)
								result.AddSyncResult(r)
							}
						}
						if len(result.SyncResults) > 0 {
							rc.Update(pod.UID, result)
						}
						return err
					},
					RefreshPodStatus: refreshEdit(func(cs *v1.ContainerStatus) {
						if w := cs.State.Waiting; w != nil && w.Reason == workload.ErrImagePull.Error() {
							w.Reason = pkgcontainer.ErrRunContainer.Error()
						}
					}),
				}
			},
		},
	}
}
