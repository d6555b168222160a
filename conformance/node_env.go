package conformance

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/kri"
)

// nodeEnv drives one fresh NodeProvider.
type nodeEnv struct {
	*base
	p kri.NodeProvider
}

func newNodeEnv(b *base) *nodeEnv {
	var p kri.NodeProvider
	var err error
	b.do("NewNodeProvider", func(context.Context) { p, err = b.st.cfg.NewNodeProvider(b.ctx) })
	if err != nil {
		b.failf("NewNodeProvider: %v", err)
	}
	if p == nil {
		b.fail("NewNodeProvider returned a nil provider and no error")
	}
	return &nodeEnv{base: b, p: p}
}

func (e *nodeEnv) name() string { return e.st.cfg.NodeName }

// configure calls ConfigureNode; a nil node fails the spec.
func (e *nodeEnv) configure(name string) *v1.Node {
	var node *v1.Node
	e.do("ConfigureNode", func(ctx context.Context) { node = e.p.ConfigureNode(ctx, name) })
	if node == nil {
		e.failf("ConfigureNode(%q) returned nil", name)
	}
	return node
}

func (e *nodeEnv) refresh(st *v1.NodeStatus) bool {
	var changed bool
	e.do("RefreshNodeStatus", func(ctx context.Context) { changed = e.p.RefreshNodeStatus(ctx, st) })
	return changed
}

// register calls SetStatusUpdateCallback with a callback that forwards to
// cb. Until the registration has returned, the callback waits: a provider
// that calls it synchronously deadlocks and is reported as blocking.
func (e *nodeEnv) register(cb func(*v1.Node)) {
	registered := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(registered) }) }
	e.deferCleanup(release) // unblocks a provider that called back synchronously
	wrapped := func(n *v1.Node) {
		<-registered
		cb(n)
	}
	err := e.try("SetStatusUpdateCallback", func(ctx context.Context) { e.p.SetStatusUpdateCallback(ctx, wrapped) })
	if err != nil {
		if ce, ok := err.(*callError); ok && ce.hung {
			e.fail(err.Error() + " (it must neither block nor call the callback synchronously)")
		}
		e.fail(err.Error())
	}
	release()
}

func quantities(l v1.ResourceList) map[v1.ResourceName]string {
	out := map[v1.ResourceName]string{}
	for r, q := range l {
		out[r] = q.String()
	}
	return out
}

func conditionTypes(cs []v1.NodeCondition) []v1.NodeConditionType {
	out := make([]v1.NodeConditionType, len(cs))
	for i, c := range cs {
		out[i] = c.Type
	}
	return out
}

// nodeStatusDiff names the fields that differ between a and b, with both
// values, precisely (sub-second timestamps included).
func nodeStatusDiff(a, b *v1.NodeStatus) string {
	var out []string
	av, bv := reflect.ValueOf(*a), reflect.ValueOf(*b)
	for i := range av.NumField() {
		name := av.Type().Field(i).Name
		x, y := av.Field(i).Interface(), bv.Field(i).Interface()
		if reflect.DeepEqual(x, y) {
			continue
		}
		switch name {
		case "Capacity", "Allocatable":
			out = append(out, fmt.Sprintf("%s: %v -> %v", name, quantities(x.(v1.ResourceList)), quantities(y.(v1.ResourceList))))
		case "Conditions":
			out = append(out, conditionsDiff(a.Conditions, b.Conditions)...)
		default:
			out = append(out, fmt.Sprintf("%s: %+v -> %+v", name, x, y))
		}
	}
	return strings.Join(out, "\n")
}

func conditionsDiff(a, b []v1.NodeCondition) []string {
	var out []string
	find := func(cs []v1.NodeCondition, t v1.NodeConditionType) *v1.NodeCondition {
		for i := range cs {
			if cs[i].Type == t {
				return &cs[i]
			}
		}
		return nil
	}
	format := func(c *v1.NodeCondition) string {
		if c == nil {
			return "<none>"
		}
		return fmt.Sprintf("{%s reason=%q heartbeat=%s transition=%s}", c.Status, c.Reason,
			c.LastHeartbeatTime.Format(time.RFC3339Nano), c.LastTransitionTime.Format(time.RFC3339Nano))
	}
	seen := map[v1.NodeConditionType]bool{}
	for _, cs := range [][]v1.NodeCondition{a, b} {
		for _, c := range cs {
			if seen[c.Type] {
				continue
			}
			seen[c.Type] = true
			x, y := find(a, c.Type), find(b, c.Type)
			if x == nil || y == nil || !reflect.DeepEqual(*x, *y) {
				out = append(out, fmt.Sprintf("Conditions[%s]: %s -> %s", c.Type, format(x), format(y)))
			}
		}
	}
	return out
}
