package conformance_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// nodeCallbackMutants are the mutants of the node group "callback"
// (node_callback.go): the fake with one contract violation each, and the specs
// it must fail.
func nodeCallbackMutants() []*mutant {
	return []*mutant{
		{
			name:      "callback-registration-blocks",
			violation: "SetStatusUpdateCallback never returns",
			want:      []string{"KRI-NODE-009", "KRI-NODE-010", "KRI-NODE-011", "KRI-NODE-013", "KRI-NODE-014"},
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{SetStatusUpdateCallback: func(context.Context, kri.NodeProvider, func(*v1.Node)) {
					forever()
				}}
			},
			check: expectFailureMessage("KRI-NODE-009", "SetStatusUpdateCallback did not return within"),
			cost:  1,
		},
		{
			name:      "callback-called-synchronously",
			violation: "SetStatusUpdateCallback calls the callback before returning",
			want:      []string{"KRI-NODE-009", "KRI-NODE-010", "KRI-NODE-013", "KRI-NODE-014"},
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
					next.SetStatusUpdateCallback(ctx, cb)
					cb(next.ConfigureNode(ctx, "kri-conformance-node"))
				}}
			},
		},
		{
			name:      "callback-delivers-wrong-name",
			violation: "nodes pushed to the status callback carry another name",
			want:      []string{"KRI-NODE-010"},
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
					next.SetStatusUpdateCallback(ctx, func(n *v1.Node) {
						n.Name += "-renamed"
						cb(n)
					})
				}}
			},
		},
		{
			name:      "callback-node-changed-later",
			violation: "the provider keeps the node it delivered to the status callback as its current node and updates it in place later",
			want:      []string{"KRI-NODE-013"},
			node: func() interceptor.NodeFuncs {
				var mu sync.Mutex
				var kept *v1.Node
				generation := 0
				touch := func() {
					mu.Lock()
					defer mu.Unlock()
					if kept == nil {
						return
					}
					generation++
					if kept.Annotations == nil {
						kept.Annotations = map[string]string{}
					}
					kept.Annotations["mutant.kri/generation"] = strconv.Itoa(generation)
					for i := range kept.Status.Conditions {
						kept.Status.Conditions[i].LastHeartbeatTime = metav1.NewTime(kept.Status.Conditions[i].LastHeartbeatTime.Add(time.Second))
					}
				}
				return interceptor.NodeFuncs{
					SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
						next.SetStatusUpdateCallback(ctx, func(n *v1.Node) {
							mu.Lock()
							kept = n
							mu.Unlock()
							cb(n)
						})
					},
					RefreshNodeStatus: func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
						touch()
						return next.RefreshNodeStatus(ctx, st)
					},
					ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
						touch()
						return next.ConfigureNode(ctx, name)
					},
				}
			},
			check: expectFailureMessage("KRI-NODE-013", "mutant.kri/generation", "Conditions[Ready]"),
		},
		{
			name:      "callback-first-one-kept",
			violation: "SetStatusUpdateCallback keeps the first callback and ignores later ones",
			want:      []string{"KRI-NODE-014"},
			node: func() interceptor.NodeFuncs {
				var mu sync.Mutex
				registered := false
				return interceptor.NodeFuncs{SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
					mu.Lock()
					defer mu.Unlock()
					if !registered {
						registered = true
						next.SetStatusUpdateCallback(ctx, cb)
					}
				}}
			},
			check: expectFailureMessage("KRI-NODE-014", "the first callback received 1 node(s)", "(the second received 0)"),
		},
		{
			name:      "callback-fans-out",
			violation: "SetStatusUpdateCallback adds the callback to the earlier ones instead of replacing them",
			want:      []string{"KRI-NODE-014"},
			node: func() interceptor.NodeFuncs {
				var mu sync.Mutex
				var cbs []func(*v1.Node)
				return interceptor.NodeFuncs{SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
					mu.Lock()
					defer mu.Unlock()
					cbs = append(cbs, cb)
					all := slices.Clone(cbs)
					next.SetStatusUpdateCallback(ctx, func(n *v1.Node) {
						for _, cb := range all {
							cb(n.DeepCopy())
						}
					})
				}}
			},
			check: expectFailureMessage("KRI-NODE-014", "the first callback received 1 node(s)"),
		},
		{
			name:      "callback-replacement-unsubscribes",
			violation: "a second SetStatusUpdateCallback cancels the subscription instead of replacing the callback",
			want:      []string{"KRI-NODE-014"},
			node: func() interceptor.NodeFuncs {
				var mu sync.Mutex
				calls := 0
				return interceptor.NodeFuncs{SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
					mu.Lock()
					defer mu.Unlock()
					calls++
					if calls > 1 {
						cb = nil
					}
					next.SetStatusUpdateCallback(ctx, cb)
				}}
			},
			check: expectFailureMessage("KRI-NODE-014", "no node was delivered to the second callback (nor to the first)"),
			cost:  1,
		},
	}
}
