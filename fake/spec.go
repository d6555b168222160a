package fake

import (
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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
// identity, restart policy, grace period and, per container, name, image,
// command, args and lifecycle hooks. It keeps no memory of pod.
func specCopy(pod *v1.Pod) *v1.Pod {
	out := &v1.Pod{}
	out.Namespace, out.Name, out.UID = pod.Namespace, pod.Name, pod.UID
	out.Spec.RestartPolicy = pod.Spec.RestartPolicy
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		out.Spec.TerminationGracePeriodSeconds = new(*g)
	}
	copyContainers := func(in []v1.Container) []v1.Container {
		if len(in) == 0 {
			return nil
		}
		cs := make([]v1.Container, len(in))
		for i, c := range in {
			cs[i] = v1.Container{Name: c.Name, Image: c.Image, Command: slices.Clone(c.Command), Args: slices.Clone(c.Args), Lifecycle: c.Lifecycle.DeepCopy()}
		}
		return cs
	}
	out.Spec.InitContainers = copyContainers(pod.Spec.InitContainers)
	out.Spec.Containers = copyContainers(pod.Spec.Containers)
	return out
}

// sameSpec reports whether specCopy(pod) would equal stored, without
// allocating: a sync with an unchanged pod copies nothing.
func sameSpec(stored, pod *v1.Pod) bool {
	if stored.Namespace != pod.Namespace || stored.Name != pod.Name || stored.UID != pod.UID ||
		stored.Spec.RestartPolicy != pod.Spec.RestartPolicy {
		return false
	}
	a, b := stored.Spec.TerminationGracePeriodSeconds, pod.Spec.TerminationGracePeriodSeconds
	if (a == nil) != (b == nil) || (a != nil && *a != *b) {
		return false
	}
	same := func(x, y []v1.Container) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i].Name != y[i].Name || x[i].Image != y[i].Image ||
				!slices.Equal(x[i].Command, y[i].Command) || !slices.Equal(x[i].Args, y[i].Args) ||
				!sameLifecycle(x[i].Lifecycle, y[i].Lifecycle) {
				return false
			}
		}
		return true
	}
	return same(stored.Spec.InitContainers, pod.Spec.InitContainers) && same(stored.Spec.Containers, pod.Spec.Containers)
}

// sameLifecycle reports whether two containers have the same hooks; it does
// not allocate when neither has any.
func sameLifecycle(a, b *v1.Lifecycle) bool {
	if a == nil || b == nil {
		return a == b
	}
	return equality.Semantic.DeepEqual(a, b)
}
