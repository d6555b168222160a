package conformance_test

import (
	"context"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// backendMutants are the mutants of the specs the backend freedoms
// (benign_backend_test.go) relaxed: each breaks what is left of the spec.
func backendMutants() []*mutant {
	return []*mutant{
		{
			name:      "cancelled-sync-hangs",
			violation: "SyncPod ignores a cancelled context and never returns",
			want:      []string{"KRI-POD-027"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if ctx.Err() != nil {
						forever()
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
		{
			name:      "killed-pod-half-forgotten",
			violation: "GetPodStatus reports nothing of a killed pod while GetPods(true) still lists its exited containers",
			want:      []string{"KRI-POD-086"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				killed := newUIDSet()
				return fake.Interceptors{
					KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
						err := next.KillPod(ctx, pod, rp, grace)
						if err == nil {
							killed.add(rp.ID)
						}
						return err
					},
					SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
						if pod != nil {
							killed.remove(pod.UID)
						}
						return next.SyncPod(ctx, pod, st, rc)
					},
					GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
						st, err := next.GetPodStatus(ctx, pod)
						if err == nil && st != nil && killed.has(st.ID) && len(st.GetRunningContainerStatuses()) == 0 {
							st.ContainerStatuses, st.ActiveContainerStatuses, st.SandboxStatuses = nil, nil, nil
						}
						return st, err
					},
				}
			},
		},
		{
			name:      "getpods-forgets-killed-pods",
			violation: "GetPods(true) leaves out a killed pod while GetPodStatus still reports its exited containers",
			want:      []string{"KRI-POD-086"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				killed := newUIDSet()
				return fake.Interceptors{
					KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
						err := next.KillPod(ctx, pod, rp, grace)
						if err == nil {
							killed.add(rp.ID)
						}
						return err
					},
					SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
						if pod != nil {
							killed.remove(pod.UID)
						}
						return next.SyncPod(ctx, pod, st, rc)
					},
					GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
						pods, err := next.GetPods(ctx, all)
						return slices.DeleteFunc(pods, func(p *pkgcontainer.Pod) bool { return p != nil && killed.has(p.ID) }), err
					},
				}
			},
		},
		{
			name:      "replaced-instances-lose-exit-code",
			violation: "GetPodStatus reports every instance but the newest of each container with exit code 0",
			want:      []string{"KRI-POD-053", "KRI-POD-067"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					for _, c := range st.ContainerStatuses {
						if n := newestInstance(st.ContainerStatuses, c.Name); n != c && c.State == pkgcontainer.ContainerStateExited {
							c.ExitCode = 0
						}
					}
				})}
			},
		},
	}
}

// uidSet is a set of pod UIDs safe for concurrent use.
type uidSet struct {
	mu   sync.Mutex
	uids sets.Set[types.UID]
}

func newUIDSet() *uidSet { return &uidSet{uids: sets.New[types.UID]()} }

func (s *uidSet) add(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uids.Insert(uid)
}

func (s *uidSet) remove(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uids.Delete(uid)
}

func (s *uidSet) has(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uids.Has(uid)
}
