package conformance

import (
	"context"
	"fmt"
	"math"
	"net"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
	"github.com/kri-kit/testkit/suite"
)

// ErrNotSupported is the error a provider returns (wrapped or not) from an
// optional operation it does not implement. The suite turns a spec that hits
// it into a skip naming the operation. A skipped spec never counts as passed:
// a MUST spec skipped this way still makes the verdict "not conformant", and
// so fails the run. It is suite.ErrNotSupported, the one of every suite of
// the kit.
var ErrNotSupported = suite.ErrNotSupported

// Capability names an optional part of the KRI contract. A spec that needs a
// capability carries the Ginkgo label "capability:<name>" and is skipped,
// naming the capability, when Config.Capabilities does not declare it.
type Capability string

// The capabilities the suite knows.
const (
	// CapInitContainers: init containers run one at a time, in order, each
	// to successful completion before the next and before any app container.
	CapInitContainers Capability = "init-containers"
	// CapRestartPolicies: exited containers are restarted exactly as the
	// pod's RestartPolicy (Always, OnFailure, Never) allows.
	CapRestartPolicies Capability = "restart-policies"
	// CapGracePeriod: KillPod gives a container that ignores SIGTERM the
	// grace period (override, else the pod's) before killing it.
	CapGracePeriod Capability = "grace-period"
	// CapStartFailures: a failed container start is reported to the
	// ReasonCache (and cleared by a later success) and by RefreshPodStatus.
	CapStartFailures Capability = "start-failures"
	// CapOrphanCleanup: CleanupPods stops and forgets pods named by none of
	// its arguments.
	CapOrphanCleanup Capability = "orphan-cleanup"
	// CapNodeStatusUpdates: the NodeProvider pushes node changes it notices
	// through the callback of SetStatusUpdateCallback. Declaring it requires
	// Config.TriggerNodeStatusUpdate.
	CapNodeStatusUpdates Capability = "node-status-updates"
	// CapBackendFailures: the NodeProvider's Ping reports a backend that
	// has become unhealthy. Declaring it requires
	// Config.MakeBackendUnhealthy.
	CapBackendFailures Capability = "backend-failures"

	// The capabilities of what the pod spec asks of whoever runs the
	// containers (package doc, "What the pod spec asks of the node").

	// CapImagePullPolicy: imagePullPolicy Never with an image that is not
	// present fails the start with ErrImageNeverPull, and a pull that fails
	// keeps the container Waiting with ErrImagePull or ImagePullBackOff.
	CapImagePullPolicy Capability = "image-pull-policy"
	// CapEnvExpansion: env values reach the container's process, and
	// $(VAR) references in env values, command and args are expanded as
	// the kubelet expands them ($$ escapes a $).
	CapEnvExpansion Capability = "env-expansion"
	// CapTerminationMessage: the file at terminationMessagePath becomes
	// the message of the exited container, and FallbackToLogsOnError uses
	// the tail of its log when it failed without writing the file.
	CapTerminationMessage Capability = "termination-message"
	// CapLifecycleHooks: a container's postStart exec hook runs once it
	// has started and before the next container starts, and a failing one
	// kills it (PostStartHookError, restarted per policy); its preStop
	// exec hook runs before SIGTERM, its time taken from the grace period.
	CapLifecycleHooks Capability = "lifecycle-hooks"
	// CapSidecars: restartable init containers (restartPolicy Always) start
	// in order and keep running beside the app containers, are restarted
	// whatever the pod's restart policy, stop once the app containers are
	// done for good and, on KillPod, after the app containers, the last
	// first; RefreshPodStatus reports them started and ready while they run.
	CapSidecars Capability = "sidecars"
	// CapResize: SyncPod of a pod whose containers' CPU or memory
	// resources changed resizes its running containers in place, as the
	// kubelet's runtime manager does (in-place pod resize), restarting
	// only those whose resize policy asks for it, and GetPodStatus reports
	// the resources each container runs with.
	CapResize Capability = "resize"
	// CapProbes: the provider runs the exec probes of the pod spec
	// (startup, liveness, readiness) as the kubelet's prober does: a
	// liveness failure restarts the container, readiness and startup
	// results set Ready and Started in RefreshPodStatus.
	CapProbes Capability = "probes"
	// CapNetworkProbes: the provider also runs HTTP GET and TCP socket
	// probes and HTTP GET lifecycle hooks, sent to the container's port as
	// the kubelet's prober and hook runner send them (to the pod's IP, the
	// node's for a host-network pod): an HTTP probe succeeds on a status
	// from 200 to 399, a TCP probe when the connection is accepted, an
	// HTTP hook on any answer. The specs' containers serve with busybox
	// httpd (httpd -f -p PORT -h DIR, Workloads.Port).
	CapNetworkProbes Capability = "network-probes"
)

// AllCapabilities returns every capability the suite knows, sorted.
func AllCapabilities() []Capability {
	return []Capability{
		CapBackendFailures, CapEnvExpansion, CapGracePeriod,
		CapImagePullPolicy, CapInitContainers, CapLifecycleHooks, CapNetworkProbes, CapNodeStatusUpdates,
		CapOrphanCleanup, CapProbes, CapResize, CapRestartPolicies, CapSidecars,
		CapStartFailures,
		CapTerminationMessage,
	}
}

// Label returns the Ginkgo label of the specs that need c:
// "capability:<name>".
func (c Capability) Label() string { return "capability:" + string(c) }

// Config describes the provider under test and how to drive it. Only one of
// the two factories is needed; the specs of the other are skipped.
type Config struct {
	// NewPodProvider returns a fresh, unstarted PodProvider. It is called
	// once per pod spec with a context that is cancelled when the spec has
	// been cleaned up; the suite runs Start itself and calls Stop at the end
	// of the spec. nil: the pod specs are skipped.
	NewPodProvider func(ctx context.Context) (kri.PodProvider, error)
	// NewNodeProvider returns a fresh NodeProvider, once per node spec, with
	// a context cancelled when the spec ends. nil: the node specs are
	// skipped.
	NewNodeProvider func(ctx context.Context) (kri.NodeProvider, error)

	// Capabilities the provider declares. Specs needing a capability that
	// is not declared are skipped and do not count against the verdict.
	Capabilities []Capability

	// Workloads are the containers the suite asks the provider to run.
	// Unset fields take the defaults of DefaultWorkloads.
	Workloads Workloads

	// Timeouts bound every wait of the suite. Zero fields take the
	// defaults of DefaultTimeouts.
	Timeouts Timeouts
	// TimeoutScale multiplies every duration of Timeouts (0 means 1). It is
	// multiplied again by the -kri.timeout-scale flag, so that a slow CI
	// machine can stretch the suite without a code change.
	TimeoutScale float64

	// ExpectedFailures lists specs known to fail, by ID ("KRI-POD-012"),
	// each with the reason. Such a spec is reported as an expected failure
	// (a skip in Ginkgo's terms, its first failure line in the summary)
	// instead of a failure; if it passes, it fails and asks to be removed
	// from the list.
	//
	// For a MUST spec an expected failure still makes the verdict "not
	// conformant", so the run still fails: the list documents known gaps
	// (and, with SkipExpectedFailures, saves their timeouts) while the
	// provider adopts the suite; it never turns a run green.
	//
	// For a SHOULD spec an entry is accepted and costs nothing: the verdict
	// is unaffected and the run does not fail, even with Strict. Without
	// Strict it is unnecessary (a SHOULD failure never fails the run) and
	// the summary says so; with Strict it exempts that one spec while the
	// others stay strict.
	ExpectedFailures map[string]string

	// SkipExpectedFailures does not run the specs listed in
	// ExpectedFailures: each is reported as an expected failure "not run"
	// and counts for the verdict exactly as a failure would, but costs no
	// time (an expected failure usually waits out a full state timeout).
	// A listed spec that has been fixed goes unnoticed until a run without
	// it. The -kri.skip-expected-failures flag sets it too.
	SkipExpectedFailures bool

	// Strict makes the SHOULD specs gate the run like the MUST specs: the
	// run also fails when an applicable SHOULD spec fails, is skipped
	// (ErrNotSupported) or does not run, unless ExpectedFailures lists it.
	// The verdict, which only MUST specs decide, is the same with and
	// without it. The -kri.strict flag sets it too.
	Strict bool

	// VirtualTime runs each spec (the provider's construction, Start, every
	// call and wait of the spec, its cleanup and Stop) in a testing/synctest
	// bubble of its own, on a clock that jumps ahead whenever every goroutine
	// of the spec waits: the suite's waits, grace periods and probe periods
	// then cost no real time. It is for providers whose only clock is Go's
	// time package and that do no real I/O (an in-memory fake, a simulated
	// backend, a fake clientset): a provider that waits for a process, a
	// socket or a file sees its clock stand still, and the suite fails the
	// spec once nothing has happened for the call timeout (at least 10s) of
	// real time. In a bubble every goroutine the provider starts must end
	// by the end of the spec (after Stop and its context cancelled); one
	// left blocked fails the spec, listing it. Needs Run (not
	// Describe*Provider): the bubbles are synctest subtests of its
	// *testing.T. The benchmark specs, which measure the real clock, are
	// skipped under it.
	VirtualTime bool

	// Parallel lets the specs run in parallel processes under the Ginkgo
	// CLI of the module: 'go run github.com/onsi/ginkgo/v2/ginkgo
	// --procs=N <package, or its test binary from go test -c> -- <test
	// flags>' (README, "Parallel specs"). Every process calls Run and
	// builds its own providers; they may share one runtime or backend (a
	// containerd, an API server): every pod of the suite has a name and
	// UID of its own, and the specs that call CleanupPods, which stops the
	// pods it is not handed, run alone after the others (Ginkgo's Serial),
	// as do the benchmarks. Process 1 writes the summary and the verdict
	// of the whole run. false (the default) marks every spec Serial, so
	// that 'ginkgo -p' runs them one at a time.
	Parallel bool

	// ConcurrentPods is the number of pods the concurrency spec drives at
	// once (default 8).
	ConcurrentPods int
	// BenchmarkPods is the number of pods each benchmark measures
	// (default 20).
	BenchmarkPods int

	// Namespace of the pods the suite creates (default "kri-conformance").
	Namespace string
	// NodeName is the name the node specs configure (default
	// "kri-conformance-node").
	NodeName string
	// RuntimeName is handed to pkgcontainer.ConvertPodStatusToRunningPod
	// (default: the Type of the pod's container IDs).
	RuntimeName string

	// TriggerNodeStatusUpdate makes the NodeProvider notice a node change on
	// its own (for example mark the node NotReady), so that it pushes the
	// node to the status callback. Required with CapNodeStatusUpdates.
	TriggerNodeStatusUpdate func(ctx context.Context, p kri.NodeProvider) error

	// MakeBackendUnhealthy makes the backend of the NodeProvider unhealthy
	// or unreachable (for example stop the daemon it talks to), so that
	// the next Ping must report it. The provider is not used after the
	// spec, so the backend need not be healed. Required with
	// CapBackendFailures.
	MakeBackendUnhealthy func(ctx context.Context, p kri.NodeProvider) error

	// SummaryFile, when set, receives the human summary the suite prints at
	// the end (the -kri.summary flag overrides it).
	SummaryFile string
}

// Workloads are the container templates the suite runs. The defaults use a
// small command vocabulary that both the fake provider and a real shell
// understand, so a host-process provider can run them too. Each function
// returns a container without Name; the suite names it.
type Workloads struct {
	// Image of the default containers (default "busybox:1.36").
	Image string
	// RunsUntilKilled: a container that runs until it is stopped and exits
	// on SIGTERM, as PID 1 of a container too (default: sh -c "trap 'exit
	// 143' TERM; sleep infinity & wait").
	RunsUntilKilled func() v1.Container
	// RunsFor: a container that runs for about d, then exits 0 (default:
	// sh -c "sleep S; exit 0").
	RunsFor func(d time.Duration) v1.Container
	// ExitsWithCode: a container that exits with code at once (default:
	// sh -c "exit N").
	ExitsWithCode func(code int) v1.Container
	// FailsToStart: a container whose start fails every time, like a
	// missing binary (default: /nonexistent/kri-conformance).
	FailsToStart func() v1.Container
	// PullFails: a container whose image cannot be pulled, so that its
	// start fails until the spec changes only its image to Image (the one
	// change of a container the API server allows). Default: sleep infinity
	// in kri.invalid/kri-conformance/missing:1 (workload.MissingImageDomain,
	// which never resolves).
	PullFails func() v1.Container
	// IgnoresSIGTERM: a container that runs until killed and ignores
	// SIGTERM (default: sh -c "trap '' TERM; sleep infinity").
	IgnoresSIGTERM func() v1.Container
	// Shell: a container that runs script with sh -c (default: sh -c
	// SCRIPT in Image). The pod-spec specs (env expansion, termination
	// messages) run the vocabulary of package workload through it.
	Shell func(script string) v1.Container
	// TerminationMessagePath returns the terminationMessagePath of a
	// container of the termination-message specs, which write it with
	// echo -n MSG > PATH (default "/dev/termination-log", the API
	// default). A provider without a container file system (host
	// processes) returns a fresh host path for every call.
	TerminationMessagePath func() string
	// ProbeFilePath returns the absolute path of a file that a container
	// of the probe specs writes and removes (echo ok > PATH, rm -f PATH)
	// and that its exec probes test for (test -e PATH) (default
	// "/tmp/kri-probe": every container has a /tmp of its own). A provider
	// without a container file system returns a fresh host path for
	// every call.
	ProbeFilePath func() string
	// Port returns the TCP port a container of the network-probe specs
	// serves on (httpd -f -p PORT -h DIR, DIR the directory of a
	// ProbeFilePath) and its probes and hooks are sent to. Default: a port
	// that is free on this host when asked (the kernel picks it), so that
	// host-network pods and parallel runs do not collide; a provider whose
	// pods have a network of their own may return a fixed one.
	Port func() int
	// Pod, when set, adjusts every pod the suite creates (node selector,
	// runtime class, security context, ...).
	Pod func(*v1.Pod)
}

// DefaultImage is the image of the default workloads.
const DefaultImage = "busybox:1.36"

// DefaultWorkloads returns the default workloads with the given image
// (DefaultImage when empty).
func DefaultWorkloads(image string) Workloads {
	if image == "" {
		image = DefaultImage
	}
	c := func(cmd ...string) v1.Container {
		return v1.Container{Image: image, Command: cmd, ImagePullPolicy: v1.PullIfNotPresent}
	}
	return Workloads{
		Image: image,
		// The trap makes it exit on SIGTERM as PID 1 of a container too,
		// where a process without a handler ignores it (see package
		// workload, "What PID 1 does").
		RunsUntilKilled: func() v1.Container { return c("sh", "-c", "trap 'exit 143' TERM; sleep infinity & wait") },
		RunsFor: func(d time.Duration) v1.Container {
			return c("sh", "-c", "sleep "+seconds(d)+"; exit 0")
		},
		ExitsWithCode: func(code int) v1.Container { return c("sh", "-c", "exit "+strconv.Itoa(code)) },
		FailsToStart:  func() v1.Container { return c("/nonexistent/kri-conformance") },
		PullFails: func() v1.Container {
			m := c("sleep", "infinity")
			m.Image = workload.MissingImageDomain + "/kri-conformance/missing:1"
			return m
		},
		IgnoresSIGTERM: func() v1.Container { return c("sh", "-c", "trap '' TERM; sleep infinity") },
		Shell:          func(script string) v1.Container { return c("sh", "-c", script) },
		ProbeFilePath:  func() string { return "/tmp/kri-probe" },
		Port:           freePort,
		TerminationMessagePath: func() string {
			return v1.TerminationMessagePathDefault
		},
	}
}

// freePort returns a TCP port that is free on this host now: the kernel
// picks it for a listener on the loopback address, which is closed at
// once. Should that fail, it returns 8080, the port of the kubelet's node
// e2e probe tests.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 8080
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// seconds formats d as decimal seconds for sleep ("0.25", "2").
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// Timeouts bound the waits of the suite. Specs use no other durations.
type Timeouts struct {
	// Call is how long one provider call may take before the spec fails
	// with "<Method> did not return within <Call>" (default 30s).
	Call time.Duration
	// State is how long the suite waits for a pod or node to reach a
	// state, syncing the pod when kuscia's agent would (default 60s). It
	// must cover the provider's back-offs: the kubelet's crash-loop and
	// image back-offs start at 10s and double.
	State time.Duration
	// Poll is the interval between two rounds of such a wait (default
	// 200ms).
	Poll time.Duration
	// Stable is how long a state must hold for checks that something does
	// not happen: no restart, no duplicate, Start still blocking (default
	// 2s).
	Stable time.Duration
	// ShortRun is how long the short-lived workloads (RunsFor) run
	// (default 1s).
	ShortRun time.Duration
	// GracePeriod is the TerminationGracePeriodSeconds of the pods the
	// suite creates and the grace period the grace-period specs give a
	// SIGTERM-ignoring container, rounded up to whole seconds (default 1s).
	// With CapGracePeriod it must be below Call.
	GracePeriod time.Duration
}

// DefaultTimeouts returns the defaults, chosen for real, slow providers.
func DefaultTimeouts() Timeouts {
	return Timeouts{
		Call:        30 * time.Second,
		State:       60 * time.Second,
		Poll:        200 * time.Millisecond,
		Stable:      2 * time.Second,
		ShortRun:    time.Second,
		GracePeriod: time.Second,
	}
}

// flags are the command-line flags of the suite (-kri.timeout-scale,
// -kri.summary, -kri.strict, -kri.skip-expected-failures), registered on
// flag.CommandLine so that 'go test' parses them next to the -ginkgo.* flags.
var flags = kriSuite.RegisterFlags()

// settings is a Config with its defaults applied and its durations scaled.
type settings struct {
	cfg       Config
	w         Workloads
	t         Timeouts // scaled
	scale     float64
	graceSecs int64
	caps      map[Capability]bool
	// strict: Config.Strict or -kri.strict.
	strict bool
	// skipXFail: Config.SkipExpectedFailures or -kri.skip-expected-failures.
	skipXFail bool
}

// validate checks the parts of cfg that do not depend on flags.
func validate(cfg Config) error {
	c := suite.CheckConfig("conformance.Config")
	c.Providers(cfg.NewPodProvider != nil, cfg.NewNodeProvider != nil)
	suite.CheckCapabilities(c, cfg.Capabilities, AllCapabilities())
	suite.CheckNeeds(c, cfg.Capabilities, CapNodeStatusUpdates, "TriggerNodeStatusUpdate", cfg.TriggerNodeStatusUpdate != nil)
	suite.CheckNeeds(c, cfg.Capabilities, CapBackendFailures, "MakeBackendUnhealthy", cfg.MakeBackendUnhealthy != nil)
	c.ExpectedFailures(cfg.ExpectedFailures, func(id string) bool { return specByID(id) != nil })
	c.TimeoutScale(cfg.TimeoutScale)
	t := cfg.Timeouts
	c.Duration("Timeouts.Call", t.Call)
	c.Duration("Timeouts.State", t.State)
	c.Duration("Timeouts.Poll", t.Poll)
	c.Duration("Timeouts.Stable", t.Stable)
	c.Duration("Timeouts.ShortRun", t.ShortRun)
	c.Duration("Timeouts.GracePeriod", t.GracePeriod)
	c.Count("ConcurrentPods", cfg.ConcurrentPods)
	c.Count("BenchmarkPods", cfg.BenchmarkPods)
	return c.Err()
}

// resolve applies defaults and the timeout scale (Config.TimeoutScale times
// the -kri.timeout-scale flag). Call it once flags are parsed.
func resolve(cfg Config) (*settings, error) {
	if err := validate(cfg); err != nil {
		return nil, err
	}
	s := &settings{cfg: cfg, caps: map[Capability]bool{}}
	for _, c := range cfg.Capabilities {
		s.caps[c] = true
	}

	def := DefaultWorkloads(cfg.Workloads.Image)
	w := cfg.Workloads
	w.Image = def.Image
	if w.RunsUntilKilled == nil {
		w.RunsUntilKilled = def.RunsUntilKilled
	}
	if w.RunsFor == nil {
		w.RunsFor = def.RunsFor
	}
	if w.ExitsWithCode == nil {
		w.ExitsWithCode = def.ExitsWithCode
	}
	if w.FailsToStart == nil {
		w.FailsToStart = def.FailsToStart
	}
	if w.PullFails == nil {
		w.PullFails = def.PullFails
	}
	if w.IgnoresSIGTERM == nil {
		w.IgnoresSIGTERM = def.IgnoresSIGTERM
	}
	if w.Shell == nil {
		w.Shell = def.Shell
	}
	if w.ProbeFilePath == nil {
		w.ProbeFilePath = def.ProbeFilePath
	}
	if w.TerminationMessagePath == nil {
		w.TerminationMessagePath = def.TerminationMessagePath
	}
	if w.Port == nil {
		w.Port = def.Port
	}
	s.w = w

	scale, err := flags.Scale(cfg.TimeoutScale)
	if err != nil {
		return nil, err
	}
	s.scale = scale

	d := DefaultTimeouts()
	pick := func(v, def time.Duration) time.Duration {
		if v == 0 {
			v = def
		}
		return time.Duration(float64(v) * scale)
	}
	t := cfg.Timeouts
	s.t = Timeouts{
		Call:        pick(t.Call, d.Call),
		State:       pick(t.State, d.State),
		Poll:        max(pick(t.Poll, d.Poll), time.Millisecond),
		Stable:      pick(t.Stable, d.Stable),
		ShortRun:    max(pick(t.ShortRun, d.ShortRun), time.Millisecond),
		GracePeriod: pick(t.GracePeriod, d.GracePeriod),
	}
	s.graceSecs = max(int64(math.Ceil(s.t.GracePeriod.Seconds())), 1)
	s.t.GracePeriod = time.Duration(s.graceSecs) * time.Second
	if s.caps[CapGracePeriod] && s.t.Call <= s.t.GracePeriod {
		return nil, fmt.Errorf("invalid conformance.Config: with capability %q the call timeout (%s after scaling) must exceed the grace period (%s, whole seconds)", CapGracePeriod, s.t.Call, s.t.GracePeriod)
	}
	if s.t.Stable < s.t.Poll {
		s.t.Stable = s.t.Poll
	}

	if s.cfg.ConcurrentPods == 0 {
		s.cfg.ConcurrentPods = 8
	}
	if s.cfg.BenchmarkPods == 0 {
		s.cfg.BenchmarkPods = 20
	}
	if s.cfg.Namespace == "" {
		s.cfg.Namespace = "kri-conformance"
	}
	if s.cfg.NodeName == "" {
		s.cfg.NodeName = "kri-conformance-node"
	}
	if flags.Summary != "" {
		s.cfg.SummaryFile = flags.Summary
	}
	s.strict = cfg.Strict || flags.Strict
	s.skipXFail = cfg.SkipExpectedFailures || flags.SkipExpectedFailures
	return s, nil
}

// capList joins capabilities for messages: sorted, "none" when empty.
func capList(cs []Capability) string { return suite.NameList(cs) }
