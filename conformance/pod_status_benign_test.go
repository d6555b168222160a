package conformance_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/distribution/reference"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/internal/k8scompat"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podStatusBenign are the benign variants of the group "status"
// (pod_status.go): the fake taking one freedom each, which the suite must
// pass.
func podStatusBenign() []*benign {
	return []*benign{
		{
			name:    "unprobed-ready-a-second-late",
			freedom: "a running app container without a readiness probe may be reported Ready a moment after it started (a remote backend whose status lags its runtime's), the provider asking for a sync then: here a second",
			podLater: func(_ *fake.PodProvider, later *laterCalls) interceptor.PodFuncs {
				return unprobedReadyAfter(time.Second, later)
			},
		},
		{
			name:    "normalised-images",
			freedom: "the image name as the runtime reports it (containerd: docker.io/library/busybox:1.36 for busybox:1.36)",
			pod:     func(*fake.PodProvider) interceptor.PodFuncs { return imageNormaliser() },
		},
		{
			name:    "remote-statuses",
			freedom: "a remote backend's view: only the newest instance of each container (with its RestartCount), no sandboxes, no active statuses",
			pod:     func(*fake.PodProvider) interceptor.PodFuncs { return remoteView() },
		},
		{
			name:    "getpods-lists-exited-containers",
			freedom: "GetPods(false) listing the exited containers of the pods it lists",
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
					pods, err := next.GetPods(ctx, true)
					if all || err != nil {
						return pods, err
					}
					// The pods GetPods(false) lists: those with a running
					// container or a ready sandbox (listed running).
					running := func(c *pkgcontainer.Container) bool { return c.State == pkgcontainer.ContainerStateRunning }
					return slices.DeleteFunc(pods, func(p *pkgcontainer.Pod) bool {
						return !slices.ContainsFunc(p.Containers, running) && !slices.ContainsFunc(p.Sandboxes, running)
					}), nil
				}}
			},
		},
		{
			name:    "status-identity-of-backend",
			warns:   []string{"KRI-POD-049", "KRI-POD-084"},
			freedom: "GetPodStatus naming the pod by the backend's namespace and an empty UID (read from a label the agent's pod never has)",
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					st.ID, st.Namespace = "", "backend"
				})}
			},
		},
		{
			name:    "container-ids-untyped",
			warns:   []string{"KRI-POD-044", "KRI-POD-086"},
			freedom: "GetPodStatus's container IDs with the API's whole \"type://id\" string as ID and no Type (RefreshPodStatus reports the right ContainerID)",
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
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
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
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
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPods: func(ctx context.Context, next kri.PodProvider, all bool) ([]*pkgcontainer.Pod, error) {
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
			name:    "shuffled-lists",
			freedom: "the order of statuses, sandboxes, pods and containers (kri: \"in no particular order\")",
			pod:     shuffler,
			node: func() interceptor.NodeFuncs {
				conditions, addresses := newShuffler(), newShuffler()
				return interceptor.NodeFuncs{ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
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
			pod:     func(*fake.PodProvider) interceptor.PodFuncs { return idMapper(fake.RuntimeName, digestID) },
		},
		{
			name:    "other-runtime-name",
			freedom: "the runtime name, the Type of every container ID",
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return idMapper("remote-runtime", func(id string) string { return id })
			},
		},
		{
			name:    "extra-fields",
			freedom: "fields the contract does not constrain: IPs, hashes, image IDs, resources of containers without any, mounts, users, sandbox network and labels, a stale sandbox, Ready/Started and pod IPs from RefreshPodStatus",
			pod:     extraFields,
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

func imageNormaliser() interceptor.PodFuncs {
	return interceptor.PodFuncs{
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

func remoteView() interceptor.PodFuncs {
	return interceptor.PodFuncs{
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
func shuffler(*fake.PodProvider) interceptor.PodFuncs {
	statuses, active, sandboxes := newShuffler(), newShuffler(), newShuffler()
	pods, containers, podSandboxes := newShuffler(), newShuffler(), newShuffler()
	apiStatuses, apiInitStatuses := newShuffler(), newShuffler()
	return interceptor.PodFuncs{
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
func idMapper(typ string, mapID func(string) string) interceptor.PodFuncs {
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
	return interceptor.PodFuncs{
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

// extraFields fills in what the contract leaves to the provider.
func extraFields(*fake.PodProvider) interceptor.PodFuncs {
	cpu := resource.MustParse("250m")
	mem := resource.MustParse("64Mi")
	signal := v1.SIGTERM
	return interceptor.PodFuncs{
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
