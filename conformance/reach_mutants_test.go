package conformance_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// reachMutants are the mutants of the specs of several containers, several
// restarts, recreated names and kills mid-way (KRI-POD-051 to 056) and of
// RefreshNodeStatus keeping foreign fields (KRI-NODE-016).
func reachMutants() []*mutant {
	return []*mutant{
		{
			name:      "restart-counts-shared",
			violation: "GetPodStatus reports the pod's highest RestartCount for every container",
			want:      []string{"KRI-POD-051", "KRI-POD-067"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					highest := 0
					for _, c := range st.ContainerStatuses {
						highest = max(highest, c.RestartCount)
					}
					for _, c := range st.ContainerStatuses {
						if c.State == pkgcontainer.ContainerStateRunning {
							c.RestartCount = highest
						}
					}
				})}
			},
		},
		{
			name:      "start-failure-blames-every-container",
			violation: "a failed start is recorded in the ReasonCache for every container of the pod",
			want:      []string{"KRI-POD-085"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					err := next.SyncPod(ctx, pod, st, rc)
					if err == nil || pod == nil || rc == nil {
						return err
					}
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
				}}
			},
		},
		{
			name:      "getpods-lists-newest-only",
			violation: "GetPods(true) lists only the newest instance of each container, while GetPodStatus reports the replaced ones too",
			want:      []string{"KRI-POD-044"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
					pods, err := next.GetPods(ctx, all)
					for _, p := range pods {
						keepNewestListed(p)
					}
					return pods, err
				}}
			},
		},
		{
			name:      "pods-keyed-by-name",
			violation: "the provider knows pods by namespace and name: a pod created again with a new UID is taken for the old one",
			want:      []string{"KRI-POD-054"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				var mu sync.Mutex
				first := map[string]types.UID{}
				alias := func(pod *v1.Pod) *v1.Pod {
					if pod == nil {
						return nil
					}
					mu.Lock()
					defer mu.Unlock()
					key := pod.Namespace + "/" + pod.Name
					uid, ok := first[key]
					if !ok {
						first[key] = pod.UID
						return pod
					}
					if uid == pod.UID {
						return pod
					}
					cp := pod.DeepCopy()
					cp.UID = uid
					return cp
				}
				return fake.Interceptors{
					SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
						return next.SyncPod(ctx, alias(pod), st, rc)
					},
					GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
						st, err := next.GetPodStatus(ctx, alias(pod))
						if st != nil && pod != nil {
							st.ID = pod.UID
						}
						return st, err
					},
				}
			},
		},
		{
			name:      "kill-spares-init-containers",
			violation: "KillPod returns nil and stops nothing while an init container runs",
			want:      []string{"KRI-POD-055", "KRI-POD-069", "KRI-POD-070"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if pod != nil && slices.ContainsFunc(rp.Containers, func(c *pkgcontainer.Container) bool {
						return c.State == pkgcontainer.ContainerStateRunning && slices.ContainsFunc(pod.Spec.InitContainers, func(ic v1.Container) bool { return ic.Name == c.Name })
					}) {
						return nil
					}
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
		},
		{
			name:      "kill-validates-the-pod",
			violation: "KillPod rejects, as SyncPod does, a pod without restart policy or commands, such as the runningPod.ToAPIPod() of an orphan",
			want:      []string{"KRI-POD-056"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if pod != nil && pod.Spec.RestartPolicy == "" {
						return errors.New("mutant: invalid pod: spec.restartPolicy is empty")
					}
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
		},
		{
			name:      "refresh-replaces-conditions",
			violation: "RefreshNodeStatus keeps only conditions of types it knows, dropping those other components set (example.com/...)",
			want:      []string{"KRI-NODE-016"},
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{RefreshNodeStatus: func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
					changed := next.RefreshNodeStatus(ctx, st)
					if st == nil {
						return changed
					}
					// Domain-qualified types (example.com/...) are never the
					// provider's own.
					own := slices.DeleteFunc(slices.Clone(st.Conditions), func(c v1.NodeCondition) bool { return strings.Contains(string(c.Type), "/") })
					if len(own) != len(st.Conditions) {
						st.Conditions = own
						return true
					}
					return changed
				}}
			},
		},
	}
}
