package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/examples/hostprocess"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/workload"
)

// The mutants of the pod-spec specs (KRI-POD-057 on). They decorate the
// hostprocess example, which implements these features with real
// processes, with the fake's Interceptors type, so that each spec is shown
// to catch what a real runtime gets wrong (the fake passes them too, and
// its own mutants run them). Each runs every pod spec against that
// provider with the capabilities it declares, so it must fail exactly its
// specs there.

// hostCapabilities are the capabilities examples/hostprocess declares in its
// own TestConformance.
var hostCapabilities = []conformance.Capability{
	conformance.CapInitContainers, conformance.CapRestartPolicies, conformance.CapGracePeriod,
	conformance.CapStartFailures, conformance.CapOrphanCleanup,
	conformance.CapImagePullPolicy, conformance.CapEnvExpansion, conformance.CapTerminationMessage,
	conformance.CapSidecars,
	conformance.CapLifecycleHooks,
	conformance.CapProbes,
}

// hostConfig runs the suite against hostprocess providers decorated with
// ic() (nil: undecorated), each rooted in a directory of its own that is
// removed when its spec is done (or with the helper's directory). The termination message files of a spec's
// containers are in its provider's directory (the specs run one at a time).
func hostConfig(ic func() fake.Interceptors) conformance.Config {
	var n atomic.Int64
	var root atomic.Pointer[string]
	return conformance.Config{
		NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
			// The helper process runs in a temporary directory of the
			// parent test (runHelper), which removes it with whatever
			// is left in it.
			cwd, err := os.Getwd()
			if err != nil {
				return nil, err
			}
			dir, err := os.MkdirTemp(cwd, "kri-host-mutant-")
			if err != nil {
				return nil, err
			}
			root.Store(&dir)
			context.AfterFunc(ctx, func() { os.RemoveAll(dir) })
			p, err := hostprocess.New(hostprocess.Options{RootDir: dir})
			if err != nil || ic == nil {
				return p, err
			}
			return &intercepted{PodProvider: p, ic: ic()}, nil
		},
		Capabilities: hostCapabilities,
		RuntimeName:  hostprocess.RuntimeName,
		Workloads: conformance.Workloads{
			TerminationMessagePath: func() string {
				dir := os.TempDir()
				if d := root.Load(); d != nil {
					dir = *d
				}
				return filepath.Join(dir, fmt.Sprintf("termination-%d", n.Add(1)))
			},
			ProbeFilePath: func() string {
				dir := os.TempDir()
				if d := root.Load(); d != nil {
					dir = *d
				}
				return filepath.Join(dir, fmt.Sprintf("probe-%d", n.Add(1)))
			},
		},
	}
}

// hostConfig is the mutant's run: the decorated hostprocess provider, the
// scaled default timeouts of every mutant.
func (m *mutant) hostConfig() conformance.Config {
	cfg := hostConfig(m.host)
	// Real processes under the mutants' tenfold shorter timeouts: the
	// grace-period specs, whose timing a loaded machine can upset (a
	// SIGTERM that arrives before sh has run its trap), are left to the
	// fake's mutants; these mutants are about the pod-spec specs.
	cfg.Capabilities = slices.DeleteFunc(slices.Clone(cfg.Capabilities), func(c conformance.Capability) bool {
		return c == conformance.CapGracePeriod
	})
	// Calls keep 6s, as the fake's mutants do: with the hook specs a
	// KillPod of real processes runs a preStop hook and a grace period
	// (about 2s for KRI-POD-065) beside 23 other suite runs.
	cfg.Timeouts = conformance.Timeouts{Call: 2 * conformance.DefaultTimeouts().Call}
	cfg.TimeoutScale = mutantScale
	if m.timeouts != nil {
		cfg.Timeouts, cfg.TimeoutScale = *m.timeouts, 1
	}
	return cfg
}

// intercepted is a provider decorated with the fake's Interceptors: the
// methods whose interceptor is set call it with the provider as next.
type intercepted struct {
	kri.PodProvider
	ic fake.Interceptors
}

func (p *intercepted) SyncPod(ctx context.Context, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
	if p.ic.SyncPod != nil {
		return p.ic.SyncPod(ctx, p.PodProvider, pod, st, rc)
	}
	return p.PodProvider.SyncPod(ctx, pod, st, rc)
}

func (p *intercepted) GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	if p.ic.GetPodStatus != nil {
		return p.ic.GetPodStatus(ctx, p.PodProvider, pod)
	}
	return p.PodProvider.GetPodStatus(ctx, pod)
}

func (p *intercepted) KillPod(ctx context.Context, pod *v1.Pod, running pkgcontainer.Pod, grace *int64) error {
	if p.ic.KillPod != nil {
		return p.ic.KillPod(ctx, p.PodProvider, pod, running, grace)
	}
	return p.PodProvider.KillPod(ctx, pod, running, grace)
}

func (p *intercepted) RefreshPodStatus(pod *v1.Pod, ps *v1.PodStatus) {
	if p.ic.RefreshPodStatus != nil {
		p.ic.RefreshPodStatus(p.PodProvider, pod, ps)
		return
	}
	p.PodProvider.RefreshPodStatus(pod, ps)
}

// rewritePod returns a SyncPod interceptor that hands the provider a copy of
// the pod with edit applied to every container.
func rewritePod(edit func(*v1.Container)) func(context.Context, kri.PodProvider, *v1.Pod, *pkgcontainer.PodStatus, *kri.ReasonCache) error {
	return func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
		if pod != nil {
			pod = pod.DeepCopy()
			for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
				for i := range list {
					edit(&list[i])
				}
			}
		}
		return next.SyncPod(ctx, pod, st, rc)
	}
}

func podSpecMutants() []*mutant {
	return []*mutant{
		{
			name:      "host-never-pull-ignored",
			violation: "imagePullPolicy Never is ignored: an absent image is pulled (and fails with ErrImagePull)",
			want:      []string{"KRI-POD-057"},
			host: func() fake.Interceptors {
				return fake.Interceptors{SyncPod: rewritePod(func(c *v1.Container) {
					if c.ImagePullPolicy == v1.PullNever {
						c.ImagePullPolicy = v1.PullIfNotPresent
					}
				})}
			},
		},
		{
			name:      "host-pull-failure-as-run-error",
			violation: "a failed image pull is reported as RunContainerError, not ErrImagePull",
			want:      []string{"KRI-POD-058"},
			host: func() fake.Interceptors {
				return fake.Interceptors{
					SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
						err := next.SyncPod(ctx, pod, st, rc)
						if pod == nil || rc == nil {
							return err
						}
						var result pkgcontainer.PodSyncResult
						for _, c := range pod.Spec.Containers {
							if item, ok := rc.Get(pod.UID, c.Name); ok && errors.Is(item.Err, workload.ErrImagePull) {
								r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, c.Name)
								r.Fail(pkgcontainer.ErrRunContainer, item.Message)
								result.AddSyncResult(r)
							}
						}
						if len(result.SyncResults) > 0 {
							rc.Update(pod.UID, result)
						}
						return err
					},
					RefreshPodStatus: refreshEdit(func(cs *v1.ContainerStatus) {
						if w := cs.State.Waiting; w != nil && w.Reason == workload.ErrImagePull.Error() {
							w.Reason = pkgcontainer.ErrRunContainer.Error()
						}
					}),
				}
			},
		},
		{
			name:      "host-env-dropped",
			violation: "the container's env never reaches its process",
			want:      []string{"KRI-POD-059"},
			host: func() fake.Interceptors {
				return fake.Interceptors{SyncPod: rewritePod(func(c *v1.Container) { c.Env = nil })}
			},
		},
		{
			name:      "host-env-unexpanded",
			violation: "$(VAR) in env values, command and args is passed on as it is, not expanded",
			want:      []string{"KRI-POD-059"},
			host: func() fake.Interceptors {
				// Doubling every $ makes the provider's expansion give back
				// the text as it was: no reference is expanded.
				escape := func(ss []string) {
					for i := range ss {
						ss[i] = strings.ReplaceAll(ss[i], "$", "$$")
					}
				}
				return fake.Interceptors{SyncPod: rewritePod(func(c *v1.Container) {
					escape(c.Command)
					escape(c.Args)
					for i := range c.Env {
						c.Env[i].Value = strings.ReplaceAll(c.Env[i].Value, "$", "$$")
					}
				})}
			},
		},
		{
			name:      "host-env-dollar-kept",
			violation: "$$ is not turned into $ ($(VAR) is expanded, but a $$ stays $$)",
			want:      []string{"KRI-POD-059"},
			host: func() fake.Interceptors {
				return fake.Interceptors{SyncPod: rewritePod(func(c *v1.Container) {
					for i := range c.Args {
						c.Args[i] = strings.ReplaceAll(c.Args[i], "$$", "$$$$")
					}
					for i := range c.Command {
						c.Command[i] = strings.ReplaceAll(c.Command[i], "$$", "$$$$")
					}
				})}
			},
		},
		{
			name:      "host-termination-message-dropped",
			violation: "the termination message is never reported",
			want:      []string{"KRI-POD-060", "KRI-POD-061"},
			host: func() fake.Interceptors {
				return fake.Interceptors{
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
			want:      []string{"KRI-POD-061"},
			host: func() fake.Interceptors {
				return fake.Interceptors{SyncPod: rewritePod(func(c *v1.Container) {
					c.TerminationMessagePolicy = v1.TerminationMessageReadFile
				})}
			},
		},
		{
			name:      "host-log-fallback-always",
			violation: "the log tail becomes the message of every container, also one that succeeded or wrote the file",
			want:      []string{"KRI-POD-060", "KRI-POD-061"},
			host: func() fake.Interceptors {
				return fake.Interceptors{GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
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
