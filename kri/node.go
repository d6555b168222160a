package kri

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// NodeProvider is the node half of a provider: it describes the node the
// agent registers and keeps its status fresh.
type NodeProvider interface {
	// Ping reports whether the provider's backend is reachable and healthy.
	// The agent calls it periodically as a liveness check; a nil error
	// means healthy. Ping must be cheap, must succeed repeatedly on a healthy
	// provider, and must return promptly (with ctx.Err(), an error wrapping
	// it or the gRPC status a remote call reports for it) once ctx is done,
	// even if the backend does not answer.
	Ping(context.Context) error

	// ConfigureNode returns the node object the agent registers under the
	// given name. The returned node has exactly that name, reports capacity
	// and allocatable for at least cpu, memory and pods, with allocatable
	// never above capacity for any resource, and should carry a Ready
	// condition. The caller owns the returned object: the provider must not
	// keep or later mutate it.
	ConfigureNode(context.Context, string) *v1.Node

	// RefreshNodeStatus brings nodeStatus up to date in place (conditions,
	// heartbeat times, capacity, addresses, ...) and reports whether it
	// changed anything. When it returns false, nodeStatus must be exactly as
	// it was passed in; when nothing changed since the previous call, it
	// should return false. It is called by the agent's status loop and must
	// return promptly once ctx is done. The agent passes the status of the
	// node ConfigureNode returned, as refreshed since; handed an empty
	// status, a provider should fill it as ConfigureNode would. It changes
	// only what the provider owns: conditions of other types, volumes,
	// images and the other fields that other components set stay as they
	// are.
	RefreshNodeStatus(ctx context.Context, nodeStatus *v1.NodeStatus) bool

	// SetStatusUpdateCallback registers cb, through which the provider
	// pushes node changes it notices on its own (a condition turning false,
	// capacity changing, ...) without waiting for the next
	// RefreshNodeStatus. It must return without blocking and without calling
	// cb synchronously. Every node delivered to cb carries the name the node
	// was configured with and is owned by the callee. A later call replaces
	// the callback; ctx bounds the registration, not the callback's lifetime.
	SetStatusUpdateCallback(ctx context.Context, cb func(*v1.Node))
}
