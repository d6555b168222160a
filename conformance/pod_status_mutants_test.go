package conformance_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podStatusMutants are the mutants of the group "status" (pod_status.go): the
// fake with one contract violation each, and the specs it must fail.
func podStatusMutants() []*mutant {
	return []*mutant{
		{
			name:      "getpods-only-app-containers",
			violation: "GetPods(false) lists only pods with a running app container: a pod whose only running container is an init container is left out",
			want:      []string{"KRI-POD-097", "KRI-POD-098"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				var mu sync.Mutex
				apps := map[types.UID][]string{}
				return interceptor.PodFuncs{
					SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
						if pod != nil {
							var names []string
							for _, c := range pod.Spec.Containers {
								names = append(names, c.Name)
							}
							mu.Lock()
							apps[pod.UID] = names
							mu.Unlock()
						}
						return next.SyncPod(ctx, pod, st, rc)
					},
					GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
						pods, err := next.GetPods(ctx, all)
						if all {
							return pods, err
						}
						mu.Lock()
						defer mu.Unlock()
						return slices.DeleteFunc(pods, func(p *pkgcontainer.Pod) bool {
							names, known := apps[p.ID]
							return known && !slices.ContainsFunc(p.Containers, func(c *pkgcontainer.Container) bool {
								return c.State == pkgcontainer.ContainerStateRunning && slices.Contains(names, c.Name)
							})
						}), err
					},
				}
			},
		},
		{
			name:      "getpods-running-containers-only",
			violation: "GetPods(false) lists only pods with a running container: a pod whose containers have all exited is left out while its sandbox is still ready",
			want:      []string{"KRI-POD-098"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
					pods, err := next.GetPods(ctx, all)
					if all {
						return pods, err
					}
					return slices.DeleteFunc(pods, func(p *pkgcontainer.Pod) bool {
						return !slices.ContainsFunc(p.Containers, func(c *pkgcontainer.Container) bool { return c.State == pkgcontainer.ContainerStateRunning })
					}), err
				}}
			},
		},
		{
			name:      "killed-pod-half-forgotten",
			violation: "GetPodStatus reports nothing of a killed pod while GetPods(true) still lists its exited containers",
			want:      []string{"KRI-POD-086"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				killed, ic := trackKilled()
				ic.GetPodStatus = func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
					st, err := next.GetPodStatus(ctx, pod)
					if err == nil && st != nil && killed.has(st.ID) && len(st.GetRunningContainerStatuses()) == 0 {
						st.ContainerStatuses, st.ActiveContainerStatuses, st.SandboxStatuses = nil, nil, nil
					}
					return st, err
				}
				return ic
			},
		},
		{
			name:      "getpods-forgets-killed-pods",
			violation: "GetPods(true) leaves out a killed pod while GetPodStatus still reports its exited containers",
			want:      []string{"KRI-POD-086"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				killed, ic := trackKilled()
				ic.GetPods = func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
					pods, err := next.GetPods(ctx, all)
					return slices.DeleteFunc(pods, func(p *pkgcontainer.Pod) bool { return p != nil && killed.has(p.ID) }), err
				}
				return ic
			},
		},
		{
			name:      "status-errors-for-unknown-pod",
			violation: "GetPodStatus of a pod it does not know returns an error instead of an empty status",
			want: []string{
				"KRI-POD-002", "KRI-POD-020", "KRI-POD-023", "KRI-POD-028", "KRI-POD-034", "KRI-POD-036", "KRI-POD-084",
				// At kuscia's cadence KRI-POD-035 syncs a pod not yet seen, whose status must be empty.
				"KRI-POD-035",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
					st, err := next.GetPodStatus(ctx, pod)
					if err == nil && len(st.ContainerStatuses) == 0 && len(st.SandboxStatuses) == 0 {
						return nil, fmt.Errorf("pod %s/%s not found", pod.Namespace, pod.Name)
					}
					return st, err
				}}
			},
		},
		{
			name:      "getpods-panics",
			violation: "GetPods panics",
			want:      []string{"KRI-POD-005", "KRI-POD-020", "KRI-POD-022", "KRI-POD-023", "KRI-POD-027", "KRI-POD-028", "KRI-POD-033", "KRI-POD-034", "KRI-POD-035", "KRI-POD-036", "KRI-POD-044", "KRI-POD-045", "KRI-POD-056", "KRI-POD-086", "KRI-POD-097", "KRI-POD-098"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPods: func(context.Context, kri.PodProvider, bool) ([]*pkgcontainer.Pod, error) {
					panic("mutant: GetPods is broken")
				}}
			},
			check: expectFailureMessage("KRI-POD-005", "GetPods panicked: mutant: GetPods is broken", "pod_status_mutants_test.go"),
		},
		{
			name:      "getpods-lists-killed-pods",
			violation: "GetPods(false) lists every pod, killed ones included",
			want:      []string{"KRI-POD-005", "KRI-POD-056"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPods: func(ctx context.Context, next kri.PodProvider, _ bool) ([]*pkgcontainer.Pod, error) {
					return next.GetPods(ctx, true)
				}}
			},
		},
		{
			name:      "exit-codes-lost",
			violation: "GetPodStatus reports exit code 0 for every exited container",
			want: []string{
				"KRI-POD-006", "KRI-POD-008", "KRI-POD-011", "KRI-POD-014", "KRI-POD-053", "KRI-POD-059", "KRI-POD-067", "KRI-POD-086",
				// The lifecycle hook specs: 063 checks the killed container's non-zero exit code.
				"KRI-POD-063",
				// The liveness probe specs check the killed instance's exit code.
				"KRI-POD-074",
				// So do the network liveness probe specs.
				"KRI-POD-088", "KRI-POD-089", "KRI-POD-106",
				// The sidecar kill-order specs see the order only through the
				// slow container's handler's exit code.
				"KRI-POD-069", "KRI-POD-070",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
					st, err := next.GetPodStatus(ctx, pod)
					if st != nil {
						for _, c := range st.ContainerStatuses {
							c.ExitCode = 0
						}
					}
					return st, err
				}}
			},
		},
		{
			name:      "container-ids-unstable",
			violation: "GetPodStatus reports a new ID for a running container on every call",
			want: []string{
				"KRI-POD-003", "KRI-POD-004", "KRI-POD-021", "KRI-POD-022", "KRI-POD-028", "KRI-POD-035", "KRI-POD-037", "KRI-POD-040", "KRI-POD-043", "KRI-POD-044", "KRI-POD-051", "KRI-POD-052", "KRI-POD-054", "KRI-POD-066", "KRI-POD-067", "KRI-POD-071", "KRI-POD-086",
				// The probe specs follow one container instance.
				"KRI-POD-072", "KRI-POD-073", "KRI-POD-075", "KRI-POD-076", "KRI-POD-101", "KRI-POD-107",
				// The resize specs tell an in-place resize (same ID) from a restart.
				"KRI-POD-080", "KRI-POD-081",
				// The network probe specs follow one container instance.
				"KRI-POD-087", "KRI-POD-089", "KRI-POD-105",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				var calls atomic.Int64
				return interceptor.PodFuncs{GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
					st, err := next.GetPodStatus(ctx, pod)
					if st != nil {
						n := calls.Add(1)
						for _, c := range st.ContainerStatuses {
							if c.State == pkgcontainer.ContainerStateRunning {
								c.ID.ID = fmt.Sprintf("%s-%d", c.ID.ID, n)
							}
						}
					}
					return st, err
				}}
			},
		},
		{
			name:      "finished-before-created",
			violation: "every exited instance reports a FinishedAt one second before its CreatedAt",
			want:      []string{"KRI-POD-006", "KRI-POD-038", "KRI-POD-096"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
						if c.State == pkgcontainer.ContainerStateExited {
							c.FinishedAt = c.CreatedAt.Add(-time.Second)
						}
					}
				})}
			},
		},
		{
			name:      "exit-reason-dropped",
			violation: "exited containers carry no Reason, in GetPodStatus and RefreshPodStatus (a SHOULD)",
			want:      []string{"KRI-POD-039"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{
					GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
						for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
							if c.State == pkgcontainer.ContainerStateExited {
								c.Reason = ""
							}
						}
					}),
					RefreshPodStatus: refreshEdit(func(cs *v1.ContainerStatus) {
						for _, t := range []*v1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
							if t != nil {
								t.Reason = ""
							}
						}
					}),
				}
			},
		},
		{
			name:      "exited-instances-lose-image",
			violation: "GetPodStatus reports exited instances without their image",
			want:      []string{"KRI-POD-040"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
						if c.State == pkgcontainer.ContainerStateExited {
							c.Image = ""
						}
					}
				})}
			},
		},
		{
			name:      "active-statuses-stale",
			violation: "ActiveContainerStatuses reports every instance as still being created",
			want:      []string{"KRI-POD-043"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					for _, c := range st.ActiveContainerStatuses {
						c.State = pkgcontainer.ContainerStateCreated
					}
				})}
			},
		},
		{
			name:      "getpods-reports-all-running",
			violation: "GetPods(true) reports every container as running, so a PLEG never sees one die",
			want:      []string{"KRI-POD-044", "KRI-POD-086"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
					pods, err := next.GetPods(ctx, all)
					for _, p := range pods {
						for _, c := range p.Containers {
							c.State = pkgcontainer.ContainerStateRunning
						}
					}
					return pods, err
				}}
			},
		},
		{
			name:      "getpods-lists-newest-only",
			violation: "GetPods(true) lists only the newest instance of each container, while GetPodStatus reports the replaced ones too",
			want:      []string{"KRI-POD-044"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
					pods, err := next.GetPods(ctx, all)
					for _, p := range pods {
						keepNewestListed(p)
					}
					return pods, err
				}}
			},
		},
		{
			name:      "pods-keyed-by-name",
			violation: "the provider knows pods by namespace and name: a pod created again with a new UID is taken for the old one",
			want:      []string{"KRI-POD-054"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				var mu sync.Mutex
				first := map[string]types.UID{}
				alias := func(pod *v1.Pod) *v1.Pod {
					if pod == nil {
						return nil
					}
					mu.Lock()
					defer mu.Unlock()
					key := pod.Namespace + "/" + pod.Name
					uid, ok := first[key]
					if !ok {
						first[key] = pod.UID
						return pod
					}
					if uid == pod.UID {
						return pod
					}
					cp := pod.DeepCopy()
					cp.UID = uid
					return cp
				}
				return interceptor.PodFuncs{
					SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
						return next.SyncPod(ctx, alias(pod), st, rc)
					},
					GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
						st, err := next.GetPodStatus(ctx, alias(pod))
						if st != nil && pod != nil {
							st.ID = pod.UID
						}
						return st, err
					},
				}
			},
		},
		{
			name:      "ready-without-probe-never",
			violation: "a running app container without a readiness probe is reported not Ready (Ready only ever from a readiness probe)",
			want:      []string{"KRI-POD-100"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{RefreshPodStatus: unprobedReady(func(int, time.Duration) bool { return false })}
			},
		},
		{
			name:      "ready-without-probe-first-only",
			violation: "of the running app containers without a readiness probe, only the first in spec order is reported Ready",
			want:      []string{"KRI-POD-100"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{RefreshPodStatus: unprobedReady(func(i int, _ time.Duration) bool { return i == 0 })}
			},
		},
		{
			name:      "ready-without-probe-late",
			violation: "a running app container without a readiness probe is reported Ready only once it has run 10s (a no-op readiness worker with the kubelet's default periodSeconds), and the provider asks for a sync then",
			want:      []string{"KRI-POD-100"},
			podLater: func(_ *fake.PodProvider, later *laterCalls) interceptor.PodFuncs {
				return unprobedReadyAfter(10*time.Second, later)
			},
		},
	}
}

// unprobedReadyAfter returns the interceptors of a provider that reports a
// running app container without a readiness probe Ready only once it has
// run for after, and asks for a sync then (later).
func unprobedReadyAfter(after time.Duration, later *laterCalls) interceptor.PodFuncs {
	var asked sync.Map // container IDs a sync was asked for
	ready := unprobedReady(func(_ int, ran time.Duration) bool { return ran >= after })
	return interceptor.PodFuncs{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
		ready(next, pod, ps)
		if pod == nil || ps == nil {
			return
		}
		for _, cs := range ps.ContainerStatuses {
			if r := cs.State.Running; r != nil && !cs.Ready {
				if _, done := asked.LoadOrStore(cs.ContainerID, true); !done {
					later.after(pod.UID, after-time.Since(r.StartedAt.Time))
				}
			}
		}
	}}
}

// unprobedReady returns a RefreshPodStatus interceptor that sets the Ready
// of every running app container without a readiness probe to what ready
// says of it: i is its place in the pod's spec, ran how long it has run.
func unprobedReady(ready func(i int, ran time.Duration) bool) func(kri.PodProvider, *v1.Pod, *v1.PodStatus) {
	return func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
		next.RefreshPodStatus(pod, ps)
		if pod == nil || ps == nil {
			return
		}
		for i, c := range pod.Spec.Containers {
			if c.ReadinessProbe != nil {
				continue
			}
			for j := range ps.ContainerStatuses {
				if cs := &ps.ContainerStatuses[j]; cs.Name == c.Name && cs.State.Running != nil {
					cs.Ready = ready(i, time.Since(cs.State.Running.StartedAt.Time))
				}
			}
		}
	}
}
