package hostprocess

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podsync"
)

// RuntimeName is the Type of every container ID (and sandbox) the provider
// hands out: a container ID reads "hostprocess://<64 hex digits>".
const RuntimeName = "hostprocess"

const (
	// defaultGracePeriod is what KillPod gives a container when neither the
	// override nor the pod says otherwise (the API default).
	defaultGracePeriod = 30 * time.Second
	// cleanupGracePeriod is what DeletePod and CleanupPods give a container
	// that is still running: the pod is unwanted by then, so they do what the
	// kubelet does for a pod it only knows from the runtime and use the
	// kubelet's minimum grace period.
	cleanupGracePeriod = 2 * time.Second
	// defaultPath is the PATH of a container when neither Options.Path nor
	// the provider's own environment gives one.
	defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

var (
	// ErrInvalidPod is wrapped by the error of every method that rejects a
	// pod it was handed (nil pod, bad UID, duplicate container names, a
	// container without command, an env var with valueFrom, ...).
	ErrInvalidPod = errors.New("hostprocess: invalid pod")
	// ErrStopped is wrapped by the error SyncPod returns once Stop has been
	// called: a stopped provider starts no process.
	ErrStopped = errors.New("hostprocess: provider stopped")
)

// Options configure a Provider.
type Options struct {
	// RootDir is the absolute path of the directory in which the provider
	// keeps the files of each pod, under RootDir/pods/<pod UID>/. It is
	// created if missing. Required.
	RootDir string

	// Path is the PATH a container's command is looked up in, and the PATH
	// the container sees, unless the container's Env sets PATH itself.
	// Empty means the PATH of the provider's own process, or
	// "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" when
	// that is empty too.
	Path string
}

// Provider runs the containers of each pod as child processes of the
// current process. It implements kri.PodProvider; see the package
// documentation for how each part of the contract is met.
//
// A Provider is safe for concurrent use. Its zero value is not usable:
// create one with New, and call Stop when done with it.
type Provider struct {
	// h holds all the state. The reaper goroutines reference h, never the
	// Provider, so that a Provider dropped without Stop becomes unreachable
	// and its cleanup (registered in New) kills what it started.
	h *host
}

var (
	_ kri.PodProvider     = (*Provider)(nil)
	_ kri.PodSyncNotifier = (*Provider)(nil)
)

// New returns a Provider that keeps its files under opts.RootDir, which
// must be an absolute path. Nothing in RootDir is removed or reused: pod
// directories left there by an earlier process are not the new Provider's.
func New(opts Options) (*Provider, error) {
	if opts.RootDir == "" {
		return nil, errors.New("hostprocess: Options.RootDir is required")
	}
	if !filepath.IsAbs(opts.RootDir) {
		return nil, fmt.Errorf("hostprocess: Options.RootDir %q is not an absolute path", opts.RootDir)
	}
	root := filepath.Clean(opts.RootDir)
	podsDir := filepath.Join(root, "pods")
	if err := os.MkdirAll(podsDir, 0o755); err != nil {
		return nil, fmt.Errorf("hostprocess: creating %s: %w", podsDir, err)
	}
	path := opts.Path
	if path == "" {
		path = os.Getenv("PATH")
	}
	if path == "" {
		path = defaultPath
	}
	h := &host{
		rootDir: root,
		podsDir: podsDir,
		path:    path,
		pods:    make(map[types.UID]*podState),
		live:    make(map[*instance]struct{}),
		stopCh:  make(chan struct{}),
	}
	p := &Provider{h: h}
	// A Provider that is dropped without Stop (a test that forgot it, a
	// spec aborted half-way) must not leave processes behind for the rest
	// of the process's life.
	runtime.AddCleanup(p, func(h *host) { h.shutdown() }, h)
	return p, nil
}

// SetPodSyncHandler implements kri.PodSyncNotifier: the provider calls
// h.HandlePodSyncByUID for a pod when one of its containers starts or
// exits, when a probe flips a container's Started or Ready, once a KillPod
// has seen every container exit, and a second (startRetryDelay) after a
// SyncPod whose start failed, so that the agent tries again (see the
// package documentation, "Telling the agent").
func (p *Provider) SetPodSyncHandler(h kri.PodSyncHandler) { p.h.SetPodSyncHandler(h) }

// RootDir returns the absolute directory the provider keeps its files in.
func (p *Provider) RootDir() string { return p.h.rootDir }

// PodDir returns the directory of the pod with the given UID,
// RootDir/pods/<uid>, and an error wrapping ErrInvalidPod when uid could not
// name a directory inside RootDir/pods. The directory exists from the pod's
// first SyncPod until DeletePod or CleanupPods removes it; each container
// has a subdirectory named after it holding one log file per start
// (<restart count>.log, stdout and stderr together) for its current and
// previous instance.
func (p *Provider) PodDir(uid types.UID) (string, error) { return p.h.podDir(uid) }

// SyncPod implements kri.PodLifecycleHandler.
//
// The provider's own records are the observed state: podStatus is not
// needed and is ignored, so a stale podStatus can never make SyncPod start a
// container twice. In order, SyncPod
//
//   - creates the sandbox (RootDir/pods/<uid>) if there is none, or a new one
//     if KillPod stopped the pod; a killed pod whose RestartPolicy is Never
//     and which ran containers is left as it is, as the kubelet does;
//   - runs the init containers one at a time, each to exit 0 before the next
//     (a failed one is started again unless RestartPolicy is Never; a
//     running one makes SyncPod return, to be called again). Init containers
//     with RestartPolicy Always (sidecars) are started and kept running,
//     restarted whenever they exit whatever the pod's RestartPolicy, and
//     the next init container follows as soon as the sidecar runs;
//   - starts the app containers that never ran, and restarts exited ones
//     when RestartPolicy allows it (Always; OnFailure for a non-zero exit);
//   - once every app container has exited for good while sidecars run,
//     stops the pod as KillPod does (sandbox NOTREADY, sidecars stopped
//     with the pod's grace period, the last first), as the kubelet's
//     runtime manager does; such a pod is not started again.
//
// There is no back-off between restarts: a crash-looping container is
// restarted at every SyncPod, each of which its exit asks the agent for
// (SetPodSyncHandler). A failed start is tried again at the next SyncPod,
// which the provider asks for a second later.
//
// Every container spec of the pod is checked before anything starts; a pod
// whose containers have no command, use env valueFrom or envFrom, or have
// a relative WorkingDir is rejected with an error wrapping ErrInvalidPod.
func (p *Provider) SyncPod(ctx context.Context, pod *v1.Pod, podStatus *pkgcontainer.PodStatus, reasonCache *kri.ReasonCache) error {
	return p.h.syncPod(ctx, pod, reasonCache)
}

// KillPod implements kri.PodLifecycleHandler. The pod is identified by
// runningPod.ID, or pod.UID when that is empty. KillPod sends SIGTERM to the
// process group of every running container of the pod (whatever
// runningPod lists), SIGKILL to those still running when the grace period
// is over, and returns nil once all of them have exited and been reaped. It
// marks the pod's sandbox NOTREADY. Sidecars (restartable init containers
// of pod, or of the pod of the last SyncPod when pod is nil) are stopped
// after all the other containers have exited, one at a time, the last in
// spec order first, as the kubelet orders them; one whose turn comes after
// the grace period still gets two seconds before SIGKILL.
func (p *Provider) KillPod(ctx context.Context, pod *v1.Pod, runningPod pkgcontainer.Pod, gracePeriodOverride *int64) error {
	return p.h.killPod(ctx, pod, runningPod, gracePeriodOverride)
}

// DeletePod implements kri.PodLifecycleHandler: it stops the pod's
// containers still running (SIGTERM, then SIGKILL after 2 seconds), removes
// RootDir/pods/<uid> and forgets the pod. A nil pod or a UID that could not
// name a directory is rejected with an error wrapping ErrInvalidPod.
func (p *Provider) DeletePod(ctx context.Context, pod *v1.Pod) error {
	return p.h.deletePod(ctx, pod)
}

// CleanupPods implements kri.PodLifecycleHandler: every pod the provider
// knows that is named by none of pods, runningPods and possiblyRunningPods
// is deleted as by DeletePod. The orphans are handled concurrently.
func (p *Provider) CleanupPods(ctx context.Context, pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) error {
	return p.h.cleanupPods(ctx, pods, runningPods, possiblyRunningPods)
}

// RefreshPodStatus implements kri.PodLifecycleHandler. It replaces
// podStatus.InitContainerStatuses and podStatus.ContainerStatuses with one
// status per container of pod's spec, in spec order, and touches no other
// field. A container not running whose latest start failed is Waiting with
// the reason of that failure (e.g. "RunContainerError").
func (p *Provider) RefreshPodStatus(pod *v1.Pod, podStatus *v1.PodStatus) {
	p.h.refreshPodStatus(pod, podStatus)
}

// GetPodStatus implements kri.PodLifecycleHandler. ContainerStatuses holds
// the current and the previous instance of each container, newest first;
// SandboxStatuses the current and the previous sandbox, newest first. A nil
// pod is rejected with an error wrapping ErrInvalidPod.
func (p *Provider) GetPodStatus(ctx context.Context, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
	return p.h.getPodStatus(ctx, pod)
}

// GetPods implements kri.PodLifecycleHandler. Pods are listed in the order
// the provider first saw them.
func (p *Provider) GetPods(ctx context.Context, all bool) ([]*pkgcontainer.Pod, error) {
	return p.h.getPods(ctx, all)
}

// Start implements kri.PodLifecycleHandler. The provider has no background
// loop (each process is reaped by a goroutine of its own), so Start only
// blocks until ctx is done or Stop is called, and returns nil. A ctx that
// ends does not stop the processes; Stop does. Calling Start while another
// Start runs returns an error; calling it after Stop returns nil at once.
func (p *Provider) Start(ctx context.Context) error {
	err := p.h.start(ctx)
	runtime.KeepAlive(p) // a running Start keeps the Provider alive
	return err
}

// Stop implements kri.PodLifecycleHandler. It sends SIGKILL to the process
// group of every container still running, waits until every process the
// provider started has been reaped, and then until Start has returned.
// Afterwards SyncPod fails with ErrStopped; the other methods keep working
// on what is recorded (everything has exited, no sandbox is ready). From Stop on the provider
// calls the agent's PodSyncHandler no more (the exits Stop causes are not
// reported). Later calls are no-ops.
func (p *Provider) Stop() { p.h.stop() }

// host is the state of a Provider.
type host struct {
	// Notifier calls the agent's PodSyncHandler (SetPodSyncHandler). It is
	// the host's, not the Provider's, because the reapers and probe
	// workers that notify reference only the host.
	podsync.Notifier

	rootDir string // absolute and clean
	podsDir string // rootDir/pods
	path    string // default PATH of containers

	// reapers counts the reaper goroutines; Stop waits for them.
	reapers sync.WaitGroup
	// stopOnce makes Stop idempotent and makes concurrent Stops all wait.
	stopOnce sync.Once

	// mu guards everything below and all the podState, sandbox,
	// containerState and instance fields documented as guarded by it. It is
	// never held while waiting for a process, only for short bookkeeping
	// (and the fork/exec of a start, so that Stop cannot miss a process).
	mu        sync.Mutex
	pods      map[types.UID]*podState
	live      map[*instance]struct{} // started and not exited, whatever pod records them
	seq       uint64                 // creation order of pods and instances
	stopped   bool                   // Stop or the cleanup ran: start nothing more
	stopCh    chan struct{}          // closed when stopped becomes true
	running   bool                   // a Start is blocked
	startDone chan struct{}          // closed when the running Start returns
}

func (h *host) start(ctx context.Context) error {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return nil
	}
	if h.running {
		h.mu.Unlock()
		return errors.New("hostprocess: Start is already running")
	}
	done := make(chan struct{})
	h.running, h.startDone = true, done
	h.mu.Unlock()

	defer func() {
		h.mu.Lock()
		h.running = false
		h.mu.Unlock()
		close(done)
	}()
	select {
	case <-ctx.Done():
	case <-h.stopCh:
	}
	return nil
}

// shutdown marks the provider stopped and sends SIGKILL to every process
// group it started that is still running. It does not wait and may be
// called any number of times.
func (h *host) shutdown() {
	// Stopped first, so that the exits of the kills below are not
	// reported: the agent is done with the provider.
	h.Notifier.Stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.stopped {
		h.stopped = true
		close(h.stopCh)
	}
	for inst := range h.live {
		h.signalLocked(inst, sigKill)
	}
	// Nothing of a pod is left running: no sandbox stays ready (GetPods
	// lists a pod with a ready sandbox as running).
	for _, ps := range h.pods {
		for _, sb := range ps.sandboxes {
			sb.ready = false
		}
	}
}

func (h *host) stop() {
	h.stopOnce.Do(func() {
		h.shutdown()
		h.reapers.Wait()
		h.mu.Lock()
		var done chan struct{}
		if h.running {
			done = h.startDone
		}
		h.mu.Unlock()
		if done != nil {
			<-done
		}
	})
}

// nextSeqLocked returns a new sequence number. h.mu must be held.
func (h *host) nextSeqLocked() uint64 {
	h.seq++
	return h.seq
}

// lookup returns the state of the pod with the given UID, or nil.
func (h *host) lookup(uid types.UID) *podState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pods[uid]
}

// lockPod acquires the operation lock of the pod with the given UID, which
// serialises SyncPod, KillPod and DeletePod of one pod, and returns its state
// and the function that releases the lock. With create it adds the pod (as
// pod) when it is unknown; without, it returns a nil state for an unknown
// pod. It gives up with ctx's error once ctx is done.
func (h *host) lockPod(ctx context.Context, uid types.UID, create *v1.Pod) (*podState, func(), error) {
	for {
		h.mu.Lock()
		if create != nil && h.stopped {
			h.mu.Unlock()
			return nil, nil, ErrStopped
		}
		ps := h.pods[uid]
		if ps == nil {
			if create == nil {
				h.mu.Unlock()
				return nil, nil, nil
			}
			ps = h.newPodLocked(create)
			h.pods[uid] = ps
		}
		h.mu.Unlock()

		select {
		case ps.op <- struct{}{}:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		h.mu.Lock()
		deleted := ps.deleted
		h.mu.Unlock()
		if deleted {
			// DeletePod forgot the pod while we waited: start over.
			<-ps.op
			continue
		}
		return ps, func() { <-ps.op }, nil
	}
}

func (h *host) newPodLocked(pod *v1.Pod) *podState {
	return &podState{
		uid:        pod.UID,
		name:       pod.Name,
		namespace:  pod.Namespace,
		seq:        h.nextSeqLocked(),
		dir:        filepath.Join(h.podsDir, string(pod.UID)),
		containers: make(map[string]*containerState),
		op:         make(chan struct{}, 1),
	}
}

// podDir returns RootDir/pods/<uid>, refusing any uid that would not name a
// direct child of RootDir/pods.
func (h *host) podDir(uid types.UID) (string, error) {
	if err := validateUID(uid); err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidPod, err)
	}
	dir := filepath.Join(h.podsDir, string(uid))
	if filepath.Dir(dir) != h.podsDir {
		return "", fmt.Errorf("%w: pod UID %q does not name a directory inside %s", ErrInvalidPod, uid, h.podsDir)
	}
	return dir, nil
}

// podState is what the provider keeps for one pod.
type podState struct {
	uid             types.UID
	seq             uint64
	dir             string        // RootDir/pods/<uid>
	op              chan struct{} // operation lock, see lockPod
	name, namespace string        // guarded by host.mu

	// Guarded by host.mu; changed only by the holder of op.
	sandboxes  []*sandbox // newest first, at most 2
	containers map[string]*containerState
	deleted    bool // forgotten by DeletePod/CleanupPods
	// sidecars names the restartable init containers of the spec of the
	// last SyncPod, in spec order: KillPod stops them last when it is
	// given no pod.
	sidecars []string
	// grace is the termination grace period of the pod's spec, as of its
	// latest SyncPod: a liveness kill gives it (probe.go).
	grace time.Duration
}

// currentSandbox returns the newest sandbox, or nil. host.mu must be held.
func (ps *podState) currentSandbox() *sandbox {
	if len(ps.sandboxes) == 0 {
		return nil
	}
	return ps.sandboxes[0]
}

// hasInstances reports whether any container of the pod ever started.
// host.mu must be held.
func (ps *podState) hasInstances() bool {
	for _, cs := range ps.containers {
		if len(cs.instances) > 0 {
			return true
		}
	}
	return false
}

// sandbox is the record of one pod sandbox. A host-process pod has no
// isolation to set up: the sandbox is the pod directory plus this record.
type sandbox struct {
	id        string
	attempt   uint32
	createdAt time.Time
	ready     bool // guarded by host.mu
}

// containerState is what the provider keeps per container name.
type containerState struct {
	starts    int         // successful starts so far: the next instance's RestartCount
	instances []*instance // newest first, at most 2 (current and previous)
	startErr  *kri.ReasonItem
}

// current returns the newest instance, or nil.
func (cs *containerState) current() *instance {
	if cs == nil || len(cs.instances) == 0 {
		return nil
	}
	return cs.instances[0]
}

// instance is one started process: one container ID.
type instance struct {
	id           string
	name         string
	podUID       types.UID // whom to notify of its exit and probe results
	seq          uint64
	sandboxID    string
	image        string
	hash         uint64
	restartCount int
	sidecar      bool
	pid          int           // also the process group ID
	probes       *probeResults // nil without probes; fields guarded by host.mu
	logPath      string
	termination  terminationSource
	preStop      hookSpec // the preStop hook it started with (handler nil: none)
	createdAt    time.Time
	startedAt    time.Time
	done         chan struct{} // closed once the process has been reaped

	// Guarded by host.mu.
	leaderExited bool // the process has exited; its group must not be signalled any more
	exited       bool // reaped: exitCode and finishedAt are set
	exitCode     int
	message      string // the termination message
	finishedAt   time.Time
}

func (inst *instance) state() pkgcontainer.State {
	if inst.exited {
		return pkgcontainer.ContainerStateExited
	}
	return pkgcontainer.ContainerStateRunning
}

func (inst *instance) reason() string {
	switch {
	case !inst.exited:
		return ""
	case inst.exitCode == 0:
		return "Completed"
	default:
		return "Error"
	}
}

func (inst *instance) containerID() pkgcontainer.ContainerID {
	return pkgcontainer.ContainerID{Type: RuntimeName, ID: inst.id}
}

// apiContainerID is the container ID as the API status spells it,
// "hostprocess://<id>".
func (inst *instance) apiContainerID() string {
	id := inst.containerID()
	return id.String()
}
