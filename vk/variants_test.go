package vk

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-cmp/cmp"
	pkgerrors "github.com/pkg/errors"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kri-kit/testkit/vk/simprovider"
)

// altered is a provider with some of its methods replaced; a nil field
// keeps the base's method. alteredAsync adds NotifyPods, whose callback
// notify may change (nil keeps it).
type altered struct {
	base         node.PodLifecycleHandler
	createPod    func(ctx context.Context, base node.PodLifecycleHandler, pod *corev1.Pod) error
	deletePod    func(ctx context.Context, base node.PodLifecycleHandler, pod *corev1.Pod) error
	getPod       func(ctx context.Context, base node.PodLifecycleHandler, namespace, name string) (*corev1.Pod, error)
	getPodStatus func(ctx context.Context, base node.PodLifecycleHandler, namespace, name string) (*corev1.PodStatus, error)
	getPods      func(ctx context.Context, base node.PodLifecycleHandler) ([]*corev1.Pod, error)
}

// Close closes the base provider (its timers).
func (a *altered) Close() {
	if c, ok := a.base.(interface{ Close() }); ok {
		c.Close()
	}
}

func (a *altered) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	if a.createPod != nil {
		return a.createPod(ctx, a.base, pod)
	}
	return a.base.CreatePod(ctx, pod)
}

func (a *altered) UpdatePod(ctx context.Context, pod *corev1.Pod) error {
	return a.base.UpdatePod(ctx, pod)
}

func (a *altered) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	if a.deletePod != nil {
		return a.deletePod(ctx, a.base, pod)
	}
	return a.base.DeletePod(ctx, pod)
}

func (a *altered) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	if a.getPod != nil {
		return a.getPod(ctx, a.base, namespace, name)
	}
	return a.base.GetPod(ctx, namespace, name)
}

func (a *altered) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	if a.getPodStatus != nil {
		return a.getPodStatus(ctx, a.base, namespace, name)
	}
	return a.base.GetPodStatus(ctx, namespace, name)
}

func (a *altered) GetPods(ctx context.Context) ([]*corev1.Pod, error) {
	if a.getPods != nil {
		return a.getPods(ctx, a.base)
	}
	return a.base.GetPods(ctx)
}

type alteredAsync struct {
	*altered
	notify func(ctx context.Context, cb func(*corev1.Pod)) func(*corev1.Pod)
}

func (a alteredAsync) NotifyPods(ctx context.Context, cb func(*corev1.Pod)) {
	if a.notify != nil {
		cb = a.notify(ctx, cb)
	}
	a.base.(node.PodNotifier).NotifyPods(ctx, cb)
}

func syncAltered(a altered) func() node.PodLifecycleHandler {
	return func() node.PodLifecycleHandler { a := a; a.base = simprovider.New(); return &a }
}

func asyncAltered(a altered, notify func(context.Context, func(*corev1.Pod)) func(*corev1.Pod)) func() node.PodLifecycleHandler {
	return func() node.PodLifecycleHandler {
		a := a
		a.base = simprovider.NewAsync()
		return alteredAsync{&a, notify}
	}
}

// node provider variants

type alteredNode struct {
	ping   func(ctx context.Context, base *simprovider.Node) error
	notify func(ctx context.Context, base *simprovider.Node, cb func(*corev1.Node))
	base   *simprovider.Node
}

func (n *alteredNode) Ping(ctx context.Context) error {
	if n.ping != nil {
		return n.ping(ctx, n.base)
	}
	return n.base.Ping(ctx)
}

func (n *alteredNode) NotifyNodeStatus(ctx context.Context, cb func(*corev1.Node)) {
	if n.notify != nil {
		n.notify(ctx, n.base, cb)
		return
	}
	n.base.NotifyNodeStatus(ctx, cb)
}

// MakeUnhealthy makes the base's backend unhealthy.
func (n *alteredNode) MakeUnhealthy() { n.base.MakeUnhealthy() }

// ReportCondition has the base's backend report c.
func (n *alteredNode) ReportCondition(c corev1.NodeCondition) { n.base.ReportCondition(c) }

// Condition answers the base's condition of type t.
func (n *alteredNode) Condition(t corev1.NodeConditionType) *corev1.NodeCondition {
	return n.base.Condition(t)
}

func nodeAltered(n alteredNode) func() node.NodeProvider {
	return func() node.NodeProvider { n := n; n.base = simprovider.NewNode(); return &n }
}

func notReady(st *corev1.PodStatus) {
	for i := range st.ContainerStatuses {
		st.ContainerStatuses[i].Ready = false
	}
	for i := range st.Conditions {
		if c := &st.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status = corev1.ConditionFalse
		}
	}
}

// statusAltered is the reference provider with f applied to every status
// it reports: through GetPodStatus (sync) or the NotifyPods callback
// (async).
func statusAltered(async bool, f func(*corev1.PodStatus)) func() node.PodLifecycleHandler {
	if async {
		return asyncAltered(altered{}, func(_ context.Context, cb func(*corev1.Pod)) func(*corev1.Pod) {
			return func(p *corev1.Pod) {
				p = p.DeepCopy()
				f(&p.Status)
				cb(p)
			}
		})
	}
	return syncAltered(altered{getPodStatus: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.PodStatus, error) {
		st, err := b.GetPodStatus(ctx, ns, name)
		if st != nil {
			f(st)
		}
		return st, err
	}})
}

// rewrittenForBackend is the async reference provider whose backend gets
// each pod as rewrite changes it, GetPod still answering the containers as
// VK gave them (VK's podsEqual sees no change).
func rewrittenForBackend(rewrite func(*corev1.Pod)) func() node.PodLifecycleHandler {
	return func() node.PodLifecycleHandler {
		var mu sync.Mutex
		given := map[string]corev1.PodSpec{}
		return asyncAltered(altered{
			createPod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
				mu.Lock()
				given[podKey(pod)] = *pod.Spec.DeepCopy()
				mu.Unlock()
				pod = pod.DeepCopy()
				rewrite(pod)
				return b.CreatePod(ctx, pod)
			},
			getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
				p, err := b.GetPod(ctx, ns, name)
				if p != nil {
					mu.Lock()
					spec := given[ns+"/"+name]
					mu.Unlock()
					p.Spec.Containers, p.Spec.InitContainers = spec.Containers, spec.InitContainers
				}
				return p, err
			}}, nil)()
	}
}

// getPodLag is how long laggingGetPod's GetPod answers nil after CreatePod
// returned: shorter than any spec takes to read a pod it ran, longer than
// KVK-POD-004 takes to change it.
const getPodLag = 50 * time.Millisecond

// laggingGetPod is the reference provider whose GetPod reads a cache that
// catches up with CreatePod getPodLag after it returned (an informer over
// the backend); again, if set, is what CreatePod does for a pod the
// backend already has (nil: the reference's CreatePod, which starts
// nothing and answers nil).
func laggingGetPod(async bool, again func(context.Context, node.PodLifecycleHandler, *corev1.Pod) error) func() node.PodLifecycleHandler {
	return func() node.PodLifecycleHandler {
		var mu sync.Mutex
		created := map[string]time.Time{}
		a := altered{
			createPod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
				if p, _ := b.GetPod(ctx, pod.Namespace, pod.Name); p != nil && again != nil {
					return again(ctx, b, pod)
				}
				err := b.CreatePod(ctx, pod)
				mu.Lock()
				if _, ok := created[podKey(pod)]; !ok || err == nil {
					created[podKey(pod)] = time.Now()
				}
				mu.Unlock()
				return err
			},
			getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
				mu.Lock()
				at, ok := created[ns+"/"+name]
				mu.Unlock()
				if ok && time.Since(at) < getPodLag {
					return nil, errdefs.NotFoundf("pod %s/%s is not in the cache yet", ns, name)
				}
				return b.GetPod(ctx, ns, name)
			},
		}
		if async {
			return asyncAltered(a, nil)()
		}
		return syncAltered(a)()
	}
}

// notifierFirst is the reference async provider shaped as VK's mock
// provider (cmd/virtual-kubelet/internal/provider/mock): CreatePod and
// DeletePod call the notifier NotifyPods set, and panic while it is nil.
func notifierFirst() node.PodLifecycleHandler {
	var notifier atomic.Pointer[func(*corev1.Pod)]
	must := func(method string) {
		if notifier.Load() == nil {
			panic(method + " called before NotifyPods: the notifier is nil")
		}
	}
	return asyncAltered(altered{
		createPod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
			must("CreatePod")
			return b.CreatePod(ctx, pod)
		},
		deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
			must("DeletePod")
			return b.DeletePod(ctx, pod)
		}}, func(_ context.Context, cb func(*corev1.Pod)) func(*corev1.Pod) {
		notifier.Store(&cb)
		return cb
	})()
}

// cachedGetPods is the reference async provider whose GetPods answers a
// list it refreshes at most every 2s (PodLifecycleHandler.GetPods: "can be
// cached").
func cachedGetPods() node.PodLifecycleHandler {
	var mu sync.Mutex
	var at time.Time
	var list []*corev1.Pod
	return asyncAltered(altered{getPods: func(ctx context.Context, b node.PodLifecycleHandler) ([]*corev1.Pod, error) {
		mu.Lock()
		defer mu.Unlock()
		if at.IsZero() || time.Since(at) >= 2*time.Second {
			l, err := b.GetPods(ctx)
			if err != nil {
				return nil, err
			}
			list, at = l, time.Now()
		}
		return list, nil
	}}, nil)()
}

// secondPrecision truncates every time of st to the second, as a status
// that went through JSON (metav1.Time marshals RFC 3339 seconds).
func secondPrecision(st *corev1.PodStatus) {
	trunc := func(t *metav1.Time) {
		if t != nil {
			*t = t.Rfc3339Copy()
		}
	}
	trunc(st.StartTime)
	for i := range st.Conditions {
		trunc(&st.Conditions[i].LastProbeTime)
		trunc(&st.Conditions[i].LastTransitionTime)
	}
	for _, css := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range css {
			for _, state := range []*corev1.ContainerState{&css[i].State, &css[i].LastTerminationState} {
				if r := state.Running; r != nil {
					trunc(&r.StartedAt)
				}
				if t := state.Terminated; t != nil {
					trunc(&t.StartedAt)
					trunc(&t.FinishedAt)
				}
			}
		}
	}
}

// pushesEvery is the reference node provider that pushes the node it last
// noticed only every period (a provider that polls its backend).
func pushesEvery(period time.Duration) func() node.NodeProvider {
	return nodeAltered(alteredNode{notify: func(ctx context.Context, base *simprovider.Node, cb func(*corev1.Node)) {
		var mu sync.Mutex
		var latest *corev1.Node
		base.NotifyNodeStatus(ctx, func(n *corev1.Node) {
			mu.Lock()
			latest = n
			mu.Unlock()
		})
		go func() {
			t := time.NewTicker(period)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					mu.Lock()
					n := latest
					latest = nil
					mu.Unlock()
					if n != nil {
						cb(n)
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}})
}

// mutants: each must fail exactly the specs of its want.
var mutants = []variant{
	{name: "containers-never-ready", want: []string{"KVK-POD-001", "KVK-POD-022", "KVK-POD-028"},
		pods: syncAltered(altered{getPodStatus: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.PodStatus, error) {
			st, err := b.GetPodStatus(ctx, ns, name)
			if st != nil {
				notReady(st)
			}
			return st, err
		}})},
	// VK takes the empty pod for one the provider runs and calls UpdatePod
	// instead of CreatePod: no pod ever runs.
	{name: "getpod-answers-an-empty-pod-for-unknown-pods",
		want: []string{"KVK-POD-001", "KVK-POD-002", "KVK-POD-004", "KVK-POD-005", "KVK-POD-007", "KVK-POD-008", "KVK-POD-009", "KVK-POD-010", "KVK-POD-012", "KVK-POD-013",
			"KVK-POD-014", "KVK-POD-015", "KVK-POD-016", "KVK-POD-019", "KVK-POD-020", "KVK-POD-021", "KVK-POD-022", "KVK-POD-023", "KVK-POD-024", "KVK-POD-025", "KVK-POD-027", "KVK-POD-028", "KVK-POD-029",
			// No pod of 030..036 ever runs (the mutant is sync: 034 is skipped).
			"KVK-POD-030", "KVK-POD-031", "KVK-POD-032", "KVK-POD-033", "KVK-POD-035", "KVK-POD-036"},
		pods: syncAltered(altered{getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
			p, err := b.GetPod(ctx, ns, name)
			if p == nil {
				return &corev1.Pod{}, err
			}
			return p, err
		}})},
	{name: "notfound-wrapped-with-percent-w", want: []string{"KVK-POD-003"},
		pods: syncAltered(altered{
			getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
				p, err := b.GetPod(ctx, ns, name)
				if err != nil {
					err = fmt.Errorf("backend lookup: %w", err)
				}
				return p, err
			},
			getPodStatus: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.PodStatus, error) {
				st, err := b.GetPodStatus(ctx, ns, name)
				if err != nil {
					err = fmt.Errorf("backend lookup: %w", err)
				}
				return st, err
			}})},
	// tensile-kube's shape: GetPod reads a cache that lags CreatePod, and
	// CreatePod of a pod the backend has answers AlreadyExists: VK's
	// re-sync in that window publishes the pod Pending/ProviderFailed.
	{name: "getpod-lags-and-createpod-answers-already-exists", want: []string{"KVK-POD-004"},
		pods: laggingGetPod(false, func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
			return fmt.Errorf("pods %q already exists", pod.Name)
		})},
	{name: "getpod-lags-and-createpod-starts-it-again", want: []string{"KVK-POD-004"},
		pods: laggingGetPod(true, func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
			if p, _ := b.GetPod(ctx, pod.Namespace, pod.Name); p != nil {
				_ = b.DeletePod(ctx, p)
			}
			return b.CreatePod(ctx, pod)
		})},
	// tensile-kube's shape: DeletePod answers nil and deletes nothing for
	// a pod without the provider's own label, which CreatePod never asked
	// for: the pod runs on, and no terminal status comes.
	// 031's leftovers, 033's force-deleted pod and 034's first pod lack its label: DeletePod leaves them running.
	{name: "deletepod-ignores-pods-without-its-label", want: []string{"KVK-POD-007", "KVK-POD-010", "KVK-POD-011", "KVK-POD-012", "KVK-POD-017", "KVK-POD-018", "KVK-POD-026", "KVK-POD-031", "KVK-POD-033", "KVK-POD-034"},
		pods: asyncAltered(altered{deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
			if pod.Labels["provider.example/managed"] != "true" {
				return nil
			}
			return b.DeletePod(ctx, pod)
		}}, nil)},
	// interLink's shape: GetPod answers the pod with an annotation of the
	// provider's own (VK's podsEqual sees a change on every sync).
	{name: "getpod-adds-an-annotation", want: []string{"KVK-POD-009"},
		pods: asyncAltered(altered{getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
			p, err := b.GetPod(ctx, ns, name)
			if p != nil {
				if p.Annotations == nil {
					p.Annotations = map[string]string{}
				}
				p.Annotations["provider.example/job-id"] = "42"
			}
			return p, err
		}}, nil)},
	// KVK-POD-012, 017 and 018 delete their pod too, and fail as 005 does.
	// DeletePod of a pod it runs fails: 031's leftovers and 033's pod run on, 034's first pod and 036's deleted pods stay Terminating.
	{name: "deletepod-fails", want: []string{"KVK-POD-005", "KVK-POD-007", "KVK-POD-010", "KVK-POD-011", "KVK-POD-012", "KVK-POD-017", "KVK-POD-018", "KVK-POD-026", "KVK-POD-031", "KVK-POD-033", "KVK-POD-034", "KVK-POD-036"},
		pods: asyncAltered(altered{deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
			if p, _ := b.GetPod(ctx, pod.Namespace, pod.Name); p != nil {
				return errors.New("backend busy, try again later")
			}
			return b.DeletePod(ctx, pod)
		}}, nil)},
	{name: "deletepod-of-an-unknown-pod-answers-a-plain-error", want: []string{"KVK-POD-006"},
		pods: syncAltered(altered{deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
			if err := b.DeletePod(ctx, pod); errdefs.IsNotFound(err) {
				return fmt.Errorf("pod %s/%s: no such pod", pod.Namespace, pod.Name)
			} else {
				return err
			}
		}})},
	// GetPod answers 034's deleted pod for the pod created again under its name: VK never calls CreatePod for it, as in KVK-POD-007.
	{name: "keeps-deleted-pods-in-getpod", want: []string{"KVK-POD-007", "KVK-POD-034"},
		pods: func() node.PodLifecycleHandler {
			var mu sync.Mutex // VK calls DeletePod and GetPod of different pods at once (KVK-POD-036)
			deleted := map[string]*corev1.Pod{}
			return asyncAltered(altered{
				deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
					p, _ := b.GetPod(ctx, pod.Namespace, pod.Name)
					err := b.DeletePod(ctx, pod)
					if p != nil && err == nil {
						simprovider.Terminate(&p.Status, 0, "Completed")
						mu.Lock()
						deleted[podKey(p)] = p
						mu.Unlock()
					}
					return err
				},
				getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
					if p, err := b.GetPod(ctx, ns, name); p != nil {
						return p, err
					}
					mu.Lock()
					p := deleted[ns+"/"+name]
					mu.Unlock()
					if p != nil {
						return p.DeepCopy(), nil
					}
					return b.GetPod(ctx, ns, name)
				}}, nil)()
		}},
	// The pods of KVK-POD-014, 015 and 016 are watched for more than a
	// minute too: VK publishes them Failed/NotFound as it does 008's.
	{name: "getpodstatus-forgets-pods-after-a-minute", want: []string{"KVK-POD-008", "KVK-POD-014", "KVK-POD-015", "KVK-POD-016"},
		pods: syncAltered(altered{getPodStatus: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.PodStatus, error) {
			st, err := b.GetPodStatus(ctx, ns, name)
			if st != nil && st.StartTime != nil && time.Since(st.StartTime.Time) > time.Minute {
				return nil, errdefs.NotFoundf("pod %s/%s is not in the status cache", ns, name)
			}
			return st, err
		}})},
	{name: "getpod-drops-annotations", want: []string{"KVK-POD-009"},
		pods: asyncAltered(altered{getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
			p, err := b.GetPod(ctx, ns, name)
			if p != nil {
				p.Annotations = nil
			}
			return p, err
		}}, nil)},
	// KVK-POD-012, 017 and 018 judge the terminal status of a deleted pod
	// too, and fail as 010 does; it drops every terminal status, so the
	// pods of KVK-POD-020 (restartPolicy Never, init container failed) and
	// 021 (restartPolicy Never, containers exited) are never published
	// Failed either.
	// 031's pod whose container exited 1 is never published Failed.
	{name: "deletepod-notifies-no-terminal-status", want: []string{"KVK-POD-010", "KVK-POD-012", "KVK-POD-017", "KVK-POD-018", "KVK-POD-020", "KVK-POD-021", "KVK-POD-023", "KVK-POD-025", "KVK-POD-026", "KVK-POD-031"},
		pods: asyncAltered(altered{}, func(_ context.Context, cb func(*corev1.Pod)) func(*corev1.Pod) {
			return func(p *corev1.Pod) {
				if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
					return
				}
				cb(p)
			}
		})},
	// 031's leftovers are not listed either.
	{name: "getpods-lists-nothing", want: []string{"KVK-POD-011", "KVK-POD-031"},
		pods: asyncAltered(altered{getPods: func(context.Context, node.PodLifecycleHandler) ([]*corev1.Pod, error) { return nil, nil }}, nil)},
	// A provider that takes each NotifyPods as a fresh start: GetPod no
	// longer answers the pods it got before (the containers run on).
	{name: "getpod-forgets-pods-of-an-earlier-vk", want: []string{"KVK-POD-012"},
		pods: func() node.PodLifecycleHandler {
			var mu sync.Mutex
			generation, bornIn := 0, map[string]int{}
			return asyncAltered(altered{
				createPod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
					mu.Lock()
					if _, ok := bornIn[podKey(pod)]; !ok {
						bornIn[podKey(pod)] = generation
					}
					mu.Unlock()
					return b.CreatePod(ctx, pod)
				},
				deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
					mu.Lock()
					delete(bornIn, podKey(pod))
					mu.Unlock()
					return b.DeletePod(ctx, pod)
				},
				getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
					mu.Lock()
					g, ok := bornIn[ns+"/"+name]
					stale := ok && g < generation
					mu.Unlock()
					if stale {
						return nil, errdefs.NotFoundf("pod %s/%s is not known", ns, name)
					}
					return b.GetPod(ctx, ns, name)
				}}, func(_ context.Context, cb func(*corev1.Pod)) func(*corev1.Pod) {
				mu.Lock()
				generation++
				mu.Unlock()
				return cb
			})()
		}},
	// A provider that keeps the callback of the first NotifyPods: a VK
	// started after it never hears of a status.
	{name: "notifypods-keeps-the-first-callback", want: []string{"KVK-POD-012"},
		pods: func() node.PodLifecycleHandler {
			var once sync.Once
			var first func(*corev1.Pod)
			return asyncAltered(altered{}, func(_ context.Context, cb func(*corev1.Pod)) func(*corev1.Pod) {
				once.Do(func() { first = cb })
				return first
			})()
		}},
	// A provider that answers GetPod from one object per pod, which it
	// overwrites with the pod's current state on every call.
	{name: "getpod-overwrites-its-last-answer", want: []string{"KVK-POD-013"},
		pods: func() node.PodLifecycleHandler {
			var mu sync.Mutex
			last := map[string]*corev1.Pod{}
			return syncAltered(altered{getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
				fresh, err := b.GetPod(ctx, ns, name)
				if fresh == nil {
					return fresh, err
				}
				mu.Lock()
				defer mu.Unlock()
				if l := last[ns+"/"+name]; l != nil {
					*l = *fresh
					return l, err
				}
				last[ns+"/"+name] = fresh
				return fresh, err
			}})()
		}},
	// An async provider that notifies one object per pod, overwritten with
	// each new state.
	{name: "notifies-one-object-per-pod", want: []string{"KVK-POD-013"},
		pods: func() node.PodLifecycleHandler {
			var mu sync.Mutex
			last := map[string]*corev1.Pod{}
			return asyncAltered(altered{}, func(_ context.Context, cb func(*corev1.Pod)) func(*corev1.Pod) {
				return func(p *corev1.Pod) {
					mu.Lock()
					l := last[podKey(p)]
					if l == nil {
						l = p
						last[podKey(p)] = p
					} else {
						*l = *p
					}
					mu.Unlock()
					cb(l)
				}
			})()
		}},
	// 032 waits for restart count 2, reported as 0.
	{name: "restart-count-starts-over", want: []string{"KVK-POD-014", "KVK-POD-032"},
		pods: statusAltered(false, func(st *corev1.PodStatus) {
			for i := range st.ContainerStatuses {
				st.ContainerStatuses[i].RestartCount %= 2
			}
		})},
	{name: "last-termination-state-dropped", want: []string{"KVK-POD-014"},
		pods: statusAltered(true, func(st *corev1.PodStatus) {
			for i := range st.ContainerStatuses {
				st.ContainerStatuses[i].LastTerminationState = corev1.ContainerState{}
			}
		})},
	// The pod reported Failed while a container that failed waits for its
	// restart (a phase computed from exit codes alone).
	// KVK-POD-024's container, killed for its liveness probe (137), waits
	// to restart too.
	// The containers of 032 and 036 that wait to restart have their pods published Failed, and VK never publishes a terminal pod again: no restart is published.
	{name: "pod-failed-while-a-container-waits-to-restart", want: []string{"KVK-POD-015", "KVK-POD-024", "KVK-POD-029", "KVK-POD-032", "KVK-POD-036"},
		pods: statusAltered(false, func(st *corev1.PodStatus) {
			for _, cs := range st.ContainerStatuses {
				if t := cs.LastTerminationState.Terminated; cs.State.Waiting != nil && t != nil && t.ExitCode != 0 {
					st.Phase = corev1.PodFailed
				}
			}
		})},
	// A start failure reported as containerd reports a failed exec:
	// terminated, exit code 128, and the pod Failed.
	// 031's Pending pod, whose container cannot start, is published Failed.
	{name: "failed-start-published-failed", want: []string{"KVK-POD-016", "KVK-POD-031"},
		pods: statusAltered(true, func(st *corev1.PodStatus) {
			for i, cs := range st.ContainerStatuses {
				if w := cs.State.Waiting; w != nil && w.Reason == "RunContainerError" {
					st.ContainerStatuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 128, Reason: "StartError", Message: w.Message}}
					st.Phase = corev1.PodFailed
				}
			}
		})},
	// Every container of a deleted pod reported exit code 0.
	{name: "exit-codes-lost", want: []string{"KVK-POD-017"},
		pods: statusAltered(true, func(st *corev1.PodStatus) {
			for i := range st.ContainerStatuses {
				if t := st.ContainerStatuses[i].State.Terminated; t != nil {
					t.ExitCode, t.Reason = 0, "Completed"
				}
			}
		})},
	// DeletePod gives every container 1s, whatever the pod's grace period.
	{name: "grace-period-ignored", want: []string{"KVK-POD-018"},
		pods: asyncAltered(altered{deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
			pod = pod.DeepCopy()
			pod.DeletionGracePeriodSeconds = new(int64(1))
			return b.DeletePod(ctx, pod)
		}}, nil)},
	// DeletePod takes the pod spec's terminationGracePeriodSeconds, not the
	// deletion's grace period.
	{name: "grace-period-from-the-pod-spec", want: []string{"KVK-POD-018"},
		pods: asyncAltered(altered{deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
			pod = pod.DeepCopy()
			pod.DeletionGracePeriodSeconds = nil
			return b.DeletePod(ctx, pod)
		}}, nil)},
	// The node is never registered: every node spec fails (KVK-NODE-003 at
	// its precondition).
	{name: "ping-fails", want: []string{"KVK-NODE-001", "KVK-NODE-003", "KVK-NODE-004", "KVK-NODE-005", "KVK-NODE-006"},
		nodes: nodeAltered(alteredNode{ping: func(context.Context, *simprovider.Node) error { return errors.New("backend unreachable") }})},
	// A Ping that answers once, then waits on a backend that never answers
	// and ignores its context until VK stops.
	// It fails KVK-NODE-004 too: no Ping reports the unhealthy backend.
	{name: "ping-hangs-after-registration", want: []string{"KVK-NODE-003", "KVK-NODE-004"},
		nodes: func() node.NodeProvider {
			var calls atomic.Int32
			return nodeAltered(alteredNode{ping: func(ctx context.Context, _ *simprovider.Node) error {
				if calls.Add(1) == 1 {
					return nil
				}
				<-ctx.Done()
				return ctx.Err()
			}})()
		}},
	// A Ping that answers nil whatever the backend's health (it checks
	// nothing, or a cache).
	{name: "ping-ignores-backend-health", want: []string{"KVK-NODE-004"},
		nodes: nodeAltered(alteredNode{ping: func(ctx context.Context, _ *simprovider.Node) error { return ctx.Err() }})},
	{name: "notifynodestatus-blocks", want: []string{"KVK-NODE-001", "KVK-NODE-002", "KVK-NODE-003", "KVK-NODE-004", "KVK-NODE-005", "KVK-NODE-006"},
		nodes: nodeAltered(alteredNode{notify: func(ctx context.Context, _ *simprovider.Node, _ func(*corev1.Node)) { <-ctx.Done() }})},
	// A node provider that never pushes (VK's NaiveNodeProvider does so):
	// the backend's conditions never reach the API server.
	{name: "node-status-never-pushed", want: []string{"KVK-NODE-005", "KVK-NODE-006"},
		nodes: nodeAltered(alteredNode{notify: func(context.Context, *simprovider.Node, func(*corev1.Node)) {}})},
	// A node provider that pushes the node it pushed before, not the one
	// with the change (a cache refreshed after the push).
	{name: "node-status-pushed-stale", want: []string{"KVK-NODE-005"},
		nodes: nodeAltered(alteredNode{notify: func(ctx context.Context, base *simprovider.Node, cb func(*corev1.Node)) {
			var mu sync.Mutex
			prev := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}}}
			base.NotifyNodeStatus(ctx, func(n *corev1.Node) {
				mu.Lock()
				stale := prev
				prev = n.DeepCopy()
				mu.Unlock()
				cb(stale)
			})
		}})},
	// A node provider that pushes one object, which it overwrites with
	// each change.
	{name: "node-status-pushes-one-object", want: []string{"KVK-NODE-006"},
		nodes: nodeAltered(alteredNode{notify: func(ctx context.Context, base *simprovider.Node, cb func(*corev1.Node)) {
			var mu sync.Mutex
			var kept *corev1.Node
			base.NotifyNodeStatus(ctx, func(n *corev1.Node) {
				mu.Lock()
				if kept == nil {
					kept = n
				} else {
					*kept = *n
				}
				mu.Unlock()
				cb(kept)
			})
		}})},
	// Init containers the backend drops: the app containers start at once
	// and no InitContainerStatuses are reported (GetPod answers the pod as
	// VK gave it).
	// 035's init container never runs: the app starts at once, with no InitContainerStatuses.
	{name: "init-containers-dropped", want: []string{"KVK-POD-019", "KVK-POD-020", "KVK-POD-035"},
		pods: func() node.PodLifecycleHandler {
			var mu sync.Mutex
			inits := map[string][]corev1.Container{}
			return asyncAltered(altered{
				createPod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
					mu.Lock()
					inits[podKey(pod)] = pod.Spec.InitContainers
					mu.Unlock()
					pod = pod.DeepCopy()
					pod.Spec.InitContainers = nil
					return b.CreatePod(ctx, pod)
				},
				getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
					p, err := b.GetPod(ctx, ns, name)
					if p != nil {
						mu.Lock()
						p.Spec.InitContainers = inits[ns+"/"+name]
						mu.Unlock()
					}
					return p, err
				}}, nil)()
		}},
	// The phase computed from the app containers alone: Running while the
	// init containers run.
	{name: "pod-running-while-initializing", want: []string{"KVK-POD-019"},
		pods: statusAltered(false, func(st *corev1.PodStatus) {
			if st.Phase == corev1.PodPending && len(st.InitContainerStatuses) > 0 {
				st.Phase = corev1.PodRunning
			}
		})},
	// An init container that failed under restartPolicy Never leaves the
	// pod Pending, as if it would be retried.
	{name: "pod-pending-after-its-init-container-failed", want: []string{"KVK-POD-020"},
		pods: statusAltered(true, func(st *corev1.PodStatus) {
			for _, cs := range st.InitContainerStatuses {
				if t := cs.State.Terminated; t != nil && t.ExitCode != 0 && st.Phase == corev1.PodFailed {
					st.Phase = corev1.PodPending
				}
			}
		})},
	// Containers Ready as soon as they run, their readiness probes never
	// run (the reference provider's readiness before it ran them).
	{name: "ready-ignores-the-readiness-probe", want: []string{"KVK-POD-022", "KVK-POD-028"},
		pods: statusAltered(true, func(st *corev1.PodStatus) {
			all := true
			for i := range st.ContainerStatuses {
				cs := &st.ContainerStatuses[i]
				cs.Ready = cs.State.Running != nil
				all = all && cs.Ready
			}
			for i := range st.Conditions {
				if c := &st.Conditions[i]; all && (c.Type == corev1.PodReady || c.Type == corev1.ContainersReady) {
					c.Status = corev1.ConditionTrue
				}
			}
		})},
	// The containers' readiness reported, the pod's Ready condition never
	// set from it.
	{name: "pod-ready-condition-never-true", want: []string{"KVK-POD-022", "KVK-POD-028"},
		pods: statusAltered(false, func(st *corev1.PodStatus) {
			for i := range st.Conditions {
				if c := &st.Conditions[i]; c.Type == corev1.PodReady {
					c.Status = corev1.ConditionFalse
				}
			}
		})},
	// A backend that runs no liveness probe.
	{name: "liveness-probe-ignored", want: []string{"KVK-POD-024"},
		pods: rewrittenForBackend(func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				p.Spec.Containers[i].LivenessProbe = nil
			}
		})},
	// A backend that runs no postStart hook.
	{name: "post-start-hook-ignored", want: []string{"KVK-POD-025", "KVK-POD-027"},
		pods: rewrittenForBackend(func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				if l := p.Spec.Containers[i].Lifecycle; l != nil {
					l.PostStart = nil
				}
			}
		})},
	// A backend that runs postStart hooks but does not act on their
	// failure: the hooks that only fail (sh -c "exit N") are dropped.
	{name: "post-start-failure-ignored", want: []string{"KVK-POD-027"},
		pods: rewrittenForBackend(func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				l := p.Spec.Containers[i].Lifecycle
				if l == nil || l.PostStart == nil || l.PostStart.Exec == nil {
					continue
				}
				if cmd := l.PostStart.Exec.Command; len(cmd) == 3 && strings.HasPrefix(cmd[2], "exit ") {
					l.PostStart = nil
				}
			}
		})},
	// A backend that runs no startup probe.
	{name: "startup-probe-ignored", want: []string{"KVK-POD-028", "KVK-POD-029"},
		pods: rewrittenForBackend(func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				p.Spec.Containers[i].StartupProbe = nil
			}
		})},
	// A backend that runs the readiness probe from the start, not held off
	// by the startup probe (here: the startup probe of a container that has
	// a readiness probe dropped).
	{name: "readiness-not-held-by-the-startup-probe", want: []string{"KVK-POD-028"},
		pods: rewrittenForBackend(func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				if p.Spec.Containers[i].ReadinessProbe != nil {
					p.Spec.Containers[i].StartupProbe = nil
				}
			}
		})},
	// A backend that never kills a container for its startup probe.
	{name: "startup-probe-failure-ignored", want: []string{"KVK-POD-029"},
		pods: rewrittenForBackend(func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				if sp := p.Spec.Containers[i].StartupProbe; sp != nil {
					sp.FailureThreshold = 1 << 30
				}
			}
		})},
	// A backend that runs no preStop hook: DeletePod sends SIGTERM at once.
	{name: "pre-stop-hook-ignored", want: []string{"KVK-POD-026"},
		pods: rewrittenForBackend(func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				if l := p.Spec.Containers[i].Lifecycle; l != nil {
					l.PreStop = nil
				}
			}
		})},
	// A backend that starts each container with no env (its own image's).
	{name: "env-dropped", want: []string{"KVK-POD-023"},
		pods: rewrittenForBackend(func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				p.Spec.Containers[i].Env = nil
			}
		})},
	// A backend that passes the command as written, $(VAR) references
	// unexpanded (they are escaped here, so that the reference provider
	// leaves them).
	{name: "command-refs-not-expanded", want: []string{"KVK-POD-023"},
		pods: rewrittenForBackend(func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				c := &p.Spec.Containers[i]
				for j := range c.Command {
					c.Command[j] = strings.ReplaceAll(c.Command[j], "$(", "$$(")
				}
			}
		})},
	// Termination messages never read from the container.
	{name: "termination-messages-dropped", want: []string{"KVK-POD-021", "KVK-POD-023", "KVK-POD-025", "KVK-POD-026"},
		pods: statusAltered(true, func(st *corev1.PodStatus) {
			for i := range st.ContainerStatuses {
				if t := st.ContainerStatuses[i].State.Terminated; t != nil {
					t.Message = ""
				}
			}
		})},
}

// benign variants: each takes a freedom the contract grants and must pass.
var benign = []variant{
	{name: "unknown-pod-answers-nil-nil",
		pods: syncAltered(altered{
			getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
				p, err := b.GetPod(ctx, ns, name)
				if errdefs.IsNotFound(err) {
					err = nil
				}
				return p, err
			},
			getPodStatus: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.PodStatus, error) {
				st, err := b.GetPodStatus(ctx, ns, name)
				if errdefs.IsNotFound(err) {
					err = nil
				}
				return st, err
			}})},
	{name: "deletepod-of-an-unknown-pod-answers-nil",
		pods: syncAltered(altered{deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
			if err := b.DeletePod(ctx, pod); !errdefs.IsNotFound(err) {
				return err
			}
			return nil
		}})},
	{name: "notfound-wrapped-with-pkg-errors",
		pods: asyncAltered(altered{
			getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
				p, err := b.GetPod(ctx, ns, name)
				return p, pkgerrors.Wrap(err, "backend lookup")
			},
			getPodStatus: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.PodStatus, error) {
				st, err := b.GetPodStatus(ctx, ns, name)
				return st, pkgerrors.Wrap(err, "backend lookup")
			},
			deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
				return pkgerrors.Wrap(b.DeletePod(ctx, pod), "backend delete")
			}}, nil)},
	{name: "notifies-from-a-goroutine-of-its-own",
		pods: asyncAltered(altered{}, func(ctx context.Context, cb func(*corev1.Pod)) func(*corev1.Pod) {
			queue := make(chan *corev1.Pod, 64)
			go func() {
				for {
					select {
					case p := <-queue:
						cb(p)
					case <-ctx.Done():
						return
					}
				}
			}()
			return func(p *corev1.Pod) {
				select {
				case queue <- p:
				case <-ctx.Done():
				}
			}
		})},
	// Answers may be shared ("can be cached", node/podcontroller.go): the
	// same object again while the pod has not changed, a new one once it has.
	{name: "getpod-shares-unchanged-answers",
		pods: func() node.PodLifecycleHandler {
			var mu sync.Mutex
			last := map[string]*corev1.Pod{}
			return asyncAltered(altered{getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
				fresh, err := b.GetPod(ctx, ns, name)
				if fresh == nil {
					return fresh, err
				}
				mu.Lock()
				defer mu.Unlock()
				if l := last[ns+"/"+name]; l != nil && cmp.Equal(l, fresh) {
					return l, err
				}
				last[ns+"/"+name] = fresh
				return fresh, err
			}}, nil)()
		}},
	// A backend that runs each pod once and cannot restart or report exit
	// codes declares none of the capabilities: their specs are skipped.
	{name: "declares-no-capability", caps: []Capability{},
		pods: func() node.PodLifecycleHandler { return simprovider.NewAsync() }},
	// The kubelet puts the runtime's message before the termination
	// message ("<runtime message>: <message>", kuberuntime_container.go
	// convertToKubeContainerStatus).
	{name: "termination-message-after-the-runtimes-message",
		pods: statusAltered(false, func(st *corev1.PodStatus) {
			for i := range st.ContainerStatuses {
				if t := st.ContainerStatuses[i].State.Terminated; t != nil && t.Message != "" {
					t.Message = fmt.Sprintf("exit status %d: %s", t.ExitCode, t.Message)
				}
			}
		})},
	// Hooks that take a second before they write (a hook runs as long as
	// its command does; the kubelet waits for postStart before it reports
	// the container started, and takes preStop's time from the grace
	// period, kuberuntime_container.go startContainer, killContainer).
	{name: "hooks-take-a-second",
		pods: rewrittenForBackend(func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				l := p.Spec.Containers[i].Lifecycle
				if l == nil {
					continue
				}
				for _, h := range []*corev1.LifecycleHandler{l.PostStart, l.PreStop} {
					if h != nil && h.Exec != nil && len(h.Exec.Command) == 3 {
						h.Exec.Command[2] = "sleep 1; " + h.Exec.Command[2]
					}
				}
			}
		})},
	// Probes whose first run comes a second late (the kubelet's probe
	// workers wait a random part of a period before their first run,
	// prober/worker.go run).
	{name: "probes-start-a-second-late",
		pods: rewrittenForBackend(func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				c := &p.Spec.Containers[i]
				for _, pr := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
					if pr != nil {
						pr.InitialDelaySeconds++
					}
				}
			}
		})},
	// Pushes from a goroutine of its own, which ends with NotifyNodeStatus'
	// context.
	{name: "pushes-node-status-from-a-goroutine-of-its-own",
		nodes: nodeAltered(alteredNode{notify: func(ctx context.Context, base *simprovider.Node, cb func(*corev1.Node)) {
			queue := make(chan *corev1.Node, 8)
			go func() {
				for {
					select {
					case n := <-queue:
						cb(n)
					case <-ctx.Done():
						return
					}
				}
			}()
			base.NotifyNodeStatus(ctx, func(n *corev1.Node) {
				select {
				case queue <- n:
				case <-ctx.Done():
				}
			})
		}})},
	// VK's mock provider's shape: GetPod answers the pod once CreatePod
	// returned, and a CreatePod of a pod it runs answers an error (VK never
	// makes one: createOrUpdatePod calls CreatePod only when GetPod
	// answered nil).
	{name: "createpod-again-answers-already-exists",
		pods: syncAltered(altered{createPod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
			if p, _ := b.GetPod(ctx, pod.Namespace, pod.Name); p != nil {
				return fmt.Errorf("pod %s/%s already exists", pod.Namespace, pod.Name)
			}
			return b.CreatePod(ctx, pod)
		}})},
	// GetPod lags CreatePod, and CreatePod of a pod it runs starts nothing
	// and answers nil (the reference's).
	{name: "getpod-lags-createpod", pods: laggingGetPod(false, nil)},
	{name: "notifier-set-only-by-notifypods", pods: notifierFirst},
	{name: "getpods-cached-for-two-seconds", pods: cachedGetPods},
	// Statuses that went through JSON: every time to the second.
	{name: "statuses-at-second-precision", pods: statusAltered(true, secondPrecision)},
	// tensile-kube's shape: NotifyPods starts a goroutine that sleeps 10s
	// before it first looks at its context, then ends.
	{name: "notifypods-goroutine-sleeps-before-checking-its-context",
		pods: asyncAltered(altered{}, func(ctx context.Context, cb func(*corev1.Pod)) func(*corev1.Pod) {
			go func() {
				time.Sleep(10 * time.Second)
				<-ctx.Done()
			}()
			return cb
		})},
	// interLink's shape: the node pushed every 30s, within VK's lease.
	{name: "pushes-its-node-every-30s", nodes: pushesEvery(30 * time.Second)},
	// A node pushed every 90s, the period declared in Config.
	{name: "pushes-its-node-every-90s-period-declared", nodes: pushesEvery(90 * time.Second), nodeStatusPeriod: 90 * time.Second},
	{name: "ping-takes-two-seconds",
		nodes: nodeAltered(alteredNode{ping: func(ctx context.Context, b *simprovider.Node) error {
			select {
			case <-time.After(2 * time.Second):
				return b.Ping(ctx)
			case <-ctx.Done():
				return ctx.Err()
			}
		}})},
}
