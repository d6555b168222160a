package vkremote

import (
	"context"
	"sync"

	pkgerrors "github.com/pkg/errors"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
)

// Node is the virtual node's node.NodeProvider: it is healthy while the
// remote service answers.
type Node struct {
	client *Client
	mu     sync.Mutex
	cb     func(*corev1.Node)
}

var _ node.NodeProvider = (*Node)(nil)

// NewNode returns the node provider of the service c reaches.
func NewNode(c *Client) *Node { return &Node{client: c} }

// Ping answers the service's health check: an error while the service does
// not answer, during which VK publishes no node status and stops renewing
// the node's lease (node/node.go, node/lease_controller_v1.go).
func (n *Node) Ping(ctx context.Context) error {
	return pkgerrors.Wrap(n.client.Healthz(ctx), "pinging the remote service")
}

// NotifyNodeStatus keeps cb and returns at once: this provider has no node
// status of its own to push.
func (n *Node) NotifyNodeStatus(_ context.Context, cb func(*corev1.Node)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cb = cb
}
