package podstatus

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
)

// Reasons of the conditions Generate sets (those of the kubelet's status
// package, generate.go).
const (
	reasonUnknownContainerStatuses = "UnknownContainerStatuses"
	reasonPodCompleted             = "PodCompleted"
	reasonPodFailed                = "PodFailed"
	reasonContainersNotReady       = "ContainersNotReady"
	reasonContainersNotInitialized = "ContainersNotInitialized"
	reasonReadinessGatesNotReady   = "ReadinessGatesNotReady"
)

// isGenerated reports whether Generate computes conditions of type t; all
// other conditions are carried over from the previous status.
func isGenerated(t v1.PodConditionType) bool {
	switch t {
	case v1.PodReadyToStartContainers, v1.PodInitialized, v1.PodReady, v1.ContainersReady, v1.PodScheduled:
		return true
	}
	return false
}

// isResize reports whether t is an in-place resize condition.
func isResize(t v1.PodConditionType) bool {
	return t == v1.PodResizePending || t == v1.PodResizeInProgress
}

// conditions returns the pod's conditions: those of old that Generate does
// not compute, in their order, then old's resize conditions (none when
// terminal), then PodReadyToStartContainers,
// Initialized, Ready, ContainersReady and PodScheduled, in the order
// generateAPIPodStatus appends them. s holds the container statuses and the
// phase already computed.
func conditions(pod *v1.Pod, old *v1.PodStatus, s *v1.PodStatus, v *runtimeView, terminal bool) []v1.PodCondition {
	out := make([]v1.PodCondition, 0, len(old.Conditions)+5)
	for i := range old.Conditions {
		if t := old.Conditions[i].Type; !isGenerated(t) && !isResize(t) {
			out = append(out, *old.Conditions[i].DeepCopy())
		}
	}
	// The resize conditions, which the kubelet owns and keeps in its
	// status manager, come after the others, and a pod being terminated
	// has none (kubelet_pods.go determinePodResizeStatus).
	if !terminal {
		for i := range old.Conditions {
			if isResize(old.Conditions[i].Type) {
				out = append(out, *old.Conditions[i].DeepCopy())
			}
		}
	}
	app, init := s.ContainerStatuses, s.InitContainerStatuses
	if v.kuscia {
		out = append(out, kusciaInitialized(pod, init, s.Phase))
	} else {
		out = append(out, readyToStartContainers(pod, v, terminal))
		out = append(out, initialized(pod, old, app, init, s.Phase))
	}
	cr := containersReady(pod, app, init, s.Phase)
	out = append(out, podReady(pod, out, cr))
	out = append(out, cr, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})

	for i := range out {
		c := &out[i]
		if !isGenerated(c.Type) {
			continue
		}
		c.ObservedGeneration = pod.Generation
		// Keep the transition time while the status stays, as the
		// kubelet's status manager does; a new transition has none,
		// for the caller to stamp.
		if _, prev := podutil.GetPodConditionFromList(old.Conditions, c.Type); prev != nil && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
	}
	return out
}

// readyToStartContainers is the PodReadyToStartContainers condition: true
// when the pod has a sandbox that containers can be started in, as the
// kubelet's status.GeneratePodReadyToStartContainersCondition decides from
// runtimeutil.PodSandboxChanged. The sandboxes are taken in any order (the
// newest by CreatedAt is the current one); a network namespace mode is only
// compared when the provider reports one. A provider without sandboxes (a
// remote backend) counts as ready while it reports container instances for
// the pod and the pod is not terminal.
// The reason and messages of a PodReadyToStartContainers condition that is
// False, as the kubelet 1.37 sets them (the PodSandboxNotReady constants of
// k8s.io/kubernetes/pkg/kubelet/types, which older releases lack; their
// kubelets leave the condition's reason and message empty).
const (
	sandboxNotReadyReason                  = "PodSandboxNotReady"
	sandboxNotReadyMsgNoPodSandbox         = "no pod sandbox exists"
	sandboxNotReadyMsgMultipleSandboxes    = "multiple pod sandboxes are ready and need to be reconciled"
	sandboxNotReadyMsgSandboxNotReady      = "pod sandbox is not ready"
	sandboxNotReadyMsgNetworkNamespaceMode = "network namespace mode changed and sandbox needs to be recreated"
	sandboxNotReadyMsgNoIPAddress          = "pod sandbox has no IP address"
)

func readyToStartContainers(pod *v1.Pod, v *runtimeView, terminal bool) v1.PodCondition {
	c := v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue}
	notReady := func(msg string) v1.PodCondition {
		c.Status, c.Reason, c.Message = v1.ConditionFalse, sandboxNotReadyReason, msg
		return c
	}
	if len(v.sandboxes) == 0 {
		if len(v.instances) > 0 && !terminal {
			return c
		}
		return notReady(sandboxNotReadyMsgNoPodSandbox)
	}
	ready := 0
	current := v.sandboxes[0]
	for _, sb := range v.sandboxes {
		if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			ready++
		}
		if sb.CreatedAt > current.CreatedAt {
			current = sb
		}
	}
	switch {
	case ready > 1:
		return notReady(sandboxNotReadyMsgMultipleSandboxes)
	case current.State != runtimeapi.PodSandboxState_SANDBOX_READY:
		return notReady(sandboxNotReadyMsgSandboxNotReady)
	}
	if opts := current.GetLinux().GetNamespaces().GetOptions(); opts != nil {
		want := runtimeapi.NamespaceMode_POD
		if pod.Spec.HostNetwork {
			want = runtimeapi.NamespaceMode_NODE
		}
		if opts.GetNetwork() != want {
			return notReady(sandboxNotReadyMsgNetworkNamespaceMode)
		}
	}
	if !pod.Spec.HostNetwork && current.Network != nil && current.Network.Ip == "" {
		return notReady(sandboxNotReadyMsgNoIPAddress)
	}
	return c
}

// initialized is the Initialized condition (the kubelet's
// status.GeneratePodInitializedCondition): true once every init container
// has completed (a restartable one: started), once an app container has
// run, or when the pod succeeded; it does not turn false again once true.
func initialized(pod *v1.Pod, old *v1.PodStatus, app, init []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	var unknown, incomplete []string
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		st := findStatus(init, c.Name)
		switch {
		case st == nil:
			unknown = append(unknown, c.Name)
		case podutil.IsRestartableInitContainer(c):
			if st.Started == nil || !*st.Started {
				incomplete = append(incomplete, c.Name)
			}
		case !st.Ready:
			incomplete = append(incomplete, c.Name)
		}
	}
	cond := v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}
	switch {
	case phase == v1.PodSucceeded && len(unknown) == 0:
		cond.Reason = reasonPodCompleted
		return cond
	case anyAppContainerRan(&pod.Spec, app):
		return cond
	}
	msg := joinNames("containers with unknown status: ", unknown, "containers with incomplete status: ", incomplete)
	if msg == "" {
		return cond
	}
	if _, prev := podutil.GetPodConditionFromList(old.Conditions, v1.PodInitialized); prev != nil && prev.Status == v1.ConditionTrue {
		return cond
	}
	cond.Status, cond.Reason, cond.Message = v1.ConditionFalse, reasonContainersNotInitialized, msg
	return cond
}

// kusciaInitialized is the Initialized condition as kuscia's agent
// computes it (secretflow/kuscia pkg/agent/status/generate.go
// GeneratePodInitializedCondition, from an older kubelet): true once every
// init container's status is Ready, or when the pod succeeded with a
// status for each; unlike the kubelet 1.37 it does not count an app
// container that ran, and it turns false again whenever an init
// container is not Ready. The agent computes it after RefreshPodStatus,
// which sets Ready (Generator.UpdateConditions).
func kusciaInitialized(pod *v1.Pod, init []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	if init == nil && len(pod.Spec.InitContainers) > 0 {
		return v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionFalse, Reason: reasonUnknownContainerStatuses}
	}
	var unknown, unready []string
	for i := range pod.Spec.InitContainers {
		name := pod.Spec.InitContainers[i].Name
		switch st := findStatus(init, name); {
		case st == nil:
			unknown = append(unknown, name)
		case !st.Ready:
			unready = append(unready, name)
		}
	}
	if phase == v1.PodSucceeded && len(unknown) == 0 {
		return v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue, Reason: reasonPodCompleted}
	}
	if msg := joinNames("containers with unknown status: ", unknown, "containers with incomplete status: ", unready); msg != "" {
		return v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionFalse, Reason: reasonContainersNotInitialized, Message: msg}
	}
	return v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}
}

// containersReady is the ContainersReady condition (the kubelet's
// status.GenerateContainersReadyCondition): true when every app container
// and every restartable init container is ready; false with PodCompleted or
// PodFailed once the pod is terminal.
func containersReady(pod *v1.Pod, app, init []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	var unknown, unready []string
	check := func(statuses []v1.ContainerStatus, name string) {
		if st := findStatus(statuses, name); st == nil {
			unknown = append(unknown, name)
		} else if !st.Ready {
			unready = append(unready, name)
		}
	}
	for i := range pod.Spec.InitContainers {
		if podutil.IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			check(init, pod.Spec.InitContainers[i].Name)
		}
	}
	for i := range pod.Spec.Containers {
		check(app, pod.Spec.Containers[i].Name)
	}
	cond := v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionTrue}
	switch {
	case phase == v1.PodSucceeded && len(unknown) == 0:
		cond.Status, cond.Reason = v1.ConditionFalse, reasonPodCompleted
	case phase == v1.PodFailed:
		cond.Status, cond.Reason = v1.ConditionFalse, reasonPodFailed
	default:
		if msg := joinNames("containers with unknown status: ", unknown, "containers with unready status: ", unready); msg != "" {
			cond.Status, cond.Reason, cond.Message = v1.ConditionFalse, reasonContainersNotReady, msg
		}
	}
	return cond
}

// podReady is the Ready condition (the kubelet's
// status.GeneratePodReadyCondition): ContainersReady, and every readiness
// gate's condition true among conds.
func podReady(pod *v1.Pod, conds []v1.PodCondition, cr v1.PodCondition) v1.PodCondition {
	cond := v1.PodCondition{Type: v1.PodReady, Status: cr.Status, Reason: cr.Reason, Message: cr.Message}
	if cr.Status != v1.ConditionTrue {
		return cond
	}
	var msgs []string
	for _, rg := range pod.Spec.ReadinessGates {
		_, c := podutil.GetPodConditionFromList(conds, rg.ConditionType)
		switch {
		case c == nil:
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(rg.ConditionType)))
		case c.Status != v1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(rg.ConditionType), c.Status))
		}
	}
	if len(msgs) > 0 {
		cond.Status, cond.Reason, cond.Message = v1.ConditionFalse, reasonReadinessGatesNotReady, strings.Join(msgs, ", ")
	}
	return cond
}

// anyAppContainerRan reports whether an app container is running or has
// terminated (pkgcontainer.HasAnyRegularContainerStarted).
func anyAppContainerRan(spec *v1.PodSpec, app []v1.ContainerStatus) bool {
	for i := range spec.Containers {
		if st := findStatus(app, spec.Containers[i].Name); st != nil && (st.State.Running != nil || st.State.Terminated != nil) {
			return true
		}
	}
	return false
}

// joinNames formats the two lists of container names as the kubelet's
// condition messages do, leaving out an empty list.
func joinNames(prefixA string, a []string, prefixB string, b []string) string {
	var parts []string
	if len(a) > 0 {
		parts = append(parts, fmt.Sprintf("%s%s", prefixA, a))
	}
	if len(b) > 0 {
		parts = append(parts, fmt.Sprintf("%s%s", prefixB, b))
	}
	return strings.Join(parts, ", ")
}
