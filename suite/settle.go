package suite

import (
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// SkipExpectedFailure skips a spec that ExpectedFailures lists, for reason,
// when expected failures are not to run (Config.SkipExpectedFailures): it
// is reported as an expected failure, not run, and counts for the verdict
// as a failure would.
func (s Suite) SkipExpectedFailure(reason string) {
	ginkgo.AddReportEntry(s.Entry(EntryExpectedFailure), "not run: "+reason, ginkgo.ReportEntryVisibilityNever)
	ginkgo.Skip(fmt.Sprintf("expected failure, not run (Config.SkipExpectedFailures, -%s.skip-expected-failures): %s", s.Prefix, reason))
}

// Tolerated reports whether the failure of a spec of level is recorded
// rather than reported to Ginkgo as a failure: the spec is an expected
// failure (xfail: ExpectedFailures lists it), or a SHOULD spec outside
// strict mode, whose failure is a warning. The body of such a spec stops at
// its first failure, which goes to Settle.
func Tolerated(level Level, strict, xfail bool) bool {
	return xfail || (level == Should && !strict)
}

// Failure is the first failure of a spec's body.
type Failure struct {
	Message  string
	Location types.CodeLocation
}

// End is how a spec's body ended, for Settle.
type End struct {
	ID     string
	Level  Level
	Strict bool
	// XFail: ExpectedFailures lists the spec, for Reason.
	XFail  bool
	Reason string
	// Failure is the body's first failure, nil when it passed.
	Failure *Failure
}

// Settle reports the end of a spec's body to Ginkgo: an expected failure
// as a skip carrying the <Prefix>:expected-failure entry; a SHOULD failure
// outside strict mode as a warning (a skip carrying <Prefix>:warning); any
// other failure as a failure; a spec that ExpectedFailures lists and that
// passed as a failure asking to remove it from the list (a warning for a
// SHOULD spec outside strict mode). A passed spec that is not listed is
// left as it is. Call it from the spec's body, after its cleanups.
func (s Suite) Settle(e End) {
	warn := e.Level == Should && !e.Strict
	switch {
	case e.Failure != nil && e.XFail:
		first := FirstLine(e.Failure.Message)
		ginkgo.AddReportEntry(s.Entry(EntryExpectedFailure), e.Reason+": "+first, ginkgo.ReportEntryVisibilityNever)
		ginkgo.Skip(fmt.Sprintf("expected failure (Config.ExpectedFailures: %s): %s", e.Reason, first))
	case e.Failure != nil && warn:
		s.warning(e.ID, *e.Failure)
	case e.Failure != nil:
		ginkgo.Fail(e.Failure.Message, 1)
	case e.XFail:
		msg := fmt.Sprintf("%s passed but Config.ExpectedFailures lists it (%q): remove it from the list", e.ID, e.Reason)
		if warn {
			s.warning(e.ID, Failure{Message: msg, Location: types.NewCodeLocation(1)})
		} else {
			ginkgo.Fail(msg, 1)
		}
	}
}

// warning reports the failure f of SHOULD spec id as a warning: a report
// entry (shown on the console and as a JUnit property) and a skip whose
// message says why the run goes on.
func (s Suite) warning(id string, f Failure) {
	ginkgo.AddReportEntry(s.Entry(EntryWarning), fmt.Sprintf("%s\n\nat %s", strings.TrimSpace(f.Message), f.Location), ginkgo.ReportEntryVisibilityAlways)
	ginkgo.Skip(fmt.Sprintf("%s is a SHOULD spec: its failure is a warning and does not fail the run (Config.Strict or -%s.strict would make it): %s",
		id, s.Prefix, FirstLine(f.Message)))
}

// CapabilitySkip is why a spec that needs the capabilities needs is skipped
// when declared says the configuration does not declare one of them ("" when
// it declares every one): "needs capability "<name>", which
// Config.Capabilities does not declare". Such a spec does not apply: it does
// not count for the verdict.
func CapabilitySkip[C ~string](needs []C, declared func(C) bool) string {
	for _, c := range needs {
		if !declared(c) {
			return fmt.Sprintf("needs capability %q, which Config.Capabilities does not declare", c)
		}
	}
	return ""
}
