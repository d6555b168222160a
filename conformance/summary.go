package conformance

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kri-kit/testkit/suite"
)

// kriSuite names the KRI suite in what package suite writes and reads back:
// its summary, its flags (-kri.*), its report entries (kri:*) and its spec
// IDs.
var kriSuite = suite.Suite{
	Name:   "KRI conformance",
	Prefix: "kri",
	SpecID: regexp.MustCompile(`^\[(KRI-[A-Z]+-\d{3})\]`),
}

// The results a spec can have in the summary.
const (
	resultPassed          = suite.Passed
	resultFailed          = suite.Failed
	resultSkipped         = suite.Skipped
	resultExpectedFailure = suite.ExpectedFailure
	resultNotRun          = suite.NotRun
)

// outcome is the summary line of one spec (suite.Outcome).
type outcome = suite.Outcome

// specIDOf returns the spec ID at the start of a spec's text, or "".
func specIDOf(text string) string { return kriSuite.IDOf(text) }

// outcomes pairs every registered spec with its result in report: the
// result as suite.Classify reads it from the spec's report, whether the
// spec applies under its registration's settings (applicable), and, as the
// detail, a benchmark's figures or why the spec does not apply.
func outcomes(report types.Report, regs []*registration) []outcome {
	byID := kriSuite.Reports(report)
	var out []outcome
	for _, s := range allSpecs() {
		var reg *registration
		for _, r := range regs {
			if r.has(s.kind) {
				reg = r
				break
			}
		}
		if reg == nil {
			continue // not registered in this binary
		}
		st, err := reg.settings()
		var xfailReason func(string) string // nil: the configuration is invalid
		if err == nil {
			xfailReason = func(id string) string { return st.cfg.ExpectedFailures[id] }
		}
		sr, ok := byID[s.id]
		o := kriSuite.Classify(suite.Spec{ID: s.id, Level: s.level, Text: s.text}, sr, ok, xfailReason)
		if err == nil {
			o.Applicable = applicable(s, st)
			o.Strict = st.strict
		}
		switch {
		case s.benchmark && o.Result == resultPassed:
			o.Detail = benchmarkEntry(sr, s.id)
		case !o.Applicable && err == nil && o.Result != resultFailed:
			o.Detail = "not applicable: " + notApplicableReason(s, st)
		}
		out = append(out, o)
	}
	return out
}

// benchmarkEntry returns the "median / p90 / max" entry of benchmark id.
func benchmarkEntry(sr types.SpecReport, id string) string {
	for _, e := range sr.ReportEntries {
		if strings.HasPrefix(e.Name, id+" ") {
			return strings.TrimPrefix(e.Name, id+" ") + ": " + e.Value.String()
		}
	}
	return ""
}

// applicable reports whether s counts for the verdict under st.
func applicable(s *specDef, st *settings) bool {
	return notApplicableReason(s, st) == ""
}

func notApplicableReason(s *specDef, st *settings) string {
	switch {
	case s.benchmark:
		return "benchmark"
	case s.kind == kindPod && st.cfg.NewPodProvider == nil:
		return "no NewPodProvider"
	case s.kind == kindNode && st.cfg.NewNodeProvider == nil:
		return "no NewNodeProvider"
	}
	var missing []Capability
	for _, c := range s.caps {
		if !st.caps[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return "capability " + capList(missing) + " not declared"
	}
	return ""
}

// judgement is what the summary concludes from a run: a suite.Judgement,
// with its fields under the names this package's code and tests use.
type judgement struct {
	sj              suite.Judgement
	dryRun          bool
	conformant      bool
	reasons         []string
	warnings, notes []string
	pass            bool
	failures        []string
}

// judge decides the verdict and the gate of a run (suite.Suite.Judge).
// A pod provider without kri.PodSyncNotifier is the verdict's first
// reason (handOver): whatever else failed, that explains most of it.
func judge(outs []outcome, report types.Report) judgement {
	j := kriSuite.Judge(outs, report)
	if r := noNotifierReason(noNotifierTypes(report)); r != "" && !j.DryRun {
		j.Reasons = append([]string{r}, j.Reasons...)
		if j.Conformant {
			j.Conformant = false
			j.Failures = append([]string{"the verdict is not conformant"}, j.Failures...)
			j.Pass = false
		}
	}
	return judgement{sj: j, dryRun: j.DryRun, conformant: j.Conformant, reasons: j.Reasons,
		warnings: j.Warnings, notes: j.Notes, pass: j.Pass, failures: j.Failures}
}

// noNotifierTypes lists the types of the pod providers of report's specs
// that did not implement kri.PodSyncNotifier.
func noNotifierTypes(report types.Report) []string {
	var typs []string
	for _, sr := range report.SpecReports {
		for _, e := range sr.ReportEntries {
			if e.Name == entryNoNotifier && !slices.Contains(typs, e.Value.String()) {
				typs = append(typs, e.Value.String())
			}
		}
	}
	return typs
}

// verdict decides conformance (suite.Verdict).
func verdict(outs []outcome) (bool, []string) { return suite.Verdict(outs) }

// renderSummary is the human summary of a run: the KRI suite's header
// (its timeouts, providers and capabilities) over suite.Summary's text.
func renderSummary(outs []outcome, regs []*registration, j judgement) string {
	var header []string
	var providers []string
	var caps []Capability
	strict := false
	for _, r := range regs {
		st, err := r.settings()
		if err != nil {
			header = append(header, fmt.Sprintf("configuration error: %v", err))
			continue
		}
		strict = strict || st.strict
		if r.has(kindPod) {
			providers = append(providers, "pod: "+configured(st.cfg.NewPodProvider != nil))
		}
		if r.has(kindNode) {
			providers = append(providers, "node: "+configured(st.cfg.NewNodeProvider != nil))
		}
		for c := range st.caps {
			if !slices.Contains(caps, c) {
				caps = append(caps, c)
			}
		}
		if r == regs[0] {
			header = append(header, fmt.Sprintf("timeouts: call %s, state %s, poll %s, stable %s, grace period %s (scale %g)",
				st.t.Call, st.t.State, st.t.Poll, st.t.Stable, st.t.GracePeriod, st.scale))
		}
	}
	header = append(header, "providers: "+strings.Join(providers, ", "), "capabilities declared: "+capList(caps))
	return suite.Summary{Suite: kriSuite, Header: header, Strict: strict, Outcomes: outs, Judgement: j.sj}.Text()
}

func configured(ok bool) string {
	if ok {
		return "configured"
	}
	return "not configured"
}

// writeSummary prints the summary, writes it to the summary file and, when
// the gate fails, fails the summary node (suite.Suite.Write): Ginkgo then
// fails the run, the console says why and the JUnit report has a failed
// testcase "[ReportAfterSuite] KRI conformance summary" naming the reasons.
// The node's report entries kri:verdict and kri:gate (JUnit properties)
// carry the verdict and the gate.
func writeSummary(report types.Report, regs []*registration) {
	outs := outcomes(report, regs)
	j := judge(outs, report)
	file := ""
	for _, r := range regs {
		if st, err := r.settings(); err == nil && st.cfg.SummaryFile != "" {
			file = st.cfg.SummaryFile
			break
		}
	}
	kriSuite.Write(renderSummary(outs, regs, j), j.sj, file)
}
