package suite_test

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kri-kit/testkit/suite"
)

// A suite names itself, classifies each spec of its catalogue from the
// Ginkgo report, says which apply, and lets Judge and Summary decide and
// word the verdict and the gate.
func ExampleSummary() {
	s := suite.Suite{Name: "My conformance", Prefix: "my", SpecID: regexp.MustCompile(`^\[(MY-\d{3})\]`)}
	report := types.Report{SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[MY-001] answers", State: types.SpecStatePassed},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[MY-002] answers fast", State: types.SpecStateSkipped,
			ReportEntries: types.ReportEntries{{Name: "my:warning", Value: types.WrapEntryValue("took 3s")}}},
	}}
	byID := s.Reports(report)
	var outs []suite.Outcome
	for _, spec := range []suite.Spec{{ID: "MY-001", Level: suite.Must, Text: "answers"}, {ID: "MY-002", Level: suite.Should, Text: "answers fast"}} {
		sr, ran := byID[spec.ID]
		o := s.Classify(spec, sr, ran, func(string) string { return "" })
		o.Applicable = true
		outs = append(outs, o)
	}
	j := s.Judge(outs, report)
	text := suite.Summary{Suite: s, Header: []string{"provider: mine"}, Outcomes: outs, Judgement: j}.Text()
	for line := range strings.Lines(text) {
		fmt.Println(strings.TrimRight(line, " \n")) // the table pads its last column
	}
	// Output:
	// My conformance summary
	// provider: mine
	// MY-001  MUST    passed
	// MY-002  SHOULD  failed  warning: took 3s
	// 2 specs: 1 passed, 1 failed (1 of them SHOULD warnings), 0 skipped, 0 expected failures, 0 not run
	// failures:
	//   MY-002 SHOULD failed (warning): answers fast
	//     took 3s
	// verdict: conformant (every applicable MUST spec passed)
	//   warning: 1 SHOULD spec(s) failed: MY-002
	// gate: pass (the verdict is conformant; SHOULD failures are warnings, -my.strict makes them fail the run)
}
