package vk

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The mutants and benign variants of KVK-POD-030..036 (issue 48: bugs of
// VK providers the suite did not catch), appended to mutants and benign.

func init() {
	mutants = append(mutants,
		// A pod IP taken from a pool on every status (a backend that
		// reports the address of its last network event).
		variant{name: "pod-ip-changes-with-every-status", want: []string{"KVK-POD-030"},
			pods: func() node.PodLifecycleHandler {
				var n atomic.Int32
				return statusAltered(true, func(st *corev1.PodStatus) {
					i := n.Add(1)
					st.PodIP = fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
					st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
				})()
			}},
		// GetPods lists only the pods that run (a backend query for
		// running tasks).
		variant{name: "getpods-lists-only-running-pods", want: []string{"KVK-POD-031"},
			pods: asyncAltered(altered{getPods: func(ctx context.Context, b node.PodLifecycleHandler) ([]*corev1.Pod, error) {
				pods, err := b.GetPods(ctx)
				var out []*corev1.Pod
				for _, p := range pods {
					if p.Status.Phase == corev1.PodRunning {
						out = append(out, p)
					}
				}
				return out, err
			}}, nil)},
		// One container ID for every run of a container (the ID of the
		// backend's task definition, not of the run).
		variant{name: "container-id-reused-across-restarts", want: []string{"KVK-POD-032"},
			pods: statusAltered(false, func(st *corev1.PodStatus) {
				for i := range st.ContainerStatuses {
					cs := &st.ContainerStatuses[i]
					cs.ContainerID = runless(cs.ContainerID)
					for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
						if t != nil {
							t.ContainerID = runless(t.ContainerID)
						}
					}
				}
			})},
		// DeletePod stops only a pod the API server marked for deletion
		// (deletionTimestamp set) and answers nil for any other. VK's
		// deleteDanglingPods hands it the provider's own pod too, which
		// has none: the leftover pods of KVK-POD-011 and 031 run on.
		variant{name: "deletepod-ignores-pods-not-marked-for-deletion", want: []string{"KVK-POD-011", "KVK-POD-031", "KVK-POD-033"},
			pods: asyncAltered(altered{deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
				if pod.DeletionTimestamp == nil {
					return nil
				}
				return b.DeletePod(ctx, pod)
			}}, nil)},
		// Notifies pods built from its backend's record, which keeps no
		// UID, and notifies a deleted pod's last status again 45s after
		// DeletePod (a poll loop that reports what it last saw).
		variant{name: "notifies-a-deleted-pods-status-late-without-its-uid", want: []string{"KVK-POD-034"},
			pods: lateNotifier(false)},
		// A backend that reports init containers completed without running
		// them (here: each runs sh -c "exit 0" instead of its command).
		// KVK-POD-020's failing init container then completes too.
		variant{name: "init-containers-completed-without-running", want: []string{"KVK-POD-020", "KVK-POD-035"},
			pods: rewrittenForBackend(func(p *corev1.Pod) {
				for i := range p.Spec.InitContainers {
					c := &p.Spec.InitContainers[i]
					c.Command, c.Args = []string{"sh", "-c", "exit 0"}, nil
				}
			})},
		// Drops the notifications of every other pod while a pod it was
		// asked to delete has not ended (one "draining" flag for the
		// whole backend).
		variant{name: "drops-notifications-while-a-pod-terminates", want: []string{"KVK-POD-036"},
			pods: func() node.PodLifecycleHandler {
				var mu sync.Mutex
				terminating := map[types.UID]bool{}
				return asyncAltered(altered{deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
					mu.Lock()
					terminating[pod.UID] = true
					mu.Unlock()
					err := b.DeletePod(ctx, pod)
					if err != nil {
						mu.Lock()
						delete(terminating, pod.UID)
						mu.Unlock()
					}
					return err
				}}, func(_ context.Context, cb func(*corev1.Pod)) func(*corev1.Pod) {
					return func(p *corev1.Pod) {
						mu.Lock()
						own := terminating[p.UID]
						if own && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
							delete(terminating, p.UID)
						}
						busy := len(terminating) > 0
						mu.Unlock()
						if busy && !own {
							return
						}
						cb(p)
					}
				})()
			}},
	)
	benign = append(benign,
		// No pod IP in a pod's first status (its network not set up yet),
		// the same one in every later status.
		variant{name: "pod-ip-after-the-first-status",
			pods: func() node.PodLifecycleHandler {
				var mu sync.Mutex
				seen := map[types.UID]bool{}
				return asyncAltered(altered{}, func(_ context.Context, cb func(*corev1.Pod)) func(*corev1.Pod) {
					return func(p *corev1.Pod) {
						mu.Lock()
						first := !seen[p.UID]
						seen[p.UID] = true
						mu.Unlock()
						if first {
							p = p.DeepCopy()
							p.Status.PodIP, p.Status.PodIPs = "", nil
						}
						cb(p)
					}
				})()
			}},
		// Notifies a deleted pod's last status again 45s after DeletePod,
		// the pod carrying its UID: the API server refuses it for a pod
		// created again under the name (VK's write names the old UID).
		variant{name: "notifies-a-deleted-pods-status-late-with-its-uid", pods: lateNotifier(true)},
		// Forgets a pod once it has ended (Succeeded or Failed): GetPod and
		// GetPods no longer answer it, as a backend that garbage-collects
		// finished tasks (KVK-POD-031 asks GetPods for every pod the
		// provider still has).
		variant{name: "forgets-pods-once-they-end",
			pods: asyncAltered(altered{
				getPod: func(ctx context.Context, b node.PodLifecycleHandler, ns, name string) (*corev1.Pod, error) {
					p, err := b.GetPod(ctx, ns, name)
					if p != nil && ended(p) {
						return nil, errdefs.NotFoundf("pod %s/%s ended and was forgotten", ns, name)
					}
					return p, err
				},
				getPods: func(ctx context.Context, b node.PodLifecycleHandler) ([]*corev1.Pod, error) {
					pods, err := b.GetPods(ctx)
					return slices.DeleteFunc(pods, ended), err
				}}, nil)},
	)
}

// ended reports whether p's phase is Succeeded or Failed.
func ended(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// runless drops the run number the reference provider ends a container ID
// with (sim://UID/NAME/RUN).
func runless(id string) string {
	if i := strings.LastIndex(id, "/"); strings.HasPrefix(id, "sim://") && i > 0 {
		return id[:i]
	}
	return id
}

// lateNotifier is the async reference provider that notifies a deleted
// pod's last status again 45s after DeletePod; with keepUID false every pod
// it notifies has no UID.
func lateNotifier(keepUID bool) func() node.PodLifecycleHandler {
	return func() node.PodLifecycleHandler {
		var mu sync.Mutex
		last := map[types.UID]*corev1.Pod{} // by the pod's UID: the last status notified
		var notifyCtx context.Context
		var send func(*corev1.Pod)
		return asyncAltered(altered{deletePod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
			if err := b.DeletePod(ctx, pod); err != nil {
				return err
			}
			mu.Lock()
			nctx, cb, uid := notifyCtx, send, pod.UID
			mu.Unlock()
			if cb == nil {
				return nil
			}
			go func() {
				select {
				case <-time.After(45 * time.Second):
				case <-nctx.Done():
					return
				}
				mu.Lock()
				p := last[uid]
				mu.Unlock()
				if p != nil {
					cb(p.DeepCopy())
				}
			}()
			return nil
		}}, func(ctx context.Context, cb func(*corev1.Pod)) func(*corev1.Pod) {
			mu.Lock()
			defer mu.Unlock()
			notifyCtx = ctx
			send = func(p *corev1.Pod) {
				if !keepUID {
					p = p.DeepCopy()
					p.UID = ""
				}
				cb(p)
			}
			return func(p *corev1.Pod) {
				mu.Lock()
				last[p.UID] = p.DeepCopy()
				s := send
				mu.Unlock()
				s(p)
			}
		})()
	}
}
