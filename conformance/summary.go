package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// The results a spec can have in the summary.
const (
	resultPassed          = "passed"
	resultFailed          = "failed"
	resultSkipped         = "skipped"
	resultExpectedFailure = "expected-failure"
	resultNotRun          = "not-run"
)

// outcome is the summary line of one spec.
type outcome struct {
	spec   *specDef
	result string
	detail string
	// applicable: the spec's provider is configured, its capabilities are
	// declared and it is not a benchmark; only applicable MUST specs decide
	// the verdict.
	applicable bool
	// strict: the spec's registration runs in strict mode.
	strict bool
	// warning: a SHOULD spec whose failure was reported as a warning (a
	// skip in Ginkgo's terms); its result is resultFailed.
	warning bool
	// ginkgoFailed: Ginkgo reports the spec in a failure state, which fails
	// the run whatever the spec's level.
	ginkgoFailed bool
	// failure is the first line of the spec's failure (failed, warning or
	// expected failure), step the last By step before it.
	failure, step string
}

var specIDPattern = regexp.MustCompile(`^\[(KRI-[A-Z]+-\d{3})\]`)

// specIDOf returns the spec ID at the start of a spec's text, or "".
func specIDOf(text string) string {
	if m := specIDPattern.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// outcomes pairs every registered spec with its result in report.
func outcomes(report types.Report, regs []*registration) []outcome {
	byID := map[string]types.SpecReport{}
	for _, sr := range report.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		if id := specIDOf(sr.LeafNodeText); id != "" {
			byID[id] = sr
		}
	}
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
		o := outcome{spec: s}
		st, err := reg.settings()
		if err == nil {
			o.applicable = applicable(s, st)
			o.strict = st.strict
		}
		sr, ok := byID[s.id]
		switch {
		case !ok:
			o.result = resultNotRun
		case sr.State == types.SpecStatePassed:
			o.result = resultPassed
		case sr.State.Is(types.SpecStateFailureStates):
			o.failure = failureLine(sr)
			o.result, o.detail, o.ginkgoFailed = resultFailed, sr.State.String()+": "+o.failure, true
		case sr.State == types.SpecStateSkipped:
			if w, found := entryValue(sr, entryWarning); found {
				o.failure = firstLine(w)
				o.result, o.detail, o.warning = resultFailed, "warning: "+o.failure, true
			} else if xf, found := entryValue(sr, entryExpectedFailure); found {
				o.result, o.detail = resultExpectedFailure, xf
				if !strings.HasPrefix(xf, "not run: ") && st != nil {
					o.failure = strings.TrimPrefix(xf, st.cfg.ExpectedFailures[s.id]+": ")
				}
			} else if sr.Failure.Message != "" {
				o.result, o.detail = resultSkipped, firstLine(sr.Failure.Message)
			} else {
				o.result, o.detail = resultNotRun, "filtered out"
			}
		default:
			o.result, o.detail = resultNotRun, sr.State.String()
		}
		if o.failure != "" {
			o.step = lastStep(sr)
		}
		switch {
		case s.benchmark && o.result == resultPassed:
			o.detail = benchmarkEntry(sr, s.id)
		case !o.applicable && err == nil && o.result != resultFailed:
			o.detail = "not applicable: " + notApplicableReason(s, st)
		}
		out = append(out, o)
	}
	return out
}

// failureLine is the first line of a failed spec's failure, with the value
// of a panic.
func failureLine(sr types.SpecReport) string {
	line := firstLine(sr.Failure.Message)
	if sr.Failure.ForwardedPanic != "" {
		line += " " + firstLine(sr.Failure.ForwardedPanic)
	}
	return line
}

// lastStep is the text of the last By step of sr before its failure (or
// skip), "" when it has none.
func lastStep(sr types.SpecReport) string {
	step := ""
	for _, ev := range sr.SpecEvents {
		if ev.SpecEventType != types.SpecEventByStart {
			continue
		}
		if sr.Failure.TimelineLocation.Order > 0 && ev.TimelineLocation.Order > sr.Failure.TimelineLocation.Order {
			break
		}
		step = ev.Message
	}
	return step
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

func entryValue(sr types.SpecReport, name string) (string, bool) {
	for _, e := range sr.ReportEntries {
		if e.Name == name {
			return e.Value.String(), true
		}
	}
	return "", false
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

// judgement is what the summary concludes from a run.
type judgement struct {
	// dryRun: nothing ran, there is no verdict and nothing fails.
	dryRun bool
	// conformant is the verdict; reasons say why it is "not conformant".
	conformant bool
	reasons    []string
	// warnings and notes do not decide anything: SHOULD failures, SHOULD
	// specs expected to fail, unnecessary ExpectedFailures entries.
	warnings, notes []string
	// pass is the gate: whether the run (go test, RunSpecs) passes;
	// failures says why not.
	pass     bool
	failures []string
}

// judge decides the verdict and the gate of a run from its outcomes and the
// Ginkgo report (for a dry run and the failures of nodes that are not KRI
// specs). The rule: the run fails exactly when the verdict is "not
// conformant", or, in strict mode, when an applicable SHOULD spec did not
// pass (ExpectedFailures aside). Beyond the rule, anything Ginkgo itself
// failed (a panic in a SHOULD spec, another suite node) fails the run too,
// and the summary names it.
func judge(outs []outcome, report types.Report) judgement {
	j := judgement{}
	if report.SuiteConfig.DryRun {
		j.dryRun, j.pass = true, true
		return j
	}
	j.conformant, j.reasons = verdict(outs)
	var shouldFailed, shouldXFail, unnecessary, strictFailed, strictNotPassed, ginkgoShould []string
	for _, o := range outs {
		if !o.applicable || o.spec.level == Must {
			continue
		}
		switch o.result {
		case resultFailed:
			shouldFailed = append(shouldFailed, o.spec.id)
			if o.strict {
				strictFailed = append(strictFailed, o.spec.id)
			} else if o.ginkgoFailed {
				ginkgoShould = append(ginkgoShould, o.spec.id)
			}
		case resultExpectedFailure:
			shouldXFail = append(shouldXFail, o.spec.id)
			if !o.strict {
				unnecessary = append(unnecessary, o.spec.id)
			}
		case resultPassed:
		default:
			if o.strict {
				strictNotPassed = append(strictNotPassed, o.spec.id)
			}
		}
	}
	if len(shouldFailed) > 0 {
		j.warnings = append(j.warnings, fmt.Sprintf("warning: %d SHOULD spec(s) failed: %s", len(shouldFailed), strings.Join(shouldFailed, ", ")))
	}
	if len(shouldXFail) > 0 {
		j.warnings = append(j.warnings, fmt.Sprintf("warning: %d SHOULD spec(s) failed as Config.ExpectedFailures expects: %s", len(shouldXFail), strings.Join(shouldXFail, ", ")))
	}
	if len(unnecessary) > 0 {
		j.notes = append(j.notes, fmt.Sprintf("note: Config.ExpectedFailures lists SHOULD spec(s) %s, which is unnecessary without strict mode: a SHOULD failure never fails the run", strings.Join(unnecessary, ", ")))
	}

	if !j.conformant {
		j.failures = append(j.failures, "the verdict is not conformant")
	}
	if len(strictFailed) > 0 {
		j.failures = append(j.failures, fmt.Sprintf("strict mode: %d applicable SHOULD spec(s) failed: %s", len(strictFailed), strings.Join(strictFailed, ", ")))
	}
	if len(strictNotPassed) > 0 {
		j.failures = append(j.failures, fmt.Sprintf("strict mode: %d applicable SHOULD spec(s) skipped or not run: %s", len(strictNotPassed), strings.Join(strictNotPassed, ", ")))
	}
	if len(ginkgoShould) > 0 {
		j.failures = append(j.failures, fmt.Sprintf("%d SHOULD spec(s) failed outside the suite's assertions (a panic, a timeout, an interrupt), which Ginkgo fails the run for: %s", len(ginkgoShould), strings.Join(ginkgoShould, ", ")))
	}
	if other := otherFailures(report); len(other) > 0 {
		j.failures = append(j.failures, fmt.Sprintf("%d other node(s) of the suite failed: %s", len(other), strings.Join(other, "; ")))
	}
	j.pass = len(j.failures) == 0
	return j
}

// otherFailures names the failed nodes of report that are not KRI specs
// (suite nodes, specs of the test package itself).
func otherFailures(report types.Report) []string {
	var out []string
	for _, sr := range report.SpecReports {
		if !sr.State.Is(types.SpecStateFailureStates) {
			continue
		}
		if sr.LeafNodeType == types.NodeTypeIt && specIDOf(sr.LeafNodeText) != "" {
			continue
		}
		out = append(out, strings.TrimSpace(fmt.Sprintf("[%s] %s: %s", sr.LeafNodeType, sr.FullText(), firstLine(sr.Failure.Message))))
	}
	return out
}

// verdict decides conformance: every applicable MUST spec passed and no
// MUST spec was an expected failure. It returns the reasons when not.
func verdict(outs []outcome) (bool, []string) {
	var failed, skipped, notRun, expected []string
	applicableMust := 0
	for _, o := range outs {
		if !o.applicable || o.spec.level != Must {
			continue
		}
		applicableMust++
		switch o.result {
		case resultPassed:
		case resultFailed:
			failed = append(failed, o.spec.id)
		case resultExpectedFailure:
			expected = append(expected, o.spec.id)
		case resultSkipped:
			skipped = append(skipped, o.spec.id)
		default:
			notRun = append(notRun, o.spec.id)
		}
	}
	var reasons []string
	if applicableMust == 0 {
		reasons = append(reasons, "no applicable MUST spec")
	}
	if len(failed) > 0 {
		reasons = append(reasons, fmt.Sprintf("%d MUST spec(s) failed: %s", len(failed), strings.Join(failed, ", ")))
	}
	if len(expected) > 0 {
		reasons = append(reasons, fmt.Sprintf("%d expected failure(s): %s", len(expected), strings.Join(expected, ", ")))
	}
	if len(skipped) > 0 {
		reasons = append(reasons, fmt.Sprintf("%d applicable MUST spec(s) skipped: %s", len(skipped), strings.Join(skipped, ", ")))
	}
	if len(notRun) > 0 {
		reasons = append(reasons, fmt.Sprintf("%d applicable MUST spec(s) not run (filtered out or missing from the report; a filtered run is never conformant): %s", len(notRun), strings.Join(notRun, ", ")))
	}
	return len(reasons) == 0, reasons
}

// renderSummary is the human summary of a run.
func renderSummary(outs []outcome, regs []*registration, j judgement) string {
	var b strings.Builder
	b.WriteString("KRI conformance summary\n")
	var providers []string
	var caps []Capability
	strict := false
	for _, r := range regs {
		st, err := r.settings()
		if err != nil {
			fmt.Fprintf(&b, "configuration error: %v\n", err)
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
			fmt.Fprintf(&b, "timeouts: call %s, state %s, poll %s, stable %s, grace period %s (scale %g)\n",
				st.t.Call, st.t.State, st.t.Poll, st.t.Stable, st.t.GracePeriod, st.scale)
		}
	}
	fmt.Fprintf(&b, "providers: %s\n", strings.Join(providers, ", "))
	fmt.Fprintf(&b, "capabilities declared: %s\n", capList(caps))
	if strict {
		b.WriteString("strict mode: applicable SHOULD specs must pass too\n")
	}

	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	counts := map[string]int{}
	warnings := 0
	for _, o := range outs {
		counts[o.result]++
		if o.warning {
			warnings++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.spec.id, o.spec.level, o.result, o.detail)
	}
	tw.Flush()
	fmt.Fprintf(&b, "%d specs: %d passed, %d failed (%d of them SHOULD warnings), %d skipped, %d expected failures, %d not run\n",
		len(outs), counts[resultPassed], counts[resultFailed], warnings, counts[resultSkipped], counts[resultExpectedFailure], counts[resultNotRun])

	var failed []outcome
	for _, o := range outs {
		if o.result == resultFailed || o.result == resultExpectedFailure {
			failed = append(failed, o)
		}
	}
	if len(failed) > 0 {
		b.WriteString("failures:\n")
		for _, o := range failed {
			result := o.result
			if o.warning {
				result += " (warning)"
			}
			fmt.Fprintf(&b, "  %s %s %s: %s\n", o.spec.id, o.spec.level, result, o.spec.text)
			if o.step != "" {
				fmt.Fprintf(&b, "    step: %s\n", o.step)
			}
			switch {
			case o.failure != "":
				fmt.Fprintf(&b, "    %s\n", o.failure)
			case o.detail != "":
				fmt.Fprintf(&b, "    %s\n", o.detail)
			}
		}
	}

	switch {
	case j.dryRun:
		b.WriteString("verdict: none (dry run: no spec ran)\n")
	case j.conformant:
		b.WriteString("verdict: conformant (every applicable MUST spec passed)\n")
	default:
		b.WriteString("verdict: not conformant\n")
	}
	for _, r := range slices.Concat(j.reasons, j.warnings, j.notes) {
		b.WriteString("  " + r + "\n")
	}
	switch {
	case j.dryRun:
		b.WriteString("gate: pass (a dry run fails nothing)\n")
	case j.pass && strict:
		b.WriteString("gate: pass (every applicable MUST and SHOULD spec passed)\n")
	case j.pass:
		b.WriteString("gate: pass (the verdict is conformant; SHOULD failures are warnings, -kri.strict makes them fail the run)\n")
	default:
		b.WriteString("gate: FAIL (" + strings.Join(j.failures, "; ") + ")\n")
	}
	return b.String()
}

func configured(ok bool) string {
	if ok {
		return "configured"
	}
	return "not configured"
}

// Report entries of the summary node, for the JUnit and JSON reports.
const (
	entryVerdict = "kri:verdict"
	entryGate    = "kri:gate"
)

// writeSummary prints the summary, writes it to the summary file and, when
// the gate fails, fails the summary node (a ReportAfterSuite), so that Ginkgo
// fails the run, the console says why and the JUnit report has a failed
// testcase "[ReportAfterSuite] KRI conformance summary" naming the reasons.
// The node's report entries (JUnit properties) carry the verdict and the
// gate.
func writeSummary(report types.Report, regs []*registration) {
	outs := outcomes(report, regs)
	j := judge(outs, report)
	text := renderSummary(outs, regs, j)
	fmt.Fprint(os.Stdout, "\n"+text)
	verdictText := "not conformant"
	switch {
	case j.dryRun:
		verdictText = "none (dry run)"
	case j.conformant:
		verdictText = "conformant"
	}
	gateText := "pass"
	if !j.pass {
		gateText = "fail: " + strings.Join(j.failures, "; ")
	}
	ginkgo.AddReportEntry(entryVerdict, verdictText, ginkgo.ReportEntryVisibilityNever)
	ginkgo.AddReportEntry(entryGate, gateText, ginkgo.ReportEntryVisibilityNever)

	file := ""
	for _, r := range regs {
		if st, err := r.settings(); err == nil && st.cfg.SummaryFile != "" {
			file = st.cfg.SummaryFile
			break
		}
	}
	if file != "" {
		if dir := filepath.Dir(file); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				ginkgo.Fail(fmt.Sprintf("writing the KRI conformance summary: %v", err))
			}
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			ginkgo.Fail(fmt.Sprintf("writing the KRI conformance summary: %v", err))
		}
	}
	if !j.pass {
		reasons := slices.Concat(j.failures, j.reasons)
		ginkgo.Fail("KRI conformance gate: the run fails: " + strings.Join(reasons, "; "))
	}
}
