package conformance_test

import (
	"context"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// nodeConfigureMutants are the mutants of the node group "configure"
// (node_configure.go): the fake with one contract violation each, and the
// specs it must fail.
func nodeConfigureMutants() []*mutant {
	return []*mutant{
		{
			name:      "configure-node-wrong-name",
			violation: "ConfigureNode returns a node with another name",
			want:      []string{"KRI-NODE-001"},
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
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
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
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
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
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
			node: func() interceptor.NodeFuncs {
				var mu sync.Mutex
				nodes := map[string]*v1.Node{}
				return interceptor.NodeFuncs{ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
					mu.Lock()
					defer mu.Unlock()
					if nodes[name] == nil {
						nodes[name] = next.ConfigureNode(ctx, name)
					}
					return nodes[name]
				}}
			},
		},
	}
}
