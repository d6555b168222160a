package conformance

import (
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The image pull policy specs (KRI-POD-057, 058).

// The Waiting reasons of the kubelet's image manager
// (k8s.io/kubernetes/pkg/kubelet/images: ErrImagePull, ErrImagePullBackOff,
// ErrImageNeverPull).
const (
	reasonErrImagePull      = "ErrImagePull"
	reasonImagePullBackOff  = "ImagePullBackOff"
	reasonErrImageNeverPull = "ErrImageNeverPull"
)

func init() {
	registerPodSpecs([]*specDef{
		{id: "KRI-POD-057", level: Must, kind: kindPod, groups: []string{"pod-spec", "image"}, caps: []Capability{CapImagePullPolicy}, pod: podImageNeverPull,
			text: "a container with imagePullPolicy Never whose image is not present never starts: its start fails with ErrImageNeverPull in the ReasonCache, and RefreshPodStatus reports it Waiting with that reason"},
		{id: "KRI-POD-058", level: Must, kind: kindPod, groups: []string{"pod-spec", "image"}, caps: []Capability{CapImagePullPolicy}, pod: podImagePullFailureWaits,
			text: "a container whose image cannot be pulled stays Waiting: every failed start is ErrImagePull or ImagePullBackOff in the ReasonCache, and RefreshPodStatus reports it Waiting with that reason"},
	}...)
}

// expectImageWaiting checks that container app of pod is not running, that
// its ReasonCache entry has one of reasons and that the status the agent
// builds and RefreshPodStatus refines shows it Waiting with that reason.
func (e *podEnv) expectImageWaiting(g gomega.Gomega, pod *v1.Pod, st *pkgcontainer.PodStatus, reasons ...string) {
	g.Expect(runningOf(st, "app")).To(gomega.BeNil(), "container app (image %s, imagePullPolicy %s) runs: %s",
		pod.Spec.Containers[0].Image, pod.Spec.Containers[0].ImagePullPolicy, describeStatus(st))
	item, ok := e.rc.Get(pod.UID, "app")
	g.Expect(ok).To(gomega.BeTrue(), "the ReasonCache has no entry for container app, whose image cannot be had")
	g.Expect(item.Err).To(gomega.HaveOccurred(), "the ReasonCache entry of app has no error")
	g.Expect(reasons).To(gomega.ContainElement(item.Err.Error()), "the ReasonCache entry of app is %q (%s), want one of %q, the kubelet's image manager's", item.Err, item.Message, reasons)
	ps := e.agentRefresh(pod, st)
	cs := apiStatusOf(ps.ContainerStatuses, "app")
	g.Expect(cs).NotTo(gomega.BeNil(), "RefreshPodStatus reports no status for container app: %+v", ps.ContainerStatuses)
	g.Expect(cs.State.Waiting).NotTo(gomega.BeNil(), "RefreshPodStatus reports app %+v, want Waiting", cs.State)
	g.Expect(reasons).To(gomega.ContainElement(cs.State.Waiting.Reason), "RefreshPodStatus reports app Waiting with reason %q, want one of %q", cs.State.Waiting.Reason, reasons)
}

func podImageNeverPull(e *podEnv) {
	c := named("app", e.w().PullFails())
	c.ImagePullPolicy = v1.PullNever
	pod := e.newPod("neverpull", v1.RestartPolicyAlways, c)
	ginkgo.By(fmt.Sprintf("syncing a pod whose container has imagePullPolicy Never and the absent image %s", c.Image))
	e.syncUntilOpt(pod, true, "app's start failed with ErrImageNeverPull", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		e.expectImageWaiting(g, pod, st, reasonErrImageNeverPull)
	})
	ginkgo.By("syncing again: the image is still not pulled, app still does not start")
	e.holdSync(pod, true, "app Waiting with ErrImageNeverPull", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		e.expectImageWaiting(g, pod, st, reasonErrImageNeverPull)
	})
}

func podImagePullFailureWaits(e *podEnv) {
	for _, policy := range []v1.PullPolicy{v1.PullAlways, v1.PullIfNotPresent} {
		c := named("app", e.w().PullFails())
		c.ImagePullPolicy = policy
		pod := e.newPod("pullfails-"+strings.ToLower(string(policy[:3])), v1.RestartPolicyAlways, c)
		reasons := []string{reasonErrImagePull, reasonImagePullBackOff}
		ginkgo.By(fmt.Sprintf("syncing a pod whose container's image %s cannot be pulled (imagePullPolicy %s)", c.Image, policy))
		e.syncUntilOpt(pod, true, "app's pull failure reported", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
			e.expectImageWaiting(g, pod, st, reasons...)
		})
		e.holdSync(pod, true, "app Waiting with ErrImagePull or ImagePullBackOff", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
			e.expectImageWaiting(g, pod, st, reasons...)
		})
	}
}
