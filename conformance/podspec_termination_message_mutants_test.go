package conformance_test

import (
	"context"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
	"github.com/kri-kit/testkit/sim/workload"
)

// podspecTerminationMessageMutants are the mutants of the pod-spec capability
// "termination-message" (podspec_termination_message.go): the hostprocess
// example with one contract violation each (selftest_hostprocess_test.go), and
// the specs it must fail.
func podspecTerminationMessageMutants() []*mutant {
	return []*mutant{
		{
			name:      "host-termination-message-dropped",
			violation: "the termination message is never reported",
			want: []string{
				"KRI-POD-060", "KRI-POD-061",
				// The lifecycle hook specs: 062 and 064 see the hooks through the termination message.
				"KRI-POD-062", "KRI-POD-064",
				// KRI-POD-090 sees the preStop request in the termination message.
				"KRI-POD-090",
			},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{
					GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
						st, err := next.GetPodStatus(ctx, pod)
						if st != nil {
							for _, c := range st.ContainerStatuses {
								c.Message = ""
							}
						}
						return st, err
					},
					RefreshPodStatus: refreshEdit(func(cs *v1.ContainerStatus) {
						if t := cs.State.Terminated; t != nil {
							t.Message = ""
						}
					}),
				}
			},
		},
		{
			name:      "host-no-log-fallback",
			violation: "terminationMessagePolicy FallbackToLogsOnError is treated as File: no log tail for a failed container",
			want: []string{
				"KRI-POD-061",
				// KRI-POD-090 sees the preStop request in the log tail that FallbackToLogsOnError takes.
				"KRI-POD-090",
			},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					c.TerminationMessagePolicy = v1.TerminationMessageReadFile
				})}
			},
		},
		{
			name:      "host-log-fallback-always",
			violation: "the log tail becomes the message of every container, also one that succeeded or wrote the file",
			want:      []string{"KRI-POD-060", "KRI-POD-061"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
					st, err := next.GetPodStatus(ctx, pod)
					if st != nil && pod != nil {
						for _, c := range st.ContainerStatuses {
							if c.State == pkgcontainer.ContainerStateExited {
								if out := loggedBy(pod, c.Name); out != "" {
									c.Message = out
								}
							}
						}
					}
					return st, err
				}}
			},
		},
	}
}

// loggedBy returns what container name of pod prints with echo -n, as the
// termination-message specs' containers do.
func loggedBy(pod *v1.Pod, name string) string {
	for _, c := range pod.Spec.Containers {
		if c.Name != name {
			continue
		}
		for _, w := range workload.Of(&c).Writes {
			if w.Path == workload.Stdout {
				return w.Data
			}
		}
	}
	return ""
}
