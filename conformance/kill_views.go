package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// What a provider reports of a pod it has killed (KRI-POD-005, KRI-POD-056):
// it may forget the pod at once, as a provider that deletes the pod from a
// backend cluster does, and the agent does not mind: the kubelet's
// SyncTerminatingPod only checks that nothing runs after killPod, and its
// PLEG (pleg/generic.go Relist) reports a container that vanished as died
// and removed. What is still reported must be stopped, and the two views
// must agree.

// killedIDs returns the running containers of pod, by ID, before the spec
// kills it.
func (e *podEnv) killedIDs(pod *v1.Pod) map[pkgcontainer.ContainerID]string {
	out := map[pkgcontainer.ContainerID]string{}
	for name, id := range e.runningIDs(pod) {
		out[id] = name
	}
	return out
}

// expectKilledViews checks what GetPodStatus and GetPods(true) report of pod
// once KillPod (of the containers in killed, by ID) returned nil: every
// instance of a killed container that is still reported is exited with a
// non-zero exit code, in every round, and within the state timeout the two
// views agree: GetPods(true) lists exactly the containers GetPodStatus
// reports, none running. A provider may have forgotten the pod: then both
// report nothing of it. It returns the last status read.
func (e *podEnv) expectKilledViews(pod *v1.Pod, killed map[pkgcontainer.ContainerID]string, after string) *pkgcontainer.PodStatus {
	var st *pkgcontainer.PodStatus
	e.eventually(fmt.Sprintf("%s, GetPodStatus and GetPods(true) agree on what is left of pod %s", after, podRef(pod)), func(g gomega.Gomega) {
		st = e.status(pod)
		e.expectKilledStopped(pod, st, killed, after)
		listed := map[string]string{}
		for _, p := range e.getPods(true) {
			if p == nil || p.ID != pod.UID {
				continue
			}
			for _, c := range p.Containers {
				if c == nil {
					continue
				}
				listed[c.ID.String()] = c.Name + "/" + string(c.State)
				if c.State == pkgcontainer.ContainerStateRunning {
					e.failf("%s, GetPods(true) lists container %s (%s) of pod %s as running: %v", after, c.Name, c.ID.String(), podRef(pod), listed)
				}
			}
		}
		reported := map[string]string{}
		for _, c := range st.ContainerStatuses {
			reported[c.ID.String()] = c.Name + "/" + string(c.State)
		}
		g.Expect(sortedKeys(listed)).To(gomega.Equal(sortedKeys(reported)),
			"GetPods(true) lists containers %v of pod %s, GetPodStatus reports %v: the two views must name the same containers (both none once the pod is forgotten)",
			listed, podRef(pod), reported)
	})
	return st
}

// expectKilledStopped fails the spec when st reports an instance of a
// killed container that is not exited, or exited with code 0.
func (e *podEnv) expectKilledStopped(pod *v1.Pod, st *pkgcontainer.PodStatus, killed map[pkgcontainer.ContainerID]string, after string) {
	for _, c := range st.ContainerStatuses {
		name, ok := killed[c.ID]
		if !ok {
			continue
		}
		switch {
		case c.State != pkgcontainer.ContainerStateExited:
			e.failf("%s, container %s (%s) of pod %s, which KillPod stopped, is reported %s, want exited or not reported at all: %s",
				after, name, c.ID.String(), podRef(pod), c.State, describeStatus(st))
		case c.ExitCode == 0:
			e.failf("%s, container %s (%s) of pod %s, which KillPod stopped, is reported exited with code 0, want a non-zero code (the signal's, 137 or 143) or not reported at all: %s",
				after, name, c.ID.String(), podRef(pod), describeStatus(st))
		}
	}
}

func sortedKeys(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return "[" + strings.Join(keys, " ") + "]"
}
