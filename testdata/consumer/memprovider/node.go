package memprovider

import (
	"context"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kri-kit/testkit/kri"
)

// Node implements kri.NodeProvider for a fixed-size node that never changes
// on its own (it pushes no status updates).
type Node struct {
	mu sync.Mutex
	cb func(*v1.Node)
}

var _ kri.NodeProvider = (*Node)(nil)

// NewNode returns a healthy node provider.
func NewNode() *Node { return &Node{} }

// Ping is healthy unless ctx is done.
func (n *Node) Ping(ctx context.Context) error { return ctx.Err() }

func (n *Node) status() v1.NodeStatus {
	resources := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("2"),
		v1.ResourceMemory: resource.MustParse("4Gi"),
		v1.ResourcePods:   resource.MustParse("50"),
	}
	return v1.NodeStatus{
		Capacity:    resources,
		Allocatable: resources.DeepCopy(),
		Conditions: []v1.NodeCondition{{
			Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "MemProviderReady", Message: "in-memory provider is ready",
		}},
	}
}

// ConfigureNode returns a new node named name.
func (n *Node) ConfigureNode(_ context.Context, name string) *v1.Node {
	node := &v1.Node{Status: n.status()}
	node.Name = name
	return node
}

// RefreshNodeStatus sets capacity, allocatable and the Ready condition.
func (n *Node) RefreshNodeStatus(ctx context.Context, st *v1.NodeStatus) bool {
	if st == nil || ctx.Err() != nil {
		return false
	}
	want := n.status()
	changed := false
	if !equality.Semantic.DeepEqual(st.Capacity, want.Capacity) {
		st.Capacity, changed = want.Capacity, true
	}
	if !equality.Semantic.DeepEqual(st.Allocatable, want.Allocatable) {
		st.Allocatable, changed = want.Allocatable, true
	}
	// Only the provider's own conditions are set; conditions of other types
	// belong to other components (node problem detector, ...).
	for _, c := range want.Conditions {
		i := slices.IndexFunc(st.Conditions, func(have v1.NodeCondition) bool { return have.Type == c.Type })
		switch {
		case i < 0:
			st.Conditions, changed = append(st.Conditions, c), true
		case !equality.Semantic.DeepEqual(st.Conditions[i], c):
			st.Conditions[i], changed = c, true
		}
	}
	return changed
}

// SetStatusUpdateCallback keeps cb; the node never changes on its own, so
// it is never called.
func (n *Node) SetStatusUpdateCallback(_ context.Context, cb func(*v1.Node)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cb = cb
}
