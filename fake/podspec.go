package fake

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/workload"
)

// What the pod spec asks of the runtime that the fake simulates by default,
// as the kubelet's runtime manager does it (pkg/kubelet/kuberuntime): the
// termination message of an exited instance (getTerminationMessage and the
// log fallback of convertToKubeContainerStatus), imagePullPolicy Never
// (pkg/kubelet/images EnsureImageExists), and the environment with $(VAR)
// expansion (ExpandContainerCommandAndArgs), which workload.OfEnv applies.

// neverPullMessage is the message of the kubelet's image manager for a
// container with imagePullPolicy Never whose image is not present.
func neverPullMessage(image string) string {
	return fmt.Sprintf("Container image %q is not present with pull policy of Never", image)
}

// terminationSource is what the termination message of an instance is read
// from: the command's behaviour (its writes) and the path and policy of its
// container (copied: in a status-driven sync the container is the caller's).
type terminationSource struct {
	b      workload.Behaviour
	path   string
	policy v1.TerminationMessagePolicy
}

func terminationSourceOf(c *v1.Container, b workload.Behaviour) terminationSource {
	return terminationSource{b: b, path: c.TerminationMessagePath, policy: c.TerminationMessagePolicy}
}

// message is the termination message of an instance that ran for ran and
// exited with code (workload.Behaviour.TerminationMessage).
func (t terminationSource) message(ran time.Duration, code int) string {
	c := v1.Container{TerminationMessagePath: t.path, TerminationMessagePolicy: t.policy}
	return t.b.TerminationMessage(&c, ran, code)
}
