package kubeletruntime

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubernetes/pkg/kubelet/status"
)

// podStatuses is the status manager the kubelet's prober workers read
// (pkg/kubelet/prober/worker.go doProbe calls GetPodStatus(uid) before each
// probe, for the phase and the container IDs to probe). The kubelet's
// status manager caches the API status that generateAPIPodStatus built,
// after the prober manager's UpdatePodStatus refined it; here
// RefreshPodStatus stores it. The workers call nothing else: the other
// methods of status.Manager are those of the nil embedded interface and
// panic if called.
//
// After stop, every pod is reported Succeeded, so that a worker still
// running ends at its next probe (doProbe stops on a terminal phase).
type podStatuses struct {
	status.Manager

	mu      sync.Mutex
	byUID   map[types.UID]v1.PodStatus
	stopped bool
}

func newPodStatuses() *podStatuses {
	return &podStatuses{byUID: map[types.UID]v1.PodStatus{}}
}

// GetPodStatus returns the status last stored for uid.
func (s *podStatuses) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return v1.PodStatus{Phase: v1.PodSucceeded}, true
	}
	st, ok := s.byUID[uid]
	if !ok {
		return v1.PodStatus{}, false
	}
	return *st.DeepCopy(), true
}

// set stores a copy of st as the status of uid.
func (s *podStatuses) set(uid types.UID, st *v1.PodStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byUID[uid] = *st.DeepCopy()
}

// remove forgets uid.
func (s *podStatuses) remove(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byUID, uid)
}

// retain forgets every pod but those of keep.
func (s *podStatuses) retain(keep sets.Set[types.UID]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid := range s.byUID {
		if !keep.Has(uid) {
			delete(s.byUID, uid)
		}
	}
}

// stop makes every later GetPodStatus report a terminal phase.
func (s *podStatuses) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
}
