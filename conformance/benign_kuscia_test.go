package conformance_test

import (
	"context"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// kusciaBackendFreedoms are what kuscia's K8sProvider
// (pkg/agent/provider/pod/k8s_provider.go) does that kuscia's agent never
// reads, each as a change to the fake: the suite judges what the agent
// publishes and decides, so every one of them must pass. The provider's real
// bugs are mutants (mutants_kuscia_test.go).
func kusciaBackendFreedoms() []*benign {
	return []*benign{
		{
			name:    "start-failures-in-refresh-only",
			warns:   []string{"KRI-POD-034", "KRI-POD-085"},
			freedom: "a failed start neither written to the ReasonCache nor returned by SyncPod, the Waiting reason coming from RefreshPodStatus (the backend's status)",
			pod:     func(*fake.PodProvider) fake.Interceptors { return startFailuresInRefreshOnly() },
		},
		{
			name:    "status-identity-of-backend",
			warns:   []string{"KRI-POD-049", "KRI-POD-084"},
			freedom: "GetPodStatus naming the pod by the backend's namespace and an empty UID (read from a label the agent's pod never has)",
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					st.ID, st.Namespace = "", "backend"
				})}
			},
		},
		{
			name:    "container-ids-untyped",
			warns:   []string{"KRI-POD-044", "KRI-POD-086"},
			freedom: "GetPodStatus's container IDs with the API's whole \"type://id\" string as ID and no Type (RefreshPodStatus reports the right ContainerID)",
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					for _, list := range [][]*pkgcontainer.Status{st.ContainerStatuses, st.ActiveContainerStatuses} {
						for _, c := range list {
							c.ID = pkgcontainer.ContainerID{ID: c.ID.String()}
						}
					}
				})}
			},
		},
		{
			name:    "single-instances-without-created-at",
			freedom: "one instance per container (the newest, with its RestartCount) and no CreatedAt, as converted from a backend pod's API status",
			pod: func(*fake.PodProvider) fake.Interceptors {
				in := remoteView()
				view := in.GetPodStatus
				in.GetPodStatus = func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
					st, err := view(ctx, next, pod)
					if st != nil {
						for _, c := range st.ContainerStatuses {
							c.CreatedAt = time.Time{}
						}
					}
					return st, err
				}
				return in
			},
		},
		{
			name:    "getpods-by-uid-only",
			warns:   []string{"KRI-POD-044", "KRI-POD-086"},
			freedom: "GetPods naming pods by UID in the backend's namespace, with the containers of their spec and neither IDs nor states",
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
					pods, err := next.GetPods(ctx, all)
					for _, p := range pods {
						p.Namespace, p.Sandboxes = "backend", nil
						seen := map[string]bool{}
						p.Containers = slices.DeleteFunc(p.Containers, func(c *pkgcontainer.Container) bool {
							dup := seen[c.Name]
							seen[c.Name] = true
							return dup
						})
						for i, c := range p.Containers {
							p.Containers[i] = &pkgcontainer.Container{Name: c.Name, Image: c.Image}
						}
					}
					return pods, err
				}}
			},
		},
		{
			name:    "stop-leaves-start-to-context",
			warns:   []string{"KRI-POD-030"},
			freedom: "Stop that does nothing, Start ending only when its context is done (kuscia's agent cancels it before Stop)",
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{
					Start: func(ctx context.Context, next kri.PodProvider) error {
						err := next.Start(ctx)
						next.Stop() // what the fake holds goes once Start has ended
						return err
					},
					Stop: func(kri.PodProvider) {},
				}
			},
		},
	}
}

// startFailuresInRefreshOnly hands SyncPod a ReasonCache of its own and
// swallows the error of a failed start: the agent learns of the failure
// only from RefreshPodStatus, which the fake fills with the failure's
// Waiting reason, as a backend cluster's status carries it.
func startFailuresInRefreshOnly() fake.Interceptors {
	return fake.Interceptors{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
		own := kri.NewReasonCache()
		err := next.SyncPod(ctx, pod, st, own)
		if err != nil && pod != nil {
			for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
				if _, failed := own.Get(pod.UID, c.Name); failed {
					return nil
				}
			}
		}
		return err
	}}
}
