package suite

import (
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// Judgement is what the summary concludes from a run.
type Judgement struct {
	// DryRun: nothing ran, there is no verdict and nothing fails.
	DryRun bool
	// Conformant is the verdict; Reasons say why it is "not conformant".
	Conformant bool
	Reasons    []string
	// Warnings and Notes decide nothing: SHOULD failures, SHOULD specs
	// expected to fail, unnecessary ExpectedFailures entries.
	Warnings, Notes []string
	// Pass is the gate: whether the run (go test, RunSpecs) passes;
	// Failures say why not.
	Pass     bool
	Failures []string
}

// Judge decides the verdict and the gate of a run from its outcomes and the
// Ginkgo report (for a dry run and the failures of nodes that are not the
// suite's specs). The rule: the run fails exactly when the verdict is "not
// conformant", or, in strict mode, when an applicable SHOULD spec did not
// pass (ExpectedFailures aside). Beyond the rule, anything Ginkgo itself
// failed (a panic in a SHOULD spec, another suite node) fails the run too,
// and the summary names it.
func (s Suite) Judge(outs []Outcome, report types.Report) Judgement {
	j := Judgement{}
	if report.SuiteConfig.DryRun {
		j.DryRun, j.Pass = true, true
		return j
	}
	j.Conformant, j.Reasons = Verdict(outs)
	var shouldFailed, shouldXFail, unnecessary, strictFailed, strictNotPassed, ginkgoShould []string
	for _, o := range outs {
		if !o.Applicable || o.Spec.Level == Must {
			continue
		}
		switch o.Result {
		case Failed:
			shouldFailed = append(shouldFailed, o.Spec.ID)
			if o.Strict {
				strictFailed = append(strictFailed, o.Spec.ID)
			} else if o.GinkgoFailed {
				ginkgoShould = append(ginkgoShould, o.Spec.ID)
			}
		case ExpectedFailure:
			shouldXFail = append(shouldXFail, o.Spec.ID)
			if !o.Strict {
				unnecessary = append(unnecessary, o.Spec.ID)
			}
		case Passed:
		default:
			if o.Strict {
				strictNotPassed = append(strictNotPassed, o.Spec.ID)
			}
		}
	}
	if len(shouldFailed) > 0 {
		j.Warnings = append(j.Warnings, fmt.Sprintf("warning: %d SHOULD spec(s) failed: %s", len(shouldFailed), strings.Join(shouldFailed, ", ")))
	}
	if len(shouldXFail) > 0 {
		j.Warnings = append(j.Warnings, fmt.Sprintf("warning: %d SHOULD spec(s) failed as Config.ExpectedFailures expects: %s", len(shouldXFail), strings.Join(shouldXFail, ", ")))
	}
	if len(unnecessary) > 0 {
		j.Notes = append(j.Notes, fmt.Sprintf("note: Config.ExpectedFailures lists SHOULD spec(s) %s, which is unnecessary without strict mode: a SHOULD failure never fails the run", strings.Join(unnecessary, ", ")))
	}

	if !j.Conformant {
		j.Failures = append(j.Failures, "the verdict is not conformant")
	}
	if len(strictFailed) > 0 {
		j.Failures = append(j.Failures, fmt.Sprintf("strict mode: %d applicable SHOULD spec(s) failed: %s", len(strictFailed), strings.Join(strictFailed, ", ")))
	}
	if len(strictNotPassed) > 0 {
		j.Failures = append(j.Failures, fmt.Sprintf("strict mode: %d applicable SHOULD spec(s) skipped or not run: %s", len(strictNotPassed), strings.Join(strictNotPassed, ", ")))
	}
	if len(ginkgoShould) > 0 {
		j.Failures = append(j.Failures, fmt.Sprintf("%d SHOULD spec(s) failed outside the suite's assertions (a panic, a timeout, an interrupt), which Ginkgo fails the run for: %s", len(ginkgoShould), strings.Join(ginkgoShould, ", ")))
	}
	if other := s.otherFailures(report); len(other) > 0 {
		j.Failures = append(j.Failures, fmt.Sprintf("%d other node(s) of the suite failed: %s", len(other), strings.Join(other, "; ")))
	}
	j.Pass = len(j.Failures) == 0
	return j
}

// otherFailures names the failed nodes of report that are not the suite's
// specs (suite nodes, specs of the test package itself).
func (s Suite) otherFailures(report types.Report) []string {
	var out []string
	for _, sr := range report.SpecReports {
		if !sr.State.Is(types.SpecStateFailureStates) {
			continue
		}
		if sr.LeafNodeType == types.NodeTypeIt && s.IDOf(sr.LeafNodeText) != "" {
			continue
		}
		out = append(out, strings.TrimSpace(fmt.Sprintf("[%s] %s: %s", sr.LeafNodeType, sr.FullText(), FirstLine(sr.Failure.Message))))
	}
	return out
}

// Verdict decides conformance: every applicable MUST spec passed and no
// MUST spec was an expected failure. It returns the reasons when not.
func Verdict(outs []Outcome) (bool, []string) {
	var failed, skipped, notRun, expected []string
	applicableMust := 0
	for _, o := range outs {
		if !o.Applicable || o.Spec.Level != Must {
			continue
		}
		applicableMust++
		switch o.Result {
		case Passed:
		case Failed:
			failed = append(failed, o.Spec.ID)
		case ExpectedFailure:
			expected = append(expected, o.Spec.ID)
		case Skipped:
			skipped = append(skipped, o.Spec.ID)
		default:
			notRun = append(notRun, o.Spec.ID)
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
