package conformance_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/examples/hostprocess"
	"github.com/kri-kit/testkit/examples/hostprocess/hostprocesstest"
	"github.com/kri-kit/testkit/internal/httpd"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// hostBenign is a benign variant on hostprocess.
type hostBenign struct {
	name, freedom string
	// groups are the spec groups whose specs the variant's freedom can
	// reach besides the pod-spec ones (hostBenignVariants sets them from
	// the list the variant is in): its run is focused on those.
	groups []string
	ic     func() interceptor.PodFuncs
	// icLater is ic for interceptors that delay what the provider does
	// and ask for a sync once the delay is over (laterCalls).
	icLater func(*laterCalls) interceptor.PodFuncs
	// state, when set, is the run's State timeout.
	state time.Duration
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
			if b.icLater != nil {
				cfg = hostConfigLater(b.icLater)
			}
			cfg.Timeouts = hostBenignTimeouts()
			if b.state != 0 {
				cfg.Timeouts.State = b.state
			}
			return cfg
		}
	}
}

// TestHostBenignVariantsPass runs the pod suite against each benign
// variant of hostprocess, focused on the pod-spec specs (what the fake
// cannot show) and the variant's own groups, and checks that every spec of
// those that applies passes.
func TestHostBenignVariantsPass(t *testing.T) {
	declared := hostprocesstest.Capabilities()
	hostDeclares := func(s conformance.SpecInfo) bool {
		return s.Provider == "pod" && !slices.ContainsFunc(s.Capabilities, func(c conformance.Capability) bool { return !slices.Contains(declared, c) })
	}
	all := benignWant(t, hostDeclares)
	for _, b := range hostBenignVariants() {
		t.Run(b.name, func(t *testing.T) {
			groups := append([]string{"pod-spec"}, b.groups...)
			want := slices.DeleteFunc(slices.Clone(all), func(id string) bool { return !inGroups(id, groups) })
			r := runHelperSubtest(t, helperHostBenign+b.name, "-ginkgo.label-filter="+labelFilter(groups))
			checkBenignRun(t, b.name, b.freedom, r, want, "pod spec hostprocess declares in groups "+strings.Join(groups, ", "), true)
		})
	}
}

// specGroups returns the spec groups of spec id: its labels but the
// provider, the level, its capabilities and "benchmark".
func specGroups(id string) []string {
	for _, s := range conformance.Catalogue() {
		if s.ID != id {
			continue
		}
		var groups []string
		for _, l := range s.Labels {
			switch {
			case l == s.Provider, l == "must", l == "should", l == "benchmark", strings.HasPrefix(l, "capability:"):
			default:
				groups = append(groups, l)
			}
		}
		return groups
	}
	return nil
}

// inGroups reports whether spec id is in one of groups.
func inGroups(id string, groups []string) bool {
	return slices.ContainsFunc(specGroups(id), func(g string) bool { return slices.Contains(groups, g) })
}

// hostFocus returns the Ginkgo label filter of a host mutant's run: the
// spec groups of the specs it is written for, but "pod-spec", the group of
// every pod-spec spec. A host mutant breaks one feature of a real runtime;
// the specs of other groups are the fake mutants' (and what its violation
// would do to them on a loaded machine proves nothing: underLoad).
func hostFocus(want []string) string {
	var groups []string
	for _, id := range want {
		for _, g := range specGroups(id) {
			if g != "pod-spec" && !slices.Contains(groups, g) {
				groups = append(groups, g)
			}
		}
	}
	return labelFilter(groups)
}

// labelFilter is a Ginkgo label filter matching the specs of any of groups.
func labelFilter(groups []string) string {
	return strings.Join(groups, " || ")
}

// The mutants of the pod-spec specs (KRI-POD-057 on). They decorate the
// hostprocess example, which implements these features with real
// processes, with interceptor.PodFuncs, so that each spec is shown
// to catch what a real runtime gets wrong (the fake passes them too, and
// its own mutants run them). Each runs every pod spec against that
// provider with the capabilities it declares, so it must fail exactly its
// specs there.

// hostConfig runs the suite against hostprocess providers decorated with
// ic() (nil: undecorated), each rooted in a directory of its own that is
// removed when its spec is done (or with the helper's directory). The termination message files of a spec's
// containers are in its provider's directory (the specs run one at a time).
func hostConfig(ic func() interceptor.PodFuncs) conformance.Config {
	if ic == nil {
		return hostConfigLater(nil)
	}
	return hostConfigLater(func(*laterCalls) interceptor.PodFuncs { return ic() })
}

// hostConfigLater is hostConfig for interceptors that ask for syncs of
// their own (laterCalls).
func hostConfigLater(ic func(*laterCalls) interceptor.PodFuncs) conformance.Config {
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
			path, err := hostPath()
			if err != nil {
				return nil, err
			}
			p, err := hostprocess.New(hostprocess.Options{RootDir: dir, Path: path})
			if err != nil || ic == nil {
				return p, err
			}
			return hostIntercepted(p, ic), nil
		},
		Capabilities: hostprocesstest.Capabilities(),
		RuntimeName:  hostprocess.RuntimeName,
		Workloads: conformance.Workloads{
			Port: hostPorts(),
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
	// Calls get 9s and states 18s (the fake's mutants: 6s each): 48 host
	// runs start real processes at once (the kit's httpd stand-in is this
	// test binary). Beside four busy loops an httpd took over 11s to listen
	// (host-poststart-failure-not-restarted then failed KRI-POD-105, whose
	// startup probe allows the State timeout), and at load 23 (helper
	// sessions' builds besides) 10 of 31 host mutants failed KRI-POD-028,
	// whose 8 concurrent pod lifecycles of real processes had calls of 6s.
	cfg.Timeouts, cfg.TimeoutScale = hostMutantTimeouts(nil), 1
	if m.timeouts != nil {
		cfg.Timeouts = *m.timeouts
	}
	return cfg
}

// hostMutantTimeouts are the timeouts of every host mutant's run, unscaled:
// the defaults scaled by mutantScale, with three times the default Call and
// State before scaling, and then edit applied when it is not nil (for a
// mutant that needs a wider window to be seen).
func hostMutantTimeouts(edit func(*conformance.Timeouts)) conformance.Timeouts {
	d := conformance.DefaultTimeouts()
	d.Call, d.State = 3*d.Call, 3*d.State
	for _, v := range []*time.Duration{&d.Call, &d.State, &d.Poll, &d.Stable, &d.ShortRun, &d.GracePeriod} {
		*v = time.Duration(float64(*v) * mutantScale)
	}
	if edit != nil {
		edit(&d)
	}
	return d
}

// hostIntercepted is p with the interceptors ic makes around every method,
// and a laterCalls for them: the agent's handler reaches it (and p) at
// SetPodSyncHandler, and its pending calls end at Stop before p's Stop.
func hostIntercepted(p kri.PodProvider, ic func(*laterCalls) interceptor.PodFuncs) kri.PodProvider {
	later := &laterCalls{}
	return notifyWrapped(interceptor.NewPodProvider(p, ic(later)), nil, later.wrap)
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

// hostPath returns the PATH of the hostprocess runs' containers: a
// directory with the kit's httpd stand-in (this test binary, internal/httpd)
// ahead of the process's own PATH, made once per process in its working
// directory (the temporary directory runHelper gives a helper process,
// which its parent test removes).
var hostPath = sync.OnceValues(func() (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	bin, err := os.MkdirTemp(cwd, "kri-host-bin-")
	if err == nil {
		err = httpd.Install(bin)
	}
	if err != nil {
		return "", err
	}
	return bin + string(os.PathListSeparator) + os.Getenv("PATH"), nil
})

// TestHostMutantsInterceptEveryMethod checks that a host mutant's
// interceptors see every method the suite calls on hostprocess, with
// hostprocess as next, and that its laterCalls gets the agent's handler.
func TestHostMutantsInterceptEveryMethod(t *testing.T) {
	host, err := hostprocess.New(hostprocess.Options{RootDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	var nexts []any
	saw := func(method string, next any) {
		seen = append(seen, method)
		nexts = append(nexts, next)
	}
	var later *laterCalls
	p := hostIntercepted(host, func(l *laterCalls) interceptor.PodFuncs {
		later = l
		return interceptor.PodFuncs{
			SyncPod: func(_ context.Context, next kri.PodProvider, _ *v1.Pod, _ *pkgcontainer.PodStatus, _ *kri.ReasonCache) error {
				saw("SyncPod", next)
				return nil
			},
			KillPod: func(_ context.Context, next kri.PodProvider, _ *v1.Pod, _ pkgcontainer.Pod, _ *int64) error {
				saw("KillPod", next)
				return nil
			},
			DeletePod: func(_ context.Context, next kri.PodProvider, _ *v1.Pod) error {
				saw("DeletePod", next)
				return nil
			},
			CleanupPods: func(_ context.Context, next kri.PodProvider, _ []*v1.Pod, _ []*pkgcontainer.Pod, _ map[types.UID]sets.Empty) error {
				saw("CleanupPods", next)
				return nil
			},
			RefreshPodStatus: func(next kri.PodProvider, _ *v1.Pod, _ *v1.PodStatus) { saw("RefreshPodStatus", next) },
			GetPodStatus: func(_ context.Context, next kri.PodProvider, _ *v1.Pod) (*pkgcontainer.PodStatus, error) {
				saw("GetPodStatus", next)
				return nil, nil
			},
			GetPods: func(_ context.Context, next kri.PodProvider, _ bool) ([]*pkgcontainer.Pod, error) {
				saw("GetPods", next)
				return nil, nil
			},
			Start: func(_ context.Context, next kri.PodProvider) error {
				saw("Start", next)
				return nil
			},
			Stop: func(next kri.PodProvider) {
				saw("Stop", next)
				next.Stop()
			},
			SetPodSyncHandler: func(next kri.PodSyncNotifier, h kri.PodSyncHandler) {
				saw("SetPodSyncHandler", next)
				next.SetPodSyncHandler(h)
			},
		}
	})
	n, ok := p.(kri.PodSyncNotifier)
	if !ok {
		t.Fatal("the host mutant's provider is no kri.PodSyncNotifier, while hostprocess is one")
	}
	var handled atomic.Int64
	n.SetPodSyncHandler(kri.PodSyncHandlerFunc(func(types.UID) { handled.Add(1) }))
	ctx := context.Background()
	pod := &v1.Pod{}
	_ = p.SyncPod(ctx, pod, nil, kri.NewReasonCache())
	_ = p.KillPod(ctx, pod, pkgcontainer.Pod{}, nil)
	_ = p.DeletePod(ctx, pod)
	_ = p.CleanupPods(ctx, nil, nil, nil)
	p.RefreshPodStatus(pod, &v1.PodStatus{})
	_, _ = p.GetPodStatus(ctx, pod)
	_, _ = p.GetPods(ctx, true)
	done, cancel := context.WithCancel(ctx) // a Start that reaches hostprocess returns at once
	cancel()
	_ = p.Start(done)
	p.Stop()

	want := []string{"SetPodSyncHandler", "SyncPod", "KillPod", "DeletePod", "CleanupPods", "RefreshPodStatus", "GetPodStatus", "GetPods", "Start", "Stop"}
	if !slices.Equal(seen, want) {
		t.Errorf("the interceptors saw %v, want every method: %v", seen, want)
	}
	for i, next := range nexts {
		if next != any(host) {
			t.Errorf("%s's next is %T, want hostprocess", seen[i], next)
		}
	}
	later.after("uid-1", 0)
	if handled.Load() != 1 {
		t.Errorf("a laterCalls call reached the agent's handler %d times, want once", handled.Load())
	}
}
