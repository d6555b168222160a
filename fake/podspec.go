package fake

import (
	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/workload"
)

// What the pod spec asks of the runtime that the fake simulates by default,
// as the kubelet's runtime manager does it (pkg/kubelet/kuberuntime): the
// termination message of an exited instance (getTerminationMessage and the
// log fallback of convertToKubeContainerStatus), imagePullPolicy Never
// (pkg/kubelet/images EnsureImageExists), and the environment with $(VAR)
// expansion (ExpandContainerCommandAndArgs), which workload.OfEnv applies.

// terminationSource is where the termination message of an instance is
// read: the path and policy of its container (copied: in a status-driven
// sync the container is the caller's).
type terminationSource struct {
	path   string
	policy v1.TerminationMessagePolicy
}

func terminationSourceOf(c *v1.Container) terminationSource {
	return terminationSource{path: c.TerminationMessagePath, policy: c.TerminationMessagePolicy}
}

// message is the termination message of the exited instance sim: what its
// command and its hooks left (workload.Instance.TerminationMessage).
func (t terminationSource) message(sim *workload.Instance) string {
	c := v1.Container{TerminationMessagePath: t.path, TerminationMessagePolicy: t.policy}
	return sim.TerminationMessage(&c)
}
