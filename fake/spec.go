package fake

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// validatePod rejects what SyncPod cannot work with, naming the problem. It
// does not allocate for a valid pod.
func validatePod(pod *v1.Pod) error {
	if pod == nil {
		return errors.New("fake: pod is nil")
	}
	if pod.UID == "" {
		return fmt.Errorf("fake: pod %q has no UID", podKey(pod.Namespace, pod.Name))
	}
	spec := &pod.Spec
	n := len(spec.InitContainers) + len(spec.Containers)
	for i := range n {
		name := containerAt(spec, i).Name
		if name == "" {
			return fmt.Errorf("fake: pod %q has a container without name", podKey(pod.Namespace, pod.Name))
		}
		for j := range i {
			if containerAt(spec, j).Name == name {
				return fmt.Errorf("fake: pod %q has more than one container named %q", podKey(pod.Namespace, pod.Name), name)
			}
		}
	}
	return nil
}

// containerAt returns container i of the spec counting init containers
// first.
func containerAt(spec *v1.PodSpec, i int) *v1.Container {
	if i < len(spec.InitContainers) {
		return &spec.InitContainers[i]
	}
	return &spec.Containers[i-len(spec.InitContainers)]
}

// specCopy returns a private copy of what the fake uses of pod: its
// identity, restart policy, grace period, process-namespace sharing and
// host networking, and every container whole (what the pod spec asks of
// the runtime: env, hooks, probes, termination message, pull policy,
// restart policy of an init container, resources). It keeps no memory of
// pod.
func specCopy(pod *v1.Pod) *v1.Pod {
	out := &v1.Pod{}
	out.Namespace, out.Name, out.UID = pod.Namespace, pod.Name, pod.UID
	out.Spec.RestartPolicy = pod.Spec.RestartPolicy
	out.Spec.HostNetwork = pod.Spec.HostNetwork
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		out.Spec.TerminationGracePeriodSeconds = new(*g)
	}
	if s := pod.Spec.ShareProcessNamespace; s != nil {
		out.Spec.ShareProcessNamespace = new(*s)
	}
	copyContainers := func(in []v1.Container) []v1.Container {
		if len(in) == 0 {
			return nil
		}
		cs := make([]v1.Container, len(in))
		for i := range in {
			in[i].DeepCopyInto(&cs[i])
		}
		return cs
	}
	out.Spec.InitContainers = copyContainers(pod.Spec.InitContainers)
	out.Spec.Containers = copyContainers(pod.Spec.Containers)
	return out
}
