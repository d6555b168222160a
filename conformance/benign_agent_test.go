package conformance_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/distribution/reference"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// The freedoms found by grounding the contract in the node agent: what the
// kubelet's runtime manager and remote-backend providers do differently
// from the fake, and the agent does not mind.
func agentFreedoms() []*benign {
	return []*benign{
		{
			name:    "normalised-images",
			freedom: "the image name as the runtime reports it (containerd: docker.io/library/busybox:1.36 for busybox:1.36)",
			pod:     func(*fake.PodProvider) fake.Interceptors { return imageNormaliser() },
		},
		{
			name:    "remote-statuses",
			freedom: "a remote backend's view: only the newest instance of each container (with its RestartCount), no sandboxes, no active statuses",
			pod:     func(*fake.PodProvider) fake.Interceptors { return remoteView() },
		},
		{
			name:    "refine-only-refresh",
			freedom: "RefreshPodStatus that only refines the agent's status (Ready and Started, as the kubelet's prober does)",
			pod:     func(*fake.PodProvider) fake.Interceptors { return refineOnly() },
		},
		{
			name:    "crash-loop-backoff",
			freedom: "restarts delayed by a back-off, reported to the ReasonCache as CrashLoopBackOff (the kubelet's runtime: 10s doubling)",
			pod:     func(*fake.PodProvider) fake.Interceptors { return crashLoopBackOff() },
		},
		{
			name:    "delete-then-collect-later",
			freedom: "dead containers collected a while after DeletePod (the kubelet's runtime has no DeletePod; its GC runs later)",
			pod:     func(*fake.PodProvider) fake.Interceptors { return collectLater() },
		},
		{
			name:    "getpods-lists-exited-containers",
			freedom: "GetPods(false) listing the exited containers of the pods it lists",
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
					pods, err := next.GetPods(ctx, true)
					if all || err != nil {
						return pods, err
					}
					return slices.DeleteFunc(pods, func(p *pkgcontainer.Pod) bool {
						return !slices.ContainsFunc(p.Containers, func(c *pkgcontainer.Container) bool { return c.State == pkgcontainer.ContainerStateRunning })
					}), nil
				}}
			},
		},
		{
			name:    "minimum-grace",
			freedom: "a minimum grace period of the provider's own (the kubelet's runtime never gives less than 2 seconds)",
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					const floor = 2
					g := int64(floor)
					switch {
					case grace != nil:
						g = max(*grace, floor)
					case pod != nil && pod.DeletionGracePeriodSeconds != nil:
						g = max(*pod.DeletionGracePeriodSeconds, floor)
					case pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil:
						g = max(*pod.Spec.TerminationGracePeriodSeconds, floor)
					}
					return next.KillPod(ctx, pod, rp, &g)
				}}
			},
		},
	}
}

// normalised returns image as containerd reports it, or image when it does
// not parse.
func normalised(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return image
	}
	return reference.TagNameOnly(named).String()
}

func imageNormaliser() fake.Interceptors {
	return fake.Interceptors{
		GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
			for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
				c.Image = normalised(c.Image)
			}
		}),
		GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
			pods, err := next.GetPods(ctx, all)
			for _, p := range pods {
				for _, c := range p.Containers {
					c.Image = normalised(c.Image)
				}
			}
			return pods, err
		},
		RefreshPodStatus: refreshEdit(func(cs *v1.ContainerStatus) { cs.Image = normalised(cs.Image) }),
	}
}

// newestInstance returns the newest instance of container name in ss, or nil.
func newestInstance(ss []*pkgcontainer.Status, name string) *pkgcontainer.Status {
	var newest *pkgcontainer.Status
	for _, s := range ss {
		if s.Name == name && (newest == nil || s.CreatedAt.After(newest.CreatedAt)) {
			newest = s
		}
	}
	return newest
}

// newestOnly keeps the newest instance of each container name.
func newestOnly(ss []*pkgcontainer.Status) []*pkgcontainer.Status {
	newest := map[string]*pkgcontainer.Status{}
	for _, s := range ss {
		if n := newest[s.Name]; n == nil || s.CreatedAt.After(n.CreatedAt) {
			newest[s.Name] = s
		}
	}
	return slices.DeleteFunc(ss, func(s *pkgcontainer.Status) bool { return newest[s.Name] != s })
}

func remoteView() fake.Interceptors {
	return fake.Interceptors{
		GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
			st.ContainerStatuses = newestOnly(st.ContainerStatuses)
			st.ActiveContainerStatuses, st.SandboxStatuses = nil, nil
		}),
		GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
			pods, err := next.GetPods(ctx, all)
			for _, p := range pods {
				p.Sandboxes = nil
				keepNewestListed(p)
			}
			return pods, err
		},
	}
}

// refineOnly sets Ready and Started of the statuses the agent built, as the
// kubelet's prober manager does for containers without probes (for every
// pod, known or not: UpdatePodStatus looks at no runtime), and leaves
// everything else as it was handed in. Containers with probes get the
// provider's probe results.
func refineOnly() fake.Interceptors {
	return fake.Interceptors{RefreshPodStatus: func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
		probed := probeResults(next, pod, ps) // containers with probes: the provider's results
		for _, list := range [][]v1.ContainerStatus{ps.ContainerStatuses, ps.InitContainerStatuses} {
			for i := range list {
				if probed(&list[i]) {
					continue
				}
				running := list[i].State.Running != nil
				list[i].Started = &running
				list[i].Ready = running
			}
		}
	}}
}

// Back-off of the crash-loop-backoff variant: short enough for the suite's
// state timeouts, long enough that several syncs hit it.
const (
	backOffFirst = 100 * time.Millisecond
	backOffMax   = 800 * time.Millisecond
)

// crashLoopBackOff delays the restart of an exited container: once the fake
// would restart it, SyncPod refuses for a back-off (doubling per restart),
// reports CrashLoopBackOff for it to the ReasonCache and returns nil, as
// kuscia's CRIProvider turns back-off-only failures into nil.
func crashLoopBackOff() fake.Interceptors {
	type key struct {
		uid  types.UID
		name string
	}
	type backOff struct {
		exitedID pkgcontainer.ContainerID // the exited run the back-off is for
		until    time.Time
		delay    time.Duration
	}
	var mu sync.Mutex
	state := map[key]*backOff{}
	return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
		if pod == nil || rc == nil || pod.Spec.RestartPolicy == v1.RestartPolicyNever {
			return next.SyncPod(ctx, pod, st, rc)
		}
		cur, err := next.GetPodStatus(ctx, pod)
		if err != nil || cur == nil {
			return next.SyncPod(ctx, pod, st, rc)
		}
		now := time.Now()
		var waiting []string
		mu.Lock()
		for _, c := range pod.Spec.Containers {
			n := newestInstance(cur.ContainerStatuses, c.Name)
			if n == nil || n.State != pkgcontainer.ContainerStateExited {
				continue
			}
			if pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure && n.ExitCode == 0 {
				continue
			}
			k := key{pod.UID, c.Name}
			b := state[k]
			switch {
			case b == nil:
				b = &backOff{exitedID: n.ID, until: now.Add(backOffFirst), delay: backOffFirst}
				state[k] = b
			case b.exitedID != n.ID:
				b.delay = min(2*b.delay, backOffMax)
				b.exitedID, b.until = n.ID, now.Add(b.delay)
			}
			if now.Before(b.until) {
				waiting = append(waiting, c.Name)
			}
		}
		mu.Unlock()
		if len(waiting) == 0 {
			return next.SyncPod(ctx, pod, st, rc)
		}
		held := pod.DeepCopy()
		held.Spec.RestartPolicy = v1.RestartPolicyNever
		if err := next.SyncPod(ctx, held, st, rc); err != nil {
			return err
		}
		var result pkgcontainer.PodSyncResult
		for _, name := range waiting {
			r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, name)
			r.Fail(pkgcontainer.ErrCrashLoopBackOff, "back-off restarting failed container "+name)
			result.AddSyncResult(r)
		}
		rc.Update(pod.UID, result)
		return nil
	}}
}

// collectDelay is how long the delete-then-collect-later variant keeps a
// deleted pod's dead containers.
const collectDelay = 300 * time.Millisecond

// collectLater makes DeletePod stop the pod's containers at once (a kill
// with grace 0) and forget the pod only collectDelay later.
func collectLater() fake.Interceptors {
	return fake.Interceptors{DeletePod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) error {
		if pod == nil {
			return next.DeletePod(ctx, pod)
		}
		zero := int64(0)
		if err := next.KillPod(ctx, pod, pkgcontainer.Pod{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}, &zero); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		pod = pod.DeepCopy()
		time.AfterFunc(collectDelay, func() { _ = next.DeletePod(context.Background(), pod) })
		return nil
	}}
}

// keepNewestListed drops from a pod the fake's GetPods listed all but the
// newest container of each name: the fake lists a pod's containers newest
// first (Container.CreatedAt, which would tell, exists only from
// Kubernetes 1.36 on).
func keepNewestListed(p *pkgcontainer.Pod) {
	seen := map[string]bool{}
	p.Containers = slices.DeleteFunc(p.Containers, func(c *pkgcontainer.Container) bool {
		dup := seen[c.Name]
		seen[c.Name] = true
		return dup
	})
}
