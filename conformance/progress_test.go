package conformance_test

import (
	"strings"
	"testing"
	"time"
)

// TestGoTestVShowsProgress checks that 'go test -v' (-test.v) makes Run
// report each spec as it runs (its steps, Ginkgo's verbose reporter), that a
// run without it does not, and that an explicit Ginkgo verbosity wins.
func TestGoTestVShowsProgress(t *testing.T) {
	skipInHelper(t)
	t.Parallel()
	const step = "STEP: asking GetPodStatus about a pod the provider never saw"
	focus := "-ginkgo.focus=KRI-POD-002"
	for _, c := range []struct {
		name  string
		flags []string
		want  bool
	}{
		{"go test -v", []string{"-test.v", focus}, true},
		{"go test", []string{focus}, false},
		{"go test -v -ginkgo.succinct", []string{"-test.v", "-ginkgo.succinct", focus}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runHelper(t, helperPreview, time.Minute, c.flags...)
			if got := strings.Contains(r.output, step); got != c.want {
				t.Errorf("run with %v: output shows the spec's step %q: %v, want %v; output:\n%s", c.flags, step, got, c.want, tail(r.output))
			}
			if r.report == nil || len(r.report.SpecReports) == 0 {
				t.Errorf("run with %v: no Ginkgo report; output:\n%s", c.flags, tail(r.output))
			}
		})
	}
}
