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
		}
		sr, ok := byID[s.id]
		switch {
		case !ok:
			o.result = resultNotRun
		case sr.State == types.SpecStatePassed:
			o.result = resultPassed
		case sr.State.Is(types.SpecStateFailureStates):
			o.result, o.detail = resultFailed, sr.State.String()+": "+firstLine(sr.Failure.Message)
		case sr.State == types.SpecStateSkipped:
			if xf, found := entryValue(sr, entryExpectedFailure); found {
				o.result, o.detail = resultExpectedFailure, xf
			} else if sr.Failure.Message != "" {
				o.result, o.detail = resultSkipped, firstLine(sr.Failure.Message)
			} else {
				o.result, o.detail = resultNotRun, "filtered out"
			}
		default:
			o.result, o.detail = resultNotRun, sr.State.String()
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

// verdict decides conformance: every applicable MUST spec passed and no
// expected failure was reported. It returns the reasons when not.
func verdict(outs []outcome) (bool, []string) {
	var failed, notPassed, expected, shouldFailed []string
	applicableMust := 0
	for _, o := range outs {
		if o.result == resultExpectedFailure {
			expected = append(expected, o.spec.id)
		}
		if !o.applicable {
			continue
		}
		if o.spec.level != Must {
			if o.result == resultFailed {
				shouldFailed = append(shouldFailed, o.spec.id)
			}
			continue
		}
		applicableMust++
		switch o.result {
		case resultPassed:
		case resultFailed:
			failed = append(failed, o.spec.id)
		case resultExpectedFailure:
		default:
			notPassed = append(notPassed, o.spec.id)
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
	if len(notPassed) > 0 {
		reasons = append(reasons, fmt.Sprintf("%d applicable MUST spec(s) skipped or not run: %s", len(notPassed), strings.Join(notPassed, ", ")))
	}
	if len(reasons) > 0 {
		return false, reasons
	}
	if len(shouldFailed) > 0 {
		return true, []string{fmt.Sprintf("warning: %d SHOULD spec(s) failed: %s", len(shouldFailed), strings.Join(shouldFailed, ", "))}
	}
	return true, nil
}

// renderSummary is the human summary of a run.
func renderSummary(outs []outcome, regs []*registration) string {
	var b strings.Builder
	b.WriteString("KRI conformance summary\n")
	var providers []string
	var caps []Capability
	for _, r := range regs {
		st, err := r.settings()
		if err != nil {
			fmt.Fprintf(&b, "configuration error: %v\n", err)
			continue
		}
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

	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	counts := map[string]int{}
	for _, o := range outs {
		counts[o.result]++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.spec.id, o.spec.level, o.result, o.detail)
	}
	tw.Flush()
	fmt.Fprintf(&b, "%d specs: %d passed, %d failed, %d skipped, %d expected failures, %d not run\n",
		len(outs), counts[resultPassed], counts[resultFailed], counts[resultSkipped], counts[resultExpectedFailure], counts[resultNotRun])
	ok, reasons := verdict(outs)
	if ok {
		b.WriteString("verdict: conformant (every applicable MUST spec passed)\n")
	} else {
		b.WriteString("verdict: not conformant\n")
	}
	for _, r := range reasons {
		b.WriteString("  " + r + "\n")
	}
	return b.String()
}

func configured(ok bool) string {
	if ok {
		return "configured"
	}
	return "not configured"
}

// writeSummary prints the summary and writes it to the summary file.
func writeSummary(report types.Report, regs []*registration) {
	text := renderSummary(outcomes(report, regs), regs)
	fmt.Fprint(os.Stdout, "\n"+text)
	file := ""
	for _, r := range regs {
		if st, err := r.settings(); err == nil && st.cfg.SummaryFile != "" {
			file = st.cfg.SummaryFile
			break
		}
	}
	if file == "" {
		return
	}
	if dir := filepath.Dir(file); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			ginkgo.Fail(fmt.Sprintf("writing the KRI conformance summary: %v", err))
		}
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		ginkgo.Fail(fmt.Sprintf("writing the KRI conformance summary: %v", err))
	}
}
