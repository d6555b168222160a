package conformance_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// nodeMutants are the NodeProvider mutants of the zoo.
func nodeMutants() []*mutant {
	return []*mutant{
		{
			name:      "ping-ignores-context",
			violation: "Ping does not look at its context",
			want:      []string{"KRI-NODE-006"},
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{Ping: func(_ context.Context, next kri.NodeProvider) error {
					return next.Ping(context.Background())
				}}
			},
		},
		{
			name:      "ping-unhealthy",
			violation: "Ping always fails",
			want:      []string{"KRI-NODE-005", "KRI-NODE-006"},
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{Ping: func(context.Context, kri.NodeProvider) error {
					return errors.New("mutant: backend unreachable")
				}}
			},
		},
		{
			name:      "configure-node-wrong-name",
			violation: "ConfigureNode returns a node with another name",
			want:      []string{"KRI-NODE-001"},
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
					n := next.ConfigureNode(ctx, name)
					n.Name = "mutant-node"
					return n
				}}
			},
		},
		{
			name:      "allocatable-above-capacity",
			violation: "ConfigureNode reports more allocatable cpu than capacity",
			want:      []string{"KRI-NODE-002"},
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
					n := next.ConfigureNode(ctx, name)
					cpu := n.Status.Capacity[v1.ResourceCPU]
					cpu.Add(resource.MustParse("1"))
					n.Status.Allocatable[v1.ResourceCPU] = cpu
					return n
				}}
			},
		},
		{
			name:      "node-without-ready-condition",
			violation: "ConfigureNode returns a node without Ready condition (a SHOULD)",
			want:      []string{"KRI-NODE-003"},
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
					n := next.ConfigureNode(ctx, name)
					n.Status.Conditions = slices.DeleteFunc(n.Status.Conditions, func(c v1.NodeCondition) bool { return c.Type == v1.NodeReady })
					return n
				}}
			},
		},
		{
			name:      "configure-node-shares-its-node",
			violation: "ConfigureNode returns the same object again for the same name",
			want:      []string{"KRI-NODE-004"},
			node: func() fake.NodeInterceptors {
				var mu sync.Mutex
				nodes := map[string]*v1.Node{}
				return fake.NodeInterceptors{ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
					mu.Lock()
					defer mu.Unlock()
					if nodes[name] == nil {
						nodes[name] = next.ConfigureNode(ctx, name)
					}
					return nodes[name]
				}}
			},
		},
		{
			name:      "refresh-mutates-but-returns-false",
			violation: "RefreshNodeStatus changes the status and returns false",
			want:      []string{"KRI-NODE-007", "KRI-NODE-012"},
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{RefreshNodeStatus: func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
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
			node: func() fake.NodeInterceptors {
				var mu sync.Mutex
				beat := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
				return fake.NodeInterceptors{RefreshNodeStatus: func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
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
			name:      "callback-registration-blocks",
			violation: "SetStatusUpdateCallback never returns",
			want:      []string{"KRI-NODE-009", "KRI-NODE-010", "KRI-NODE-011", "KRI-NODE-013", "KRI-NODE-014"},
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{SetStatusUpdateCallback: func(context.Context, kri.NodeProvider, func(*v1.Node)) {
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
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
					next.SetStatusUpdateCallback(ctx, cb)
					cb(next.ConfigureNode(ctx, "kri-conformance-node"))
				}}
			},
		},
		{
			name:      "callback-delivers-wrong-name",
			violation: "nodes pushed to the status callback carry another name",
			want:      []string{"KRI-NODE-010"},
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
					next.SetStatusUpdateCallback(ctx, func(n *v1.Node) {
						n.Name += "-renamed"
						cb(n)
					})
				}}
			},
		},
		{
			name:      "refresh-blocks-on-cancelled-context",
			violation: "RefreshNodeStatus waits for its backend without watching its context; once the context is done, the answer never comes",
			want:      []string{"KRI-NODE-011"},
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{RefreshNodeStatus: func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
					if ctx.Err() != nil {
						forever()
					}
					return next.RefreshNodeStatus(ctx, st)
				}}
			},
			check: expectFailureMessage("KRI-NODE-011", "RefreshNodeStatus with a cancelled context did not return within"),
		},
		{
			name:      "refresh-does-nothing",
			violation: "RefreshNodeStatus leaves the status as it is and returns false",
			want:      []string{"KRI-NODE-012"},
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{RefreshNodeStatus: func(context.Context, kri.NodeProvider, *v1.NodeStatus) bool {
					return false
				}}
			},
			check: expectFailureMessage("KRI-NODE-012", "no capacity for cpu", "no Ready condition", "returned false and left the status empty"),
		},
		{
			name:      "callback-node-changed-later",
			violation: "the provider keeps the node it delivered to the status callback as its current node and updates it in place later",
			want:      []string{"KRI-NODE-013"},
			node: func() fake.NodeInterceptors {
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
				return fake.NodeInterceptors{
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
			node: func() fake.NodeInterceptors {
				var mu sync.Mutex
				registered := false
				return fake.NodeInterceptors{SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
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
			node: func() fake.NodeInterceptors {
				var mu sync.Mutex
				var cbs []func(*v1.Node)
				return fake.NodeInterceptors{SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
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
			node: func() fake.NodeInterceptors {
				var mu sync.Mutex
				calls := 0
				return fake.NodeInterceptors{SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
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
		{
			name:      "ping-always-healthy",
			violation: "Ping reports the backend healthy without asking it",
			want:      []string{"KRI-NODE-015"},
			node: func() fake.NodeInterceptors {
				return fake.NodeInterceptors{Ping: func(ctx context.Context, _ kri.NodeProvider) error {
					return ctx.Err()
				}}
			},
			check: expectFailureMessage("KRI-NODE-015", "Ping returned nil after MakeBackendUnhealthy"),
		},
	}
}
