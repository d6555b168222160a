package conformance_test

import (
	"context"
	"errors"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// nodePingMutants are the mutants of the node group "ping" (node_ping.go): the
// fake with one contract violation each, and the specs it must fail.
func nodePingMutants() []*mutant {
	return []*mutant{
		{
			name:      "ping-ignores-context",
			violation: "Ping does not look at its context",
			want:      []string{"KRI-NODE-006"},
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{Ping: func(_ context.Context, next kri.NodeProvider) error {
					return next.Ping(context.Background())
				}}
			},
		},
		{
			name:      "ping-unhealthy",
			violation: "Ping always fails",
			want:      []string{"KRI-NODE-005", "KRI-NODE-006"},
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{Ping: func(context.Context, kri.NodeProvider) error {
					return errors.New("mutant: backend unreachable")
				}}
			},
		},
		{
			name:      "ping-always-healthy",
			violation: "Ping reports the backend healthy without asking it",
			want:      []string{"KRI-NODE-015"},
			node: func() interceptor.NodeFuncs {
				return interceptor.NodeFuncs{Ping: func(ctx context.Context, _ kri.NodeProvider) error {
					return ctx.Err()
				}}
			},
			check: expectFailureMessage("KRI-NODE-015", "Ping returned nil after MakeBackendUnhealthy"),
		},
	}
}
