package conformance_test

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podRefreshBenign are the benign variants of the group "refresh"
// (pod_refresh.go): the fake taking one freedom each, which the suite must
// pass.
func podRefreshBenign() []*benign {
	return []*benign{
		{
			name:    "refine-only-refresh",
			freedom: "RefreshPodStatus that only refines the agent's status (Ready and Started, as the kubelet's prober does)",
			pod:     func(*fake.PodProvider) interceptor.PodFuncs { return refineOnly() },
		},
	}
}

// refineOnly sets Ready and Started of the statuses the agent built, as the
// kubelet's prober manager does for containers without probes (for every
// pod, known or not: UpdatePodStatus looks at no runtime), and leaves
// everything else as it was handed in. Containers with probes get the
// provider's probe results.
func refineOnly() interceptor.PodFuncs {
	return interceptor.PodFuncs{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
		probed := probeResults(next, pod, ps) // containers with probes: the provider's results
		for _, list := range [][]v1.ContainerStatus{ps.ContainerStatuses, ps.InitContainerStatuses} {
			for i := range list {
				if probed(&list[i]) {
					continue
				}
				running := list[i].State.Running != nil
				list[i].Started = &running
				list[i].Ready = running
			}
		}
	}}
}

// probeResults hands a copy of ps to next's RefreshPodStatus when a
// container of pod has probes, copies the Ready and Started it reports for
// those containers into ps, and returns whether a status is of such a
// container.
func probeResults(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) func(*v1.ContainerStatus) bool {
	probed := func(cs *v1.ContainerStatus) bool { return hasProbes(pod, cs.Name) }
	if pod == nil || ps == nil || !slices.ContainsFunc(slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers), func(c v1.Container) bool { return hasProbes(pod, c.Name) }) {
		return probed
	}
	cp := ps.DeepCopy()
	next.RefreshPodStatus(pod, cp)
	for _, lists := range [][2][]v1.ContainerStatus{{ps.ContainerStatuses, cp.ContainerStatuses}, {ps.InitContainerStatuses, cp.InitContainerStatuses}} {
		for i := range lists[0] {
			cs := &lists[0][i]
			if !probed(cs) {
				continue
			}
			for _, got := range lists[1] {
				if got.Name == cs.Name {
					cs.Ready, cs.Started = got.Ready, got.Started
				}
			}
		}
	}
	return probed
}
