package suite

import (
	"flag"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Flags are a suite's command-line flags, which 'go test' parses next to
// the -ginkgo.* flags. Read them once the flags are parsed (when a spec
// runs).
type Flags struct {
	prefix string
	// TimeoutScale (-<prefix>.timeout-scale, default 1) multiplies every
	// timeout of the suite on top of Config.TimeoutScale.
	TimeoutScale float64
	// Summary (-<prefix>.summary) is a file to write the summary to too.
	Summary string
	// Strict (-<prefix>.strict) sets Config.Strict.
	Strict bool
	// SkipExpectedFailures (-<prefix>.skip-expected-failures) sets
	// Config.SkipExpectedFailures.
	SkipExpectedFailures bool
}

// RegisterFlags registers the suite's flags on flag.CommandLine; call it
// once, from a package variable's initialiser or an init function. When
// another copy of the suite has registered them already, the flags it
// returns keep their defaults.
func (s Suite) RegisterFlags() *Flags {
	f := &Flags{prefix: s.Prefix, TimeoutScale: 1}
	if flag.CommandLine.Lookup(s.Prefix+".timeout-scale") != nil {
		return f
	}
	flag.Float64Var(&f.TimeoutScale, s.Prefix+".timeout-scale", 1,
		"multiply every timeout of the "+s.Name+" suite (on top of Config.TimeoutScale)")
	flag.StringVar(&f.Summary, s.Prefix+".summary", "",
		"also write the "+s.Name+" summary to this file")
	flag.BoolVar(&f.Strict, s.Prefix+".strict", false,
		"fail the run when an applicable SHOULD spec of the "+s.Name+" suite fails too (Config.Strict)")
	flag.BoolVar(&f.SkipExpectedFailures, s.Prefix+".skip-expected-failures", false,
		"do not run the specs listed in Config.ExpectedFailures; report them as expected failures, not run (Config.SkipExpectedFailures)")
	return f
}

// Scale is the factor of every timeout: configured (Config.TimeoutScale, 0
// meaning 1) times the -<prefix>.timeout-scale flag. It fails when the flag
// is not a positive number.
func (f *Flags) Scale(configured float64) (float64, error) {
	scale := configured
	if scale == 0 {
		scale = 1
	}
	if f.TimeoutScale <= 0 || math.IsNaN(f.TimeoutScale) || math.IsInf(f.TimeoutScale, 0) {
		return 0, fmt.Errorf("-%s.timeout-scale=%v is not a positive number", f.prefix, f.TimeoutScale)
	}
	return scale * f.TimeoutScale, nil
}

// ValidateTimeoutScale checks Config.TimeoutScale: 0 (for 1) or a positive
// number.
func ValidateTimeoutScale(scale float64) error {
	if scale < 0 || math.IsNaN(scale) || math.IsInf(scale, 0) {
		return fmt.Errorf("TimeoutScale %v is not a positive number", scale)
	}
	return nil
}

// ValidateExpectedFailures checks Config.ExpectedFailures: every ID is a
// spec of the catalogue (known) and has a reason. It returns the problems,
// in the order of the IDs.
func ValidateExpectedFailures(xfail map[string]string, known func(id string) bool) []string {
	ids := make([]string, 0, len(xfail))
	for id := range xfail {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var errs []string
	for _, id := range ids {
		if !known(id) {
			errs = append(errs, fmt.Sprintf("ExpectedFailures names unknown spec %q", id))
		} else if strings.TrimSpace(xfail[id]) == "" {
			errs = append(errs, fmt.Sprintf("ExpectedFailures[%q] gives no reason", id))
		}
	}
	return errs
}
