package kubeletruntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"go.opentelemetry.io/otel/trace/noop"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	internalapi "k8s.io/cri-api/pkg/apis"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/kuberuntime"
	"k8s.io/kubernetes/pkg/kubelet/logs"
	"k8s.io/kubernetes/pkg/kubelet/prober"
	proberesults "k8s.io/kubernetes/pkg/kubelet/prober/results"

	"github.com/kri-kit/testkit/examples/kubeletruntime/crisim"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podsync"
)

// The kubelet's defaults this provider starts from.
const (
	// DefaultInitialBackOff and DefaultMaxBackOff bound the crash-loop
	// back-off, as the kubelet's initialCrashLoopBackOff and
	// MaxCrashLoopBackOff (pkg/kubelet/kubelet.go, workload.KubeletBackOff).
	DefaultInitialBackOff = 10 * time.Second
	DefaultMaxBackOff     = 300 * time.Second
	// DefaultGCPeriod is how often Start collects dead containers and
	// sandboxes, the kubelet's ContainerGCPeriod.
	DefaultGCPeriod = time.Minute
	// DefaultMaxPods is the kubelet's default maxPods.
	DefaultMaxPods = 110
	// cpuCFSQuotaPeriod is the kubelet's default CFS period.
	cpuCFSQuotaPeriod = 100 * time.Millisecond
)

// DefaultGCPolicy is the kubelet's default container GC policy (the
// defaults of --minimum-container-ttl-duration,
// --maximum-dead-containers-per-container and --maximum-dead-containers):
// dead containers may go at once, one dead instance is kept per container of
// a pod that still exists, and there is no global limit.
func DefaultGCPolicy() pkgcontainer.GCPolicy {
	return pkgcontainer.GCPolicy{MinAge: 0, MaxPerPodContainer: 1, MaxContainers: -1}
}

// Options configure a Provider. Only RootDir is required.
type Options struct {
	// RootDir is the directory the runtime manager keeps its state in (the
	// actuated-resources checkpoint and the image pull records) and the
	// pods' log directories under. It must exist. The provider touches no
	// file outside it.
	RootDir string

	// RuntimeService and ImageService are the CRI services the runtime
	// manager drives. nil: a new crisim.RuntimeService (normalising image
	// names when NormalizeImages is set), which Stop closes, and
	// crisim.ImageService.
	RuntimeService internalapi.RuntimeService
	ImageService   internalapi.ImageManagerService
	// NormalizeImages is handed to the crisim.RuntimeService made when
	// RuntimeService is nil.
	NormalizeImages bool

	// InitialBackOff and MaxBackOff bound the back-off of container
	// restarts (0: DefaultInitialBackOff, DefaultMaxBackOff).
	InitialBackOff, MaxBackOff time.Duration
	// GCPeriod is how often Start garbage-collects dead containers and
	// sandboxes (0: DefaultGCPeriod); GCPolicy how (nil: DefaultGCPolicy).
	GCPeriod time.Duration
	GCPolicy *pkgcontainer.GCPolicy

	// Recorder receives the runtime manager's events (nil: they are
	// dropped).
	Recorder record.EventRecorderLogger
	// MaxPods sizes the image pull records caches (0: DefaultMaxPods).
	MaxPods int
}

// Provider is a kri.PodProvider that is the kubelet's own runtime manager.
// It is safe for concurrent use, but, like the kubelet's pod workers, it
// expects at most one SyncPod, KillPod or DeletePod of a pod at a time.
type Provider struct {
	// Notifier holds the agent's PodSyncHandler (kri.PodSyncNotifier):
	// the provider calls it from the kubelet's PLEG, the probe results
	// managers' updates and when a back-off SyncPod met ends (notify.go).
	podsync.Notifier
	events *notifier
	// retry is how long after a failed start without a back-off of its
	// own the agent is asked to sync again: the initial back-off, as the
	// kubelet's pod workers retry after backOffPeriod, the same 10s as
	// initialCrashLoopBackOff.
	retry time.Duration

	runtime     kuberuntime.KubeGenericRuntime
	runtimeName string
	backOff     *flowcontrol.Backoff
	pods        *podStates
	cgroups     *podCgroups
	gcPeriod    time.Duration
	gcPolicy    pkgcontainer.GCPolicy
	// probes is the kubelet's prober manager, which runs the pods' exec
	// probes through the runtime manager and feeds the results managers
	// the runtime manager reads; statuses is the status it probes from.
	probes   prober.Manager
	statuses *podStatuses
	// ownRuntime is the runtime service New made (crisim's), which Stop
	// closes; nil when Options named one.
	ownRuntime internalapi.RuntimeService

	stopOnce sync.Once
	stop     chan struct{}
	mu       sync.Mutex
	started  bool
	done     chan struct{} // closed when Start returns; nil before Start
}

var _ kri.PodProvider = (*Provider)(nil)

// New builds the runtime manager with kuberuntime.NewKubeGenericRuntimeManager
// over the CRI services of opts, with the stubs the kubelet's own tests hand
// it where a node would have real managers (cm.NewStubContainerManager,
// with pod cgroups kept in memory, see resize.go;
// logs.NewStubContainerLogManager; no runtime classes; events dropped). ctx
// carries the logger the runtime manager logs to (klog.FromContext).
func New(ctx context.Context, opts Options) (*Provider, error) {
	if opts.RootDir == "" {
		return nil, errors.New("kubeletruntime: Options.RootDir is empty; the runtime manager needs a directory for its state")
	}
	root, err := filepath.Abs(opts.RootDir)
	if err != nil {
		return nil, fmt.Errorf("kubeletruntime: Options.RootDir %q: %w", opts.RootDir, err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("kubeletruntime: Options.RootDir %q is not an existing directory", opts.RootDir)
	}
	for name, d := range map[string]time.Duration{"InitialBackOff": opts.InitialBackOff, "MaxBackOff": opts.MaxBackOff, "GCPeriod": opts.GCPeriod} {
		if d < 0 {
			return nil, fmt.Errorf("kubeletruntime: Options.%s %s is negative", name, d)
		}
	}
	if opts.MaxPods < 0 {
		return nil, fmt.Errorf("kubeletruntime: Options.MaxPods %d is negative", opts.MaxPods)
	}
	initial, maxBackOff := cmp(opts.InitialBackOff, DefaultInitialBackOff), cmp(opts.MaxBackOff, DefaultMaxBackOff)
	if maxBackOff < initial {
		return nil, fmt.Errorf("kubeletruntime: Options.MaxBackOff %s is below InitialBackOff %s", maxBackOff, initial)
	}
	rs, is := opts.RuntimeService, opts.ImageService
	var own internalapi.RuntimeService // the service Stop closes
	if rs == nil {
		rs = crisim.NewRuntimeService(crisim.Options{NormalizeImages: opts.NormalizeImages})
		own = rs
	}
	if is == nil {
		is = crisim.NewImageService()
	}
	recorder := opts.Recorder
	if recorder == nil {
		recorder = &record.FakeRecorder{} // no Events channel: drops them
	}
	maxPods := opts.MaxPods
	if maxPods == 0 {
		maxPods = DefaultMaxPods
	}
	machine := &cadvisorapi.MachineInfo{MachineID: "kubeletruntime", NumCores: 4, MemoryCapacity: 8 << 30}
	allocatable := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewQuantity(int64(machine.NumCores), resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(int64(machine.MemoryCapacity), resource.BinarySI),
		v1.ResourcePods:   *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
	}
	pods := newPodStates()
	containers := newContainerManager()
	logsDir := filepath.Join(root, "pod-logs")
	if err := os.MkdirAll(logsDir, 0o755); err != nil {
		return nil, fmt.Errorf("kubeletruntime: %w", err)
	}
	// The probe results managers, shared by the runtime manager (which
	// kills a container whose liveness probe failed, and holds back the
	// init containers after a sidecar until its startup probe succeeded)
	// and the prober manager that feeds them, as the kubelet's
	// NewMainKubelet and kuscia's CRIProvider share them.
	liveness, readiness, startup := proberesults.NewManager(), proberesults.NewManager(), proberesults.NewManager()
	imageBackOff := flowcontrol.NewBackOff(initial, maxBackOff)
	helper := &runtimeHelper{root: root}
	runtime, _, err := kuberuntime.NewKubeGenericRuntimeManager(
		ctx,
		recorder,
		liveness,
		readiness,
		startup,
		root,
		logsDir,
		machine,
		pods,
		int32(maxPods),
		confinedOS{root: root},
		helper,
		hookClient,   // the HTTP hooks' client (network.go)
		imageBackOff, // image pull back-off
		false,        // parallel image pulls
		nil,          // no limit on parallel pulls
		0, 0,         // no pull throttling
		string(kubeletconfig.NeverVerifyPreloadedImages), // the kubelet's default
		nil,    // no allow-listed images
		"", "", // no credential provider plugins
		nil,   // singleProcessOOMKill: the runtime's default
		false, // no CFS quota
		metav1.Duration{Duration: cpuCFSQuotaPeriod}, // the kubelet's default CFS period
		nil, // no default sysctls
		rs, is,
		containers, // cm's stub, with pod cgroups kept in memory (resize.go)
		logs.NewStubContainerLogManager(),
		nil,   // no runtime classes
		false, // no seccomp default
		"",    // no swap
		func() v1.ResourceList { return allocatable.DeepCopy() },
		nil, // no memory throttling
		kubeletconfig.NoneMemoryReservationPolicy,
		noPullTimes{},
		noop.NewTracerProvider(),
		nil, nil, // no token manager, no service accounts: no credential plugins
		nil, // no init-container time recorder
	)
	if err != nil {
		if own != nil {
			_ = own.Close(ctx)
		}
		return nil, fmt.Errorf("kubeletruntime: NewKubeGenericRuntimeManager: %w", err)
	}
	statuses := newPodStatuses()
	// The runtime manager is the probes' command runner: an exec probe
	// runs with its RunInContainer, a CRI ExecSync.
	probes := prober.NewManager(statuses, liveness, readiness, startup, runtime, recorder)
	gcPolicy := DefaultGCPolicy()
	if opts.GCPolicy != nil {
		gcPolicy = *opts.GCPolicy
	}
	p := &Provider{
		events:      newNotifier(runtime, liveness, readiness, startup, imageBackOff),
		retry:       initial,
		runtime:     runtime,
		runtimeName: runtime.Type(),
		backOff:     flowcontrol.NewBackOff(initial, maxBackOff),
		pods:        pods,
		cgroups:     containers.pods,
		gcPeriod:    cmp(opts.GCPeriod, DefaultGCPeriod),
		gcPolicy:    gcPolicy,
		probes:      probes,
		statuses:    statuses,
		ownRuntime:  own,
		stop:        make(chan struct{}),
	}
	// A pod resized in place is reported to the agent (stubs.go).
	helper.reinspect = p.Notify
	return p, nil
}

// cmp returns d, or def when d is 0.
func cmp(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// RuntimeName is the Type of the container IDs the provider reports: the
// runtime name of its CRI service ("fakeRuntime" for crisim).
func (p *Provider) RuntimeName() string { return p.runtimeName }

// Start collects garbage every GCPeriod, as the kubelet's
// StartGarbageCollection and kuscia's CRIProvider.startGarbageCollection do:
// dead containers and sandboxes by the GC policy, and everything of the pods
// deleted with DeletePod or cleaned up as orphans. It blocks until ctx is
// done or Stop is called, then returns nil. Start after Stop returns at
// once; a second Start returns an error.
func (p *Provider) Start(ctx context.Context) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("kubeletruntime: Start called twice")
	}
	p.started = true
	done := make(chan struct{})
	p.done = done
	p.mu.Unlock()
	defer close(done)

	// The kubelet's PLEG and the probe results relayed to the agent, as
	// kuscia's CRIProvider.Start runs its PLEG and syncLoopIteration.
	// They end when Start returns (ctx done or Stop), before it does.
	var wg sync.WaitGroup
	defer wg.Wait()
	quit := make(chan struct{})
	defer close(quit)
	wg.Go(func() { p.relist(ctx, quit) })
	wg.Go(func() { p.relay(quit) })

	tick := time.NewTicker(p.gcPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.stop:
			return nil
		case <-tick.C:
			p.collectGarbage(ctx)
		}
	}
}

// collectGarbage runs the runtime manager's GarbageCollect with all sources
// ready (the provider knows of no other pod source), then forgets the
// removed pods of which nothing is left.
func (p *Provider) collectGarbage(ctx context.Context) {
	logger := klog.FromContext(ctx)
	if err := p.runtime.GarbageCollect(ctx, p.gcPolicy, true, false); err != nil {
		logger.Error(err, "kubeletruntime: container garbage collection failed")
		return
	}
	all, err := p.runtime.GetPods(ctx, true)
	if err != nil {
		logger.Error(err, "kubeletruntime: listing pods after garbage collection failed")
		return
	}
	p.cgroups.prune(all, p.pods.isRemoved)
	p.pods.prune(all)
}

// Stop ends Start and returns once it has returned; at once if Start was
// never called. It also stops the probe workers: each ends before its next
// probe (one sleeping at its start, as the prober's workers do in their
// first period, ends when it wakes). The runtime service New made itself
// (Options.RuntimeService nil) is closed, which ends the servers of its
// containers; one named in Options is left to its owner. Later calls do
// nothing.
func (p *Provider) Stop() {
	p.stopOnce.Do(func() {
		p.Notifier.Stop()
		close(p.stop)
		p.statuses.stop()
		p.probes.CleanupPods(nil)
	})
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done != nil {
		<-done
	}
	if p.ownRuntime != nil {
		_ = p.ownRuntime.Close(context.Background()) // crisim's returns nil; a second Close does nothing more
	}
}
