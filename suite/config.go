package suite

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ConfigCheck collects what is wrong with a suite's Config, so that one
// error names every problem at once, each with the field and the bad value.
// A suite's validation starts one with CheckConfig, runs the checks its
// Config needs (those below, and Addf for its own), and returns Err.
//
// The checks word their problems alike for every suite; a problem names
// the field as the Config spells it (Timeouts.Call, ConcurrentPods) and the
// value it has. A ConfigCheck is for one goroutine: it is a validation's
// local state, not shared.
type ConfigCheck struct {
	config   string
	problems []string
}

// CheckConfig starts the check of a configuration named config in its
// error (for example "vk.Config").
func CheckConfig(config string) *ConfigCheck {
	return &ConfigCheck{config: config}
}

// Addf records a problem of the suite's own, worded as fmt.Sprintf words
// format and args: name the field and its value.
func (c *ConfigCheck) Addf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// Problems returns the problems recorded so far, in the order recorded.
func (c *ConfigCheck) Problems() []string {
	return slices.Clone(c.problems)
}

// Err returns nil when no problem was recorded, else one error
// "invalid <config>: <problem>; <problem>; ..." in the order recorded.
func (c *ConfigCheck) Err() error {
	if len(c.problems) == 0 {
		return nil
	}
	return errors.New("invalid " + c.config + ": " + strings.Join(c.problems, "; "))
}

// Providers checks that at least one of the Config's provider factories
// (NewPodProvider, NewNodeProvider) is set.
func (c *ConfigCheck) Providers(podSet, nodeSet bool) {
	if !podSet && !nodeSet {
		c.Addf("neither NewPodProvider nor NewNodeProvider is set")
	}
}

// TimeoutScale checks Config.TimeoutScale (ValidateTimeoutScale): 0 (for 1)
// or a positive number.
func (c *ConfigCheck) TimeoutScale(scale float64) {
	if err := ValidateTimeoutScale(scale); err != nil {
		c.Addf("%s", err)
	}
}

// ExpectedFailures checks Config.ExpectedFailures
// (ValidateExpectedFailures): every ID names a spec of the catalogue (known)
// and has a reason.
func (c *ConfigCheck) ExpectedFailures(xfail map[string]string, known func(id string) bool) {
	c.problems = append(c.problems, ValidateExpectedFailures(xfail, known)...)
}

// Duration checks that the duration field (named as the Config spells it,
// "Timeouts.Call") is not negative; 0 usually means its default.
func (c *ConfigCheck) Duration(field string, d time.Duration) {
	if d < 0 {
		c.Addf("%s is negative (%s)", field, d)
	}
}

// Count checks that the count field (named as the Config spells it,
// "ConcurrentPods") is not negative; 0 usually means its default.
func (c *ConfigCheck) Count(field string, n int) {
	if n < 0 {
		c.Addf("%s is negative (%d)", field, n)
	}
}

// CheckCapabilities checks that every capability declared
// (Config.Capabilities) is one the suite knows, naming each unknown one and
// the known ones.
func CheckCapabilities[C ~string](c *ConfigCheck, declared, known []C) {
	for _, d := range declared {
		if !slices.Contains(known, d) {
			c.Addf("unknown capability %q (known: %s)", d, NameList(known))
		}
	}
}

// CheckNeeds checks that a Config declaring capability also sets the field
// it needs (set: whether that field, named as the Config spells it, is set).
func CheckNeeds[C ~string](c *ConfigCheck, declared []C, capability C, field string, set bool) {
	if !set && slices.Contains(declared, capability) {
		c.Addf("capability %q needs %s", capability, field)
	}
}

// NameList joins names (capabilities, say) for a message: sorted, comma
// separated, "none" when there are none.
func NameList[C ~string](names []C) string {
	if len(names) == 0 {
		return "none"
	}
	ss := make([]string, len(names))
	for i, n := range names {
		ss[i] = string(n)
	}
	slices.Sort(ss)
	return strings.Join(ss, ", ")
}
