package conformance

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The node refresh specs (KRI-NODE-007, 008, 012, 016): RefreshNodeStatus
// as the node controller's loop calls it, and what it keeps of the status.
var nodeRefreshSpecs = []*specDef{
	{id: "KRI-NODE-007", level: Must, kind: kindNode, groups: []string{"refresh"}, node: nodeRefreshFalseUnchanged,
		text: "RefreshNodeStatus that returns false leaves the status exactly as it was passed in"},
	{id: "KRI-NODE-008", level: Should, kind: kindNode, groups: []string{"refresh"}, node: nodeRefreshSecondFalse,
		text: "a second RefreshNodeStatus with nothing changed in between returns false"},
	{id: "KRI-NODE-012", level: Should, kind: kindNode, groups: []string{"refresh"}, node: nodeRefreshFillsEmpty,
		note: "Lowered to SHOULD: the node controller refreshes the status ConfigureNode returned (kuscia node_controller.go controlLoop), never an empty one.",
		text: "RefreshNodeStatus of an empty status fills capacity and allocatable for cpu, memory and pods and a Ready condition, and returns true"},
	{id: "KRI-NODE-016", level: Must, kind: kindNode, groups: []string{"refresh"}, node: nodeRefreshKeepsForeignFields,
		text: "RefreshNodeStatus keeps what other components set in the status: conditions of other types, attached and in-use volumes, images, daemon endpoints"},
}

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

func nodeRefreshKeepsForeignFields(e *nodeEnv) {
	node := e.configure(e.name())
	st := node.Status.DeepCopy()
	foreign := v1.NodeCondition{
		Type: "example.com/NetworkProblem", Status: v1.ConditionFalse, Reason: "SetByNodeProblemDetector",
		Message: "set by another component", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}
	attached := v1.AttachedVolume{Name: "kubernetes.io/csi/example^vol-1", DevicePath: "/dev/xvdb"}
	image := v1.ContainerImage{Names: []string{"example.com/kept:1"}, SizeBytes: 1 << 20}
	st.Conditions = append(st.Conditions, foreign)
	st.VolumesAttached = append(st.VolumesAttached, attached)
	st.VolumesInUse = append(st.VolumesInUse, attached.Name)
	st.Images = append(st.Images, image)
	st.DaemonEndpoints.KubeletEndpoint.Port = 10250
	e.step("refreshing a status that carries a condition, volumes and an image other components set")
	e.refresh(st)
	e.refresh(st)
	switch {
	case !slices.ContainsFunc(st.Conditions, func(c v1.NodeCondition) bool { return c.Type == foreign.Type && c.Reason == foreign.Reason }):
		e.failf("RefreshNodeStatus dropped or rewrote the condition %s another component set (conditions now: %v); the agent's next status update would erase it from the API server", foreign.Type, conditionTypes(st.Conditions))
	case !slices.Contains(st.VolumesAttached, attached) || !slices.Contains(st.VolumesInUse, attached.Name):
		e.failf("RefreshNodeStatus dropped the attached volume %s (attached: %v, in use: %v); the attach-detach controller owns it", attached.Name, st.VolumesAttached, st.VolumesInUse)
	case !slices.ContainsFunc(st.Images, func(i v1.ContainerImage) bool { return slices.Equal(i.Names, image.Names) }):
		e.failf("RefreshNodeStatus dropped the image %v from the status (images now: %d)", image.Names, len(st.Images))
	case st.DaemonEndpoints.KubeletEndpoint.Port != 10250:
		e.failf("RefreshNodeStatus changed the kubelet endpoint port from 10250 to %d", st.DaemonEndpoints.KubeletEndpoint.Port)
	}
}
