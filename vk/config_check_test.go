package vk

import (
	"strings"
	"testing"
	"time"
)

// TestValidateChecksWhatTheKRISuiteChecks: the checks vk.Config took on
// when both suites' validations became package suite's ConfigCheck.
func TestValidateChecksWhatTheKRISuiteChecks(t *testing.T) {
	pods := references[0].config().NewPodProvider
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{NewPodProvider: pods, Capabilities: []Capability{"teleport"}}, `unknown capability "teleport" (known: backend-failures, `},
		{Config{NewPodProvider: pods, NodeStatusPeriod: -time.Second}, "NodeStatusPeriod is negative (-1s)"},
	} {
		if err := validate(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "invalid vk.Config: ") {
			t.Errorf("validate(%+v) = %v, want an error of vk.Config containing %q", tc.cfg, err, tc.want)
		}
	}
	if err := validate(Config{NewPodProvider: pods, Capabilities: AllCapabilities(), MakeBackendUnhealthy: nil}); err == nil || strings.Contains(err.Error(), "unknown capability") {
		t.Errorf("validate with every known capability = %v, want only the fields they need named", err)
	}
}
