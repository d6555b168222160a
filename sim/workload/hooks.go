package workload

import "errors"

// ErrPostStartHook is the error a runtime reports to the ReasonCache when a
// container's postStart hook failed and the container was killed for it:
// the text of the kubelet's kuberuntime.ErrPostStartHook
// (k8s.io/kubernetes/pkg/kubelet/kuberuntime, not imported here for the
// size of its dependencies), the Waiting reason "PostStartHookError".
var ErrPostStartHook = errors.New("PostStartHookError")
