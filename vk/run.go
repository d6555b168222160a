package vk

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/virtual-kubelet/virtual-kubelet/node"
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
	// A goroutine of the provider still blocked once the spec has stopped VK
	// and cancelled its context fails the spec.
	VirtualTime bool
	// Strict fails the run on a SHOULD spec not met too (-vk.strict).
	Strict bool
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
	// waiting; under restartPolicy Never it fails the pod.
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
	// CapNodeStatusUpdates: the node provider pushes a change of its node
	// it notices (Config.TriggerNodeStatusUpdate makes it notice one)
	// through the NotifyNodeStatus callback. Declaring it requires
	// Config.TriggerNodeStatusUpdate.
	CapNodeStatusUpdates Capability = "node-status-updates"
)

// AllCapabilities returns every capability the suite knows, sorted.
func AllCapabilities() []Capability {
	return []Capability{CapBackendFailures, CapContainerRestarts, CapEnv, CapExitCodes, CapGracePeriod, CapInitContainers,
		CapLivenessProbes, CapNodeStatusUpdates, CapReadinessProbes, CapStartFailures, CapTerminationMessages}
}

// Label returns the Ginkgo label of the specs that need c:
// "capability:<name>".
func (c Capability) Label() string { return "capability:" + string(c) }

var (
	summaryFlag = flag.String("vk.summary", "", "write the suite's summary and verdict to this file too")
	strictFlag  = flag.Bool("vk.strict", false, "fail the run on SHOULD specs not met too")
)

// Run runs the suite from a plain 'go test': it registers one Ginkgo spec
// per entry of Catalogue and calls ginkgo.RunSpecs, once per test binary.
// The -ginkgo.* flags keep working (-ginkgo.focus=KVK-POD-005,
// -ginkgo.label-filter=must, -ginkgo.junit-report=FILE, -ginkgo.v). A MUST
// spec not met fails the run, and so the test; a SHOULD spec not met is
// reported, in the Ginkgo report and the summary, and fails the run only with
// Config.Strict or -vk.strict. The summary ends with the verdict line.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	cfg.Strict = cfg.Strict || *strictFlag
	gomega.RegisterFailHandler(ginkgo.Fail)
	res := &results{byID: map[string]outcome{}}
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
		ginkgo.It(fmt.Sprintf("[%s] %s", s.ID, s.Title), labels, func() {
			o := runSpec(t, s, cfg)
			res.set(s.ID, o)
			ginkgo.AddReportEntry("vk:code", s.VK, ginkgo.ReportEntryVisibilityFailureOrVerbose)
			switch {
			case o.Skipped:
				ginkgo.Skip(o.Message)
			case o.Failed && s.Level == Should && !cfg.Strict:
				ginkgo.AddReportEntry("vk:should-not-met", o.Message)
			case o.Failed:
				ginkgo.Fail(fmt.Sprintf("[%s %s] %s", s.ID, s.Level, o.Message))
			}
		})
	}
	ginkgo.ReportAfterSuite("vk summary", func(ginkgo.Report) {
		text := res.summary(cfg.Strict)
		fmt.Fprint(os.Stdout, text)
		if *summaryFlag != "" {
			if err := os.WriteFile(*summaryFlag, []byte(text), 0o644); err != nil {
				ginkgo.Fail(fmt.Sprintf("writing -vk.summary: %v", err))
			}
		}
	})
	ginkgo.RunSpecs(t, "virtual-kubelet provider conformance")
}

type results struct {
	mu   sync.Mutex
	byID map[string]outcome
}

func (r *results) set(id string, o outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[id] = o
}

// summary lists each spec run with its outcome and ends with the verdict.
func (r *results) summary(strict bool) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.byID))
	for id := range r.byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	var mustFailed, shouldFailed []string
	passed, skipped := 0, 0
	levels := map[string]Level{}
	for _, s := range specs {
		levels[s.ID] = s.Level
	}
	fmt.Fprintf(&b, "virtual-kubelet provider conformance (github.com/kri-kit/testkit/vk)\n")
	for _, id := range ids {
		o := r.byID[id]
		state := "passed"
		switch {
		case o.Skipped:
			state, skipped = "skipped: "+firstLine(o.Message), skipped+1
		case o.Failed && levels[id] == Must:
			state, mustFailed = "FAILED", append(mustFailed, id)
		case o.Failed:
			state, shouldFailed = "not met", append(shouldFailed, id)
		default:
			passed++
		}
		took := o.Took.Round(time.Millisecond).String()
		if o.Virtual {
			took += fmt.Sprintf(" virtual, %v real", o.Real.Round(time.Millisecond))
		}
		fmt.Fprintf(&b, "  %-13s %-6s %s (%s)\n", id, levels[id], state, took)
	}
	conformant := len(mustFailed) == 0 && (!strict || len(shouldFailed) == 0)
	verdict := "CONFORMANT"
	if !conformant {
		verdict = "NOT CONFORMANT"
	}
	fmt.Fprintf(&b, "verdict: %s (%d passed, %d MUST failed %v, %d SHOULD not met %v, %d skipped)\n",
		verdict, passed, len(mustFailed), mustFailed, len(shouldFailed), shouldFailed, skipped)
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
