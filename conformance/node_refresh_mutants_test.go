package conformance_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// nodeRefreshMutants are the mutants of the node group "refresh"
// (node_refresh.go): the fake with one contract violation each, and the specs
// it must fail.
func nodeRefreshMutants() []*mutant {
	return []*mutant{
		{
			name:      "refresh-mutates-but-returns-false",
			violation: "RefreshNodeStatus changes the status and returns false",
			want:      []string{"KRI-NODE-007", "KRI-NODE-012"},
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{RefreshNodeStatus: func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
					next.RefreshNodeStatus(ctx, st)
					st.Addresses = append(st.Addresses, v1.NodeAddress{Type: v1.NodeInternalDNS, Address: "mutant.example"})
					return false
				}}
			},
		},
		{
			name:      "refresh-node-always-changes",
			violation: "RefreshNodeStatus renews a heartbeat and returns true on every call (a SHOULD)",
			want:      []string{"KRI-NODE-008"},
			node: func() interceptor.NodeFuncs {
				var mu sync.Mutex
				beat := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
				return interceptor.NodeFuncs{RefreshNodeStatus: func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
					next.RefreshNodeStatus(ctx, st)
					mu.Lock()
					beat = beat.Add(time.Second)
					now := beat
					mu.Unlock()
					for i := range st.Conditions {
						st.Conditions[i].LastHeartbeatTime.Time = now
					}
					return true
				}}
			},
		},
		{
			name:      "refresh-does-nothing",
			violation: "RefreshNodeStatus leaves the status as it is and returns false",
			want:      []string{"KRI-NODE-012"},
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{RefreshNodeStatus: func(context.Context, kri.NodeProvider, *v1.NodeStatus) bool {
					return false
				}}
			},
			check: expectFailureMessage("KRI-NODE-012", "no capacity for cpu", "no Ready condition", "returned false and left the status empty"),
		},
		{
			name:      "refresh-replaces-conditions",
			violation: "RefreshNodeStatus keeps only conditions of types it knows, dropping those other components set (example.com/...)",
			want:      []string{"KRI-NODE-016"},
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{RefreshNodeStatus: func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
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
