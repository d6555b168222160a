package conformance

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kri-kit/testkit/kri"
)

// nodeSpecs are the specs of the NodeProvider contract. IDs are stable:
// never renumber, only append.
var nodeSpecs = []*specDef{
	{id: "KRI-NODE-001", level: Must, kind: kindNode, groups: []string{"configure"}, node: nodeName,
		text: "ConfigureNode returns a node with exactly the requested name"},
	{id: "KRI-NODE-002", level: Must, kind: kindNode, groups: []string{"configure"}, node: nodeResources,
		text: "ConfigureNode reports capacity and allocatable for cpu, memory and pods, with allocatable never above capacity"},
	{id: "KRI-NODE-003", level: Should, kind: kindNode, groups: []string{"configure"}, node: nodeReadyCondition,
		text: "ConfigureNode returns a node with a Ready condition"},
	{id: "KRI-NODE-004", level: Must, kind: kindNode, groups: []string{"configure", "ownership"}, node: nodeOwnership,
		text: "the node ConfigureNode returns belongs to the caller: the provider does not mutate it later, and mutating it does not change the next one"},
	{id: "KRI-NODE-005", level: Must, kind: kindNode, groups: []string{"ping"}, node: nodePingRepeatedly,
		text: "Ping of a healthy provider succeeds repeatedly, each within the call timeout"},
	{id: "KRI-NODE-006", level: Must, kind: kindNode, groups: []string{"ping", "context"}, node: nodePingCancelled,
		note: "The requirement's words now name what the spec accepts: the context's error, possibly wrapped, or the gRPC status (code Canceled or DeadlineExceeded) a remote call reports for it.",
		text: "Ping with a cancelled context returns promptly with the context's error, possibly wrapped, or the gRPC status a remote call reports for it"},
	{id: "KRI-NODE-007", level: Must, kind: kindNode, groups: []string{"refresh"}, node: nodeRefreshFalseUnchanged,
		text: "RefreshNodeStatus that returns false leaves the status exactly as it was passed in"},
	{id: "KRI-NODE-008", level: Should, kind: kindNode, groups: []string{"refresh"}, node: nodeRefreshSecondFalse,
		text: "a second RefreshNodeStatus with nothing changed in between returns false"},
	{id: "KRI-NODE-009", level: Must, kind: kindNode, groups: []string{"callback"}, node: nodeCallbackRegistration,
		text: "SetStatusUpdateCallback returns without blocking and without calling the callback synchronously"},
	{id: "KRI-NODE-010", level: Must, kind: kindNode, groups: []string{"callback"}, caps: []Capability{CapNodeStatusUpdates}, node: nodeCallbackName,
		text: "a node delivered to the status callback carries the name the node was configured with"},
	{id: "KRI-NODE-011", level: Must, kind: kindNode, groups: []string{"context"}, node: nodeCancelledContext,
		text: "RefreshNodeStatus, ConfigureNode and SetStatusUpdateCallback called with a cancelled context return within the call timeout"},
	{id: "KRI-NODE-012", level: Should, kind: kindNode, groups: []string{"refresh"}, node: nodeRefreshFillsEmpty,
		note: "Lowered to SHOULD: the node controller refreshes the status ConfigureNode returned (kuscia node_controller.go controlLoop), never an empty one.",
		text: "RefreshNodeStatus of an empty status fills capacity and allocatable for cpu, memory and pods and a Ready condition, and returns true"},
	{id: "KRI-NODE-013", level: Must, kind: kindNode, groups: []string{"callback"}, caps: []Capability{CapNodeStatusUpdates}, node: nodeCallbackOwnership,
		text: "a node delivered to the status callback belongs to the callee: the provider does not change it afterwards"},
	{id: "KRI-NODE-014", level: Should, kind: kindNode, groups: []string{"callback"}, caps: []Capability{CapNodeStatusUpdates}, node: nodeCallbackReplaced,
		note: "Lowered to SHOULD: kuscia's agent registers the callback once per run (node_controller.go), so no agent code replaces it.",
		text: "a later SetStatusUpdateCallback replaces the callback: updates go to the new one and no longer to the old one"},
	{id: "KRI-NODE-015", level: Must, kind: kindNode, groups: []string{"ping"}, caps: []Capability{CapBackendFailures}, node: nodePingUnhealthy,
		text: "Ping reports an unhealthy backend: after MakeBackendUnhealthy it returns an error"},
}

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

// ping calls Ping with the call's context, or with ctx when it is not nil.
func (e *nodeEnv) ping(ctx context.Context) error {
	var err error
	e.do("Ping", func(callCtx context.Context) {
		use := callCtx
		if ctx != nil {
			use = ctx
		}
		err = e.p.Ping(use)
	})
	return err
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

func nodeName(e *nodeEnv) {
	e.step("configuring the node under the suite's node name")
	for _, name := range []string{e.name(), e.name() + "-other"} {
		if got := e.configure(name).Name; got != name {
			e.failf("ConfigureNode(%q) returned a node named %q", name, got)
		}
	}
}

func nodeResources(e *nodeEnv) {
	e.step("configuring the node and reading its capacity and allocatable")
	node := e.configure(e.name())
	capacity, allocatable := node.Status.Capacity, node.Status.Allocatable
	for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods} {
		if _, ok := capacity[r]; !ok {
			e.failf("the node has no capacity for %s (capacity: %v)", r, quantities(capacity))
		}
		if _, ok := allocatable[r]; !ok {
			e.failf("the node has no allocatable %s (allocatable: %v)", r, quantities(allocatable))
		}
	}
	for r, a := range allocatable {
		c, ok := capacity[r]
		if !ok {
			e.failf("the node has allocatable %s %s but no capacity for it", r, a.String())
		}
		if a.Cmp(c) > 0 {
			e.failf("the node's allocatable %s %s is above its capacity %s", r, a.String(), c.String())
		}
		if a.Sign() < 0 {
			e.failf("the node's allocatable %s %s is negative", r, a.String())
		}
	}
}

func quantities(l v1.ResourceList) map[v1.ResourceName]string {
	out := map[v1.ResourceName]string{}
	for r, q := range l {
		out[r] = q.String()
	}
	return out
}

func nodeReadyCondition(e *nodeEnv) {
	e.step("configuring the node and looking for its Ready condition")
	node := e.configure(e.name())
	for _, c := range node.Status.Conditions {
		if c.Type == v1.NodeReady {
			return
		}
	}
	e.failf("the node has no Ready condition (conditions: %v)", conditionTypes(node.Status.Conditions))
}

func conditionTypes(cs []v1.NodeCondition) []v1.NodeConditionType {
	out := make([]v1.NodeConditionType, len(cs))
	for i, c := range cs {
		out[i] = c.Type
	}
	return out
}

func nodeOwnership(e *nodeEnv) {
	e.step("configuring the node, keeping a copy, then working the provider")
	node := e.configure(e.name())
	want := node.DeepCopy()
	// Work the provider; the node it returned must not change meanwhile.
	st := node.Status.DeepCopy()
	e.refresh(st)
	e.refresh(st)
	e.consistently("the configured node is not mutated by the provider", func(g gomega.Gomega) {
		g.Expect(reflect.DeepEqual(node, want)).To(gomega.BeTrue(), "the provider mutated the node ConfigureNode returned")
	})

	node.Labels = map[string]string{"kri-conformance/mutated": "true"}
	node.Status.Capacity = v1.ResourceList{v1.ResourceCPU: resource.MustParse("9999")}
	node.Status.Conditions = nil
	again := e.configure(e.name())
	if again.Labels["kri-conformance/mutated"] != "" {
		e.fail("mutating the node ConfigureNode returned changed the labels of the next one")
	}
	if cpu := again.Status.Capacity[v1.ResourceCPU]; cpu.String() == "9999" {
		e.fail("mutating the node ConfigureNode returned changed the capacity of the next one")
	}
	if len(again.Status.Conditions) != len(want.Status.Conditions) {
		e.failf("mutating the node ConfigureNode returned changed the conditions of the next one (%v, want %v)",
			conditionTypes(again.Status.Conditions), conditionTypes(want.Status.Conditions))
	}
}

// pingRounds is how often the Ping spec calls Ping.
const pingRounds = 5

func nodePingRepeatedly(e *nodeEnv) {
	e.step("pinging the healthy provider several times")
	for i := range pingRounds {
		if err := e.ping(nil); err != nil {
			e.skipIfNotSupported("Ping", err)
			e.failf("Ping %d of %d of a healthy provider returned %v", i+1, pingRounds, err)
		}
	}
}

func nodePingCancelled(e *nodeEnv) {
	e.step("pinging with a cancelled context")
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	if err := e.ping(ctx); !errorsIsCanceled(err) {
		e.skipIfNotSupported("Ping", err)
		e.failf("Ping with a cancelled context returned %v, want the context's error (context.Canceled, possibly wrapped) or a gRPC status with code Canceled", err)
	}
}

func errorsIsCanceled(err error) bool { return err != nil && ctxErrOK(err) }

func nodeRefreshFalseUnchanged(e *nodeEnv) {
	e.step("refreshing the node status until RefreshNodeStatus reports no change, comparing what it left")
	node := e.configure(e.name())
	check := func(what string, st *v1.NodeStatus) {
		before := st.DeepCopy()
		if !e.refresh(st) && !reflect.DeepEqual(st, before) {
			e.failf("RefreshNodeStatus of %s returned false but changed the status:\n%s", what, nodeStatusDiff(before, st))
		}
	}
	check("an empty status", &v1.NodeStatus{})
	st := node.Status.DeepCopy()
	e.consistently("RefreshNodeStatus returns false only when it changed nothing", func(gomega.Gomega) {
		check("the configured node's status", st)
	})
}

func nodeRefreshSecondFalse(e *nodeEnv) {
	e.step("refreshing the node status twice in a row")
	st := e.configure(e.name()).Status.DeepCopy()
	e.refresh(st)
	before := st.DeepCopy()
	if e.refresh(st) {
		e.failf("a second RefreshNodeStatus right after the first returned true (nothing changed in between); it changed:\n%s", nodeStatusDiff(before, st))
	}
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

// nodeRefreshFillsEmpty refreshes a status that has nothing yet, as the
// agent's first status update would.
func nodeRefreshFillsEmpty(e *nodeEnv) {
	e.step("refreshing an empty node status")
	e.configure(e.name())
	st := &v1.NodeStatus{}
	changed := e.refresh(st)
	var problems []string
	for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods} {
		if _, ok := st.Capacity[r]; !ok {
			problems = append(problems, fmt.Sprintf("no capacity for %s (capacity: %v)", r, quantities(st.Capacity)))
		}
		if _, ok := st.Allocatable[r]; !ok {
			problems = append(problems, fmt.Sprintf("no allocatable %s (allocatable: %v)", r, quantities(st.Allocatable)))
		}
	}
	if !slices.ContainsFunc(st.Conditions, func(c v1.NodeCondition) bool { return c.Type == v1.NodeReady }) {
		problems = append(problems, fmt.Sprintf("no Ready condition (conditions: %v)", conditionTypes(st.Conditions)))
	}
	if !changed {
		if reflect.DeepEqual(st, &v1.NodeStatus{}) {
			problems = append(problems, "it returned false and left the status empty")
		} else {
			problems = append(problems, "it returned false although it filled the status")
		}
	}
	if len(problems) > 0 {
		e.failf("RefreshNodeStatus of an empty status did not bring it up to date:\n%s", strings.Join(problems, "\n"))
	}
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

func nodePingUnhealthy(e *nodeEnv) {
	e.step("making the backend unhealthy (Config.MakeBackendUnhealthy), then pinging")
	var err error
	e.do("MakeBackendUnhealthy", func(ctx context.Context) { err = e.st.cfg.MakeBackendUnhealthy(ctx, e.p) })
	e.noError("MakeBackendUnhealthy", err)
	if err := e.ping(nil); err == nil {
		e.fail("Ping returned nil after MakeBackendUnhealthy made the backend unhealthy, want an error")
	}
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
