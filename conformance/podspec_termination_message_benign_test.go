package conformance_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podspecTerminationMessageHostBenign are the benign variants of the pod-spec
// capability "termination-message" (podspec_termination_message.go) on the
// hostprocess example, which the suite must pass.
func podspecTerminationMessageHostBenign() []hostBenign {
	return []hostBenign{
		{
			name:    "host-runtime-message-prefix",
			freedom: "a runtime's own message of an exited container comes first, the termination message after \": \" (the kubelet's convertToKubeContainerStatus)",
			ic: func() interceptor.PodFuncs {
				prefix := func(msg string, code int) string {
					if code == 0 {
						return msg
					}
					if msg == "" {
						return fmt.Sprintf("process exited with code %d", code)
					}
					return fmt.Sprintf("process exited with code %d: %s", code, msg)
				}
				return interceptor.PodFuncs{
					GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
						st, err := next.GetPodStatus(ctx, pod)
						if st != nil {
							for _, c := range st.ContainerStatuses {
								if c.State == pkgcontainer.ContainerStateExited {
									c.Message = prefix(c.Message, c.ExitCode)
								}
							}
						}
						return st, err
					},
					RefreshPodStatus: refreshEdit(func(cs *v1.ContainerStatus) {
						if t := cs.State.Terminated; t != nil {
							t.Message = prefix(t.Message, int(t.ExitCode))
						}
					}),
				}
			},
		},
	}
}
