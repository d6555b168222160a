package conformance_test

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// nodeContextMutants are the mutants of the node group "context"
// (node_context.go): the fake with one contract violation each, and the specs
// it must fail.
func nodeContextMutants() []*mutant {
	return []*mutant{
		{
			name:      "refresh-blocks-on-cancelled-context",
			violation: "RefreshNodeStatus waits for its backend without watching its context; once the context is done, the answer never comes",
			want:      []string{"KRI-NODE-011"},
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{RefreshNodeStatus: func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
					if ctx.Err() != nil {
						forever()
					}
					return next.RefreshNodeStatus(ctx, st)
				}}
			},
			check: expectFailureMessage("KRI-NODE-011", "RefreshNodeStatus with a cancelled context did not return within"),
		},
	}
}
