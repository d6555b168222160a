package interceptor

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/kri"
)

// NodeFuncs holds one optional function per method of kri.NodeProvider. A
// function that is set is called instead of the wrapped provider's method,
// with next, the wrapped provider; a nil one leaves the method to the
// wrapped provider. The zero NodeFuncs changes nothing.
type NodeFuncs struct {
	Ping                    func(ctx context.Context, next kri.NodeProvider) error
	ConfigureNode           func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node
	RefreshNodeStatus       func(ctx context.Context, next kri.NodeProvider, nodeStatus *v1.NodeStatus) bool
	SetStatusUpdateCallback func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node))
}

// NewNodeProvider returns p with funcs around its methods: each call goes to
// the matching function of funcs, with p as next, or to p's own method when
// that function is nil. funcs is copied: changing the caller's NodeFuncs
// later changes nothing. NewNodeProvider panics if p is nil.
func NewNodeProvider(p kri.NodeProvider, funcs NodeFuncs) kri.NodeProvider {
	if p == nil {
		panic("interceptor: NewNodeProvider of a nil provider")
	}
	return &nodeProvider{next: p, funcs: funcs}
}

type nodeProvider struct {
	next  kri.NodeProvider
	funcs NodeFuncs
}

var _ kri.NodeProvider = (*nodeProvider)(nil)

func (w *nodeProvider) Ping(ctx context.Context) error {
	if f := w.funcs.Ping; f != nil {
		return f(ctx, w.next)
	}
	return w.next.Ping(ctx)
}

func (w *nodeProvider) ConfigureNode(ctx context.Context, name string) *v1.Node {
	if f := w.funcs.ConfigureNode; f != nil {
		return f(ctx, w.next, name)
	}
	return w.next.ConfigureNode(ctx, name)
}

func (w *nodeProvider) RefreshNodeStatus(ctx context.Context, nodeStatus *v1.NodeStatus) bool {
	if f := w.funcs.RefreshNodeStatus; f != nil {
		return f(ctx, w.next, nodeStatus)
	}
	return w.next.RefreshNodeStatus(ctx, nodeStatus)
}

func (w *nodeProvider) SetStatusUpdateCallback(ctx context.Context, cb func(*v1.Node)) {
	if f := w.funcs.SetStatusUpdateCallback; f != nil {
		f(ctx, w.next, cb)
		return
	}
	w.next.SetStatusUpdateCallback(ctx, cb)
}
