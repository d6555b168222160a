package conformance_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// newestInstance returns the newest instance of container name in ss, or nil.
func newestInstance(ss []*pkgcontainer.Status, name string) *pkgcontainer.Status {
	var newest *pkgcontainer.Status
	for _, s := range ss {
		if s.Name == name && (newest == nil || s.CreatedAt.After(newest.CreatedAt)) {
			newest = s
		}
	}
	return newest
}

// newestOnly keeps the newest instance of each container name.
func newestOnly(ss []*pkgcontainer.Status) []*pkgcontainer.Status {
	newest := map[string]*pkgcontainer.Status{}
	for _, s := range ss {
		if n := newest[s.Name]; n == nil || s.CreatedAt.After(n.CreatedAt) {
			newest[s.Name] = s
		}
	}
	return slices.DeleteFunc(ss, func(s *pkgcontainer.Status) bool { return newest[s.Name] != s })
}

// keepNewestListed drops from a pod the fake's GetPods listed all but the
// newest container of each name: the fake lists a pod's containers newest
// first (Container.CreatedAt, which would tell, exists only from
// Kubernetes 1.36 on).
func keepNewestListed(p *pkgcontainer.Pod) {
	seen := map[string]bool{}
	p.Containers = slices.DeleteFunc(p.Containers, func(c *pkgcontainer.Container) bool {
		dup := seen[c.Name]
		seen[c.Name] = true
		return dup
	})
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

func (s *uidSet) has(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uids.Has(uid)
}

// forever blocks the calling goroutine for the rest of the process: a hung
// provider call. The suite abandons it.
func forever() { select {} }

// expectFailureMessage returns a check that spec id failed with a message
// containing each of parts.
func expectFailureMessage(id string, parts ...string) func(*testing.T, *helperRun) {
	return func(t *testing.T, r *helperRun) {
		sr, ok := r.specReport(id)
		if !ok {
			t.Errorf("%s is not in the report", id)
			return
		}
		for _, p := range parts {
			if !strings.Contains(sr.Failure.Message, p) {
				t.Errorf("%s failed with %q, want it to mention %q", id, firstLine(sr.Failure.Message), p)
			}
		}
	}
}

// withRestartPolicy returns a copy of pod with policy.
func withRestartPolicy(pod *v1.Pod, policy v1.RestartPolicy) *v1.Pod {
	if pod == nil {
		return nil
	}
	cp := pod.DeepCopy()
	cp.Spec.RestartPolicy = policy
	return cp
}

// statusEdit is a GetPodStatus interceptor that changes every status the
// fake returns with edit.
func statusEdit(edit func(*pkgcontainer.PodStatus)) func(context.Context, kri.PodProvider, *v1.Pod) (*pkgcontainer.PodStatus, error) {
	return func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
		st, err := next.GetPodStatus(ctx, pod)
		if st != nil {
			edit(st)
		}
		return st, err
	}
}

// refreshEdit is a RefreshPodStatus interceptor that changes every container
// and init-container status the fake fills in with edit.
func refreshEdit(edit func(*v1.ContainerStatus)) func(kri.PodProvider, *v1.Pod, *v1.PodStatus) {
	return func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
		next.RefreshPodStatus(pod, ps)
		if unknownPod(context.Background(), next, pod) {
			return // leave the status of an unknown pod alone
		}
		for _, list := range [][]v1.ContainerStatus{ps.ContainerStatuses, ps.InitContainerStatuses} {
			for i := range list {
				edit(&list[i])
			}
		}
	}
}

// unknownPod reports whether the fake (next) does not know pod.
func unknownPod(ctx context.Context, next kri.PodProvider, pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	st, err := next.GetPodStatus(context.WithoutCancel(ctx), pod)
	return err == nil && len(st.ContainerStatuses) == 0 && len(st.SandboxStatuses) == 0
}

func (s *uidSet) remove(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uids.Delete(uid)
}

// trackKilled returns the interceptors of a provider that remembers the
// pods it killed: KillPod adds a pod to killed once it returns nil, and
// SyncPod of the pod (created again, or synced anew) removes it. A mutant
// adds the interceptor that misreports the killed pods.
func trackKilled() (killed *uidSet, ic interceptor.PodFuncs) {
	killed = newUIDSet()
	return killed, interceptor.PodFuncs{
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
	}
}

// afterFailedSync is a SyncPod interceptor that runs the fake's SyncPod and,
// when it fails for a pod and a ReasonCache, returns what f makes of its
// error instead.
func afterFailedSync(f func(pod *v1.Pod, rc *kri.ReasonCache, err error) error) func(context.Context, kri.PodProvider, *v1.Pod, *pkgcontainer.PodStatus, *kri.ReasonCache) error {
	return func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
		err := next.SyncPod(ctx, pod, st, rc)
		if err == nil || pod == nil || rc == nil {
			return err
		}
		return f(pod, rc, err)
	}
}

// syncSkippedWhen is a SyncPod interceptor that returns nil without syncing
// a pod of the kind applies picks when skip says so of what GetPodStatus
// reports of it now: a provider that stops acting on a pod in some state.
func syncSkippedWhen(applies func(pod *v1.Pod) bool, skip func(pod *v1.Pod, now *pkgcontainer.PodStatus) bool) func(context.Context, kri.PodProvider, *v1.Pod, *pkgcontainer.PodStatus, *kri.ReasonCache) error {
	return func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
		if applies(pod) {
			if now, err := next.GetPodStatus(ctx, pod); err == nil && skip(pod, now) {
				return nil
			}
		}
		return next.SyncPod(ctx, pod, st, rc)
	}
}
