package conformance

import (
	"reflect"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The node configuration specs (KRI-NODE-001 to 004): the node ConfigureNode
// returns, which the node controller registers (node_controller.go).
var nodeConfigureSpecs = []*specDef{
	{id: "KRI-NODE-001", level: Must, kind: kindNode, groups: []string{"configure"}, node: nodeName,
		text: "ConfigureNode returns a node with exactly the requested name"},
	{id: "KRI-NODE-002", level: Must, kind: kindNode, groups: []string{"configure"}, node: nodeResources,
		text: "ConfigureNode reports capacity and allocatable for cpu, memory and pods, with allocatable never above capacity"},
	{id: "KRI-NODE-003", level: Should, kind: kindNode, groups: []string{"configure"}, node: nodeReadyCondition,
		text: "ConfigureNode returns a node with a Ready condition"},
	{id: "KRI-NODE-004", level: Must, kind: kindNode, groups: []string{"configure", "ownership"}, node: nodeOwnership,
		text: "the node ConfigureNode returns belongs to the caller: the provider does not mutate it later, and mutating it does not change the next one"},
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
