// Package podsynctest provides a recording kri.PodSyncHandler for a
// provider's tests: it stands in for the node agent and counts the calls
// of HandlePodSyncByUID per pod, so that a test can check that a change
// of a pod was told to the agent (kri.PodSyncNotifier).
package podsynctest

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kri-kit/testkit/kri"
)

// Recorder is a kri.PodSyncHandler that counts the calls per pod. The zero
// value is ready to use; it is safe for concurrent use and never blocks.
type Recorder struct {
	mu    sync.Mutex
	calls map[types.UID]int
}

var _ kri.PodSyncHandler = (*Recorder)(nil)

// HandlePodSyncByUID counts a call for uid.
func (r *Recorder) HandlePodSyncByUID(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[types.UID]int{}
	}
	r.calls[uid]++
}

// Count returns how many calls came for uid.
func (r *Recorder) Count(uid types.UID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[uid]
}
