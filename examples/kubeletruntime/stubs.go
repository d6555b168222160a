package kubeletruntime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

// What the runtime manager needs from the rest of a kubelet, reduced to
// what a node without volumes, DNS, cgroups or probes has. The kubelet's own
// tests hand the manager similar stubs (kuberuntime's
// fake_kuberuntime_manager.go and pkg/kubelet/container/testing); these are
// small enough to keep the provider free of test packages.

// podStates answers the runtime manager's questions about the pod workers'
// view of a pod (kuberuntime's podStateProvider, which the kubelet's
// podWorkers implement): a pod is removed once DeletePod or CleanupPods let
// it go, so that the garbage collector removes all it left.
type podStates struct {
	mu      sync.Mutex
	removed map[types.UID]struct{}
}

func newPodStates() *podStates { return &podStates{removed: map[types.UID]struct{}{}} }

func (s *podStates) isRemoved(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.removed[uid]
	return ok
}

func (s *podStates) markRemoved(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removed[uid] = struct{}{}
}

// revive takes uid back: the pod is synced again.
func (s *podStates) revive(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.removed, uid)
}

// prune forgets removed pods that are no longer among all, the pods the
// runtime still has something of.
func (s *podStates) prune(all []*pkgcontainer.Pod) {
	left := make(map[types.UID]bool, len(all))
	for _, p := range all {
		left[p.ID] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid := range s.removed {
		if !left[uid] {
			delete(s.removed, uid)
		}
	}
}

func (s *podStates) IsPodTerminationRequested(uid types.UID) bool { return s.isRemoved(uid) }
func (s *podStates) ShouldPodContentBeRemoved(uid types.UID) bool { return s.isRemoved(uid) }
func (s *podStates) ShouldPodRuntimeBeRemoved(uid types.UID) bool { return s.isRemoved(uid) }

// confinedOS is the real file system under root and an empty one elsewhere:
// the runtime manager keeps its checkpoint and pod log directories under
// root, and its legacy log symlinks in /var/log/containers, which a test
// must not touch, see nothing and are not created.
type confinedOS struct {
	root string
}

var _ pkgcontainer.OSInterface = confinedOS{}

var errOutside = errors.New("outside the provider's root directory")

// inside reports whether path lies under the root.
func (o confinedOS) inside(path string) bool {
	rel, err := filepath.Rel(o.root, filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func (o confinedOS) pathErr(op, path string) error {
	return &fs.PathError{Op: op, Path: path, Err: fs.ErrNotExist}
}

func (o confinedOS) MkdirAll(path string, perm os.FileMode) error {
	if !o.inside(path) {
		return &fs.PathError{Op: "mkdir", Path: path, Err: errOutside}
	}
	return os.MkdirAll(path, perm)
}

func (o confinedOS) Symlink(oldname, newname string) error {
	if !o.inside(newname) {
		return &os.LinkError{Op: "symlink", Old: oldname, New: newname, Err: errOutside}
	}
	return os.Symlink(oldname, newname)
}

func (o confinedOS) Stat(path string) (os.FileInfo, error) {
	if !o.inside(path) {
		return nil, o.pathErr("stat", path)
	}
	return os.Stat(path)
}

func (o confinedOS) Remove(path string) error {
	if !o.inside(path) {
		return o.pathErr("remove", path)
	}
	return os.Remove(path)
}

func (o confinedOS) RemoveAll(path string) error {
	if !o.inside(path) {
		return nil // nothing there
	}
	return os.RemoveAll(path)
}

func (o confinedOS) Create(path string) (*os.File, error) {
	if !o.inside(path) {
		return nil, &fs.PathError{Op: "create", Path: path, Err: errOutside}
	}
	return os.Create(path)
}

func (o confinedOS) Chmod(path string, perm os.FileMode) error {
	if !o.inside(path) {
		return o.pathErr("chmod", path)
	}
	return os.Chmod(path, perm)
}

func (o confinedOS) Hostname() (string, error) { return "kubeletruntime", nil }

func (o confinedOS) Chtimes(path string, atime, mtime time.Time) error {
	if !o.inside(path) {
		return o.pathErr("chtimes", path)
	}
	return os.Chtimes(path, atime, mtime)
}

func (o confinedOS) Pipe() (*os.File, *os.File, error) { return os.Pipe() }

func (o confinedOS) ReadDir(dirname string) ([]os.DirEntry, error) {
	if !o.inside(dirname) {
		return nil, o.pathErr("readdir", dirname)
	}
	return os.ReadDir(dirname)
}

func (o confinedOS) Glob(pattern string) ([]string, error) {
	if !o.inside(filepath.Dir(pattern)) {
		return nil, nil
	}
	return filepath.Glob(pattern)
}

func (o confinedOS) Open(name string) (*os.File, error) {
	if !o.inside(name) {
		return nil, o.pathErr("open", name)
	}
	return os.Open(name)
}

func (o confinedOS) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if !o.inside(name) {
		return nil, o.pathErr("open", name)
	}
	return os.OpenFile(name, flag, perm)
}

func (o confinedOS) Rename(oldpath, newpath string) error {
	if !o.inside(oldpath) || !o.inside(newpath) {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: errOutside}
	}
	return os.Rename(oldpath, newpath)
}

// runtimeHelper is what the kubelet itself gives the runtime manager
// (pkgcontainer.RuntimeHelper), for a node without volumes, DNS, cgroups,
// user namespaces or dynamic resources.
type runtimeHelper struct {
	root string
	// reinspect is told of the pods RequestPodReinspect names (the
	// provider's Notify, set by New).
	reinspect func(types.UID)
}

var _ pkgcontainer.RuntimeHelper = (*runtimeHelper)(nil)

// GenerateRunContainerOptions gives the container what the kubelet's own
// GenerateRunContainerOptions gives it on a node without volumes, DNS or
// services: its environment, each value with $(VAR) references to the
// variables before it expanded (the kubelet's makeEnvironmentVariables;
// valueFrom and envFrom need an API server and are refused), and its
// directory under the pod's, in which the runtime manager creates the host
// file it mounts at terminationMessagePath (makeMounts) and from which it
// reads the termination message (getTerminationMessage).
func (h *runtimeHelper) GenerateRunContainerOptions(_ context.Context, pod *v1.Pod, c *v1.Container, _ string, _ []string, _ pkgcontainer.ImageVolumes) (*pkgcontainer.RunContainerOptions, func(), error) {
	opts := &pkgcontainer.RunContainerOptions{}
	if len(c.EnvFrom) > 0 {
		return nil, nil, fmt.Errorf("container %q uses envFrom, which this provider cannot resolve (no API server)", c.Name)
	}
	values := make(map[string]string, len(c.Env))
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			return nil, nil, fmt.Errorf("container %q: env %q uses valueFrom, which this provider cannot resolve (no API server)", c.Name, e.Name)
		}
		value := expansion.Expand(e.Value, expansion.MappingFuncFor(values))
		values[e.Name] = value
		opts.Envs = append(opts.Envs, pkgcontainer.EnvVar{Name: e.Name, Value: value})
	}
	if pod != nil {
		dir := filepath.Join(h.GetPodDir(pod.UID), "containers", c.Name)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, nil, err
		}
		opts.PodContainerDir = dir
	}
	return opts, nil, nil
}

func (h *runtimeHelper) GetPodDNS(context.Context, *v1.Pod) (*runtimeapi.DNSConfig, error) {
	return &runtimeapi.DNSConfig{}, nil
}

func (h *runtimeHelper) GetPodCgroupParent(*v1.Pod) string { return "" }

func (h *runtimeHelper) GetPodDir(uid types.UID) string {
	return filepath.Join(h.root, "pods", string(uid))
}

// GeneratePodHostNameAndDomain names the sandbox after the pod, cut to the
// 63 characters of a DNS label as the kubelet does.
func (h *runtimeHelper) GeneratePodHostNameAndDomain(_ klog.Logger, pod *v1.Pod) (string, string, error) {
	name := pod.Name
	if pod.Spec.Hostname != "" {
		name = pod.Spec.Hostname
	}
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-.")
	}
	if name == "" {
		return "", "", fmt.Errorf("pod %s/%s has no name to derive a hostname from", pod.Namespace, pod.Name)
	}
	return name, "", nil
}

func (h *runtimeHelper) GetExtraSupplementalGroupsForPod(*v1.Pod) []int64 { return nil }

func (h *runtimeHelper) GetOrCreateUserNamespaceMappings(_ klog.Logger, pod *v1.Pod, _ string) (*runtimeapi.UserNamespace, error) {
	if pod != nil && pod.Spec.HostUsers != nil && !*pod.Spec.HostUsers {
		return nil, errors.New("user namespaces are not supported by this provider")
	}
	return nil, nil
}

func (h *runtimeHelper) PrepareDynamicResources(context.Context, *v1.Pod) error   { return nil }
func (h *runtimeHelper) UnprepareDynamicResources(context.Context, *v1.Pod) error { return nil }

// RequestPodReinspect is what the runtime manager calls once it has resized a
// pod in place (kuberuntime_manager.go doPodResizeAction): the kubelet's PLEG
// then reinspects the pod (kubelet.go RequestPodReinspect), since a resize
// changes no container's state and makes no PLEG event. Here the agent is
// asked for a sync, which publishes the new resources.
func (h *runtimeHelper) RequestPodReinspect(uid types.UID) {
	if h.reinspect != nil {
		h.reinspect(uid)
	}
}

func (h *runtimeHelper) PodCPUAndMemoryStats(context.Context, *v1.Pod, *pkgcontainer.PodStatus) (*statsapi.PodStats, error) {
	return nil, errors.New("pod stats are not supported by this provider")
}

func (h *runtimeHelper) OnPodSandboxReady(context.Context, *v1.Pod) error { return nil }

func (h *runtimeHelper) ResizeEphemeralVolume(*v1.Pod, string, *resource.Quantity) error {
	return errors.New("volumes are not supported by this provider")
}

// noPullTimes drops the image pull timings the kubelet records for its
// pod startup latency metric.
type noPullTimes struct{}

func (noPullTimes) RecordImageStartedPulling(types.UID)  {}
func (noPullTimes) RecordImageFinishedPulling(types.UID) {}
