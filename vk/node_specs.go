package vk

import (
	"fmt"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-NODE-001", Level: Must,
			Title: "with a provider whose Ping answers nil, VK registers the node and creates and renews its lease",
			VK:    "node/node.go NodeController.Run, ensureNode, updateStatus (nothing is published while Ping fails); node/lease_controller_v1.go leaseController.sync"},
			node: true, run: nodeRegisteredAndLeaseRenewed},
		spec{SpecInfo: SpecInfo{ID: "KVK-NODE-002", Level: Must,
			Title: "NotifyNodeStatus returns without blocking",
			VK:    "node/node.go NodeProvider.NotifyNodeStatus (doc: should not block callers), NodeController.Run (calls it before it registers the node)"},
			node: true, run: notifyNodeStatusReturns},
		spec{SpecInfo: SpecInfo{ID: "KVK-NODE-003", Level: Must,
			Title: "once the node is registered, every Ping returns within VK's ping interval (10s)",
			VK: "node/node_ping_controller.go nodePingController.Run (no timeout unless WithNodePingTimeout, which nodeutil does not set; singleflight: no Ping while one runs), getResult (answers the last Ping that returned); " +
				"node/lease_controller_v1.go leaseController.sync and node/node.go NodeController.updateStatus (renew the lease and the node's heartbeat on that result, and stop while it is an error)"},
			node: true, run: pingReturns},
		spec{SpecInfo: SpecInfo{ID: "KVK-NODE-004", Level: Must, Capabilities: []Capability{CapBackendFailures},
			Title: "once the backend is unhealthy, Ping answers an error, so that VK stops renewing the node's lease",
			VK: "node/lease_controller_v1.go leaseController.sync (renews the lease only while the last Ping answered nil), node/node.go NodeController.updateStatus " +
				"(no heartbeat while Ping fails; VK never publishes the node NotReady itself: the node lifecycle controller does once the lease is 40s old)"},
			node: true, run: pingReportsUnhealthyBackend},
	)
}

func nodeRegisteredAndLeaseRenewed(e *env) {
	nc, err := e.judge.startNode(e.ctx, e.nodes)
	if err != nil {
		e.failf("%v", err)
	}
	const bound = 30 * time.Second
	if !e.await(bound, func() bool {
		// client-go's fake answers a missing node with an empty one and NotFound.
		_, err := e.judge.api.CoreV1().Nodes().Get(e.ctx, e.judge.node, metav1.GetOptions{})
		return err == nil
	}) {
		select {
		case <-nc.Done():
			e.failf("VK's NodeController.Run ended without registering node %s: %v; ensureNode (node/node.go) registers it only "+
				"through updateStatus, which publishes nothing while Ping fails (Ping last answered %v)", e.judge.node, nc.Err(), lastErr(e.calls.of("Ping", "")))
		default:
		}
		e.failf("VK did not register node %s within %v: ensureNode (node/node.go) registers it only through updateStatus, "+
			"which publishes nothing while Ping fails (Ping was called %d times, last answered %v)",
			e.judge.node, bound, len(e.calls.of("Ping", "")), lastErr(e.calls.of("Ping", "")))
	}
	leases := e.judge.api.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	renewed := func() *metav1.MicroTime {
		l, err := leases.Get(e.ctx, e.judge.node, metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return nil
		}
		return l.Spec.RenewTime
	}
	var first *metav1.MicroTime
	if !e.await(bound, func() bool { first = renewed(); return first != nil }) {
		e.failf("VK registered node %s but created no lease within %v: leaseController.sync (node/lease_controller_v1.go) "+
			"renews it only after a Ping that answered nil (Ping last answered %v)", e.judge.node, bound, lastErr(e.calls.of("Ping", "")))
	}
	// VK renews every 10s (a quarter of the 40s lease): 3 renewals at least.
	const renewals = 35 * time.Second
	if !e.await(renewals, func() bool {
		r := renewed()
		return r != nil && r.Sub(first.Time) >= 30*time.Second
	}) {
		e.failf("VK did not keep renewing the lease of node %s (renewed at %v, then not 30s later within %v): "+
			"leaseController.sync (node/lease_controller_v1.go) stops renewing while Ping fails (Ping last answered %v); "+
			"the node controller then marks the node NotReady and evicts its pods", e.judge.node, first.Time, renewals, lastErr(e.calls.of("Ping", "")))
	}
}

func notifyNodeStatusReturns(e *env) {
	if _, err := e.judge.startNode(e.ctx, e.nodes); err != nil {
		e.failf("%v", err)
	}
	select {
	case <-e.nodes.returned:
	case <-time.After(time.Second):
		e.failf("NotifyNodeStatus did not return within 1s: VK's NodeController.Run (node/node.go) calls it before it registers the node, " +
			"so the node would never be registered (NodeProvider's doc: NotifyNodeStatus should not block callers)")
	}
}

// pingInterval is VK's DefaultPingInterval (node/node.go), which nodeutil
// keeps.
const pingInterval = 10 * time.Second

// pingReturns watches the Pings of a registered node for a minute: one
// still running after the ping interval keeps VK renewing the lease on the
// Ping before it.
func pingReturns(e *env) {
	if _, err := e.judge.startNode(e.ctx, e.nodes); err != nil {
		e.failf("%v", err)
	}
	const bound = 30 * time.Second
	if !e.await(bound, func() bool {
		// client-go's fake answers a missing node with an empty one and NotFound.
		_, err := e.judge.api.CoreV1().Nodes().Get(e.ctx, e.judge.node, metav1.GetOptions{})
		return err == nil
	}) {
		e.failf("precondition: VK did not register node %s within %v (Ping was called %d times, last answered %v)",
			e.judge.node, bound, len(e.calls.of("Ping", "")), lastErr(e.calls.of("Ping", "")))
	}
	leases := e.judge.api.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	const watch = time.Minute
	end := time.Now().Add(watch)
	for time.Now().Before(end) {
		e.sleep(time.Second)
		since, ok := e.nodes.pingRunningSince()
		if !ok || time.Since(since) <= pingInterval {
			continue
		}
		renewed := "VK has not renewed it since"
		if l, err := leases.Get(e.ctx, e.judge.node, metav1.GetOptions{}); err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(since) {
			renewed = fmt.Sprintf("VK renewed it at %v, after the Ping was called", l.Spec.RenewTime.Format(time.TimeOnly))
		}
		e.failf("a Ping called at %v, once node %s was registered, had not returned %v later (VK's ping interval is %v): "+
			"nodePingController.Run (node/node_ping_controller.go) sets no timeout (nodeutil sets none) and starts no other Ping while one runs, "+
			"and getResult keeps answering the last Ping that returned (it answered %v), so leaseController.sync (node/lease_controller_v1.go) keeps "+
			"renewing the lease and NodeController.updateStatus (node/node.go) the node's heartbeat on it: the node stays Ready while the provider "+
			"cannot say whether its backend is there (%s). Ping must return, with an error when the backend does not answer, and honour its context",
			since.Format(time.TimeOnly), e.judge.node, time.Since(since).Round(time.Second), pingInterval, lastErr(e.calls.of("Ping", "")), renewed)
	}
}

// pingReportsUnhealthyBackend registers the node, makes the backend
// unhealthy and watches Ping and the lease for a lease duration.
func pingReportsUnhealthyBackend(e *env) {
	if e.cfg.MakeBackendUnhealthy == nil {
		e.failf("Config declares capability %q but its MakeBackendUnhealthy is nil", CapBackendFailures)
	}
	if _, err := e.judge.startNode(e.ctx, e.nodes); err != nil {
		e.failf("%v", err)
	}
	leases := e.judge.api.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	renewed := func() time.Time {
		l, err := leases.Get(e.ctx, e.judge.node, metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return time.Time{}
		}
		return l.Spec.RenewTime.Time
	}
	const bound = 30 * time.Second
	if !e.await(bound, func() bool { return !renewed().IsZero() }) {
		e.failf("precondition: VK did not register node %s with a lease within %v (Ping last answered %v)", e.judge.node, bound, lastErr(e.calls.of("Ping", "")))
	}
	if err := e.cfg.MakeBackendUnhealthy(e.ctx, e.nodes.p); err != nil {
		e.failf("precondition: MakeBackendUnhealthy: %v", err)
	}
	unhealthy := time.Now()
	mark := e.calls.len()
	var failed time.Time
	if !e.await(2*pingInterval, func() bool {
		for _, c := range e.calls.since(mark, "Ping", "") {
			if c.Err != nil {
				failed = c.At
				return true
			}
		}
		return false
	}) {
		e.failf("the backend of node %s was made unhealthy at %v, and in the %v since every Ping (%d) answered nil: leaseController.sync "+
			"(node/lease_controller_v1.go) renews the lease on a Ping that answered nil (last renewed at %v) and NodeController.updateStatus (node/node.go) "+
			"the node's heartbeat: the node stays Ready, and pods are scheduled onto a backend that cannot run them",
			e.judge.node, unhealthy.Format(time.TimeOnly), 2*pingInterval, len(e.calls.since(mark, "Ping", "")), renewed().Format(time.TimeOnly))
	}
	// A lease duration (40s): the Pings keep failing, the lease is not renewed.
	e.sleep(40 * time.Second)
	for _, c := range e.calls.since(mark, "Ping", "") {
		if c.At.After(failed) && c.Err == nil {
			e.failf("the backend of node %s was made unhealthy at %v; Ping answered an error at %v but nil again at %v: VK renews the lease "+
				"on the last Ping (leaseController.sync, node/lease_controller_v1.go), so the node flaps back to Ready while its backend is down",
				e.judge.node, unhealthy.Format(time.TimeOnly), failed.Format(time.TimeOnly), c.At.Format(time.TimeOnly))
		}
	}
	if r := renewed(); r.After(failed.Add(time.Second)) {
		e.failf("VK renewed the lease of node %s at %v, after Ping answered an error at %v (the backend was made unhealthy at %v)",
			e.judge.node, r.Format(time.TimeOnly), failed.Format(time.TimeOnly), unhealthy.Format(time.TimeOnly))
	}
}

func init() {
	specs = append(specs,
		spec{SpecInfo: SpecInfo{ID: "KVK-NODE-005", Level: Must, Capabilities: []Capability{CapNodeStatusUpdates},
			Title: "a change of its node the provider notices is pushed through the NotifyNodeStatus callback, and VK publishes the node's conditions as pushed",
			VK: "node/node.go NodeController.Run (registers the callback: a send on a channel of buffer 1), controlLoop (takes the pushed node's Status, Labels and " +
				"Annotations as the node it publishes), updateStatus, updateNodeStatus (a three-way strategic merge patch of the node's status)"},
			node: true, run: pushedNodeStatusIsPublished},
		spec{SpecInfo: SpecInfo{ID: "KVK-NODE-006", Level: Should, Capabilities: []Capability{CapNodeStatusUpdates},
			Title: "a node pushed through the NotifyNodeStatus callback is never changed by the provider afterwards",
			VK: "node/node.go controlLoop (keeps the pushed node's Status, Labels and Annotations, their slices and maps shared, as the node it publishes), " +
				"updateNodeStatusHeartbeat (writes heartbeat times into those conditions), updateNodeStatus (marshals them for the patch): a change by the provider races them"},
			node: true, run: pushedNodeStaysUnchanged},
	)
}

// leaseDuration is VK's DefaultLeaseDuration (node/lease_controller_v1.go),
// the lease the suite's NodeController takes (WithNodeEnableLeaseV1 with 0).
const leaseDuration = 40 * time.Second

// pushBound is how long the node specs wait for the node the provider
// pushes once it noticed a change: Config.NodeStatusPeriod when the
// provider declares a period longer than VK's lease, else the lease's
// duration. VK sets no latency for a push (node/node.go controlLoop takes
// a pushed node whenever it comes); what bounds it is the lease: a node
// lifecycle controller judges a node by a lease renewed within
// leaseDuration (node/lease_controller_v1.go), so a change pushed within
// that time is as fresh as what the node says of its own liveness, and a
// provider that polls its backend every 30s (interLink) pushes within it.
func (e *env) pushBound() time.Duration {
	return max(leaseDuration, e.cfg.NodeStatusPeriod)
}

// pushedNodeStaysUnchanged has the provider notice two changes of its node
// (TriggerNodeStatusUpdate twice) and compares the node it pushed first
// with the copy taken when it did. The suite hands VK copies, so that only
// the provider can have changed it.
func pushedNodeStaysUnchanged(e *env) {
	if e.cfg.TriggerNodeStatusUpdate == nil {
		e.failf("Config declares capability %q but its TriggerNodeStatusUpdate is nil", CapNodeStatusUpdates)
	}
	if _, err := e.judge.startNode(e.ctx, e.nodes); err != nil {
		e.failf("%v", err)
	}
	const bound = 30 * time.Second
	if !e.await(bound, func() bool {
		// client-go's fake answers a missing node with an empty one and NotFound.
		_, err := e.judge.api.CoreV1().Nodes().Get(e.ctx, e.judge.node, metav1.GetOptions{})
		return err == nil
	}) {
		e.failf("precondition: VK did not register node %s within %v (Ping last answered %v)", e.judge.node, bound, lastErr(e.calls.of("Ping", "")))
	}
	for i := 1; i <= 2; i++ {
		mark := len(e.nodes.pushed())
		if err := e.cfg.TriggerNodeStatusUpdate(e.ctx, e.nodes.p); err != nil {
			e.failf("precondition: TriggerNodeStatusUpdate (call %d): %v", i, err)
		}
		if !e.await(e.pushBound(), func() bool { return len(e.nodes.pushed()) > mark }) {
			e.failf("precondition: the provider pushed no node within %v of TriggerNodeStatusUpdate (call %d; KVK-NODE-005)", e.scaled(e.pushBound()), i)
		}
	}
	for _, p := range e.nodes.pushed() {
		if p.Pushed == nil {
			continue
		}
		if d := cmp.Diff(p.Node, p.Pushed); d != "" {
			e.failf("the node the provider pushed through the NotifyNodeStatus callback at %v was changed by it afterwards (-as pushed +now):\n%s\n"+
				"VK's controlLoop (node/node.go) keeps the pushed node's Status, Labels and Annotations, sharing their slices and maps, as the node it "+
				"publishes: it marshals them for each patch (updateNodeStatus) and writes heartbeat times into the conditions "+
				"(updateNodeStatusHeartbeat), so a change races VK (a data race; a torn node published), and VK's writes race the provider's reads. "+
				"Push a copy (DeepCopy) and never touch it again", p.At.Format(time.TimeOnly), d)
		}
	}
}

// conditionsOf maps a node's conditions by type to what the node
// controller and users read of them (status, reason, message).
func conditionsOf(n *corev1.Node) map[corev1.NodeConditionType]string {
	out := map[corev1.NodeConditionType]string{}
	if n == nil {
		return out
	}
	for _, c := range n.Status.Conditions {
		out[c.Type] = fmt.Sprintf("%s (reason %q, message %q)", c.Status, c.Reason, c.Message)
	}
	return out
}

// pushedNodeStatusIsPublished registers the node, has the provider notice
// a change (Config.TriggerNodeStatusUpdate) and wants it pushed, then
// published as pushed.
func pushedNodeStatusIsPublished(e *env) {
	if e.cfg.TriggerNodeStatusUpdate == nil {
		e.failf("Config declares capability %q but its TriggerNodeStatusUpdate is nil", CapNodeStatusUpdates)
	}
	if _, err := e.judge.startNode(e.ctx, e.nodes); err != nil {
		e.failf("%v", err)
	}
	nodes := e.judge.api.CoreV1().Nodes()
	apiNode := func() *corev1.Node {
		n, err := nodes.Get(e.ctx, e.judge.node, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return n
	}
	const bound = 30 * time.Second
	var before *corev1.Node
	if !e.await(bound, func() bool { before = apiNode(); return before != nil }) {
		e.failf("precondition: VK did not register node %s within %v (Ping last answered %v)", e.judge.node, bound, lastErr(e.calls.of("Ping", "")))
	}
	mark := len(e.nodes.pushed())
	if err := e.cfg.TriggerNodeStatusUpdate(e.ctx, e.nodes.p); err != nil {
		e.failf("precondition: TriggerNodeStatusUpdate: %v", err)
	}
	triggered := time.Now()
	var pushed []pushedNode
	if !e.await(e.pushBound(), func() bool { pushed = e.nodes.pushed()[mark:]; return len(pushed) > 0 }) {
		e.failf("TriggerNodeStatusUpdate made the provider notice a change of node %s at %v, and in the %v since it pushed nothing through "+
			"the callback VK registered with NotifyNodeStatus: VK publishes the provider's node status only as it is pushed there "+
			"(node/node.go NodeController.Run, controlLoop); otherwise it keeps publishing the node it registered, heartbeats only "+
			"(updateStatus), and the change never reaches the API server (conditions published: %v)",
			e.judge.node, triggered.Format(time.TimeOnly), e.scaled(e.pushBound()), conditionsOf(apiNode()))
	}
	last := pushed[len(pushed)-1]
	if last.Node == nil {
		e.failf("the provider pushed a nil node through the NotifyNodeStatus callback at %v: VK's controlLoop (node/node.go) reads its Status and panics",
			last.At.Format(time.TimeOnly))
	}
	want := conditionsOf(last.Node)
	if fmt.Sprint(want) == fmt.Sprint(conditionsOf(before)) {
		e.failf("TriggerNodeStatusUpdate made the provider notice a change of node %s, and it pushed a node whose conditions are those "+
			"VK had published before (%v): the change is not in what it pushed (a node taken before the change, a stale cache), and VK publishes "+
			"what is pushed as it is (node/node.go controlLoop takes the pushed node's Status), so the change never reaches the API server",
			e.judge.node, want)
	}
	var now map[corev1.NodeConditionType]string
	if !e.await(bound, func() bool { now = conditionsOf(apiNode()); return fmt.Sprint(now) == fmt.Sprint(want) }) {
		e.failf("the provider pushed node %s with conditions %v at %v, and %v later VK had published %v: controlLoop (node/node.go) "+
			"publishes the pushed node's status through updateStatus unless the last Ping failed (Ping last answered %v)",
			e.judge.node, want, last.At.Format(time.TimeOnly), bound, now, lastErr(e.calls.of("Ping", "")))
	}
}
