package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podSyncMutants are the mutants of the group "sync" (pod_sync.go): the fake
// with one contract violation each, and the specs it must fail.
func podSyncMutants() []*mutant {
	return []*mutant{
		{
			name:      "sync-fails-while-cache-lags",
			violation: "the SyncPod right after the one that started a pod fails with \"already exists\" (a backend pod created while the informer's cache has not seen it yet; the informer then brings it and the provider asks for a sync, as kuscia's K8sProvider does)",
			// KRI-POD-085: at kuscia's cadence the failing SyncPod is
			// the one that should report a failed start, and its error
			// names no container.
			want: []string{"KRI-POD-001", "KRI-POD-003", "KRI-POD-085"},
			podLater: func(_ *fake.PodProvider, later *laterCalls) interceptor.PodFuncs {
				var mu sync.Mutex
				syncs := map[types.UID]int{}
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if pod != nil {
						mu.Lock()
						syncs[pod.UID]++
						n := syncs[pod.UID]
						mu.Unlock()
						if n == 2 {
							later.after(pod.UID, 0)
							return fmt.Errorf("failed to apply pod %s/%s: pods %q already exists", pod.Namespace, pod.Name, pod.Name)
						}
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
		{
			name:      "sync-duplicates-running-containers",
			violation: "SyncPod of a running pod starts a second instance of each running container",
			want: []string{
				"KRI-POD-003", "KRI-POD-051", "KRI-POD-067", "KRI-POD-068",
				// KRI-POD-080 checks that a resized container keeps its instance.
				"KRI-POD-080",
				// At kuscia's cadence (a sync when the provider calls HandlePodSyncByUID) these fail too: they wait to see one instance per container.
				"KRI-POD-048", "KRI-POD-049", "KRI-POD-054", "KRI-POD-082", "KRI-POD-086", "KRI-POD-092", "KRI-POD-095",
				// KRI-POD-108 waits, as 092 does, for a pod whose container runs once to be published Succeeded.
				"KRI-POD-108",
			},
			pod: duplicator,
		},
		{
			name:      "syncpod-blocks-forever",
			violation: "SyncPod never returns (and ignores its context)",
			want: []string{
				"KRI-POD-001", "KRI-POD-003", "KRI-POD-004", "KRI-POD-005", "KRI-POD-006", "KRI-POD-007", "KRI-POD-008", "KRI-POD-009", "KRI-POD-010", "KRI-POD-011", "KRI-POD-012", "KRI-POD-013", "KRI-POD-014", "KRI-POD-015", "KRI-POD-020", "KRI-POD-021", "KRI-POD-022", "KRI-POD-023", "KRI-POD-025", "KRI-POD-026", "KRI-POD-027", "KRI-POD-028", "KRI-POD-033", "KRI-POD-034", "KRI-POD-035", "KRI-POD-036", "KRI-POD-037", "KRI-POD-038", "KRI-POD-039", "KRI-POD-040", "KRI-POD-041", "KRI-POD-042", "KRI-POD-043", "KRI-POD-044", "KRI-POD-045", "KRI-POD-046", "KRI-POD-049", "KRI-POD-050", "KRI-POD-051", "KRI-POD-052", "KRI-POD-053", "KRI-POD-054", "KRI-POD-055", "KRI-POD-057", "KRI-POD-058", "KRI-POD-059", "KRI-POD-060", "KRI-POD-061", "KRI-POD-066", "KRI-POD-067", "KRI-POD-068", "KRI-POD-069", "KRI-POD-070", "KRI-POD-071", "KRI-POD-084", "KRI-POD-085", "KRI-POD-086", "KRI-POD-095", "KRI-POD-096", "KRI-POD-097", "KRI-POD-098", "KRI-POD-100",
				// The lifecycle hook specs sync their pods.
				"KRI-POD-062", "KRI-POD-063", "KRI-POD-064", "KRI-POD-065",
				// The probe specs sync their pods.
				"KRI-POD-072", "KRI-POD-073", "KRI-POD-074", "KRI-POD-075", "KRI-POD-076", "KRI-POD-077", "KRI-POD-101", "KRI-POD-107",
				// The resize specs sync their pods.
				"KRI-POD-080", "KRI-POD-081", "KRI-POD-082",
				// The network probe specs sync their pods.
				"KRI-POD-087", "KRI-POD-088", "KRI-POD-089", "KRI-POD-090", "KRI-POD-105", "KRI-POD-106",
				// KRI-POD-091 syncs its pod.
				"KRI-POD-091",
				// The notify specs wait for the syncs the provider asks for.
				"KRI-POD-092", "KRI-POD-093", "KRI-POD-094", "KRI-POD-108",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(context.Context, kri.PodProvider, *v1.Pod, *pkgcontainer.PodStatus, *kri.ReasonCache) error {
					forever()
					return nil
				}}
			},
			// Every spec that syncs waits one call timeout: keep it short.
			// That needs a call timeout below the one-second grace period,
			// so the grace-period specs (which would fail the same way)
			// are left out.
			withoutCaps: []conformance.Capability{conformance.CapGracePeriod},
			timeouts: &conformance.Timeouts{Call: 600 * time.Millisecond, State: 3 * time.Second, Poll: 10 * time.Millisecond,
				Stable: 100 * time.Millisecond, ShortRun: 50 * time.Millisecond},
			check: expectFailureMessage("KRI-POD-001", "SyncPod did not return within 600ms"),
			cost:  3,
		},
		{
			name:      "sync-rejects-nil-status",
			violation: "SyncPod fails when it is handed no status",
			want:      []string{"KRI-POD-046"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if st == nil {
						return errors.New("mutant: podStatus is nil")
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
	}
}

// duplicator makes SyncPod of a running pod start a second instance of its
// running containers: it runs them in a shadow pod, whose containers
// GetPodStatus and GetPods report as the pod's own.
func duplicator(*fake.PodProvider) interceptor.PodFuncs {
	var mu sync.Mutex
	shadows := map[types.UID]*v1.Pod{}
	shadowOf := func(uid types.UID) *v1.Pod {
		mu.Lock()
		defer mu.Unlock()
		return shadows[uid]
	}
	isShadow := func(uid types.UID) bool { return strings.HasSuffix(string(uid), "-shadow") }
	return interceptor.PodFuncs{
		SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
			if err := next.SyncPod(ctx, pod, st, rc); err != nil || pod == nil || st == nil {
				return err
			}
			var running []v1.Container
			for _, c := range pod.Spec.Containers {
				for _, s := range st.ContainerStatuses {
					if s.Name == c.Name && s.State == pkgcontainer.ContainerStateRunning {
						running = append(running, c)
						break
					}
				}
			}
			if len(running) == 0 || shadowOf(pod.UID) != nil {
				return nil
			}
			shadow := pod.DeepCopy()
			shadow.UID += "-shadow"
			shadow.Name += "-shadow"
			shadow.Spec.InitContainers, shadow.Spec.Containers = nil, running
			mu.Lock()
			shadows[pod.UID] = shadow
			mu.Unlock()
			return next.SyncPod(ctx, shadow, nil, kri.NewReasonCache())
		},
		GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
			st, err := next.GetPodStatus(ctx, pod)
			if err != nil || pod == nil {
				return st, err
			}
			if shadow := shadowOf(pod.UID); shadow != nil {
				if sst, err := next.GetPodStatus(ctx, shadow); err == nil {
					st.ContainerStatuses = append(st.ContainerStatuses, sst.ContainerStatuses...)
				}
			}
			return st, nil
		},
		GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
			pods, err := next.GetPods(ctx, all)
			if err != nil {
				return pods, err
			}
			byUID := map[types.UID]*pkgcontainer.Pod{}
			for _, p := range pods {
				byUID[p.ID] = p
			}
			var out []*pkgcontainer.Pod
			for _, p := range pods {
				if !isShadow(p.ID) {
					out = append(out, p)
				} else if orig := byUID[types.UID(strings.TrimSuffix(string(p.ID), "-shadow"))]; orig != nil {
					orig.Containers = append(orig.Containers, p.Containers...)
				}
			}
			return out, nil
		},
		KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
			if pod != nil {
				if shadow := shadowOf(pod.UID); shadow != nil {
					if err := next.KillPod(ctx, shadow, pkgcontainer.Pod{ID: shadow.UID, Name: shadow.Name, Namespace: shadow.Namespace}, grace); err != nil {
						return err
					}
				}
			}
			return next.KillPod(ctx, pod, rp, grace)
		},
		DeletePod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) error {
			if pod != nil {
				if shadow := shadowOf(pod.UID); shadow != nil {
					if err := next.DeletePod(ctx, shadow); err != nil {
						return err
					}
				}
			}
			return next.DeletePod(ctx, pod)
		},
	}
}
