package conformance_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// kusciaBackendMutants are the bugs of kuscia's K8sProvider
// (pkg/agent/provider/pod/k8s_provider.go) that kuscia's agent feels, each
// as a change to the fake; KRI-POD-054's (a pod recreated under its name
// served the old backend pod) is pods-keyed-by-name. The provider's
// freedoms are benign variants (benign_kuscia_test.go).
func kusciaBackendMutants() []*mutant {
	return []*mutant{
		{
			name:      "kill-returns-inside-grace",
			violation: "KillPod returns as soon as it has asked for the kill, while the containers still run out their grace period (a backend pod deleted with a grace period)",
			want:      []string{"KRI-POD-014"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					go func() {
						// The backend's kubelet sees the deletion a moment
						// later: long after KillPod has returned.
						time.Sleep(backendDelay)
						_ = next.KillPod(context.WithoutCancel(ctx), pod, rp, grace)
					}()
					return nil
				}}
			},
		},
		{
			name:      "sync-fails-while-cache-lags",
			violation: "the SyncPod right after the one that started a pod fails with \"already exists\" (a backend pod created while the informer's cache has not seen it yet)",
			want:      []string{"KRI-POD-001", "KRI-POD-003"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				var mu sync.Mutex
				syncs := map[types.UID]int{}
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if pod != nil {
						mu.Lock()
						syncs[pod.UID]++
						n := syncs[pod.UID]
						mu.Unlock()
						if n == 2 {
							return fmt.Errorf("failed to apply pod %s/%s: pods %q already exists", pod.Namespace, pod.Name, pod.Name)
						}
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
		{
			name:      "waiting-runs-reported-created",
			violation: "GetPodStatus reports only the newest run of each container, and one that exited and waits to be restarted as Created, without its exit code (a backend's CrashLoopBackOff)",
			want:      []string{"KRI-POD-008", "KRI-POD-009"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				killed := newUIDSet() // a deleted backend pod waits for no restart
				return fake.Interceptors{
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
			name:      "init-instances-not-reported",
			violation: "GetPodStatus reports no instance of any init container",
			want:      []string{"KRI-POD-010", "KRI-POD-011", "KRI-POD-055", "KRI-POD-066", "KRI-POD-067", "KRI-POD-068", "KRI-POD-069", "KRI-POD-070", "KRI-POD-071"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: statusEditFor(func(pod *v1.Pod, st *pkgcontainer.PodStatus) {
					init := func(c *pkgcontainer.Status) bool {
						return slices.ContainsFunc(pod.Spec.InitContainers, func(ic v1.Container) bool { return ic.Name == c.Name })
					}
					st.ContainerStatuses = slices.DeleteFunc(st.ContainerStatuses, init)
					st.ActiveContainerStatuses = slices.DeleteFunc(st.ActiveContainerStatuses, init)
				})}
			},
		},
		{
			name:      "app-containers-reported-before-created",
			violation: "GetPodStatus reports every app container that does not exist yet as Created (a backend's PodInitializing)",
			want:      []string{"KRI-POD-010", "KRI-POD-011", "KRI-POD-055", "KRI-POD-066"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: statusEditFor(func(pod *v1.Pod, st *pkgcontainer.PodStatus) {
					if len(st.ContainerStatuses) == 0 {
						return // no backend pod yet
					}
					for _, c := range pod.Spec.Containers {
						if st.FindContainerStatusByName(c.Name) == nil {
							st.ContainerStatuses = append(st.ContainerStatuses, &pkgcontainer.Status{
								ID: pkgcontainer.ContainerID{Type: fake.RuntimeName, ID: "placeholder-" + c.Name}, Name: c.Name, Image: c.Image,
								State: pkgcontainer.ContainerStateCreated,
							})
						}
					}
				})}
			},
		},
		{
			name:      "spec-changes-ignored",
			violation: "SyncPod of a pod it already runs changes nothing, whatever the new spec says (a backend pod that exists is left as it is)",
			want:      []string{"KRI-POD-013", "KRI-POD-080", "KRI-POD-081"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				var mu sync.Mutex
				first := map[types.UID]*v1.Pod{}
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if pod != nil {
						mu.Lock()
						if f, ok := first[pod.UID]; ok {
							pod = f
						} else {
							first[pod.UID] = pod.DeepCopy()
						}
						mu.Unlock()
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
	}
}

// backendDelay is how long a mutant's backend takes to act on a request:
// far longer than the suite's next call, and within the fake's grace period.
const backendDelay = 300 * time.Millisecond

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

// statusEditFor is statusEdit with the pod the status is of.
func statusEditFor(edit func(*v1.Pod, *pkgcontainer.PodStatus)) func(context.Context, kri.PodProvider, *v1.Pod) (*pkgcontainer.PodStatus, error) {
	return func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
		st, err := next.GetPodStatus(ctx, pod)
		if st != nil && pod != nil {
			edit(pod, st)
		}
		return st, err
	}
}
