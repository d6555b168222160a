package conformance

import (
	"sync"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
)

// registration is one Config whose specs are registered with Ginkgo, for the
// pod specs, the node specs or both.
type registration struct {
	cfg   Config
	kinds []string
	// t is the test that called Run (nil under Describe*): the bubbles of
	// Config.VirtualTime are its synctest subtests.
	t *testing.T

	once sync.Once
	st   *settings
	err  error
}

// settings resolves the Config once, when the first spec runs (flags are
// parsed by then).
func (r *registration) settings() (*settings, error) {
	r.once.Do(func() { r.st, r.err = resolve(r.cfg) })
	return r.st, r.err
}

func (r *registration) has(kind string) bool {
	for _, k := range r.kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// state of the package in this test binary: Ginkgo runs one suite per
// process, so the specs may be registered once per provider kind.
var state struct {
	sync.Mutex
	runCalled bool
	regs      []*registration
	summary   bool // the summary ReportAfterSuite is registered
}

// suiteDescription is the description handed to RunSpecs by Run.
const suiteDescription = "KRI conformance"

// Run runs the whole conformance suite against the providers of cfg from a
// plain 'go test': it registers the specs and calls ginkgo.RunSpecs itself,
// so the -ginkgo.* flags (label-filter, focus, junit-report, v, ...) and the
// -kri.* flags keep working. Unless a label filter is given, the benchmark
// specs are left out ("!benchmark").
//
// Run fails t exactly when the verdict is "not conformant" or, in strict
// mode, when an applicable SHOULD spec did not pass (see "Verdict and exit
// status" in the package documentation); a failed SHOULD spec is otherwise a
// warning. It also fails t when cfg is invalid.
//
// With 'go test -v' Run reports each spec as it runs, as Ginkgo's -ginkgo.v
// does: its ID and requirement when it starts, its steps as they happen and
// its outcome and duration when it ends (see showProgress). Without -v the
// go command shows a package's output only once its tests are over.
//
// Ginkgo runs one suite per test binary: Run may be called once per binary,
// with one Config that carries both providers. A second call, or a call after
// DescribePodProvider or DescribeNodeProvider, fails t and says so.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	state.Lock()
	switch {
	case state.runCalled:
		state.Unlock()
		t.Fatal("conformance.Run was called a second time in this test binary: Ginkgo runs one suite (one RunSpecs) per process. " +
			"Put both providers in one Config (NewPodProvider and NewNodeProvider) and call Run once, or run the second suite from another test package.")
		return
	case len(state.regs) > 0:
		state.Unlock()
		t.Fatal("conformance.Run: DescribePodProvider or DescribeNodeProvider already registered the suite in this test binary; " +
			"with them, call ginkgo.RunSpecs yourself instead of Run.")
		return
	}
	state.runCalled = true
	state.Unlock()

	if err := validate(cfg); err != nil {
		t.Fatal(err)
	}
	reg := &registration{cfg: cfg, kinds: []string{kindPod, kindNode}, t: t}
	if _, err := reg.settings(); err != nil {
		t.Fatal(err)
	}
	register(reg)

	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	if suiteConfig.LabelFilter == "" {
		suiteConfig.LabelFilter = "!" + labelBenchmark
	}
	showProgress(&reporterConfig)
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, suiteDescription, suiteConfig, reporterConfig)
}

// DescribePodProvider registers the pod specs (and the benchmarks) in an
// existing Ginkgo suite, for a test package that calls ginkgo.RunSpecs
// itself. Call it at package level:
//
//	var _ = conformance.DescribePodProvider(cfg)
//
// cfg.NewNodeProvider is ignored. The benchmark specs run only when the
// label filter names "benchmark". RunSpecs then fails as with Run: exactly
// when the verdict is "not conformant" (or, in strict mode, an applicable
// SHOULD spec did not pass), and when other nodes of the test package's own
// suite fail. It panics when called twice in one binary or after Run.
func DescribePodProvider(cfg Config) bool {
	return describe(cfg, kindPod)
}

// DescribeNodeProvider registers the node specs in an existing Ginkgo suite,
// like DescribePodProvider. cfg.NewPodProvider is ignored.
func DescribeNodeProvider(cfg Config) bool {
	return describe(cfg, kindNode)
}

func describe(cfg Config, kind string) bool {
	switch kind {
	case kindPod:
		cfg.NewNodeProvider = nil
	case kindNode:
		cfg.NewPodProvider = nil
	}
	if cfg.VirtualTime {
		panic("conformance.Describe" + kindTitle(kind) + "Provider: Config.VirtualTime needs conformance.Run, whose *testing.T testing/synctest runs the bubbles under")
	}
	state.Lock()
	if state.runCalled {
		state.Unlock()
		panic("conformance.Describe" + kindTitle(kind) + "Provider called after conformance.Run: use one or the other")
	}
	for _, r := range state.regs {
		if r.has(kind) {
			state.Unlock()
			panic("conformance.Describe" + kindTitle(kind) + "Provider called twice in one test binary: the spec IDs would clash")
		}
	}
	state.Unlock()
	return register(&registration{cfg: cfg, kinds: []string{kind}})
}

func kindTitle(kind string) string {
	if kind == kindPod {
		return "Pod"
	}
	return "Node"
}

// register adds the specs of reg's kinds, and (once) the summary, to the
// Ginkgo tree. An invalid Config makes every spec fail with the reason.
func register(reg *registration) bool {
	state.Lock()
	state.regs = append(state.regs, reg)
	needSummary := !state.summary
	state.summary = true
	state.Unlock()

	for _, kind := range reg.kinds {
		ginkgo.Describe("KRI "+kindTitle(kind)+"Provider", func() {
			for _, s := range allSpecs() {
				if s.kind != kind {
					continue
				}
				args := []any{ginkgo.Label(s.labels()...)}
				if !reg.cfg.Parallel || s.alone || s.benchmark {
					args = append(args, ginkgo.Serial)
				}
				args = append(args, func() { runSpec(reg, s) })
				ginkgo.It(s.title(), args...)
			}
		})
	}
	if needSummary {
		ginkgo.ReportAfterSuite("KRI conformance summary", func(report ginkgo.Report) {
			state.Lock()
			regs := append([]*registration(nil), state.regs...)
			state.Unlock()
			writeSummary(report, regs)
		})
	}
	return true
}

// showProgress makes 'go test -v' show the suite's progress: unless a
// -ginkgo.v, -ginkgo.vv or -ginkgo.succinct flag chose a verbosity, the -v
// of go test (testing.Verbose) selects Ginkgo's verbose reporter, which
// prints each spec as it starts, its By steps as they happen and its outcome
// and duration as it ends. Without -v Ginkgo prints a dot per spec, and the
// go command holds a listed package's output back until its test binary
// exits (go help test: "package list mode").
func showProgress(rc *types.ReporterConfig) {
	if testing.Verbose() && !rc.Verbose && !rc.VeryVerbose && !rc.Succinct {
		rc.Verbose = true
	}
}
