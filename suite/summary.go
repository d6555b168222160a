package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/onsi/ginkgo/v2"
)

// Summary is the human summary of a run.
type Summary struct {
	Suite Suite
	// Header are the suite's own lines after the title (its
	// configuration, providers, capabilities), without their newline.
	Header []string
	// Strict: the run is in strict mode.
	Strict    bool
	Outcomes  []Outcome
	Judgement Judgement
}

// Text renders the summary: the title "<Name> summary", the header, a line
// per spec (ID, level, result, detail), the counts, the failures with
// their requirement, last step and first failure line, the verdict with its
// reasons, warnings and notes, and the gate.
func (s Summary) Text() string {
	var b strings.Builder
	b.WriteString(s.Suite.Name + " summary\n")
	for _, l := range s.Header {
		b.WriteString(l + "\n")
	}
	if s.Strict {
		b.WriteString("strict mode: applicable SHOULD specs must pass too\n")
	}

	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	counts := map[Result]int{}
	warnings := 0
	for _, o := range s.Outcomes {
		counts[o.Result]++
		if o.Warning {
			warnings++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.Spec.ID, o.Spec.Level, o.Result, o.Detail)
	}
	tw.Flush()
	fmt.Fprintf(&b, "%d specs: %d passed, %d failed (%d of them SHOULD warnings), %d skipped, %d expected failures, %d not run\n",
		len(s.Outcomes), counts[Passed], counts[Failed], warnings, counts[Skipped], counts[ExpectedFailure], counts[NotRun])

	var failed []Outcome
	for _, o := range s.Outcomes {
		if o.Result == Failed || o.Result == ExpectedFailure {
			failed = append(failed, o)
		}
	}
	if len(failed) > 0 {
		b.WriteString("failures:\n")
		for _, o := range failed {
			result := string(o.Result)
			if o.Warning {
				result += " (warning)"
			}
			fmt.Fprintf(&b, "  %s %s %s: %s\n", o.Spec.ID, o.Spec.Level, result, o.Spec.Text)
			if o.Step != "" {
				fmt.Fprintf(&b, "    step: %s\n", o.Step)
			}
			switch {
			case o.Failure != "":
				fmt.Fprintf(&b, "    %s\n", o.Failure)
			case o.Detail != "":
				fmt.Fprintf(&b, "    %s\n", o.Detail)
			}
		}
	}

	j := s.Judgement
	switch {
	case j.DryRun:
		b.WriteString("verdict: none (dry run: no spec ran)\n")
	case j.Conformant:
		b.WriteString("verdict: conformant (every applicable MUST spec passed)\n")
	default:
		b.WriteString("verdict: not conformant\n")
	}
	for _, r := range slices.Concat(j.Reasons, j.Warnings, j.Notes) {
		b.WriteString("  " + r + "\n")
	}
	switch {
	case j.DryRun:
		b.WriteString("gate: pass (a dry run fails nothing)\n")
	case j.Pass && s.Strict:
		b.WriteString("gate: pass (every applicable MUST and SHOULD spec passed)\n")
	case j.Pass:
		b.WriteString("gate: pass (the verdict is conformant; SHOULD failures are warnings, -" + s.Suite.Prefix + ".strict makes them fail the run)\n")
	default:
		b.WriteString("gate: FAIL (" + strings.Join(j.Failures, "; ") + ")\n")
	}
	return b.String()
}

// Write ends a run; call it from the suite's ReportAfterSuite, which Ginkgo
// runs once per run (in process 1 of a parallel run, with the report of
// every process). It prints the summary text, writes it to file unless
// file is "", and, when the gate fails, fails the summary node, so that
// Ginkgo fails the run, the console says why and the JUnit report has a
// failed testcase "[ReportAfterSuite] <its text>" naming the reasons. The
// node's report entries <Prefix>:verdict and <Prefix>:gate (JUnit
// properties) carry the verdict and the gate.
func (s Suite) Write(text string, j Judgement, file string) {
	fmt.Fprint(os.Stdout, "\n"+text)
	verdictText := "not conformant"
	switch {
	case j.DryRun:
		verdictText = "none (dry run)"
	case j.Conformant:
		verdictText = "conformant"
	}
	gateText := "pass"
	if !j.Pass {
		gateText = "fail: " + strings.Join(j.Failures, "; ")
	}
	ginkgo.AddReportEntry(s.Entry(EntryVerdict), verdictText, ginkgo.ReportEntryVisibilityNever)
	ginkgo.AddReportEntry(s.Entry(EntryGate), gateText, ginkgo.ReportEntryVisibilityNever)

	if file != "" {
		if dir := filepath.Dir(file); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				ginkgo.Fail(fmt.Sprintf("writing the %s summary: %v", s.Name, err))
			}
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			ginkgo.Fail(fmt.Sprintf("writing the %s summary: %v", s.Name, err))
		}
	}
	if !j.Pass {
		reasons := slices.Concat(j.Failures, j.Reasons)
		ginkgo.Fail(s.Name + " gate: the run fails: " + strings.Join(reasons, "; "))
	}
}
