package conformance_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

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
			want:      []string{"KRI-NODE-007"},
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
			want:      []string{"KRI-NODE-009", "KRI-NODE-010"},
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
			want:      []string{"KRI-NODE-009", "KRI-NODE-010"},
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
	}
}
