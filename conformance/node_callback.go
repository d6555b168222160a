package conformance

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
)

// The status callback specs (KRI-NODE-009, 010, 013, 014): the callback the
// node controller registers with SetStatusUpdateCallback.
var nodeCallbackSpecs = []*specDef{
	{id: "KRI-NODE-009", level: Must, kind: kindNode, groups: []string{"callback"}, node: nodeCallbackRegistration,
		text: "SetStatusUpdateCallback returns without blocking and without calling the callback synchronously"},
	{id: "KRI-NODE-010", level: Must, kind: kindNode, groups: []string{"callback"}, caps: []Capability{CapNodeStatusUpdates}, node: nodeCallbackName,
		text: "a node delivered to the status callback carries the name the node was configured with"},
	{id: "KRI-NODE-013", level: Must, kind: kindNode, groups: []string{"callback"}, caps: []Capability{CapNodeStatusUpdates}, node: nodeCallbackOwnership,
		text: "a node delivered to the status callback belongs to the callee: the provider does not change it afterwards"},
	{id: "KRI-NODE-014", level: Should, kind: kindNode, groups: []string{"callback"}, caps: []Capability{CapNodeStatusUpdates}, node: nodeCallbackReplaced,
		note: "Lowered to SHOULD: kuscia's agent registers the callback once per run (node_controller.go), so no agent code replaces it.",
		text: "a later SetStatusUpdateCallback replaces the callback: updates go to the new one and no longer to the old one"},
}

func nodeCallbackRegistration(e *nodeEnv) {
	e.step("registering a status callback that would block if called synchronously")
	e.configure(e.name())
	e.register(func(*v1.Node) {})
	// A later call replaces the callback; it must not block either.
	e.register(func(*v1.Node) {})
}

func nodeCallbackName(e *nodeEnv) {
	e.step("registering a callback and making the provider notice a node change")
	name := e.name()
	e.configure(name)
	var mu sync.Mutex
	var got []string
	e.register(func(n *v1.Node) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, deliveredName(n))
	})
	e.trigger()
	e.eventually("a node delivered to the status callback", func(g gomega.Gomega) {
		mu.Lock()
		defer mu.Unlock()
		g.Expect(got).NotTo(gomega.BeEmpty(), "no node was delivered to the callback")
	})
	mu.Lock()
	defer mu.Unlock()
	for _, n := range got {
		if n != name {
			e.failf("the status callback received a node named %q, want the configured name %q (all: %v)", n, name, fmt.Sprint(got))
		}
	}
}

// trigger calls Config.TriggerNodeStatusUpdate.
func (e *nodeEnv) trigger() {
	var err error
	e.do("TriggerNodeStatusUpdate", func(ctx context.Context) { err = e.st.cfg.TriggerNodeStatusUpdate(ctx, e.p) })
	e.noError("TriggerNodeStatusUpdate", err)
}

// deliveredName is the name of a node delivered to a status callback, for
// failure messages.
func deliveredName(n *v1.Node) string {
	if n == nil {
		return "<nil node>"
	}
	return n.Name
}

// delivery is a node delivered to the status callback and a deep copy of it
// taken on delivery.
type delivery struct {
	node, copy *v1.Node
}

func nodeCallbackOwnership(e *nodeEnv) {
	e.step("registering a callback that mutates every node it receives, then triggering updates")
	name := e.name()
	node := e.configure(name)
	var mu sync.Mutex
	var got []delivery
	e.register(func(n *v1.Node) {
		mu.Lock()
		defer mu.Unlock()
		if n != nil {
			got = append(got, delivery{node: n, copy: n.DeepCopy()})
		}
	})
	e.trigger()
	e.eventually("a node delivered to the status callback", func(g gomega.Gomega) {
		mu.Lock()
		defer mu.Unlock()
		g.Expect(got).NotTo(gomega.BeEmpty(), "no node was delivered to the callback")
	})
	// Work the provider; the nodes it delivered must not change meanwhile.
	st := node.Status.DeepCopy()
	e.refresh(st)
	e.configure(name)
	e.trigger()
	e.refresh(st)
	e.consistently("the nodes delivered to the status callback are not changed by the provider", func(g gomega.Gomega) {
		mu.Lock()
		defer mu.Unlock()
		for i, d := range got {
			if !reflect.DeepEqual(d.node, d.copy) {
				g.Expect(false).To(gomega.BeTrue(), "the provider changed node %d of %d it delivered to the status callback after delivering it:\n%s",
					i+1, len(got), nodeDiff(d.copy, d.node))
			}
		}
	})
}

// nodeCallbackReplaced registers two callbacks in turn, then triggers an
// update. Only deliveries to the first callback that begin after the update
// was triggered count against the provider, so one already under way when
// the callback was replaced is tolerated.
func nodeCallbackReplaced(e *nodeEnv) {
	e.step("registering a callback, replacing it with another, then triggering an update")
	e.configure(e.name())
	var mu sync.Mutex
	var first, second []string // names of the nodes each callback received once armed
	armed := false
	e.register(func(n *v1.Node) {
		mu.Lock()
		defer mu.Unlock()
		if armed {
			first = append(first, deliveredName(n))
		}
	})
	e.register(func(n *v1.Node) {
		mu.Lock()
		defer mu.Unlock()
		second = append(second, deliveredName(n))
	})
	oldGot := func() string {
		return fmt.Sprintf("the first callback received %d node(s) %v after a second SetStatusUpdateCallback replaced it (the second received %d)",
			len(first), first, len(second))
	}
	mu.Lock()
	armed = true
	mu.Unlock()
	e.trigger()
	e.eventually("a node delivered to the second status callback", func(g gomega.Gomega) {
		mu.Lock()
		defer mu.Unlock()
		if len(first) > 0 {
			gomega.StopTrying(oldGot()).Now()
		}
		g.Expect(second).NotTo(gomega.BeEmpty(), "no node was delivered to the second callback (nor to the first)")
	})
	e.consistently("the replaced callback receives nothing", func(g gomega.Gomega) {
		mu.Lock()
		defer mu.Unlock()
		g.Expect(first).To(gomega.BeEmpty(), oldGot())
	})
}

// nodeDiff names the fields that differ between nodes a and b, the status
// ones as nodeStatusDiff does.
func nodeDiff(a, b *v1.Node) string {
	var out []string
	am, bm := reflect.ValueOf(a.ObjectMeta), reflect.ValueOf(b.ObjectMeta)
	for i := range am.NumField() {
		x, y := am.Field(i).Interface(), bm.Field(i).Interface()
		if !reflect.DeepEqual(x, y) {
			out = append(out, fmt.Sprintf("%s: %+v -> %+v", am.Type().Field(i).Name, x, y))
		}
	}
	if !reflect.DeepEqual(a.TypeMeta, b.TypeMeta) {
		out = append(out, fmt.Sprintf("TypeMeta: %+v -> %+v", a.TypeMeta, b.TypeMeta))
	}
	if !reflect.DeepEqual(a.Spec, b.Spec) {
		out = append(out, fmt.Sprintf("Spec: %+v -> %+v", a.Spec, b.Spec))
	}
	if d := nodeStatusDiff(&a.Status, &b.Status); d != "" {
		out = append(out, d)
	}
	return strings.Join(out, "\n")
}
