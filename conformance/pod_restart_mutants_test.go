package conformance_test

import (
	"context"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podRestartMutants are the mutants of the group "restart" (pod_restart.go):
// the fake with one contract violation each, and the specs it must fail.
func podRestartMutants() []*mutant {
	return []*mutant{
		{
			name:      "replaced-instances-lose-exit-code",
			violation: "GetPodStatus reports every instance but the newest of each container with exit code 0",
			want: []string{
				"KRI-POD-053", "KRI-POD-067",
				// The liveness probe specs check the killed instance's exit code.
				"KRI-POD-074",
				// So do the network liveness probe specs.
				"KRI-POD-088", "KRI-POD-089", "KRI-POD-106",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					for _, c := range st.ContainerStatuses {
						if n := newestInstance(st.ContainerStatuses, c.Name); n != c && c.State == pkgcontainer.ContainerStateExited {
							c.ExitCode = 0
						}
					}
				})}
			},
		},
		{
			name:      "waiting-runs-reported-created",
			violation: "GetPodStatus reports only the newest run of each container, and one that exited and waits to be restarted as Created, without its exit code (a backend's CrashLoopBackOff)",
			want:      []string{"KRI-POD-008", "KRI-POD-009"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				killed := newUIDSet() // a deleted backend pod waits for no restart
				return interceptor.PodFuncs{
					KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
						killed.add(rp.ID)
						if pod != nil {
							killed.add(pod.UID)
						}
						return next.KillPod(ctx, pod, rp, grace)
					},
					GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
						st, err := next.GetPodStatus(ctx, pod)
						if st == nil || pod == nil || killed.has(pod.UID) {
							return st, err
						}
						st.ContainerStatuses = newestOnly(st.ContainerStatuses)
						st.ActiveContainerStatuses = nil
						for _, c := range st.ContainerStatuses {
							app := slices.ContainsFunc(pod.Spec.Containers, func(ac v1.Container) bool { return ac.Name == c.Name })
							if app && c.State == pkgcontainer.ContainerStateExited && restartsAfter(pod, c.ExitCode) {
								c.State, c.ExitCode, c.Reason, c.Message, c.FinishedAt = pkgcontainer.ContainerStateCreated, 0, "", "", time.Time{}
							}
						}
						return st, err
					},
				}
			},
		},
		{
			name:      "restart-policy-ignored",
			violation: "SyncPod treats every pod as RestartPolicy Never",
			want: []string{
				"KRI-POD-008", "KRI-POD-009", "KRI-POD-037", "KRI-POD-038", "KRI-POD-042", "KRI-POD-044", "KRI-POD-051", "KRI-POD-053", "KRI-POD-054",
				// The lifecycle hook specs: 063 waits for the restart under Always.
				"KRI-POD-063",
				// The liveness probe specs wait for the restart (under Always), 101 for a restarted instance.
				"KRI-POD-074", "KRI-POD-101",
				// So do the network liveness probe specs.
				"KRI-POD-088", "KRI-POD-089", "KRI-POD-106",
				// KRI-POD-093 waits for each restart to be published.
				"KRI-POD-093",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					return next.SyncPod(ctx, withRestartPolicy(pod, v1.RestartPolicyNever), st, rc)
				}}
			},
		},
		{
			name:      "restart-policy-always",
			violation: "SyncPod treats every pod as RestartPolicy Always",
			want: []string{
				"KRI-POD-007", "KRI-POD-008", "KRI-POD-068",
				// The lifecycle hook specs: 063 checks that Never does not restart.
				"KRI-POD-063",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					return next.SyncPod(ctx, withRestartPolicy(pod, v1.RestartPolicyAlways), st, rc)
				}}
			},
		},
		{
			name:      "restart-count-stuck-at-zero",
			violation: "every instance reports RestartCount 0, in GetPodStatus and RefreshPodStatus",
			want: []string{
				"KRI-POD-037", "KRI-POD-051", "KRI-POD-067",
				// The liveness probe specs count the restart.
				"KRI-POD-074",
				// KRI-POD-081 counts the restart of a resize.
				"KRI-POD-081",
				// So do the network liveness probe specs.
				"KRI-POD-088", "KRI-POD-089", "KRI-POD-106",
				// KRI-POD-093 waits for each restart to be published.
				"KRI-POD-093",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{
					GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
						for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
							c.RestartCount = 0
						}
					}),
					RefreshPodStatus: refreshEdit(func(cs *v1.ContainerStatus) { cs.RestartCount = 0 }),
				}
			},
		},
		{
			name:      "restart-keeps-created-at",
			violation: "every instance of a container reports the CreatedAt of its first instance",
			want:      []string{"KRI-POD-038", "KRI-POD-053"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					first := map[string]time.Time{}
					for _, c := range st.ContainerStatuses {
						if t, ok := first[c.Name]; !ok || c.CreatedAt.Before(t) {
							first[c.Name] = c.CreatedAt
						}
					}
					for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
						c.CreatedAt = first[c.Name]
					}
				})}
			},
		},
		{
			name:      "restart-count-from-one",
			violation: "every instance reports one restart more than it has, in GetPodStatus and RefreshPodStatus: a container's first instance reports RestartCount 1",
			// Every spec that reads the RestartCount of a container that
			// never restarted.
			want: []string{"KRI-POD-037", "KRI-POD-051", "KRI-POD-054", "KRI-POD-067", "KRI-POD-071", "KRI-POD-075", "KRI-POD-089"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{
					GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
						seen := map[*pkgcontainer.Status]bool{}
						for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
							if !seen[c] {
								seen[c] = true
								c.RestartCount++
							}
						}
					}),
					RefreshPodStatus: refreshEdit(func(cs *v1.ContainerStatus) { cs.RestartCount++ }),
				}
			},
		},
		{
			name:      "restart-counts-shared",
			violation: "GetPodStatus reports the pod's highest RestartCount for every container",
			want:      []string{"KRI-POD-037", "KRI-POD-051", "KRI-POD-067"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					highest := 0
					for _, c := range st.ContainerStatuses {
						highest = max(highest, c.RestartCount)
					}
					for _, c := range st.ContainerStatuses {
						if c.State == pkgcontainer.ContainerStateRunning {
							c.RestartCount = highest
						}
					}
				})}
			},
		},
	}
}

// restartsAfter reports whether pod's restart policy restarts a container
// that exited with code.
func restartsAfter(pod *v1.Pod, code int) bool {
	switch pod.Spec.RestartPolicy {
	case v1.RestartPolicyAlways:
		return true
	case v1.RestartPolicyOnFailure:
		return code != 0
	}
	return false
}
