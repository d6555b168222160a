package kri

import (
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/utils/lru"
)

// DefaultReasonCacheSize is the number of containers a ReasonCache made by
// NewReasonCache remembers, the same bound the kubelet uses.
const DefaultReasonCacheSize = 1000

// ReasonItem is the failure of the latest start of one container.
type ReasonItem struct {
	// Err is the brief reason, e.g. pkgcontainer.ErrRunContainer.
	Err error
	// Message is the human-readable detail.
	Message string
}

// ReasonCache remembers, per pod UID and container name, why the latest
// attempt to start that container failed. A successful start removes the
// entry. It is bounded: once full, adding an entry evicts the least recently
// used one (Get counts as a use).
//
// A ReasonCache is safe for concurrent use. The zero value is not usable;
// create one with NewReasonCache or NewReasonCacheWithSize.
type ReasonCache struct {
	cache *lru.Cache
}

// reasonKey identifies a container. It is a struct rather than a joined
// string so that no two (uid, name) pairs can share a key.
type reasonKey struct {
	uid  types.UID
	name string
}

// NewReasonCache returns an empty ReasonCache holding at most
// DefaultReasonCacheSize entries.
func NewReasonCache() *ReasonCache {
	return NewReasonCacheWithSize(DefaultReasonCacheSize)
}

// NewReasonCacheWithSize returns an empty ReasonCache holding at most size
// entries. A size below 1 is treated as 1.
func NewReasonCacheWithSize(size int) *ReasonCache {
	if size < 1 {
		size = 1
	}
	return &ReasonCache{cache: lru.New(size)}
}

// Update records the outcome of the container starts in result for the pod
// with the given UID. Only results whose Action is
// pkgcontainer.StartContainer and whose Target is a container name (a string)
// are considered; all others are ignored. A failed start (Error non-nil) sets
// the entry for that container; a successful one removes it. Results are
// applied in order, so a later result for the same container wins.
func (c *ReasonCache) Update(uid types.UID, result pkgcontainer.PodSyncResult) {
	for _, r := range result.SyncResults {
		if r == nil || r.Action != pkgcontainer.StartContainer {
			continue
		}
		name, ok := r.Target.(string)
		if !ok {
			continue
		}
		key := reasonKey{uid: uid, name: name}
		if r.Error != nil {
			c.cache.Add(key, ReasonItem{Err: r.Error, Message: r.Message})
		} else {
			c.cache.Remove(key)
		}
	}
}

// Remove forgets the entry of container name of the pod with the given UID.
// Removing an entry that does not exist does nothing.
func (c *ReasonCache) Remove(uid types.UID, name string) {
	c.cache.Remove(reasonKey{uid: uid, name: name})
}

// Get returns the failure recorded for container name of the pod with the
// given UID, and whether there is one. The returned item is a copy: changing
// it does not change the cache. A hit marks the entry as recently used.
func (c *ReasonCache) Get(uid types.UID, name string) (*ReasonItem, bool) {
	item, ok := c.get(uid, name)
	if !ok {
		return nil, false
	}
	return &item, true
}

// get is kept apart from Get so that Get stays small enough to be inlined:
// the returned pointer then lives on the caller's stack and Get does not
// allocate.
func (c *ReasonCache) get(uid types.UID, name string) (ReasonItem, bool) {
	v, ok := c.cache.Get(reasonKey{uid: uid, name: name})
	if !ok {
		return ReasonItem{}, false
	}
	return v.(ReasonItem), true
}

// Len returns the number of containers with a recorded failure.
func (c *ReasonCache) Len() int {
	return c.cache.Len()
}
