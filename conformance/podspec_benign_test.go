package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/workload"
)

// The benign variants of the pod-spec specs: the hostprocess example (the
// fake does not simulate these features yet) changed only where the
// contract leaves room. Each must pass every pod spec that applies to it.

// errImagePullBackOff has the text of the kubelet's images.ErrImagePullBackOff.
var errImagePullBackOff = errors.New("ImagePullBackOff")

// hostBenign is a benign variant on hostprocess.
type hostBenign struct {
	name, freedom string
	ic            func() fake.Interceptors
}

const helperHostBenign = "host-benign:"

// hostBenignTimeouts are those of hostprocess's own TestConformance.
func hostBenignTimeouts() conformance.Timeouts {
	t := conformance.DefaultTimeouts()
	t.Poll, t.Stable, t.ShortRun = 20*time.Millisecond, 500*time.Millisecond, 500*time.Millisecond
	return t
}

func init() {
	for _, b := range hostBenignVariants() {
		extraHelpers[helperHostBenign+b.name] = func() conformance.Config {
			cfg := hostConfig(b.ic)
			cfg.Timeouts = hostBenignTimeouts()
			return cfg
		}
	}
}

func hostBenignVariants() []hostBenign {
	return append([]hostBenign{
		{
			name:    "host-image-pull-backoff",
			freedom: "after the first failed pull, a provider backs off and reports ImagePullBackOff, as the kubelet's image manager does",
			ic: func() fake.Interceptors {
				var mu sync.Mutex
				failures := map[types.UID]int{}
				return fake.Interceptors{
					SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
						err := next.SyncPod(ctx, pod, st, rc)
						if pod == nil || rc == nil {
							return err
						}
						var result pkgcontainer.PodSyncResult
						for _, c := range pod.Spec.Containers {
							item, ok := rc.Get(pod.UID, c.Name)
							if !ok || !errors.Is(item.Err, workload.ErrImagePull) {
								continue
							}
							mu.Lock()
							failures[pod.UID]++
							n := failures[pod.UID]
							mu.Unlock()
							if n > 1 {
								r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
								r.Fail(errImagePullBackOff, fmt.Sprintf("Back-off pulling image %q", c.Image))
								result.AddSyncResult(r)
							}
						}
						if len(result.SyncResults) > 0 {
							rc.Update(pod.UID, result)
						}
						return err
					},
					RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
						// The provider's own Waiting reason would say
						// ErrImagePull; keep the agent's (from the ReasonCache).
						before := map[string]*v1.ContainerStateWaiting{}
						for _, cs := range ps.ContainerStatuses {
							if w := cs.State.Waiting; w != nil && w.Reason == errImagePullBackOff.Error() {
								before[cs.Name] = w.DeepCopy()
							}
						}
						next.RefreshPodStatus(pod, ps)
						for i := range ps.ContainerStatuses {
							if w, ok := before[ps.ContainerStatuses[i].Name]; ok && ps.ContainerStatuses[i].State.Waiting != nil {
								ps.ContainerStatuses[i].State.Waiting = w
							}
						}
					},
				}
			},
		},
		{
			name:    "host-runtime-message-prefix",
			freedom: "a runtime's own message of an exited container comes first, the termination message after \": \" (the kubelet's convertToKubeContainerStatus)",
			ic: func() fake.Interceptors {
				prefix := func(msg string, code int) string {
					if code == 0 {
						return msg
					}
					if msg == "" {
						return fmt.Sprintf("process exited with code %d", code)
					}
					return fmt.Sprintf("process exited with code %d: %s", code, msg)
				}
				return fake.Interceptors{
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
	}, slices.Concat(sidecarBenignVariants(), hookBenignVariants())...)
}

// TestHostBenignVariantsPass runs the pod suite against each benign
// variant of hostprocess and checks that every spec that applies passes.
func TestHostBenignVariantsPass(t *testing.T) {
	skipInHelper(t)
	if testing.Short() {
		t.Skip("runs the suite once per variant")
	}
	t.Parallel()
	var want []string
	for _, s := range conformance.Catalogue() {
		if !s.Benchmark && s.Provider == "pod" && !slices.ContainsFunc(s.Capabilities, func(c conformance.Capability) bool { return !slices.Contains(hostCapabilities, c) }) {
			want = append(want, s.ID)
		}
	}
	want = sortIDs(want)
	zoo := hostBenignVariants()
	modes := make([]string, len(zoo))
	for i, b := range zoo {
		modes[i] = helperHostBenign + b.name
	}
	runs := runHelpers(t, modes, nil)
	for i, b := range zoo {
		t.Run(b.name, func(t *testing.T) {
			checkBenignRun(t, b.name, b.freedom, runs[i], want, "pod spec hostprocess declares")
		})
	}
}
