package suite

import (
	"regexp"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// Suite names one suite in what it writes and reads back.
type Suite struct {
	// Name is the suite's name in messages ("KRI conformance"); its summary
	// is titled "<Name> summary".
	Name string
	// Prefix is the prefix of the suite's flags (-<Prefix>.strict) and of
	// the report entries it writes and reads back (<Prefix>:warning).
	Prefix string
	// SpecID matches the text of one of the suite's specs, its first
	// submatch the spec's ID ("[KRI-POD-001] ..." gives "KRI-POD-001").
	SpecID *regexp.Regexp
}

// Entry returns the name of the suite's report entry name:
// "<Prefix>:<name>".
func (s Suite) Entry(name string) string { return s.Prefix + ":" + name }

// Report entries of a spec and of the summary node.
const (
	// EntryExpectedFailure carries the failure of a spec listed in
	// ExpectedFailures ("<reason>: <first line>", or "not run: <reason>").
	EntryExpectedFailure = "expected-failure"
	// EntryWarning carries the failure of a SHOULD spec that does not fail
	// the run (no strict mode): the spec is a skip in Ginkgo's terms.
	EntryWarning = "warning"
	// EntryVerdict and EntryGate are the summary node's verdict and gate.
	EntryVerdict = "verdict"
	EntryGate    = "gate"
)

// IDOf returns the spec ID at the start of a spec's text, or "".
func (s Suite) IDOf(text string) string {
	if m := s.SpecID.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// Level is how much a spec weighs: MUST specs decide the verdict, SHOULD
// specs only the gate of a strict run.
type Level string

// The levels.
const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
)

// Result is what a spec ended in, as the summary shows it.
type Result string

// The results a spec can have in the summary.
const (
	Passed          Result = "passed"
	Failed          Result = "failed"
	Skipped         Result = "skipped"
	ExpectedFailure Result = "expected-failure"
	NotRun          Result = "not-run"
)

// Spec is what the summary needs of one spec of a catalogue.
type Spec struct {
	ID    string
	Level Level
	// Text is the spec's requirement, as the catalogue words it.
	Text string
}

// Outcome is the summary line of one spec.
type Outcome struct {
	Spec   Spec
	Result Result
	Detail string
	// Applicable: the spec counts for the verdict and the gate (its
	// provider is configured, its capabilities are declared, ...: the
	// suite decides). Only applicable MUST specs decide the verdict.
	Applicable bool
	// Strict: the spec ran in strict mode.
	Strict bool
	// Warning: a SHOULD spec whose failure was reported as a warning (a
	// skip in Ginkgo's terms); its Result is Failed.
	Warning bool
	// GinkgoFailed: Ginkgo reports the spec in a failure state, which
	// fails the run whatever the spec's level.
	GinkgoFailed bool
	// Failure is the first line of the spec's failure (failed, warning or
	// expected failure), Step the last By step before it.
	Failure, Step string
}

// Reports returns the reports of the suite's specs in report, by spec ID.
func (s Suite) Reports(report types.Report) map[string]types.SpecReport {
	byID := map[string]types.SpecReport{}
	for _, sr := range report.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		if id := s.IDOf(sr.LeafNodeText); id != "" {
			byID[id] = sr
		}
	}
	return byID
}

// Classify reads the result of spec from its report sr (ran: the report
// has one; a spec missing from it is not run). xfailReason returns the
// reason ExpectedFailures gives for a spec ("" when it does not list it); it
// is nil when the configuration is not known (invalid), and an expected
// failure's first failure line is then not read out of its report entry.
// The caller sets Applicable and Strict, and may replace Detail.
func (s Suite) Classify(spec Spec, sr types.SpecReport, ran bool, xfailReason func(id string) string) Outcome {
	o := Outcome{Spec: spec}
	switch {
	case !ran:
		o.Result = NotRun
	case sr.State == types.SpecStatePassed:
		o.Result = Passed
	case sr.State.Is(types.SpecStateFailureStates):
		o.Failure = failureLine(sr)
		o.Result, o.Detail, o.GinkgoFailed = Failed, sr.State.String()+": "+o.Failure, true
	case sr.State == types.SpecStateSkipped:
		if w, found := EntryValue(sr, s.Entry(EntryWarning)); found {
			o.Failure = FirstLine(w)
			o.Result, o.Detail, o.Warning = Failed, "warning: "+o.Failure, true
		} else if xf, found := EntryValue(sr, s.Entry(EntryExpectedFailure)); found {
			o.Result, o.Detail = ExpectedFailure, xf
			if xfailReason != nil && !strings.HasPrefix(xf, "not run: ") {
				o.Failure = strings.TrimPrefix(xf, xfailReason(spec.ID)+": ")
			}
		} else if sr.Failure.Message != "" {
			o.Result, o.Detail = Skipped, FirstLine(sr.Failure.Message)
		} else {
			o.Result, o.Detail = NotRun, "filtered out"
		}
	default:
		o.Result, o.Detail = NotRun, sr.State.String()
	}
	if o.Failure != "" {
		o.Step = LastStep(sr)
	}
	return o
}

// failureLine is the first line of a failed spec's failure, with the value
// of a panic.
func failureLine(sr types.SpecReport) string {
	line := FirstLine(sr.Failure.Message)
	if sr.Failure.ForwardedPanic != "" {
		line += " " + FirstLine(sr.Failure.ForwardedPanic)
	}
	return line
}

// LastStep is the text of the last By step of sr before its failure (or
// skip), "" when it has none.
func LastStep(sr types.SpecReport) string {
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

// EntryValue returns the value of sr's report entry name, and whether it
// has one.
func EntryValue(sr types.SpecReport, name string) (string, bool) {
	for _, e := range sr.ReportEntries {
		if e.Name == name {
			return e.Value.String(), true
		}
	}
	return "", false
}

// FirstLine is the first line of s, its surrounding space trimmed.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
