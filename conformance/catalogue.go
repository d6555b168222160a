package conformance

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kri-kit/testkit/suite"
)

// Level says how binding a spec is. Only MUST specs decide the verdict, and
// the run fails exactly when it is "not conformant"; a failing SHOULD spec is
// reported as a warning and fails the run only in strict mode (Config.Strict).
// It is the level of package suite, which the kit's suites share.
type Level = suite.Level

// The levels of the specs.
const (
	Must   = suite.Must
	Should = suite.Should
)

// SpecInfo describes one spec of the suite, as listed in the catalogue
// (testdata/conformance.yaml of the kit).
type SpecInfo struct {
	// ID is stable across releases, e.g. "KRI-POD-001"; the spec's Ginkgo
	// text starts with it in brackets.
	ID string
	// Level is MUST or SHOULD.
	Level Level
	// Requirement is the one-line requirement the spec checks.
	Requirement string
	// Provider is "pod" or "node": which factory of Config it needs.
	Provider string
	// Labels are the spec's Ginkgo labels: the provider, the feature
	// groups, the level ("must"/"should"), "capability:<name>" for each
	// capability it needs and "benchmark" for measurements.
	Labels []string
	// Capabilities the spec needs; it is skipped when one is undeclared.
	Capabilities []Capability
	// Benchmark is true for the latency measurements, which run only when
	// the label filter asks for them.
	Benchmark bool
	// Note records how the spec's requirement changed between releases
	// (empty for most specs), so that a provider that passed an earlier
	// release knows why its results moved.
	Note string
}

// specDef is one spec: its catalogue entry and its body.
type specDef struct {
	id        string
	level     Level
	kind      string // "pod" or "node"
	text      string
	groups    []string
	caps      []Capability
	benchmark bool
	note      string
	// noStart: the pod provider is not started before the body runs.
	noStart bool
	// alone: the spec calls CleanupPods, which stops every pod of the
	// provider's node that it is not handed, other specs' pods too when
	// they share a runtime or a backend: under Config.Parallel it runs
	// alone (Ginkgo's Serial), after the parallel specs.
	alone bool
	pod   func(*podEnv)
	node  func(*nodeEnv)
}

const (
	kindPod  = "pod"
	kindNode = "node"

	labelBenchmark = "benchmark"
)

// title is the Ginkgo text of the spec.
func (s *specDef) title() string { return fmt.Sprintf("[%s] %s", s.id, s.text) }

// labels are the Ginkgo labels of the spec, in a fixed order.
func (s *specDef) labels() []string {
	l := []string{s.kind}
	l = append(l, s.groups...)
	l = append(l, strings.ToLower(string(s.level)))
	for _, c := range s.caps {
		l = append(l, c.Label())
	}
	if s.benchmark {
		l = append(l, labelBenchmark)
	}
	return l
}

func (s *specDef) info() SpecInfo {
	return SpecInfo{
		ID:           s.id,
		Level:        s.level,
		Requirement:  s.text,
		Provider:     s.kind,
		Labels:       s.labels(),
		Capabilities: slices.Clone(s.caps),
		Benchmark:    s.benchmark,
		Note:         s.note,
	}
}

// Catalogue returns every spec of the suite, in ID order.
func Catalogue() []SpecInfo {
	out := make([]SpecInfo, 0, len(allSpecs()))
	for _, s := range allSpecs() {
		out = append(out, s.info())
	}
	return out
}

// specGroups lists the suite's spec groups. Each group lives in a file named
// for its catalogue label (pod_kill.go holds podKillSpecs, the specs labelled
// "kill"; podspec_probes.go those of the pod-spec capability "probes"), with
// its mutants and benign variants in the test files named alike. A spec
// joins its group's list; a new group is added here.
var specGroups = [][]*specDef{
	podSyncSpecs, podStatusSpecs, podRefreshSpecs, podKillSpecs, podRestartSpecs,
	podInitSpecs, podReasonCacheSpecs, podCleanupSpecs, podDeleteSpecs, podLifecycleSpecs,
	podOwnershipSpecs, podValidationSpecs, podContextSpecs, podConcurrencySpecs,
	podspecImageSpecs, podspecEnvSpecs, podspecTerminationMessageSpecs, podspecHooksSpecs,
	podspecSidecarsSpecs, podspecProbesSpecs, podspecNetworkProbesSpecs, podspecResizeSpecs,
	podNotifySpecs, podLatencySpecs,
	nodeConfigureSpecs, nodePingSpecs, nodeRefreshSpecs, nodeCallbackSpecs, nodeContextSpecs,
}

// allSpecs returns every spec in catalogue order: the pod specs by ID, then
// the benchmarks, then the node specs by ID.
func allSpecs() []*specDef {
	all := slices.Concat(specGroups...)
	part := func(s *specDef) int {
		switch {
		case s.kind == kindNode:
			return 2
		case s.benchmark:
			return 1
		}
		return 0
	}
	slices.SortFunc(all, func(a, b *specDef) int {
		return cmp.Or(cmp.Compare(part(a), part(b)), cmp.Compare(a.id, b.id))
	})
	return all
}

func specByID(id string) *specDef {
	for _, s := range allSpecs() {
		if s.id == id {
			return s
		}
	}
	return nil
}
