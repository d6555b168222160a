package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// A mutant is the fake with one contract violation, made with the fake's
// interceptors around its real behaviour. The suite must fail exactly the
// specs in want: fewer means a spec is too weak to see the violation, more
// means a spec fails for reasons that are not its own.
type mutant struct {
	name string
	// violation says which contract the mutant breaks.
	violation string
	want      []string
	// pod or node builds the interceptors of one fresh provider (state
	// kept by a mutant lives in the closure; pod may script the fake it
	// decorates). The mutant is run with only that provider configured.
	pod  func(*fake.PodProvider) fake.Interceptors
	node func() fake.NodeInterceptors
	// timeouts, when set, replace the scaled default timeouts.
	timeouts *conformance.Timeouts
	// withoutCaps are capabilities the mutant's run does not declare.
	withoutCaps []conformance.Capability
	// check, when set, makes further assertions on the run.
	check func(t *testing.T, r *helperRun)
	// cost ranks the slow mutants, to start them first.
	cost int
	// host, when set, builds the mutant on the hostprocess example
	// instead of the fake, for specs of capabilities the fake does not
	// simulate (podspec_mutants_test.go); pod and node are then unused.
	host func() fake.Interceptors
}

// mutantScale shrinks the default timeouts for the mutants: 6s to reach a
// state, 20ms polls, 200ms stable windows, and 6s per call (config doubles
// the scaled 3s). The grace period stays
// one second (whole seconds), so a KillPod that honours it still returns well
// within the call timeout on a loaded machine.
const mutantScale = 0.1

// forever blocks the calling goroutine for the rest of the process: a hung
// provider call. The suite abandons it.
func forever() { select {} }

func (m *mutant) config() conformance.Config {
	if m.host != nil {
		return m.hostConfig()
	}
	var podHook func(*fake.PodProvider)
	var nodeHook func(*fake.NodeProvider)
	if m.pod != nil {
		podHook = func(p *fake.PodProvider) { p.SetInterceptors(m.pod(p)) }
	}
	if m.node != nil {
		nodeHook = func(n *fake.NodeProvider) { n.SetInterceptors(m.node()) }
	}
	cfg := fakeConfig(podHook, nodeHook)
	if m.pod != nil {
		cfg.NewNodeProvider = nil
	} else {
		cfg.NewPodProvider = nil
	}
	// Calls keep 6s: a KillPod that honours a one-second grace period was
	// seen to take over 3s when make test ran the mutants beside the other
	// packages on two cores.
	cfg.Timeouts = conformance.Timeouts{Call: 2 * conformance.DefaultTimeouts().Call}
	cfg.TimeoutScale = mutantScale
	if m.timeouts != nil {
		cfg.Timeouts, cfg.TimeoutScale = *m.timeouts, 1
	}
	cfg.Capabilities = slices.DeleteFunc(slices.Clone(cfg.Capabilities), func(c conformance.Capability) bool {
		return slices.Contains(m.withoutCaps, c)
	})
	return cfg
}

func mutantNamed(name string) *mutant {
	for _, m := range mutants() {
		if m.name == name {
			return m
		}
	}
	return nil
}

// expectFailureMessage returns a check that spec id failed with a message
// containing each of parts.
func expectFailureMessage(id string, parts ...string) func(*testing.T, *helperRun) {
	return func(t *testing.T, r *helperRun) {
		sr, ok := r.specReport(id)
		if !ok {
			t.Errorf("%s is not in the report", id)
			return
		}
		for _, p := range parts {
			if !strings.Contains(sr.Failure.Message, p) {
				t.Errorf("%s failed with %q, want it to mention %q", id, firstLine(sr.Failure.Message), p)
			}
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// withRestartPolicy returns a copy of pod with policy.
func withRestartPolicy(pod *v1.Pod, policy v1.RestartPolicy) *v1.Pod {
	if pod == nil {
		return nil
	}
	cp := pod.DeepCopy()
	cp.Spec.RestartPolicy = policy
	return cp
}

// duplicator makes SyncPod of a running pod start a second instance of its
// running containers: it runs them in a shadow pod, whose containers
// GetPodStatus and GetPods report as the pod's own.
func duplicator(*fake.PodProvider) fake.Interceptors {
	var mu sync.Mutex
	shadows := map[types.UID]*v1.Pod{}
	shadowOf := func(uid types.UID) *v1.Pod {
		mu.Lock()
		defer mu.Unlock()
		return shadows[uid]
	}
	isShadow := func(uid types.UID) bool { return strings.HasSuffix(string(uid), "-shadow") }
	return fake.Interceptors{
		SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
			if err := next.SyncPod(ctx, pod, st, rc); err != nil || pod == nil || st == nil {
				return err
			}
			var running []v1.Container
			for _, c := range pod.Spec.Containers {
				for _, s := range st.ContainerStatuses {
					if s.Name == c.Name && s.State == pkgcontainer.ContainerStateRunning {
						running = append(running, c)
						break
					}
				}
			}
			if len(running) == 0 || shadowOf(pod.UID) != nil {
				return nil
			}
			shadow := pod.DeepCopy()
			shadow.UID += "-shadow"
			shadow.Name += "-shadow"
			shadow.Spec.InitContainers, shadow.Spec.Containers = nil, running
			mu.Lock()
			shadows[pod.UID] = shadow
			mu.Unlock()
			return next.SyncPod(ctx, shadow, nil, kri.NewReasonCache())
		},
		GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
			st, err := next.GetPodStatus(ctx, pod)
			if err != nil || pod == nil {
				return st, err
			}
			if shadow := shadowOf(pod.UID); shadow != nil {
				if sst, err := next.GetPodStatus(ctx, shadow); err == nil {
					st.ContainerStatuses = append(st.ContainerStatuses, sst.ContainerStatuses...)
				}
			}
			return st, nil
		},
		GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
			pods, err := next.GetPods(ctx, all)
			if err != nil {
				return pods, err
			}
			byUID := map[types.UID]*pkgcontainer.Pod{}
			for _, p := range pods {
				byUID[p.ID] = p
			}
			var out []*pkgcontainer.Pod
			for _, p := range pods {
				if !isShadow(p.ID) {
					out = append(out, p)
				} else if orig := byUID[types.UID(strings.TrimSuffix(string(p.ID), "-shadow"))]; orig != nil {
					orig.Containers = append(orig.Containers, p.Containers...)
				}
			}
			return out, nil
		},
		KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
			if pod != nil {
				if shadow := shadowOf(pod.UID); shadow != nil {
					if err := next.KillPod(ctx, shadow, pkgcontainer.Pod{ID: shadow.UID, Name: shadow.Name, Namespace: shadow.Namespace}, grace); err != nil {
						return err
					}
				}
			}
			return next.KillPod(ctx, pod, rp, grace)
		},
		DeletePod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) error {
			if pod != nil {
				if shadow := shadowOf(pod.UID); shadow != nil {
					if err := next.DeletePod(ctx, shadow); err != nil {
						return err
					}
				}
			}
			return next.DeletePod(ctx, pod)
		},
	}
}

// mutants is the zoo: the pod mutants, then nodeMutants. Every contract the
// suite checks should have one.
func mutants() []*mutant {
	return withProbeWants(alsoFailing(withHookCatches(slices.Concat(podMutants(), nodeMutants(), reachMutants(), backendMutants(), kusciaBackendMutants(), podSpecMutants(), sidecarMutants(),
		hookMutants(), resizeMutants(), probeMutants())), resizeAlsoFailed))
}

func podMutants() []*mutant {
	return []*mutant{
		{
			name:      "kill-leaves-container-running",
			violation: "after KillPod returns nil, the pod's first container runs again",
			want:      []string{"KRI-POD-005", "KRI-POD-014", "KRI-POD-016", "KRI-POD-017", "KRI-POD-018", "KRI-POD-020", "KRI-POD-028", "KRI-POD-041", "KRI-POD-047", "KRI-POD-048", "KRI-POD-055", "KRI-POD-056", "KRI-POD-069", "KRI-POD-070", "KRI-POD-086"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if err := next.KillPod(ctx, pod, rp, grace); err != nil || pod == nil || len(pod.Spec.Containers) == 0 {
						return err
					}
					again := withRestartPolicy(pod, v1.RestartPolicyAlways)
					again.Spec.InitContainers, again.Spec.Containers = nil, again.Spec.Containers[:1]
					_ = next.SyncPod(ctx, again, nil, kri.NewReasonCache())
					return nil
				}}
			},
		},
		{
			name:      "sync-duplicates-running-containers",
			violation: "SyncPod of a running pod starts a second instance of each running container",
			want:      []string{"KRI-POD-003", "KRI-POD-051", "KRI-POD-067", "KRI-POD-068"},
			pod:       duplicator,
		},
		{
			name:      "status-errors-for-unknown-pod",
			violation: "GetPodStatus of a pod it does not know returns an error instead of an empty status",
			want:      []string{"KRI-POD-002", "KRI-POD-020", "KRI-POD-023", "KRI-POD-028", "KRI-POD-034", "KRI-POD-036", "KRI-POD-084"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
					st, err := next.GetPodStatus(ctx, pod)
					if err == nil && len(st.ContainerStatuses) == 0 && len(st.SandboxStatuses) == 0 {
						return nil, fmt.Errorf("pod %s/%s not found", pod.Namespace, pod.Name)
					}
					return st, err
				}}
			},
		},
		{
			name:      "cleanup-kills-desired-pods",
			violation: "CleanupPods treats every pod as an orphan",
			want:      []string{"KRI-POD-021", "KRI-POD-022", "KRI-POD-028"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{CleanupPods: func(ctx context.Context, next kri.PodProvider, _ []*v1.Pod, _ []*pkgcontainer.Pod, _ map[types.UID]sets.Empty) error {
					return next.CleanupPods(ctx, nil, nil, nil)
				}}
			},
		},
		{
			name:      "cleanup-ignores-running-and-possibly-running",
			violation: "CleanupPods keeps only the desired pods, ignoring runningPods and possiblyRunningPods",
			want:      []string{"KRI-POD-022"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{CleanupPods: func(ctx context.Context, next kri.PodProvider, pods []*v1.Pod, _ []*pkgcontainer.Pod, _ map[types.UID]sets.Empty) error {
					return next.CleanupPods(ctx, pods, nil, nil)
				}}
			},
		},
		{
			name:      "reason-cache-never-updated",
			violation: "SyncPod reports container starts to a ReasonCache of its own",
			want:      []string{"KRI-POD-085"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if rc != nil {
						rc = kri.NewReasonCache()
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
		{
			name:      "reason-cache-never-cleared",
			violation: "SyncPod reports failed starts but never successful ones, so failures are never cleared",
			want:      []string{"KRI-POD-013"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if rc == nil || pod == nil {
						return next.SyncPod(ctx, pod, st, rc)
					}
					own := kri.NewReasonCache()
					err := next.SyncPod(ctx, pod, st, own)
					for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
						if item, ok := own.Get(pod.UID, c.Name); ok {
							r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
							r.Fail(item.Err, item.Message)
							rc.Update(pod.UID, pkgcontainer.PodSyncResult{SyncResults: []*pkgcontainer.SyncResult{r}})
						}
					}
					return err
				}}
			},
		},
		{
			name:      "sync-hides-start-failures",
			violation: "SyncPod returns nil although a container failed to start",
			want:      []string{"KRI-POD-085"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					err := next.SyncPod(ctx, pod, st, rc)
					if err == nil || pod == nil || rc == nil {
						return err
					}
					for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
						if _, failed := rc.Get(pod.UID, c.Name); failed {
							return nil // hide the error of a failed start
						}
					}
					return err
				}}
			},
		},
		{
			name:      "start-returns-at-once",
			violation: "Start returns nil at once instead of blocking",
			want:      []string{"KRI-POD-029", "KRI-POD-030"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{Start: func(context.Context, kri.PodProvider) error { return nil }}
			},
		},
		{
			name:      "start-never-returns",
			violation: "Start keeps blocking after its context is cancelled and after Stop",
			want:      []string{"KRI-POD-029", "KRI-POD-030"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{Start: func(ctx context.Context, next kri.PodProvider) error {
					_ = next.Start(ctx)
					forever()
					return nil
				}}
			},
		},
		{
			name:      "stop-hangs",
			violation: "Stop never returns",
			want:      []string{"KRI-POD-030", "KRI-POD-031", "KRI-POD-032"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{Stop: func(next kri.PodProvider) {
					next.Stop()
					forever()
				}}
			},
			check: expectFailureMessage("KRI-POD-032", "Stop did not return within 6s"),
			cost:  2,
		},
		{
			name:      "syncpod-blocks-forever",
			violation: "SyncPod never returns (and ignores its context)",
			want:      []string{"KRI-POD-001", "KRI-POD-003", "KRI-POD-004", "KRI-POD-005", "KRI-POD-006", "KRI-POD-007", "KRI-POD-008", "KRI-POD-009", "KRI-POD-010", "KRI-POD-011", "KRI-POD-012", "KRI-POD-013", "KRI-POD-014", "KRI-POD-015", "KRI-POD-020", "KRI-POD-021", "KRI-POD-022", "KRI-POD-023", "KRI-POD-025", "KRI-POD-026", "KRI-POD-027", "KRI-POD-028", "KRI-POD-033", "KRI-POD-034", "KRI-POD-035", "KRI-POD-036", "KRI-POD-037", "KRI-POD-038", "KRI-POD-039", "KRI-POD-040", "KRI-POD-041", "KRI-POD-042", "KRI-POD-043", "KRI-POD-044", "KRI-POD-045", "KRI-POD-046", "KRI-POD-049", "KRI-POD-050", "KRI-POD-051", "KRI-POD-052", "KRI-POD-053", "KRI-POD-054", "KRI-POD-055", "KRI-POD-057", "KRI-POD-058", "KRI-POD-059", "KRI-POD-060", "KRI-POD-061", "KRI-POD-066", "KRI-POD-067", "KRI-POD-068", "KRI-POD-069", "KRI-POD-070", "KRI-POD-071", "KRI-POD-084", "KRI-POD-085", "KRI-POD-086"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(context.Context, kri.PodProvider, *v1.Pod, *pkgcontainer.PodStatus, *kri.ReasonCache) error {
					forever()
					return nil
				}}
			},
			// Every spec that syncs waits one call timeout: keep it short.
			// That needs a call timeout below the one-second grace period,
			// so the grace-period specs (which would fail the same way)
			// are left out.
			withoutCaps: []conformance.Capability{conformance.CapGracePeriod},
			timeouts: &conformance.Timeouts{Call: 600 * time.Millisecond, State: 3 * time.Second, Poll: 10 * time.Millisecond,
				Stable: 100 * time.Millisecond, ShortRun: 50 * time.Millisecond},
			check: expectFailureMessage("KRI-POD-001", "SyncPod did not return within 600ms"),
			cost:  3,
		},
		{
			name:      "getpods-panics",
			violation: "GetPods panics",
			want:      []string{"KRI-POD-005", "KRI-POD-020", "KRI-POD-022", "KRI-POD-023", "KRI-POD-027", "KRI-POD-028", "KRI-POD-033", "KRI-POD-034", "KRI-POD-035", "KRI-POD-036", "KRI-POD-044", "KRI-POD-045", "KRI-POD-056", "KRI-POD-086"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPods: func(context.Context, kri.PodProvider, bool) ([]*pkgcontainer.Pod, error) {
					panic("mutant: GetPods is broken")
				}}
			},
			check: expectFailureMessage("KRI-POD-005", "GetPods panicked: mutant: GetPods is broken", "mutants_test.go"),
		},
		{
			name:      "restart-policy-ignored",
			violation: "SyncPod treats every pod as RestartPolicy Never",
			want:      []string{"KRI-POD-008", "KRI-POD-009", "KRI-POD-037", "KRI-POD-038", "KRI-POD-042", "KRI-POD-044", "KRI-POD-051", "KRI-POD-053", "KRI-POD-054"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					return next.SyncPod(ctx, withRestartPolicy(pod, v1.RestartPolicyNever), st, rc)
				}}
			},
		},
		{
			name:      "init-order-reversed",
			violation: "SyncPod runs the init containers in reverse order",
			want:      []string{"KRI-POD-010", "KRI-POD-011", "KRI-POD-066", "KRI-POD-070"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if pod != nil && len(pod.Spec.InitContainers) > 1 {
						pod = pod.DeepCopy()
						slices.Reverse(pod.Spec.InitContainers)
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
		{
			name:      "grace-period-ignored",
			violation: "KillPod always kills at once (grace period 0)",
			want:      []string{"KRI-POD-017", "KRI-POD-018", "KRI-POD-048"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, _ *int64) error {
					zero := int64(0)
					return next.KillPod(ctx, pod, rp, &zero)
				}}
			},
		},
		{
			name:      "grace-override-ignored",
			violation: "KillPod ignores gracePeriodOverride and uses the pod's grace period",
			want:      []string{"KRI-POD-016", "KRI-POD-017", "KRI-POD-056"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, _ *int64) error {
					return next.KillPod(ctx, pod, rp, nil)
				}}
			},
		},
		{
			name:      "getpods-lists-killed-pods",
			violation: "GetPods(false) lists every pod, killed ones included",
			want:      []string{"KRI-POD-005", "KRI-POD-056"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPods: func(ctx context.Context, next kri.PodProvider, _ bool) ([]*pkgcontainer.Pod, error) {
					return next.GetPods(ctx, true)
				}}
			},
		},
		{
			name:      "deletepod-forgets-nothing",
			violation: "DeletePod returns nil and keeps the pod",
			want:      []string{"KRI-POD-020"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{DeletePod: func(context.Context, kri.PodProvider, *v1.Pod) error { return nil }}
			},
		},
		{
			name:      "syncpod-mutates-its-input",
			violation: "SyncPod writes to the status it was handed",
			want:      []string{"KRI-POD-035"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if st != nil {
						st.IPs = append(st.IPs, "192.0.2.1")
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
		{
			name:      "refresh-names-foreign-container",
			violation: "RefreshPodStatus adds a status for a container the spec does not have",
			want:      []string{"KRI-POD-025"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
					before := ps.DeepCopy()
					next.RefreshPodStatus(pod, ps)
					if !equalPodStatus(before, ps) {
						ps.ContainerStatuses = append(ps.ContainerStatuses, v1.ContainerStatus{Name: "ghost"})
					}
				}}
			},
		},
		{
			name:      "restart-policy-always",
			violation: "SyncPod treats every pod as RestartPolicy Always",
			want:      []string{"KRI-POD-007", "KRI-POD-008", "KRI-POD-068"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					return next.SyncPod(ctx, withRestartPolicy(pod, v1.RestartPolicyAlways), st, rc)
				}}
			},
		},
		{
			name:      "exit-codes-lost",
			violation: "GetPodStatus reports exit code 0 for every exited container",
			want:      []string{"KRI-POD-006", "KRI-POD-008", "KRI-POD-011", "KRI-POD-014", "KRI-POD-053", "KRI-POD-059", "KRI-POD-067", "KRI-POD-086"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
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
			want:      []string{"KRI-POD-003", "KRI-POD-004", "KRI-POD-021", "KRI-POD-022", "KRI-POD-028", "KRI-POD-035", "KRI-POD-040", "KRI-POD-043", "KRI-POD-044", "KRI-POD-051", "KRI-POD-052", "KRI-POD-054", "KRI-POD-066", "KRI-POD-067", "KRI-POD-071", "KRI-POD-086"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				var calls atomic.Int64
				return fake.Interceptors{GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
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
			name:      "kill-unknown-pod-errors",
			violation: "KillPod of a pod it does not know returns an error",
			want:      []string{"KRI-POD-015"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if unknownPod(ctx, next, pod) {
						return fmt.Errorf("pod %s not found", rp.ID)
					}
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
		},
		{
			name:      "delete-unknown-pod-errors",
			violation: "DeletePod of a pod it does not know returns an error",
			want:      []string{"KRI-POD-019"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{DeletePod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) error {
					if unknownPod(ctx, next, pod) {
						return fmt.Errorf("pod %s/%s not found", pod.Namespace, pod.Name)
					}
					return next.DeletePod(ctx, pod)
				}}
			},
		},
		{
			name:      "refresh-touches-unknown-pod",
			violation: "RefreshPodStatus of a pod it does not know marks it Unknown",
			want:      []string{"KRI-POD-024"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
					if unknownPod(context.Background(), next, pod) {
						ps.Phase = v1.PodUnknown
						return
					}
					next.RefreshPodStatus(pod, ps)
				}}
			},
		},
		{
			name:      "waiting-without-reason",
			violation: "RefreshPodStatus drops the reason of a container whose start failed",
			want:      []string{"KRI-POD-012", "KRI-POD-013", "KRI-POD-026", "KRI-POD-052", "KRI-POD-057", "KRI-POD-058"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
					next.RefreshPodStatus(pod, ps)
					if unknownPod(context.Background(), next, pod) {
						return
					}
					for i := range ps.ContainerStatuses {
						if w := ps.ContainerStatuses[i].State.Waiting; w != nil {
							w.Reason, w.Message = "", ""
						}
					}
				}}
			},
		},

		// Fields a node agent reads (KRI-POD-036 to 044).
		// Inputs (KRI-POD-045 to 050) and SyncPod's error.
		{
			name:      "sync-error-names-nothing",
			violation: "SyncPod's error does not say which container failed to start",
			want:      []string{"KRI-POD-085"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					err := next.SyncPod(ctx, pod, st, rc)
					if err != nil && !errors.Is(err, context.Canceled) {
						return errors.New("mutant: sync failed")
					}
					return err
				}}
			},
		},
		{
			name:      "killpod-marks-its-input",
			violation: "KillPod marks the containers of the running pod it was handed exited",
			want:      []string{"KRI-POD-045"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					err := next.KillPod(ctx, pod, rp, grace)
					for _, c := range rp.Containers {
						c.State = pkgcontainer.ContainerStateExited
					}
					return err
				}}
			},
		},
		{
			name:      "refresh-reads-the-kept-pod",
			violation: "SyncPod keeps the caller's pod and RefreshPodStatus reads the containers from it",
			want:      []string{"KRI-POD-045"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				var mu sync.Mutex
				kept := map[types.UID]*v1.Pod{}
				return fake.Interceptors{
					SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
						if pod != nil {
							mu.Lock()
							kept[pod.UID] = pod
							mu.Unlock()
						}
						return next.SyncPod(ctx, pod, st, rc)
					},
					RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
						if pod != nil {
							mu.Lock()
							if k := kept[pod.UID]; k != nil {
								pod = k
							}
							mu.Unlock()
						}
						next.RefreshPodStatus(pod, ps)
					},
				}
			},
		},
		{
			name:      "sync-rejects-nil-status",
			violation: "SyncPod fails when it is handed no status",
			want:      []string{"KRI-POD-046"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if st == nil {
						return errors.New("mutant: podStatus is nil")
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
		{
			name:      "kill-without-sigterm",
			violation: "KillPod waits out the grace period before it signals, as if every container ignored SIGTERM",
			want:      []string{"KRI-POD-047"},
			pod: func(p *fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					for _, c := range rp.Containers {
						p.Container(rp.Namespace+"/"+rp.Name, c.Name).IgnoreSIGTERM()
					}
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
		},
		{
			name:      "deletion-grace-ignored",
			violation: "KillPod without override uses TerminationGracePeriodSeconds even when the pod has a DeletionGracePeriodSeconds",
			want:      []string{"KRI-POD-048"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if grace == nil && pod != nil && pod.DeletionGracePeriodSeconds != nil {
						pod = pod.DeepCopy()
						pod.DeletionGracePeriodSeconds = nil
					}
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
		},
		{
			name:      "kill-needs-the-pod",
			violation: "KillPod with a nil pod does nothing and returns nil",
			want:      []string{"KRI-POD-049"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if pod == nil {
						return nil
					}
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
		},
		{
			name:      "refresh-drops-init-statuses",
			violation: "RefreshPodStatus reports no init containers",
			want:      []string{"KRI-POD-050", "KRI-POD-071"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
					next.RefreshPodStatus(pod, ps)
					ps.InitContainerStatuses = nil
				}}
			},
		},
		{
			name:      "duplicate-names-accepted",
			violation: "SyncPod runs a pod with two containers of the same name, dropping the second (a SHOULD)",
			want:      []string{"KRI-POD-036"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					if pod != nil {
						seen := sets.New[string]()
						pod = pod.DeepCopy()
						pod.Spec.Containers = slices.DeleteFunc(pod.Spec.Containers, func(c v1.Container) bool {
							dup := seen.Has(c.Name)
							seen.Insert(c.Name)
							return dup
						})
					}
					return next.SyncPod(ctx, pod, st, rc)
				}}
			},
		},
		{
			name:      "restart-count-stuck-at-zero",
			violation: "every instance reports RestartCount 0, in GetPodStatus and RefreshPodStatus",
			want:      []string{"KRI-POD-037", "KRI-POD-051", "KRI-POD-067"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{
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
			name:      "finished-before-created",
			violation: "every exited instance reports a FinishedAt one second before its CreatedAt",
			want:      []string{"KRI-POD-006", "KRI-POD-038"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
						if c.State == pkgcontainer.ContainerStateExited {
							c.FinishedAt = c.CreatedAt.Add(-time.Second)
						}
					}
				})}
			},
		},
		{
			name:      "killed-finished-before-started",
			violation: "an instance killed after it ran reports a FinishedAt before its StartedAt",
			want:      []string{"KRI-POD-068", "KRI-POD-069", "KRI-POD-070"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
						if c.State == pkgcontainer.ContainerStateExited && (c.ExitCode == 137 || c.ExitCode == 143) {
							c.FinishedAt = c.StartedAt.Add(-time.Millisecond)
						}
					}
				})}
			},
		},
		{
			name:      "restart-keeps-created-at",
			violation: "every instance of a container reports the CreatedAt of its first instance",
			want:      []string{"KRI-POD-038", "KRI-POD-053"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
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
			name:      "exit-reason-dropped",
			violation: "exited containers carry no Reason, in GetPodStatus and RefreshPodStatus (a SHOULD)",
			want:      []string{"KRI-POD-039"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{
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
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
						if c.State == pkgcontainer.ContainerStateExited {
							c.Image = ""
						}
					}
				})}
			},
		},
		{
			name:      "sandbox-ready-after-kill",
			violation: "GetPodStatus reports the sandboxes of a pod without running containers as ready",
			want:      []string{"KRI-POD-041"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					if len(st.GetRunningContainerStatuses()) > 0 {
						return
					}
					for _, sb := range st.SandboxStatuses {
						sb.State = runtimeapi.PodSandboxState_SANDBOX_READY
					}
				})}
			},
		},
		{
			name:      "last-termination-state-dropped",
			violation: "RefreshPodStatus never reports LastTerminationState",
			want:      []string{"KRI-POD-042"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{RefreshPodStatus: refreshEdit(func(cs *v1.ContainerStatus) {
					cs.LastTerminationState = v1.ContainerState{}
				})}
			},
		},
		{
			name:      "active-statuses-stale",
			violation: "ActiveContainerStatuses reports every instance as still being created",
			want:      []string{"KRI-POD-043"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
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
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
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
	}
}

// statusEdit is a GetPodStatus interceptor that changes every status the
// fake returns with edit.
func statusEdit(edit func(*pkgcontainer.PodStatus)) func(context.Context, kri.PodProvider, *v1.Pod) (*pkgcontainer.PodStatus, error) {
	return func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
		st, err := next.GetPodStatus(ctx, pod)
		if st != nil {
			edit(st)
		}
		return st, err
	}
}

// refreshEdit is a RefreshPodStatus interceptor that changes every container
// and init-container status the fake fills in with edit.
func refreshEdit(edit func(*v1.ContainerStatus)) func(kri.PodProvider, *v1.Pod, *v1.PodStatus) {
	return func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
		next.RefreshPodStatus(pod, ps)
		if unknownPod(context.Background(), next, pod) {
			return // leave the status of an unknown pod alone
		}
		for _, list := range [][]v1.ContainerStatus{ps.ContainerStatuses, ps.InitContainerStatuses} {
			for i := range list {
				edit(&list[i])
			}
		}
	}
}

// unknownPod reports whether the fake (next) does not know pod.
func unknownPod(ctx context.Context, next kri.PodProvider, pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	st, err := next.GetPodStatus(context.WithoutCancel(ctx), pod)
	return err == nil && len(st.ContainerStatuses) == 0 && len(st.SandboxStatuses) == 0
}

func equalPodStatus(a, b *v1.PodStatus) bool {
	return fmt.Sprintf("%+v", *a) == fmt.Sprintf("%+v", *b)
}

// TestMutantsAreCaught runs the suite against every mutant, each in its own
// process, and checks that exactly the expected specs fail and that the
// verdict is "not conformant" when a MUST spec fails.
func TestMutantsAreCaught(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("helper process")
	}
	if testing.Short() {
		t.Skip("runs the suite once per mutant")
	}
	t.Parallel() // shares the helper slots with TestBenignVariantsPass
	zoo := mutants()
	if len(zoo) < 15 {
		t.Fatalf("the zoo has %d mutants, want at least 15", len(zoo))
	}
	musts := map[string]bool{}
	for _, s := range conformance.Catalogue() {
		musts[s.ID] = s.Level == conformance.Must
	}

	// Start the slow mutants (those that hang a call in many specs) first,
	// so that the others run alongside them.
	modes := make([]string, len(zoo))
	rank := make([]int, len(zoo))
	for i, m := range zoo {
		modes[i], rank[i] = helperMutant+m.name, m.cost
	}
	runs := runHelpers(t, modes, rank)

	for i, m := range zoo {
		t.Run(m.name, func(t *testing.T) {
			r := runs[i]
			t.Logf("%s: %s", m.name, r.took.Round(100*time.Millisecond))
			if r.report == nil {
				t.Fatalf("mutant %s (%s): no Ginkgo report; output:\n%s", m.name, m.violation, tail(r.output))
			}
			got, want := r.failedIDs(), sortIDs(slices.Clone(m.want))
			if !slices.Equal(got, want) {
				t.Errorf("mutant %s (%s):\nfailed specs %v\nwant exactly %v\nmissed (spec too weak?): %v\nextra (failing for another reason?): %v",
					m.name, m.violation, got, want, minus(want, got), minus(got, want))
				for _, id := range minus(got, want) {
					if sr, ok := r.specReport(id); ok {
						t.Logf("%s: %s", id, firstLine(sr.Failure.Message))
					}
				}
			}
			if r.err == nil {
				t.Errorf("mutant %s: the suite passed", m.name)
			}
			mustFailed := slices.ContainsFunc(want, func(id string) bool { return musts[id] })
			switch {
			case mustFailed && !strings.Contains(r.summary, "verdict: not conformant"):
				t.Errorf("mutant %s fails a MUST spec but the summary does not say \"not conformant\":\n%s", m.name, r.summary)
			case !mustFailed && !strings.Contains(r.summary, "verdict: conformant"):
				t.Errorf("mutant %s fails only SHOULD specs but the summary does not say \"conformant\":\n%s", m.name, r.summary)
			}
			if m.check != nil {
				m.check(t, r)
			}
		})
	}
}

// TestEverySpecHasAMutant checks that the zoo proves every spec that is not
// a measurement: some mutant must be expected to fail it.
func TestEverySpecHasAMutant(t *testing.T) {
	skipInHelper(t)
	caught := sets.New[string]()
	for _, m := range mutants() {
		caught.Insert(m.want...)
	}
	for _, s := range conformance.Catalogue() {
		if !s.Benchmark && !caught.Has(s.ID) {
			t.Errorf("no mutant is expected to fail %s (%s): add one to mutants()", s.ID, s.Requirement)
		}
	}
}

// minus returns the elements of a not in b.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
