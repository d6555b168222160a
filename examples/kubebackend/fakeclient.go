package kubebackend

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kri-kit/testkit/sim/apiserver"
)

// NewFakeClientset returns the clientset of a fake API server holding
// objects: the kit's (github.com/kri-kit/testkit/sim/apiserver, whose
// package documentation states its contract and its limits), client-go's
// fake clientset with the API server's handling of pods that the Provider
// and the Kubelet rely on — UIDs and creation timestamps on create,
// graceful deletion as the API server's pod strategy does it, conflicts on
// a stale resourceVersion, a status subresource that changes only the
// status, label and field selectors on lists and watches, and watches that
// lose no pod created between an informer's list and its watch.
func NewFakeClientset(objects ...runtime.Object) *fake.Clientset {
	return apiserver.New(objects...).Clientset
}
