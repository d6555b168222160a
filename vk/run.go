package vk

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	"k8s.io/client-go/rest"

	"github.com/kri-kit/testkit/suite"
)

// Config says what the suite runs against and how.
type Config struct {
	// NewPodProvider returns a fresh pod provider for one spec; ctx is
	// cancelled once the spec is over. A provider that implements
	// node.PodNotifier is async (VK never polls GetPodStatus), otherwise VK
	// polls its GetPodStatus every 5s. Nil skips the pod specs.
	NewPodProvider func(ctx context.Context) (node.PodLifecycleHandler, error)
	// NewNodeProvider returns a fresh node provider for one spec. Nil skips
	// the node specs.
	NewNodeProvider func(ctx context.Context) (node.NodeProvider, error)
	// VirtualTime runs each spec — the provider's construction, VK's
	// controllers, the fake API server and every wait — in a testing/synctest
	// bubble of its own, whose clock jumps ahead whenever all of them wait:
	// for providers whose only clock is Go's time and that do no real I/O.
	// A goroutine of the provider still there a minute (of the bubble's
	// clock) after the spec has stopped VK and cancelled its context fails
	// the spec, with its stack; one that sleeps and then ends by itself
	// does not.
	VirtualTime bool
	// Strict makes the SHOULD specs gate the run like the MUST specs: the
	// run also fails when an applicable SHOULD spec fails, is skipped
	// (ErrNotSupported) or does not run, unless ExpectedFailures lists it.
	// The verdict, which only MUST specs decide, is the same with and
	// without it. The -vk.strict flag sets it too.
	Strict bool
	// ExpectedFailures lists specs known to fail, by ID ("KVK-POD-005"),
	// each with the reason. Such a spec is reported as an expected failure
	// (a skip in Ginkgo's terms, its first failure line in the summary)
	// instead of a failure; if it passes, it fails and asks to be removed
	// from the list. For a MUST spec an expected failure still makes the
	// verdict "not conformant", so the run still fails: the list documents
	// known gaps while the provider adopts the suite, it never turns a run
	// green. For a SHOULD spec it matters only with Strict, where it
	// exempts that one spec.
	ExpectedFailures map[string]string
	// SkipExpectedFailures does not run the specs listed in
	// ExpectedFailures: each is reported as an expected failure "not run"
	// and counts for the verdict as a failure would, but costs no time.
	// The -vk.skip-expected-failures flag sets it too.
	SkipExpectedFailures bool
	// TimeoutScale multiplies how long a spec waits for what VK and the
	// provider must get done (a status VK publishes, a pod going away,
	// calls returning); 0 means 1. The -vk.timeout-scale flag multiplies it
	// again, so that a slow machine or a slow backend can stretch the suite
	// without a code change. VK's own periods (its 5s status poll, the
	// lease) and the windows in which something must not happen are VK's
	// and keep their length.
	TimeoutScale float64
	// Parallel lets the specs run in parallel processes under the Ginkgo
	// CLI of the provider's module: 'go run github.com/onsi/ginkgo/v2/ginkgo
	// --procs=N <package, or its test binary from go test -c> -- <test
	// flags>'. Every process calls Run and builds its own providers, and
	// every spec has an API server and a VK of its own; the providers of two
	// processes must not share a backend whose pods GetPods lists, since VK
	// deletes every pod GetPods answers that its API server does not have
	// (PodController.deleteDanglingPods, node/podcontroller.go). Process 1
	// writes the summary and the verdict of the whole run. false (the
	// default) marks every spec Serial, so that 'ginkgo -p' runs them one at
	// a time.
	Parallel bool
	// SummaryFile, when set, receives the summary the suite prints at the
	// end (the -vk.summary flag overrides it).
	SummaryFile string
	// Capabilities the provider declares: what of the pod spec its backend
	// does (see Capability). A spec that needs a capability not declared
	// here is skipped, with the capability named in the reason, and does
	// not count against the verdict.
	Capabilities []Capability
	// MakeBackendUnhealthy makes the backend of the node provider p
	// unhealthy or unreachable (stop the service it talks to), so that its
	// Ping must report it from then on. p is not used after the spec, so
	// the backend need not be healed. Required with CapBackendFailures.
	MakeBackendUnhealthy func(ctx context.Context, p node.NodeProvider) error
	// APIServer, when set, is the kube-apiserver VK's controllers and the
	// suite talk to instead of the in-process fake one: a real API server
	// validates what VK writes, so a status it rejects (an invalid pod IP,
	// say) fails the spec that waits for it to be published, the rejection
	// named in the message. The suite's pods live in Namespace, bound to
	// the node (Config.NodeName); before and after each spec they, the node
	// and its lease are deleted, so the API server must be a test one, and
	// two runs against it at once need two node names. Not with
	// VirtualTime: a real API server runs on the real clock.
	APIServer *rest.Config
	// NodeName is the node the suite's VK runs as (default NodeName): every
	// pod of a spec is bound to it, and its NodeController registers it.
	NodeName string
	// Workloads are the containers the capability specs ask the provider
	// to run; nil fields take DefaultWorkloads' (shell commands in
	// busybox).
	Workloads Workloads
	// TriggerNodeStatusUpdate makes the node provider p notice, on its
	// own, a change of its node that it must push through the
	// NotifyNodeStatus callback (a condition that appears or changes: the
	// backend reports memory pressure, say); each call a change from the
	// node as it was (memory pressure, then none). Required with
	// CapNodeStatusUpdates.
	TriggerNodeStatusUpdate func(ctx context.Context, p node.NodeProvider) error
	// NodeStatusPeriod is the longest the node provider takes to push a
	// change of its node it noticed (the period at which it polls its
	// backend), when that is longer than VK's node lease (40s,
	// DefaultLeaseDuration in node/lease_controller_v1.go): KVK-NODE-005
	// and 006 wait that long for a push instead of the lease's duration.
	NodeStatusPeriod time.Duration
}

// nodeName returns the node the suite's VK runs as.
func (c Config) nodeName() string {
	if c.NodeName != "" {
		return c.NodeName
	}
	return NodeName
}

// Capability names what the pod spec asks of a backend that a provider may
// leave out (a backend that runs each pod once, to completion, has no
// restarts). The specs that need one judge it on the status VK publishes,
// with the containers of Config.Workloads, by default shell commands in
// the small vocabulary that vk/simprovider documents (sh -c "sleep 10; exit
// 3", trap 'exit 3' TERM, /nonexistent/...), which a real shell image
// (busybox) runs to the same effect.
type Capability string

// The capabilities the suite knows.
const (
	// CapContainerRestarts: a container that exits is restarted as the
	// pod's restartPolicy says (Always, OnFailure), each restart counted in
	// its RestartCount, the run that ended in its LastTerminationState, the
	// pod Running meanwhile.
	CapContainerRestarts Capability = "container-restarts"
	// CapStartFailures: a container the backend cannot start (a missing
	// executable, an image it cannot run) is reported Waiting with a
	// reason, the pod Pending.
	CapStartFailures Capability = "start-failures"
	// CapExitCodes: once DeletePod has stopped a pod, each container's
	// terminated state carries the exit code its process ended with (its
	// SIGTERM handler's).
	CapExitCodes Capability = "exit-codes"
	// CapGracePeriod: DeletePod gives a container's SIGTERM handler the
	// pod's deletionGracePeriodSeconds before it kills the container.
	CapGracePeriod Capability = "grace-period"
	// CapBackendFailures: the node provider's Ping reports a backend that
	// has become unhealthy. Declaring it requires
	// Config.MakeBackendUnhealthy.
	CapBackendFailures Capability = "backend-failures"
	// CapInitContainers: a pod's init containers run one at a time, in
	// order, each to completion (exit code 0) before the next and before
	// any app container starts, reported in InitContainerStatuses, the pod
	// Pending meanwhile. One that fails is restarted as the pod's
	// restartPolicy says (Always, OnFailure), the app containers still
	// waiting; under restartPolicy Never it fails the pod. KVK-POD-035
	// needs CapTerminationMessages too.
	CapInitContainers Capability = "init-containers"
	// CapTerminationMessages: a terminated container's state carries its
	// termination message: what it wrote to its terminationMessagePath,
	// or, under terminationMessagePolicy FallbackToLogsOnError, the tail of
	// its log when it failed and wrote nothing.
	CapTerminationMessages Capability = "termination-messages"
	// CapReadinessProbes: a container with a readiness probe is reported
	// Ready, and the pod's Ready and ContainersReady conditions True, only
	// once its probe passes (not as soon as it runs).
	CapReadinessProbes Capability = "readiness-probes"
	// CapLivenessProbes: a container whose liveness probe fails (its
	// failureThreshold times in a row) is killed and restarted as the
	// pod's restartPolicy says, the restart counted. Its spec needs
	// CapContainerRestarts too.
	CapLivenessProbes Capability = "liveness-probes"
	// CapEnv: a container's env (as VK hands it over, resolved) is its
	// process's environment, and the $(VAR) references of its command and
	// args are expanded with it, as the kubelet does. Its spec reads what
	// the process saw through its termination message, and needs
	// CapTerminationMessages too.
	CapEnv Capability = "env"
	// CapLifecycleHooks: a container's exec lifecycle hooks run in it as
	// the kubelet runs them (kuberuntime_container.go): postStart right
	// after the container starts, preStop when DeletePod stops it, before
	// its SIGTERM and within the grace period; what a hook writes is the
	// container's (its termination message, say); a container whose
	// postStart hook fails is killed and restarted as the restart policy
	// says. KVK-POD-025 and 026 need CapTerminationMessages too, 027
	// CapContainerRestarts.
	CapLifecycleHooks Capability = "lifecycle-hooks"
	// CapStartupProbes: a container with a startup probe is reported
	// Started, and its readiness (and liveness) probes run, only once the
	// startup probe passes; one whose startup probe fails failureThreshold
	// times in a row is killed and restarted as the restart policy says
	// (the kubelet's prober/worker.go doProbe). KVK-POD-028 needs
	// CapReadinessProbes too, 029 CapContainerRestarts.
	CapStartupProbes Capability = "startup-probes"
	// CapNodeStatusUpdates: the node provider pushes a change of its node
	// it notices (Config.TriggerNodeStatusUpdate makes it notice one)
	// through the NotifyNodeStatus callback. Declaring it requires
	// Config.TriggerNodeStatusUpdate.
	CapNodeStatusUpdates Capability = "node-status-updates"
)

// AllCapabilities returns every capability the suite knows, sorted.
func AllCapabilities() []Capability {
	return []Capability{CapBackendFailures, CapContainerRestarts, CapEnv, CapExitCodes, CapGracePeriod, CapInitContainers,
		CapLifecycleHooks, CapLivenessProbes, CapNodeStatusUpdates, CapReadinessProbes, CapStartFailures, CapStartupProbes, CapTerminationMessages}
}

// Label returns the Ginkgo label of the specs that need c:
// "capability:<name>".
func (c Capability) Label() string { return "capability:" + string(c) }

// vkSuite names the suite in what package suite writes and reads back: its
// summary, its flags (-vk.*), its report entries (vk:*) and its spec IDs.
var vkSuite = suite.Suite{
	Name:   "VK provider conformance",
	Prefix: "vk",
	SpecID: regexp.MustCompile(`^\[(KVK-[A-Z]+-\d{3})\]`),
}

// flags are the suite's command-line flags: -vk.strict, -vk.summary,
// -vk.timeout-scale and -vk.skip-expected-failures.
var flags = vkSuite.RegisterFlags()

// Report entries of a spec that the summary reads back, beside those of
// package suite (vk:warning, vk:expected-failure).
const (
	// entryNotApplicable carries why a skipped spec does not apply to the
	// providers (a capability not declared, no provider of its kind, a sync
	// provider for an async-only spec): it then does not count.
	entryNotApplicable = "vk:not-applicable"
	// entryTook carries how long a spec took, shown with a passed spec.
	entryTook = "vk:took"
)

// ErrNotSupported is the error a provider returns (wrapped or not, with %w,
// pkg/errors or VK's errdefs) from an operation it does not implement. A
// spec during which a provider call answered it is skipped, the call named;
// a MUST spec skipped this way still makes the verdict "not conformant". It
// is suite.ErrNotSupported, the one of every suite of the kit (the KRI
// suite's conformance.ErrNotSupported too).
var ErrNotSupported = suite.ErrNotSupported

// settings is a Config with the flags applied.
type settings struct {
	cfg       Config
	scale     float64
	strict    bool
	skipXFail bool
}

// validate checks cfg.
func validate(cfg Config) error {
	c := suite.CheckConfig("vk.Config")
	c.Providers(cfg.NewPodProvider != nil, cfg.NewNodeProvider != nil)
	suite.CheckCapabilities(c, cfg.Capabilities, AllCapabilities())
	suite.CheckNeeds(c, cfg.Capabilities, CapBackendFailures, "MakeBackendUnhealthy", cfg.MakeBackendUnhealthy != nil)
	suite.CheckNeeds(c, cfg.Capabilities, CapNodeStatusUpdates, "TriggerNodeStatusUpdate", cfg.TriggerNodeStatusUpdate != nil)
	c.ExpectedFailures(cfg.ExpectedFailures, func(id string) bool {
		return slices.ContainsFunc(specs, func(s spec) bool { return s.ID == id })
	})
	c.TimeoutScale(cfg.TimeoutScale)
	c.Duration("NodeStatusPeriod", cfg.NodeStatusPeriod)
	if cfg.VirtualTime && cfg.APIServer != nil {
		c.Addf("VirtualTime and APIServer exclude each other (a real API server runs on the real clock)")
	}
	return c.Err()
}

// resolve validates cfg and applies the flags (parsed by then).
func resolve(cfg Config) (*settings, error) {
	if err := validate(cfg); err != nil {
		return nil, err
	}
	scale, err := flags.Scale(cfg.TimeoutScale)
	if err != nil {
		return nil, err
	}
	if flags.Summary != "" {
		cfg.SummaryFile = flags.Summary
	}
	cfg.TimeoutScale = scale
	return &settings{cfg: cfg, scale: scale, strict: cfg.Strict || flags.Strict,
		skipXFail: cfg.SkipExpectedFailures || flags.SkipExpectedFailures}, nil
}

// Run runs the suite from a plain 'go test': it registers one Ginkgo spec
// per entry of Catalogue and calls ginkgo.RunSpecs, once per test binary.
// The -ginkgo.* flags keep working (-ginkgo.focus=KVK-POD-005,
// -ginkgo.label-filter=must, -ginkgo.junit-report=FILE, -ginkgo.v), and so
// do the suite's own: -vk.strict, -vk.summary=FILE, -vk.timeout-scale=N,
// -vk.skip-expected-failures.
//
// The run, and so the test, fails exactly when the verdict is "not
// conformant" (an applicable MUST spec failed, was skipped, did not run or
// is an expected failure) or, with Config.Strict or -vk.strict, when an
// applicable SHOULD spec did not pass and ExpectedFailures does not list
// it; a SHOULD failure is otherwise a warning. Its rules are package
// suite's, the KRI suite's too. The summary, printed at the end, lists
// every spec with its level, result and time, the failures with their
// first line, the verdict and the gate. Run fails t at once when cfg is
// invalid.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	st, err := resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gomega.RegisterFailHandler(ginkgo.Fail)
	for _, s := range sortedSpecs() {
		level := strings.ToLower(string(s.Level))
		group := "pod"
		if s.node {
			group = "node"
		}
		labels := ginkgo.Label(group, level)
		for _, c := range s.Capabilities {
			labels = append(labels, c.Label())
		}
		args := []any{labels}
		if !st.cfg.Parallel {
			args = append(args, ginkgo.Serial)
		}
		args = append(args, func() { runInGinkgo(t, s, st) })
		ginkgo.It(fmt.Sprintf("[%s] %s", s.ID, s.Title), args...)
	}
	ginkgo.ReportAfterSuite(vkSuite.Name+" summary", func(report ginkgo.Report) {
		outs := outcomes(report, st)
		j := vkSuite.Judge(outs, report)
		vkSuite.Write(renderSummary(outs, st, j, modeOf(report)), j, st.cfg.SummaryFile)
	})
	ginkgo.RunSpecs(t, "virtual-kubelet provider conformance")
}

// runInGinkgo is the body of spec s's Ginkgo spec: the skips of a spec that
// does not apply or is an expected failure not to run, then the spec, whose
// end package suite reports (suite.Suite.Settle).
func runInGinkgo(t *testing.T, s spec, st *settings) {
	ginkgo.AddReportEntry("vk:code", s.VK, ginkgo.ReportEntryVisibilityFailureOrVerbose)
	if reason := notApplicable(s, st.cfg); reason != "" {
		ginkgo.AddReportEntry(entryNotApplicable, reason, ginkgo.ReportEntryVisibilityNever)
		ginkgo.Skip(reason)
	}
	reason, xfail := st.cfg.ExpectedFailures[s.ID]
	if xfail && st.skipXFail {
		vkSuite.SkipExpectedFailure(reason)
	}
	o := runSpec(t, s, st.cfg)
	ginkgo.AddReportEntry(entryTook, tookText(o), ginkgo.ReportEntryVisibilityNever)
	if m := judgedText(); m != "" && !s.node {
		ginkgo.AddReportEntry(entryMode, m, ginkgo.ReportEntryVisibilityNever)
	}
	if o.Skipped {
		if o.NotApplicable {
			ginkgo.AddReportEntry(entryNotApplicable, o.Message, ginkgo.ReportEntryVisibilityNever)
		}
		ginkgo.Skip(o.Message)
	}
	end := suite.End{ID: s.ID, Level: s.Level, Strict: st.strict, XFail: xfail, Reason: reason}
	if o.Failed {
		end.Failure = &suite.Failure{Message: fmt.Sprintf("[%s %s] %s", s.ID, s.Level, o.Message), Location: types.NewCodeLocation(0)}
	}
	vkSuite.Settle(end)
}

// tookText is how long a spec took: on its clock, and on the real one
// under Config.VirtualTime.
func tookText(o outcome) string {
	took := o.Took.Round(time.Millisecond).String()
	if o.Virtual {
		took += fmt.Sprintf(" virtual, %v real", o.Real.Round(time.Millisecond))
	}
	return took
}

// outcomes pairs every spec with its result in report (suite.Classify), in
// the order of the catalogue. A spec applies unless it needs what the
// configuration lacks, or a skip of it said why it does not apply; a passed
// spec's detail is its time.
func outcomes(report ginkgo.Report, st *settings) []suite.Outcome {
	byID := vkSuite.Reports(report)
	var outs []suite.Outcome
	for _, s := range sortedSpecs() {
		sr, ran := byID[s.ID]
		o := vkSuite.Classify(suite.Spec{ID: s.ID, Level: s.Level, Text: s.Title}, sr, ran,
			func(id string) string { return st.cfg.ExpectedFailures[id] })
		o.Strict = st.strict
		reason := notApplicable(s, st.cfg)
		if r, found := suite.EntryValue(sr, entryNotApplicable); found && reason == "" {
			reason = r
		}
		o.Applicable = reason == ""
		switch {
		case o.Result == suite.Passed:
			o.Detail, _ = suite.EntryValue(sr, entryTook)
		case !o.Applicable && o.Result != suite.Failed:
			o.Detail = "not applicable: " + reason
		}
		outs = append(outs, o)
	}
	return outs
}

// modeOf is how the pod specs of report judged their provider (the
// entryMode of the first that says), "" when none built one.
func modeOf(report ginkgo.Report) string {
	for _, sr := range report.SpecReports {
		if m, ok := suite.EntryValue(sr, entryMode); ok {
			return m
		}
	}
	return ""
}

// renderSummary is the suite's summary: its providers, capabilities and
// clock over suite.Summary's text.
func renderSummary(outs []suite.Outcome, st *settings, j suite.Judgement, mode string) string {
	configured := func(ok bool) string {
		if ok {
			return "configured"
		}
		return "not configured"
	}
	caps := make([]string, 0, len(st.cfg.Capabilities))
	for _, c := range st.cfg.Capabilities {
		caps = append(caps, string(c))
	}
	sort.Strings(caps)
	if len(caps) == 0 {
		caps = append(caps, "none")
	}
	clock := "real time"
	if st.cfg.VirtualTime {
		clock = "virtual time (testing/synctest)"
	}
	header := []string{
		fmt.Sprintf("providers: pod: %s, node: %s", configured(st.cfg.NewPodProvider != nil), configured(st.cfg.NewNodeProvider != nil)),
		"capabilities declared: " + strings.Join(caps, ", "),
		fmt.Sprintf("clock: %s, timeout scale %g", clock, st.scale),
	}
	if mode != "" {
		header = append(header, "mode: "+mode)
	}
	return suite.Summary{Suite: vkSuite, Header: header, Strict: st.strict, Outcomes: outs, Judgement: j}.Text()
}

// notApplicable says why s does not apply to the providers cfg configures,
// as far as cfg alone tells: "" when it does. (Whether the pod provider is
// async is known once one is built: see execute.)
func notApplicable(s spec, cfg Config) string {
	if reason := suite.CapabilitySkip(s.Capabilities, func(c Capability) bool { return slices.Contains(cfg.Capabilities, c) }); reason != "" {
		return reason
	}
	switch {
	case s.node && cfg.NewNodeProvider == nil:
		return "no node provider: Config.NewNodeProvider is nil"
	case !s.node && cfg.NewPodProvider == nil:
		return "no pod provider: Config.NewPodProvider is nil"
	}
	return ""
}
