package conformance

import (
	"fmt"
	"strings"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The image pull policy specs (KRI-POD-057, 058). Like every pod-spec group
// (KRI-POD-057 on) they check what the pod spec asks of whoever runs the
// containers, which in KRI is the provider, as the kubelet's runtime manager
// is for the kubelet; each is gated by a capability, so that a provider
// that leaves it to its backend stays conformant, and each mirrors a node
// e2e test of kubernetes/kubernetes test/e2e/common/node, cited in
// testdata/contract.yaml.
var podspecImageSpecs = []*specDef{
	{id: "KRI-POD-057", level: Must, kind: kindPod, groups: []string{"pod-spec", "image"}, caps: []Capability{CapImagePullPolicy}, pod: podImageNeverPull,
		note: "Formerly the ReasonCache had to hold ErrImageNeverPull; since the suite models kuscia's agent, the MUST is that the agent publishes it, from the ReasonCache or from RefreshPodStatus.",
		text: "a container with imagePullPolicy Never whose image is not present never starts, and the agent publishes it Waiting with reason ErrImageNeverPull (from the ReasonCache or RefreshPodStatus)"},
	{id: "KRI-POD-058", level: Must, kind: kindPod, groups: []string{"pod-spec", "image"}, caps: []Capability{CapImagePullPolicy}, pod: podImagePullFailureWaits,
		note: "Formerly the ReasonCache had to hold the reason; since the suite models kuscia's agent, the MUST is that the agent publishes it, from the ReasonCache or from RefreshPodStatus.",
		text: "a container whose image cannot be pulled stays Waiting, and the agent publishes it Waiting with reason ErrImagePull or ImagePullBackOff (from the ReasonCache or RefreshPodStatus)"},
}

// The Waiting reasons of the kubelet's image manager
// (k8s.io/kubernetes/pkg/kubelet/images: ErrImagePull, ErrImagePullBackOff,
// ErrImageNeverPull).
const (
	reasonErrImagePull      = "ErrImagePull"
	reasonImagePullBackOff  = "ImagePullBackOff"
	reasonErrImageNeverPull = "ErrImageNeverPull"
)

// expectImageWaiting checks that container app of pod is not running and
// that kuscia's agent publishes it Waiting with one of reasons: the
// reason comes from the ReasonCache SyncPod wrote (pod.go
// convertToAPIContainerStatuses) or from RefreshPodStatus, which may
// replace the statuses with a backend's.
func (e *podEnv) expectImageWaiting(g gomega.Gomega, pod *v1.Pod, st *pkgcontainer.PodStatus, reasons ...string) {
	g.Expect(runningOf(st, "app")).To(gomega.BeNil(), "container app (image %s, imagePullPolicy %s) runs: %s",
		pod.Spec.Containers[0].Image, pod.Spec.Containers[0].ImagePullPolicy, describeStatus(st))
	ps := e.publish(pod, st)
	cs := apiStatusOf(ps.ContainerStatuses, "app")
	g.Expect(cs).NotTo(gomega.BeNil(), "kuscia's agent would publish no status for container app: %s", describeAPIStatus(ps))
	g.Expect(cs.State.Waiting).NotTo(gomega.BeNil(), "kuscia's agent would publish container app, whose image cannot be had, as %s, want Waiting with one of %q", describeAPIStatus(ps), reasons)
	g.Expect(reasons).To(gomega.ContainElement(cs.State.Waiting.Reason), "kuscia's agent would publish container app Waiting with reason %q (%s), want one of %q, the kubelet's image manager's (from the ReasonCache or RefreshPodStatus)", cs.State.Waiting.Reason, cs.State.Waiting.Message, reasons)
}

func podImageNeverPull(e *podEnv) {
	c := named("app", e.w().PullFails())
	c.ImagePullPolicy = v1.PullNever
	pod := e.newPod("neverpull", v1.RestartPolicyAlways, c)
	e.step(fmt.Sprintf("syncing a pod whose container has imagePullPolicy Never and the absent image %s", c.Image))
	e.trySyncUntil(pod, "app's start failed with ErrImageNeverPull", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		e.expectImageWaiting(g, pod, st, reasonErrImageNeverPull)
	})
	e.step("syncing again: the image is still not pulled, app still does not start")
	e.trySyncHolding(pod, "app Waiting with ErrImageNeverPull", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		e.expectImageWaiting(g, pod, st, reasonErrImageNeverPull)
	})
}

func podImagePullFailureWaits(e *podEnv) {
	for _, policy := range []v1.PullPolicy{v1.PullAlways, v1.PullIfNotPresent} {
		c := named("app", e.w().PullFails())
		c.ImagePullPolicy = policy
		pod := e.newPod("pullfails-"+strings.ToLower(string(policy[:3])), v1.RestartPolicyAlways, c)
		reasons := []string{reasonErrImagePull, reasonImagePullBackOff}
		e.step(fmt.Sprintf("syncing a pod whose container's image %s cannot be pulled (imagePullPolicy %s)", c.Image, policy))
		e.trySyncUntil(pod, "app's pull failure reported", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
			e.expectImageWaiting(g, pod, st, reasons...)
		})
		e.trySyncHolding(pod, "app Waiting with ErrImagePull or ImagePullBackOff", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
			e.expectImageWaiting(g, pod, st, reasons...)
		})
	}
}
