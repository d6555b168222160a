package conformance_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podSyncBenign are the benign variants of the group "sync" (pod_sync.go): the
// fake taking one freedom each, which the suite must pass.
func podSyncBenign() []*benign {
	return []*benign{
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
			pod: func(p *fake.PodProvider) interceptor.PodFuncs {
				return scriptEach(p, func(s *fake.ContainerScript, _ v1.Container) { s.StartLatency(containerLatency) })
			},
		},
	}
}

// callLatency is what the slow variant adds to every call: far below the
// fake's call timeout (5s) and grace period (1s), above its poll interval.
const callLatency = 25 * time.Millisecond

// containerLatency is how long the slow-exits and slow-container-starts
// variants make a container take: a few poll intervals of the fake's
// timeouts, far below its state timeout.
const containerLatency = 30 * time.Millisecond

// scriptEach is a SyncPod interceptor that scripts every container of each
// pod with script before the fake syncs it.
func scriptEach(p *fake.PodProvider, script func(*fake.ContainerScript, v1.Container)) interceptor.PodFuncs {
	return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
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
func slowExits(p *fake.PodProvider) interceptor.PodFuncs {
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
func slowPodCalls(*fake.PodProvider) interceptor.PodFuncs {
	return interceptor.PodFuncs{
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
func slowNodeCalls() interceptor.NodeFuncs {
	return interceptor.NodeFuncs{
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
