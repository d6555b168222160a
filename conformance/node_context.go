package conformance

import (
	"context"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
)

// The node context spec (KRI-NODE-011): calls with a cancelled context
// return within the call timeout.
var nodeContextSpecs = []*specDef{
	{id: "KRI-NODE-011", level: Must, kind: kindNode, groups: []string{"context"}, node: nodeCancelledContext,
		text: "RefreshNodeStatus, ConfigureNode and SetStatusUpdateCallback called with a cancelled context return within the call timeout"},
}

// nodeCancelledContext calls each method that takes a context with one that
// is already cancelled, all at once, so that the spec takes one call timeout
// however many of them hang, and reports every one that did.
func nodeCancelledContext(e *nodeEnv) {
	e.step("calling RefreshNodeStatus, ConfigureNode and SetStatusUpdateCallback with a cancelled context")
	e.configure(e.name())
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	calls := []struct {
		method string
		call   func()
	}{
		{"RefreshNodeStatus", func() { e.p.RefreshNodeStatus(ctx, &v1.NodeStatus{}) }},
		{"ConfigureNode", func() { e.p.ConfigureNode(ctx, e.name()) }},
		{"SetStatusUpdateCallback", func() { e.p.SetStatusUpdateCallback(ctx, func(*v1.Node) {}) }},
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			errs[i] = e.try(c.method+" with a cancelled context", func(context.Context) { c.call() })
		})
	}
	wg.Wait()
	var problems []string
	for _, err := range errs {
		if err == nil {
			continue
		}
		msg := err.Error()
		if ce, ok := err.(*callError); ok && ce.hung {
			msg += " (a method that takes a context must return promptly once it is done)"
		}
		problems = append(problems, msg)
	}
	if len(problems) > 0 {
		e.fail(strings.Join(problems, "\n"))
	}
}
