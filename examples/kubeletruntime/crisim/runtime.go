package crisim

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/distribution/reference"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critest "k8s.io/cri-api/pkg/apis/testing"

	"github.com/kri-kit/testkit/sim/workload"
)

// The exit code and reason containerd gives a container whose start failed
// (internal/cri/server/container_start.go: errorStartExitCode,
// errorStartReason): workload.ExitCodeStartError and
// workload.ReasonStartError.
const (
	StartErrorExitCode = workload.ExitCodeStartError
	StartErrorReason   = workload.ReasonStartError
)

// Options configure a RuntimeService.
type Options struct {
	// NormalizeImages makes the runtime report every container's image by
	// its fully qualified name, as containerd and CRI-O do: the
	// ContainerStatus and ListContainers of a container created from
	// "busybox:1.36" name "docker.io/library/busybox:1.36". Without it the
	// image is reported as the CreateContainer request named it, as the
	// passive fake does.
	NormalizeImages bool
}

// RuntimeService is a CRI runtime service whose containers behave as their
// commands say (see the package documentation). It embeds the
// FakeRuntimeService, whose exported maps and lock it uses: tests may read
// Containers and Sandboxes under its lock, inspect Called and inject errors
// with InjectError as with the plain fake.
//
// It is safe for concurrent use. Like the fake, it records every call in
// Called, so it is meant for tests and short-lived simulations.
type RuntimeService struct {
	*critest.FakeRuntimeService

	normalize bool
	// procs holds the behaviour of each container created through
	// CreateContainer, by container ID. Guarded by the fake's mutex.
	procs map[string]*process
	// ips hands out the sandboxes' addresses, networks holds each
	// sandbox's (serve.go). Guarded by the fake's mutex.
	ips      *loopbackPool
	networks map[string]sandboxNetwork
	// serving counts the goroutines of the containers' servers and of
	// their timers, which Close waits for; closed is set by Close, after
	// which no server opens. closed is guarded by the fake's mutex.
	serving sync.WaitGroup
	closed  bool
}

// process is what the simulator knows of a container beyond its CRI status.
type process struct {
	b workload.Behaviour
	// mounts maps container paths to the host paths mounted there (the
	// termination message file the kubelet mounts, among others).
	mounts map[string]string
	// logPath is the host path of the container's CRI log ("" for none).
	logPath string
	// flushed is set once the files of the run have been written.
	flushed bool
	// env is the environment of the container's process, which the
	// commands of ExecSync see too.
	env map[string]string
	// execWrites are the writes of the commands ExecSync ran in the
	// container (a lifecycle hook's), at the times they happened.
	execWrites []execWrite
	// network is the network of its sandbox, on whose address its
	// servers listen.
	network sandboxNetwork
	// servers are the servers of its command, once started; ending is
	// the timer that applies the exit of a command that ends on its own
	// and serves (serve.go).
	servers []*server
	ending  *time.Timer
	// logged is what its servers logged, which joins its output in its
	// CRI log.
	logged []logLine
}

var (
	_ internalapi.RuntimeService      = (*RuntimeService)(nil)
	_ internalapi.ImageManagerService = (*ImageService)(nil)
)

// NewRuntimeService returns an empty RuntimeService whose Status reports the
// runtime and its network ready.
func NewRuntimeService(opts Options) *RuntimeService {
	r := &RuntimeService{
		FakeRuntimeService: critest.NewFakeRuntimeService(),
		normalize:          opts.NormalizeImages,
		procs:              map[string]*process{},
		ips:                newLoopbackPool(),
		networks:           map[string]sandboxNetwork{},
	}
	r.SetReady(true)
	return r
}

// SetReady sets the RuntimeReady and NetworkReady conditions that Status
// reports: a runtime that is not ready is how a node agent learns that its
// container runtime is down.
func (r *RuntimeService) SetReady(ready bool) {
	r.Lock()
	defer r.Unlock()
	reason := ""
	if !ready {
		reason = "SimulatedOutage"
	}
	r.FakeStatus = &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: ready, Reason: reason},
		{Type: runtimeapi.NetworkReady, Status: ready, Reason: reason},
	}}
}

// ctxErr is the error a gRPC client returns for a call made with a context
// that is already done.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return nil
}

func notFound(kind, id string) error {
	return status.Errorf(codes.NotFound, "an error occurred when try to find %s %q: not found", kind, id)
}

// record notes a call of method f in Called and returns the error injected
// for it, if any, as the fake's own methods do. The caller holds the lock.
func (r *RuntimeService) record(f string) error {
	r.Called = append(r.Called, f)
	errs := r.Errors[f]
	if len(errs) == 0 {
		return nil
	}
	r.Errors[f] = errs[1:]
	return errs[0]
}

// settle applies the natural exit of container id if its run time is over.
// The caller holds the lock.
func (r *RuntimeService) settle(id string, c *critest.FakeContainer, now int64) {
	if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	p := r.procs[id]
	if p == nil || p.b.RunsUntilKilled || p.b.FailsToStart() {
		return
	}
	run := int64(p.b.RunFor)
	if run > math.MaxInt64-c.StartedAt {
		return // ends after the year 2262: never, for a simulation
	}
	if end := c.StartedAt + run; now >= end {
		exit(c, end, p.b.ExitCode)
		r.ended(p, c)
	}
}

func (r *RuntimeService) settleAll() {
	now := time.Now().UnixNano()
	for id, c := range r.Containers {
		r.settle(id, c, now)
	}
}

// ended does what follows the end of the process of container c, run by
// p: its servers close and its files are written (flush). The caller holds
// the lock.
func (r *RuntimeService) ended(p *process, c *critest.FakeContainer) {
	r.stopServers(p)
	p.flush(c)
}

// flush writes what the container's command, and the commands ExecSync
// ran in it, wrote during its run, now that it has exited: each file under
// a mount to the host path mounted there (the termination message file the
// kubelet reads), and its command's standard output, with what its servers
// logged, to its CRI log. Writes to paths under no mount stay in the
// container. Errors are ignored: a runtime does not fail an exit over a
// log. The caller holds the lock.
func (p *process) flush(c *critest.FakeContainer) {
	if p == nil || p.flushed {
		return
	}
	p.flushed = true
	for path, f := range p.files(c.StartedAt, c.FinishedAt) {
		host, ok := p.mounts[path]
		if !ok {
			continue
		}
		if f.exists {
			_ = os.WriteFile(host, []byte(f.data), 0o644)
		} else {
			_ = os.Remove(host)
		}
	}
	if out := p.stdout(c.StartedAt, c.FinishedAt); out != "" && p.logPath != "" {
		_ = os.WriteFile(p.logPath, criLog(time.Unix(0, c.FinishedAt), out), 0o640)
	}
}

// criLog formats out as the CRI log format has it (what containerd writes
// and the kubelet's log reader parses): one line per output line,
// "<RFC 3339 time> stdout F <line>", the last one tagged P (partial) when
// the output does not end in a newline.
func criLog(at time.Time, out string) []byte {
	var b strings.Builder
	ts := at.UTC().Format(time.RFC3339Nano)
	for out != "" {
		line, rest, full := strings.Cut(out, "\n")
		tag := "F"
		if !full {
			tag = "P"
		}
		b.WriteString(ts + " stdout " + tag + " " + line + "\n")
		out = rest
	}
	return []byte(b.String())
}

// exit marks c exited at the given time (Unix nanoseconds) with code and
// the CRI reason for it.
func exit(c *critest.FakeContainer, at int64, code int) {
	c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	c.FinishedAt = at
	c.ExitCode = int32(code)
	c.Reason = workload.ExitReason(code)
	c.Message = ""
}

// cloneMounts copies the mounts of a container config for its status.
func cloneMounts(ms []*runtimeapi.Mount) []*runtimeapi.Mount {
	out := make([]*runtimeapi.Mount, len(ms))
	for i, m := range ms {
		out[i] = proto.Clone(m).(*runtimeapi.Mount)
	}
	return out
}

// normalizedImage returns the fully qualified name of image, or image itself
// when it is an image ID ("sha256:...") or not a valid reference.
func normalizedImage(image string) string {
	if strings.HasPrefix(image, "sha256:") {
		return image
	}
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return image
	}
	return reference.TagNameOnly(named).String()
}

// RunPodSandbox creates a ready sandbox with the fake's ID and address.
// Like containerd it refuses a second sandbox of the same pod and attempt
// while the first exists (the fake would silently replace it).
func (r *RuntimeService) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	if err := ctxErr(ctx); err != nil {
		return "", err
	}
	if config.GetMetadata() == nil {
		return "", status.Error(codes.InvalidArgument, "sandbox config must include metadata")
	}
	r.Lock()
	defer r.Unlock()
	if err := r.record("RunPodSandbox"); err != nil {
		return "", err
	}
	if r.ErrorOnSandboxCreate {
		return "", status.Error(codes.Unknown, "error on sandbox create")
	}
	id := critest.BuildSandboxName(config.Metadata)
	if _, ok := r.Sandboxes[id]; ok {
		return "", status.Errorf(codes.AlreadyExists, "failed to reserve sandbox name %q: name is reserved for %q", id, id)
	}
	r.Sandboxes[id] = &critest.FakePodSandbox{
		PodSandboxStatus: runtimeapi.PodSandboxStatus{
			Id:        id,
			Metadata:  proto.Clone(config.Metadata).(*runtimeapi.PodSandboxMetadata),
			State:     runtimeapi.PodSandboxState_SANDBOX_READY,
			CreatedAt: time.Now().UnixNano(),
			Network:   r.newSandboxNetwork(id, config),
			// The kubelet recreates a sandbox whose namespace options
			// differ from the pod's (runtimeutil.PodSandboxChanged).
			Linux: &runtimeapi.LinuxPodSandboxStatus{
				Namespaces: &runtimeapi.Namespace{Options: config.GetLinux().GetSecurityContext().GetNamespaceOptions()},
			},
			Labels:         config.Labels,
			Annotations:    config.Annotations,
			RuntimeHandler: runtimeHandler,
		},
		RuntimeHandler: runtimeHandler,
	}
	return id, nil
}

// CreateContainer creates a container in state CREATED and remembers the
// behaviour its Command and Args describe. Like containerd it refuses a
// second container of the same name and attempt in a sandbox (the fake
// would silently replace the first) and a sandbox that does not exist.
func (r *RuntimeService) CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	if err := ctxErr(ctx); err != nil {
		return "", err
	}
	if config.GetMetadata() == nil || config.GetImage() == nil {
		return "", status.Error(codes.InvalidArgument, "container config must include metadata and image")
	}
	r.Lock()
	defer r.Unlock()
	if err := r.record("CreateContainer"); err != nil {
		return "", err
	}
	if _, ok := r.Sandboxes[podSandboxID]; !ok {
		return "", notFound("sandbox", podSandboxID)
	}
	id := critest.BuildContainerName(config.Metadata, podSandboxID)
	if _, ok := r.Containers[id]; ok {
		return "", status.Errorf(codes.AlreadyExists, "failed to reserve container name %q (attempt %d) in sandbox %q: name is reserved for %q",
			config.Metadata.Name, config.Metadata.Attempt, podSandboxID, id)
	}
	image := proto.Clone(config.Image).(*runtimeapi.ImageSpec)
	if r.normalize {
		image.Image = normalizedImage(image.Image)
	}
	mounts := make(map[string]string, len(config.Mounts))
	for _, m := range config.Mounts {
		mounts[m.ContainerPath] = m.HostPath
	}
	env := make(map[string]string, len(config.Envs))
	for _, kv := range config.Envs {
		env[kv.Key] = string(kv.Value)
	}
	logPath := ""
	if dir := sandboxConfig.GetLogDirectory(); dir != "" && config.LogPath != "" {
		logPath = filepath.Join(dir, config.LogPath)
	}
	r.Containers[id] = &critest.FakeContainer{
		ContainerStatus: runtimeapi.ContainerStatus{
			Id:          id,
			Metadata:    proto.Clone(config.Metadata).(*runtimeapi.ContainerMetadata),
			Image:       image,
			ImageRef:    image.Image,
			CreatedAt:   time.Now().UnixNano(),
			State:       runtimeapi.ContainerState_CONTAINER_CREATED,
			Labels:      config.Labels,
			Annotations: config.Annotations,
			LogPath:     cmp.Or(logPath, config.LogPath),
			Mounts:      cloneMounts(config.Mounts),
			Resources:   statusResources(config.GetLinux().GetResources()),
		},
		SandboxID:      podSandboxID,
		LinuxResources: config.GetLinux().GetResources(),
	}
	r.procs[id] = &process{b: workload.ParseEnv(config.Command, config.Args, env), mounts: mounts, logPath: logPath, env: env, network: r.networks[podSandboxID]}
	return id, nil
}

// StartContainer starts a created container. A container whose executable
// is missing fails to start as under containerd: the call returns an error
// and the instance is left exited with StartErrorExitCode and
// StartErrorReason, without StartedAt.
func (r *RuntimeService) StartContainer(ctx context.Context, containerID string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	r.Lock()
	defer r.Unlock()
	if err := r.record("StartContainer"); err != nil {
		return err
	}
	c, ok := r.Containers[containerID]
	if !ok {
		return notFound("container", containerID)
	}
	if c.State != runtimeapi.ContainerState_CONTAINER_CREATED {
		return status.Errorf(codes.FailedPrecondition, "container %q is in %s state, not created", containerID, c.State)
	}
	now := time.Now().UnixNano()
	if p := r.procs[containerID]; p != nil && p.b.FailsToStart() {
		exe := p.b.MissingExecutable
		msg := fmt.Sprintf("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: %q: stat %s: no such file or directory: unknown", exe, exe)
		c.State = runtimeapi.ContainerState_CONTAINER_EXITED
		c.FinishedAt = now
		c.ExitCode = StartErrorExitCode
		c.Reason = StartErrorReason
		c.Message = msg
		return status.Error(codes.Unknown, msg)
	}
	c.State = runtimeapi.ContainerState_CONTAINER_RUNNING
	c.StartedAt = now
	if p := r.procs[containerID]; p != nil {
		r.startServers(containerID, p, time.Unix(0, now))
	}
	return nil
}

// StopContainer stops a running container, giving it timeout seconds after
// SIGTERM, as its command says it reacts (workload.Behaviour.Shutdown, as
// a host process: the specs' commands run in a pod that may share its PID
// namespace): one without a handler exits at once with exit code 143; a
// handler exits with its code once its delay is over (trap 'sleep 1; exit
// 64' TERM: 64 after a second); one that ignores SIGTERM runs on. What has
// not ended when the timeout has passed (or its own run ends) is killed
// with exit code 137, the call blocking meanwhile. A timeout of 0 or less
// kills at once. When ctx ends first, StopContainer returns the context's
// gRPC error and the container keeps running. Stopping a container that is
// not running does nothing.
func (r *RuntimeService) StopContainer(ctx context.Context, containerID string, timeout int64) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	r.Lock()
	if err := r.record("StopContainer"); err != nil {
		r.Unlock()
		return err
	}
	c, ok := r.Containers[containerID]
	if !ok {
		r.Unlock()
		return notFound("container", containerID)
	}
	now := time.Now()
	r.settle(containerID, c, now.UnixNano())
	if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		r.Unlock()
		return nil
	}
	p := r.procs[containerID]
	shutdown := workload.Shutdown{ExitCode: workload.ExitCodeSIGTERM}
	if p != nil {
		shutdown = p.b.Shutdown(false)
	}
	// When and how it ends is the model's reading (Shutdown.End); a
	// timeout of 0 or less is SIGKILL at once, whatever the handler.
	wake, code := now, workload.ExitCodeSIGKILL
	if timeout > 0 {
		wake, code = shutdown.End(now, time.Duration(timeout)*time.Second)
	}
	if !wake.After(now) {
		exit(c, now.UnixNano(), code)
		r.ended(p, c)
		r.Unlock()
		return nil
	}
	if !p.b.RunsUntilKilled {
		if end := time.Unix(0, c.StartedAt).Add(p.b.RunFor); end.Before(wake) {
			wake = end
		}
	}
	r.Unlock()

	t := time.NewTimer(time.Until(wake))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	case <-t.C:
	}

	r.Lock()
	defer r.Unlock()
	if c, ok = r.Containers[containerID]; !ok {
		return nil // removed meanwhile
	}
	now = time.Now()
	r.settle(containerID, c, now.UnixNano())
	if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
		exit(c, now.UnixNano(), code)
		r.ended(r.procs[containerID], c)
	}
	return nil
}

// RemoveContainer removes a container, running or not; removing one that
// does not exist succeeds, as the CRI asks.
func (r *RuntimeService) RemoveContainer(ctx context.Context, containerID string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	r.Lock()
	defer r.Unlock()
	if err := r.record("RemoveContainer"); err != nil {
		return err
	}
	r.stopServers(r.procs[containerID])
	delete(r.Containers, containerID)
	delete(r.procs, containerID)
	return nil
}

// ListContainers lists containers as the fake does, after applying the
// natural exits that are due.
func (r *RuntimeService) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	r.Lock()
	r.settleAll()
	r.Unlock()
	return r.FakeRuntimeService.ListContainers(ctx, filter)
}

// ContainerStatus returns the status of a container, after applying its
// natural exit if it is due; an unknown ID gives a NotFound error.
func (r *RuntimeService) ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	r.Lock()
	defer r.Unlock()
	if err := r.record("ContainerStatus"); err != nil {
		return nil, err
	}
	c, ok := r.Containers[containerID]
	if !ok {
		return nil, notFound("container", containerID)
	}
	r.settle(containerID, c, time.Now().UnixNano())
	return &runtimeapi.ContainerStatusResponse{Status: proto.Clone(&c.ContainerStatus).(*runtimeapi.ContainerStatus)}, nil
}

// StopPodSandbox marks a sandbox not ready after killing its running
// containers at once, as containerd does; stopping a sandbox that does not
// exist succeeds, as the CRI asks.
func (r *RuntimeService) StopPodSandbox(ctx context.Context, podSandboxID string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	r.Lock()
	defer r.Unlock()
	if err := r.record("StopPodSandbox"); err != nil {
		return err
	}
	s, ok := r.Sandboxes[podSandboxID]
	if !ok {
		return nil
	}
	now := time.Now().UnixNano()
	for id, c := range r.Containers {
		if c.SandboxID != podSandboxID {
			continue
		}
		r.settle(id, c, now)
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			exit(c, now, workload.ExitCodeSIGKILL)
			r.ended(r.procs[id], c)
		}
	}
	s.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	return nil
}

// RemovePodSandbox removes a sandbox and every container in it; removing
// one that does not exist succeeds.
func (r *RuntimeService) RemovePodSandbox(ctx context.Context, podSandboxID string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	r.Lock()
	defer r.Unlock()
	if err := r.record("RemovePodSandbox"); err != nil {
		return err
	}
	for id, c := range r.Containers {
		if c.SandboxID == podSandboxID {
			r.stopServers(r.procs[id])
			delete(r.Containers, id)
			delete(r.procs, id)
		}
	}
	delete(r.Sandboxes, podSandboxID)
	r.dropSandboxNetwork(podSandboxID)
	return nil
}

// PodSandboxStatus returns the status of a sandbox; an unknown ID gives a
// NotFound error.
func (r *RuntimeService) PodSandboxStatus(ctx context.Context, podSandboxID string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	r.Lock()
	defer r.Unlock()
	if err := r.record("PodSandboxStatus"); err != nil {
		return nil, err
	}
	s, ok := r.Sandboxes[podSandboxID]
	if !ok {
		return nil, notFound("sandbox", podSandboxID)
	}
	return &runtimeapi.PodSandboxStatusResponse{Status: proto.Clone(&s.PodSandboxStatus).(*runtimeapi.PodSandboxStatus)}, nil
}

// ListPodSandbox lists sandboxes as the fake does.
func (r *RuntimeService) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	return r.FakeRuntimeService.ListPodSandbox(ctx, filter)
}

// Version reports the fake's version.
func (r *RuntimeService) Version(ctx context.Context, apiVersion string) (*runtimeapi.VersionResponse, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	return r.FakeRuntimeService.Version(ctx, apiVersion)
}

// Status reports the conditions SetReady set.
func (r *RuntimeService) Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	return r.FakeRuntimeService.Status(ctx, verbose)
}

// ImageService is the fake image service, answering a call made with a
// context that is done as a gRPC client does.
type ImageService struct {
	*critest.FakeImageService
}

// NewImageService returns an ImageService without images: the first
// container of an image pulls it.
func NewImageService() *ImageService {
	return &ImageService{FakeImageService: critest.NewFakeImageService()}
}

// PullImage pulls image, as the fake does, except that an image in the
// vocabulary's missing registry (workload.MissingImageDomain) fails as a
// pull from a registry that does not resolve fails in containerd.
func (s *ImageService) PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, podSandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	if err := ctxErr(ctx); err != nil {
		return "", err
	}
	if image == nil {
		return "", status.Error(codes.InvalidArgument, "image spec is nil")
	}
	if workload.ImageMissing(image.Image) {
		return "", status.Errorf(codes.Unknown, "failed to pull and unpack image %q: failed to resolve reference %q: dial tcp: lookup %s: no such host",
			image.Image, image.Image, workload.MissingImageDomain)
	}
	return s.FakeImageService.PullImage(ctx, image, auth, podSandboxConfig)
}

// ImageStatus reports image, as the fake does.
func (s *ImageService) ImageStatus(ctx context.Context, image *runtimeapi.ImageSpec, verbose bool) (*runtimeapi.ImageStatusResponse, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if image == nil {
		return nil, status.Error(codes.InvalidArgument, "image spec is nil")
	}
	return s.FakeImageService.ImageStatus(ctx, image, verbose)
}
