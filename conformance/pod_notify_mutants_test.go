package conformance_test

import (
	"context"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podNotifyMutants are the mutants of the group "notify" (pod_notify.go):
// providers that break the duty to call HandlePodSyncByUID
// (kri.PodSyncNotifier). Since every spec waits for what kuscia's agent
// publishes at its cadence, each fails well beyond the notify specs.
func podNotifyMutants() []*mutant {
	return []*mutant{
		{
			name:      "never-notifies",
			violation: "the provider never calls HandlePodSyncByUID: kuscia's agent syncs each pod once, when it is added",
			// Every spec that waits for a state after a pod's first sync.
			want: []string{
				"KRI-POD-001", "KRI-POD-003", "KRI-POD-004", "KRI-POD-005", "KRI-POD-006", "KRI-POD-007", "KRI-POD-008", "KRI-POD-009", "KRI-POD-010", "KRI-POD-011", "KRI-POD-013", "KRI-POD-014", "KRI-POD-015", "KRI-POD-016", "KRI-POD-017", "KRI-POD-018", "KRI-POD-020", "KRI-POD-021", "KRI-POD-022", "KRI-POD-023", "KRI-POD-025", "KRI-POD-027", "KRI-POD-037", "KRI-POD-038", "KRI-POD-039", "KRI-POD-040", "KRI-POD-041", "KRI-POD-042", "KRI-POD-043", "KRI-POD-044", "KRI-POD-045", "KRI-POD-047", "KRI-POD-048", "KRI-POD-049", "KRI-POD-050", "KRI-POD-051", "KRI-POD-052", "KRI-POD-053", "KRI-POD-054", "KRI-POD-055", "KRI-POD-056", "KRI-POD-059", "KRI-POD-060", "KRI-POD-061", "KRI-POD-062", "KRI-POD-063", "KRI-POD-064", "KRI-POD-065", "KRI-POD-066", "KRI-POD-067", "KRI-POD-068", "KRI-POD-069", "KRI-POD-070", "KRI-POD-071", "KRI-POD-072", "KRI-POD-073", "KRI-POD-074", "KRI-POD-075", "KRI-POD-076", "KRI-POD-077", "KRI-POD-080", "KRI-POD-081", "KRI-POD-082", "KRI-POD-084", "KRI-POD-085", "KRI-POD-086", "KRI-POD-087", "KRI-POD-088", "KRI-POD-089", "KRI-POD-090", "KRI-POD-091", "KRI-POD-092", "KRI-POD-093", "KRI-POD-094", "KRI-POD-095", "KRI-POD-096", "KRI-POD-098", "KRI-POD-100", "KRI-POD-101",
				// The network probe specs too: the agent learns of a startup probe's success, and of a restart, from HandlePodSyncByUID.
				"KRI-POD-105", "KRI-POD-106",
				// KRI-POD-107 waits for its container to run, which the agent learns of from HandlePodSyncByUID.
				"KRI-POD-107",
				// KRI-POD-108 waits for a pod's exit to be published, as 092 does.
				"KRI-POD-108",
			},
			notify: notifyNever,
		},
		{
			name:      "notifies-starts-only",
			violation: "the provider calls HandlePodSyncByUID only when a container has started, not when one exits, a probe result changes or a back-off ends",
			// Every spec that waits for an exit, a restart, a failed
			// start or a probe result to be published.
			want: []string{
				"KRI-POD-006", "KRI-POD-008", "KRI-POD-009", "KRI-POD-010", "KRI-POD-011", "KRI-POD-015", "KRI-POD-037", "KRI-POD-038", "KRI-POD-039", "KRI-POD-042", "KRI-POD-044", "KRI-POD-051", "KRI-POD-053", "KRI-POD-054", "KRI-POD-059", "KRI-POD-060", "KRI-POD-061", "KRI-POD-062", "KRI-POD-063", "KRI-POD-066", "KRI-POD-067", "KRI-POD-068", "KRI-POD-072", "KRI-POD-073", "KRI-POD-074", "KRI-POD-076", "KRI-POD-080", "KRI-POD-087", "KRI-POD-088", "KRI-POD-089", "KRI-POD-091", "KRI-POD-092", "KRI-POD-093", "KRI-POD-094", "KRI-POD-098", "KRI-POD-101",
				// The network probe specs too: the agent learns of a startup probe's success, and of a restart, from HandlePodSyncByUID.
				"KRI-POD-105", "KRI-POD-106",
				// KRI-POD-108 waits for a pod's exit to be published, as 092 does.
				"KRI-POD-108",
			},
			notify: notifyOnStartsOnly,
		},
		{
			name:      "forgets-back-off-ends",
			violation: "the provider calls HandlePodSyncByUID only when what it reports of the pod's containers changed: the end of a back-off, which changes nothing reported, goes untold, so a failed pull is never tried again; a resize applied in place, which its comparison leaves out, goes untold too (KRI-POD-080)",
			want:      []string{"KRI-POD-080", "KRI-POD-094"},
			notify:    notifyOnChangesOnly,
		},
		{
			name:      "drops-notifications-while-killing",
			violation: "the provider drops every call of HandlePodSyncByUID while any pod's KillPod runs (one lock, or one \"busy\" flag, for the whole backend): a pod that changes meanwhile is never synced again",
			want:      []string{"KRI-POD-108"},
			pod: func(p *fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					n := killsRunning(p)
					n.Add(1)
					defer n.Add(-1)
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
			notify: func(p *fake.PodProvider, h kri.PodSyncHandler, _ <-chan struct{}, _ *goroutines) kri.PodSyncHandler {
				n := killsRunning(p)
				return kri.PodSyncHandlerFunc(func(uid types.UID) {
					if n.Load() > 0 {
						return
					}
					h.HandlePodSyncByUID(uid)
				})
			},
		},
	}
}

// kills counts, per fake, the KillPod calls under way (the mutant
// drops-notifications-while-killing: its interceptor and its notify
// wrapper see the same fake).
var kills sync.Map // *fake.PodProvider -> *atomic.Int32

func killsRunning(p *fake.PodProvider) *atomic.Int32 {
	n, _ := kills.LoadOrStore(p, new(atomic.Int32))
	return n.(*atomic.Int32)
}
