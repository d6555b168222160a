package conformance_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gtypes "github.com/onsi/ginkgo/v2/types"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/internal/k8scompat"
	"github.com/kri-kit/testkit/kri"
)

// A benign variant is the fake with a change that only uses a freedom the
// contract leaves to providers: the mirror image of a mutant. The suite must
// pass every one of them; a spec that fails one is a bug in the spec (a false
// failure a correct provider would hit).
type benign struct {
	name string
	// freedom says what the contract leaves free that the variant uses.
	freedom string
	// warns are the SHOULD specs the freedom fails, as warnings: specs of
	// intermediate answers no agent path reads, which the variant changes.
	warns []string
	// pod and node build the interceptors of one fresh provider (state lives
	// in the closure); nil leaves that provider as it is. pod may script the
	// fake it decorates.
	pod  func(*fake.PodProvider) fake.Interceptors
	node func() fake.NodeInterceptors
}

// config runs the variant with both providers, every capability and the
// fake's own timeouts (unscaled: timing is where false failures hide).
func (b *benign) config() conformance.Config {
	var podHook func(*fake.PodProvider)
	var nodeHook func(*fake.NodeProvider)
	if b.pod != nil {
		podHook = func(p *fake.PodProvider) { p.SetInterceptors(b.pod(p)) }
	}
	if b.node != nil {
		nodeHook = func(n *fake.NodeProvider) { n.SetInterceptors(b.node()) }
	}
	return fakeConfig(podHook, nodeHook)
}

const helperBenign = "benign:"

func init() {
	for _, b := range benignVariants() {
		extraHelpers[helperBenign+b.name] = b.config
	}
}

// callLatency is what the slow variant adds to every call: far below the
// fake's call timeout (5s) and grace period (1s), above its poll interval.
const callLatency = 25 * time.Millisecond

// startSetup is how long the slow-start variant's Start works before it
// blocks: longer than the fake's stable window, so that specs run while
// Start is still starting.
const startSetup = 300 * time.Millisecond

func benignVariants() []*benign {
	return slices.Concat(fakeFreedoms(), agentFreedoms(), backendFreedoms(), kusciaBackendFreedoms(), resizeFreedoms(), probeFreedoms())
}

// fakeFreedoms are the variants of the fake's own freedoms: orders, IDs,
// timings and fields.
func fakeFreedoms() []*benign {
	return []*benign{
		{
			name:    "shuffled-lists",
			freedom: "the order of statuses, sandboxes, pods and containers (kri: \"in no particular order\")",
			pod:     shuffler,
			node: func() fake.NodeInterceptors {
				conditions, addresses := newShuffler(), newShuffler()
				return fake.NodeInterceptors{ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
					n := next.ConfigureNode(ctx, name)
					if n != nil {
						conditions(n.Status.Conditions)
						addresses(n.Status.Addresses)
					}
					return n
				}}
			},
		},
		{
			name:    "digest-container-ids",
			freedom: "the format of container and sandbox IDs (64 hex digits, as containerd's)",
			pod:     func(*fake.PodProvider) fake.Interceptors { return idMapper(fake.RuntimeName, digestID) },
		},
		{
			name:    "other-runtime-name",
			freedom: "the runtime name, the Type of every container ID",
			pod: func(*fake.PodProvider) fake.Interceptors {
				return idMapper("remote-runtime", func(id string) string { return id })
			},
		},
		{
			name:    "slow-calls",
			freedom: "how long a call takes, within the call timeout",
			pod:     slowPodCalls,
			node:    slowNodeCalls,
		},
		{
			name:    "slow-exits",
			freedom: "how long a container that exits at once takes to do so (a real process needs a few milliseconds)",
			pod:     slowExits,
		},
		{
			name:    "slow-container-starts",
			freedom: "how long a started container stays created before it runs (SyncPod need not wait for it)",
			pod: func(p *fake.PodProvider) fake.Interceptors {
				return scriptEach(p, func(s *fake.ContainerScript, _ v1.Container) { s.StartLatency(containerLatency) })
			},
		},
		{
			name:    "slow-start",
			freedom: "how long Start works before it blocks (calls made meanwhile must work)",
			pod:     slowStart,
		},
		{
			name:    "extra-fields",
			freedom: "fields the contract does not constrain: IPs, hashes, image IDs, resources of containers without any, mounts, users, sandbox network and labels, a stale sandbox, Ready/Started and pod IPs from RefreshPodStatus",
			pod:     extraFields,
		},
	}
}

// containerLatency is how long the slow-exits and slow-container-starts
// variants make a container take: a few poll intervals of the fake's
// timeouts, far below its state timeout.
const containerLatency = 30 * time.Millisecond

// scriptEach is a SyncPod interceptor that scripts every container of each
// pod with script before the fake syncs it.
func scriptEach(p *fake.PodProvider, script func(*fake.ContainerScript, v1.Container)) fake.Interceptors {
	return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
		if pod != nil {
			for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
				script(p.Container(pod.Namespace+"/"+pod.Name, c.Name), c)
			}
		}
		return next.SyncPod(ctx, pod, st, rc)
	}}
}

// exitCommand matches the command of a container that exits at once.
var exitCommand = regexp.MustCompile(`^exit ([0-9]+)$`)

// slowExits makes every container whose command exits at once
// (sh -c "exit N") run for containerLatency first, with the same code. The
// fake's scripts are keyed by pod name, so the script of any other container
// is reset: a pod created again under the same name with another command
// must not inherit it.
func slowExits(p *fake.PodProvider) fake.Interceptors {
	return scriptEach(p, func(s *fake.ContainerScript, c v1.Container) {
		if len(c.Command) == 3 && c.Command[0] == "sh" && c.Command[1] == "-c" {
			if m := exitCommand.FindStringSubmatch(c.Command[2]); m != nil {
				code, _ := strconv.Atoi(m[1])
				s.ExitAfter(containerLatency, code)
				return
			}
		}
		s.Reset()
	})
}

// newShuffler returns a function that reorders a slice in place: every call
// rotates it one step further than the call before, so that two answers in
// a row never share an order (a random shuffle would, now and then, and let
// an order-sensitive spec pass by luck).
func newShuffler() func(any) {
	var mu sync.Mutex
	calls := 0
	return func(s any) {
		mu.Lock()
		calls++
		k := calls
		mu.Unlock()
		switch s := s.(type) {
		case []*pkgcontainer.Status:
			rotate(s, k)
		case []*runtimeapi.PodSandboxStatus:
			rotate(s, k)
		case []*pkgcontainer.Pod:
			rotate(s, k)
		case []*pkgcontainer.Container:
			rotate(s, k)
		case []v1.ContainerStatus:
			rotate(s, k)
		case []v1.NodeCondition:
			rotate(s, k)
		case []v1.NodeAddress:
			rotate(s, k)
		default:
			panic(fmt.Sprintf("newShuffler: cannot shuffle a %T", s))
		}
	}
}

// rotate moves the first k%len(s) elements of s to its end.
func rotate[T any](s []T, k int) {
	if len(s) < 2 {
		return
	}
	k %= len(s)
	slices.Reverse(s[:k])
	slices.Reverse(s[k:])
	slices.Reverse(s)
}

// shuffler reorders every list on every call, each list kind with a
// shuffler of its own (so that consecutive answers to the same question
// differ).
func shuffler(*fake.PodProvider) fake.Interceptors {
	statuses, active, sandboxes := newShuffler(), newShuffler(), newShuffler()
	pods, containers, podSandboxes := newShuffler(), newShuffler(), newShuffler()
	apiStatuses, apiInitStatuses := newShuffler(), newShuffler()
	return fake.Interceptors{
		GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
			statuses(st.ContainerStatuses)
			active(st.ActiveContainerStatuses)
			sandboxes(st.SandboxStatuses)
		}),
		GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
			list, err := next.GetPods(ctx, all)
			pods(list)
			for _, p := range list {
				containers(p.Containers)
				podSandboxes(p.Sandboxes)
			}
			return list, err
		},
		RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
			next.RefreshPodStatus(pod, ps)
			if !unknownPod(context.Background(), next, pod) {
				apiStatuses(ps.ContainerStatuses)
				apiInitStatuses(ps.InitContainerStatuses)
			}
		},
	}
}

// digestID turns one of the fake's IDs into 64 hex digits.
func digestID(id string) string {
	sum := sha256.Sum256([]byte("kri-benign/" + id))
	return hex.EncodeToString(sum[:])
}

// idMapper reports every container and sandbox ID as typ://mapID(id). The
// fake kills by pod UID and ignores SyncPod's status, so nothing handed in
// needs translating back.
func idMapper(typ string, mapID func(string) string) fake.Interceptors {
	cid := func(id pkgcontainer.ContainerID) pkgcontainer.ContainerID {
		if id.ID == "" {
			return id
		}
		return pkgcontainer.ContainerID{Type: typ, ID: mapID(id.ID)}
	}
	apiID := func(s string) string {
		if s == "" {
			return s
		}
		typ, id, ok := strings.Cut(s, "://")
		if !ok {
			return s
		}
		mapped := cid(pkgcontainer.ContainerID{Type: typ, ID: id})
		return mapped.String()
	}
	return fake.Interceptors{
		GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
			for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
				c.ID = cid(c.ID)
			}
			for _, sb := range st.SandboxStatuses {
				sb.Id = mapID(sb.Id)
			}
		}),
		GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
			pods, err := next.GetPods(ctx, all)
			for _, p := range pods {
				for _, c := range slices.Concat(p.Containers, p.Sandboxes) {
					c.ID = cid(c.ID)
					if sandboxID, createdAt, ok := k8scompat.ContainerOrigin(c); ok && sandboxID != "" {
						k8scompat.SetContainerOrigin(c, mapID(sandboxID), createdAt)
					}
				}
			}
			return pods, err
		},
		RefreshPodStatus: refreshEdit(func(cs *v1.ContainerStatus) {
			cs.ContainerID = apiID(cs.ContainerID)
			for _, t := range []*v1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
				if t != nil {
					t.ContainerID = apiID(t.ContainerID)
				}
			}
		}),
	}
}

// pause waits d or until ctx is done.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// slowPodCalls delays every call of the pod provider by callLatency.
func slowPodCalls(*fake.PodProvider) fake.Interceptors {
	return fake.Interceptors{
		SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
			pause(ctx, callLatency)
			return next.SyncPod(ctx, pod, st, rc)
		},
		KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
			pause(ctx, callLatency)
			return next.KillPod(ctx, pod, rp, grace)
		},
		DeletePod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) error {
			pause(ctx, callLatency)
			return next.DeletePod(ctx, pod)
		},
		CleanupPods: func(ctx context.Context, next kri.PodProvider, pods []*v1.Pod, rps []*pkgcontainer.Pod, possibly map[types.UID]sets.Empty) error {
			pause(ctx, callLatency)
			return next.CleanupPods(ctx, pods, rps, possibly)
		},
		RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
			time.Sleep(callLatency)
			next.RefreshPodStatus(pod, ps)
		},
		GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
			pause(ctx, callLatency)
			return next.GetPodStatus(ctx, pod)
		},
		GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
			pause(ctx, callLatency)
			return next.GetPods(ctx, all)
		},
		Stop: func(next kri.PodProvider) {
			time.Sleep(callLatency)
			next.Stop()
		},
	}
}

// slowNodeCalls delays every call of the node provider by callLatency;
// SetStatusUpdateCallback must not block, so it stays fast.
func slowNodeCalls() fake.NodeInterceptors {
	return fake.NodeInterceptors{
		Ping: func(ctx context.Context, next kri.NodeProvider) error {
			pause(ctx, callLatency)
			return next.Ping(ctx)
		},
		ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
			pause(ctx, callLatency)
			return next.ConfigureNode(ctx, name)
		},
		RefreshNodeStatus: func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
			pause(ctx, callLatency)
			return next.RefreshNodeStatus(ctx, st)
		},
	}
}

// slowStart makes Start work for startSetup before it blocks. It stays
// correct: a Stop or a cancelled context during the setup ends Start, and
// Stop returns once Start has.
func slowStart(*fake.PodProvider) fake.Interceptors {
	var mu sync.Mutex
	stopping := make(chan struct{})
	stopped := false
	var done chan struct{} // closed when Start returns; nil before Start
	return fake.Interceptors{
		Start: func(ctx context.Context, next kri.PodProvider) error {
			mu.Lock()
			if done != nil {
				mu.Unlock()
				return next.Start(ctx) // a second Start: the fake's answer
			}
			done = make(chan struct{})
			finished := done
			mu.Unlock()
			defer close(finished)
			t := time.NewTimer(startSetup)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return nil
			case <-stopping:
				return nil
			}
			return next.Start(ctx)
		},
		Stop: func(next kri.PodProvider) {
			mu.Lock()
			if !stopped {
				stopped = true
				close(stopping)
			}
			finished := done
			mu.Unlock()
			next.Stop()
			if finished != nil {
				<-finished
			}
		},
	}
}

// extraFields fills in what the contract leaves to the provider.
func extraFields(*fake.PodProvider) fake.Interceptors {
	cpu := resource.MustParse("250m")
	mem := resource.MustParse("64Mi")
	signal := v1.SIGTERM
	return fake.Interceptors{
		GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
			if len(st.ContainerStatuses) == 0 && len(st.SandboxStatuses) == 0 {
				return // an unknown pod: only ID, name and namespace
			}
			st.IPs = []string{"192.0.2.10", "2001:db8::10"}
			for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
				c.Hash ^= 0x5eed
				c.ImageID = "sha256:" + digestID(c.Image)
				c.ImageRef = c.Image + "@sha256:" + digestID(c.Image)
				c.ImageRuntimeHandler = "benign"
				if c.State == pkgcontainer.ContainerStateRunning {
					c.Message = "running as the benign variant"
					if c.Resources == nil { // resize: those of a container with resources are constrained
						c.Resources = &pkgcontainer.ContainerResources{CPURequest: &cpu, MemoryLimit: &mem}
					}
				}
				c.User = &pkgcontainer.ContainerUser{Linux: &pkgcontainer.LinuxContainerUser{UID: 1000, GID: 1000}}
				c.Mounts = []pkgcontainer.Mount{{Name: "data", ContainerPath: "/data", HostPath: "/var/lib/benign"}}
				c.StopSignal = &signal
			}
			for _, sb := range st.SandboxStatuses {
				sb.Network = &runtimeapi.PodSandboxNetworkStatus{Ip: "192.0.2.10"}
				sb.Labels = map[string]string{"kri-benign": "true"}
				sb.RuntimeHandler = "benign"
			}
			st.SandboxStatuses = append(st.SandboxStatuses, &runtimeapi.PodSandboxStatus{
				Id:       "stale-" + string(st.ID),
				State:    runtimeapi.PodSandboxState_SANDBOX_NOTREADY,
				Metadata: &runtimeapi.PodSandboxMetadata{Name: st.Name, Namespace: st.Namespace, Uid: string(st.ID)},
			})
		}),
		GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
			pods, err := next.GetPods(ctx, all)
			for _, p := range pods {
				k8scompat.SetPodTimestamp(p, time.Now())
				for _, c := range p.Containers {
					c.ImageID = "sha256:" + digestID(c.Image)
					c.ImageRuntimeHandler = "benign"
					c.Hash ^= 0x5eed
				}
			}
			return pods, err
		},
		RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
			next.RefreshPodStatus(pod, ps)
			if unknownPod(context.Background(), next, pod) {
				return // an unknown pod: left unchanged
			}
			ps.PodIP = "192.0.2.10"
			ps.PodIPs = []v1.PodIP{{IP: "192.0.2.10"}, {IP: "2001:db8::10"}}
			ps.HostIP = "198.51.100.1"
			for _, list := range [][]v1.ContainerStatus{ps.ContainerStatuses, ps.InitContainerStatuses} {
				for i := range list {
					cs := &list[i]
					if running := cs.State.Running != nil; !hasProbes(pod, cs.Name) {
						cs.Ready = running // unconstrained without probes
						cs.Started = &running
					}
					cs.ImageID = "sha256:" + digestID(cs.Image)
					if cs.Resources == nil { // resize: those of a container with resources are constrained
						cs.AllocatedResources = v1.ResourceList{v1.ResourceCPU: cpu}
						cs.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: cpu}}
					}
					cs.VolumeMounts = []v1.VolumeMountStatus{{Name: "data", MountPath: "/data"}}
					cs.User = &v1.ContainerUser{Linux: &v1.LinuxContainerUser{UID: 1000, GID: 1000}}
					cs.StopSignal = &signal
				}
			}
		},
	}
}

// TestBenignVariantsPass runs the suite against every benign variant, each
// in its own process, and checks that every spec that applies passes.
func TestBenignVariantsPass(t *testing.T) {
	skipInHelper(t)
	if testing.Short() {
		t.Skip("runs the suite once per variant")
	}
	t.Parallel() // shares the helper slots with TestMutantsAreCaught
	var want []string
	for _, s := range conformance.Catalogue() {
		if !s.Benchmark && fakeDeclares(s) {
			want = append(want, s.ID)
		}
	}
	want = sortIDs(want)
	zoo := benignVariants()
	modes := make([]string, len(zoo))
	for i, b := range zoo {
		modes[i] = helperBenign + b.name
	}
	runs := runHelpers(t, modes, nil)
	for i, b := range zoo {
		t.Run(b.name, func(t *testing.T) {
			checkBenignRun(t, b.name, b.freedom, runs[i], minus(want, b.warns), "non-benchmark spec but its warnings")
			checkWarnings(t, b, runs[i])
		})
	}
}

// checkWarnings checks that variant b fails exactly the SHOULD specs it
// names, each as a warning: the freedom it takes is one a SHOULD spec
// reports.
func checkWarnings(t *testing.T, b *benign, r *helperRun) {
	t.Helper()
	for _, id := range b.warns {
		sr, ok := r.specReport(id)
		if !ok || !sr.State.Is(gtypes.SpecStateSkipped) || !strings.Contains(fmt.Sprint(sr.ReportEntries), "kri:warning") {
			t.Errorf("variant %s (%s): SHOULD spec %s did not warn (state %v): the freedom is no longer seen by it", b.name, b.freedom, id, sr.State)
		}
	}
}

// checkBenignRun checks the run of benign variant name (which takes
// freedom): no spec failed, exactly want passed (wantWhat describes them),
// and the verdict is conformant.
func checkBenignRun(t *testing.T, name, freedom string, r *helperRun, want []string, wantWhat string) {
	t.Helper()
	t.Logf("%s: %s", name, r.took.Round(100*time.Millisecond))
	if r.report == nil {
		t.Fatalf("variant %s (%s): no Ginkgo report; output:\n%s", name, freedom, tail(r.output))
	}
	for _, id := range r.failedIDs() {
		msg := ""
		if sr, ok := r.specReport(id); ok {
			msg = firstLine(sr.Failure.Message)
		}
		t.Errorf("variant %s (%s) fails %s, a false failure: %s", name, freedom, id, msg)
	}
	if passed := r.idsIn(passedState); !slices.Equal(passed, want) {
		t.Errorf("variant %s: specs passed %v\nwant every %s %v\nnot passed: %v", name, passed, wantWhat, want, minus(want, passed))
	}
	if r.err != nil || !strings.Contains(r.summary, "verdict: conformant") {
		t.Errorf("variant %s: the run failed (%v) or its summary is not \"verdict: conformant\":\n%s", name, r.err, r.summary)
	}
}
