package suite

import (
	"strings"
	"testing"
	"time"
)

type capability string

func TestConfigCheckNamesEveryProblemWithItsFieldAndValue(t *testing.T) {
	known := []capability{"b-cap", "a-cap"}
	c := CheckConfig("my.Config")
	c.Providers(false, false)
	CheckCapabilities(c, []capability{"a-cap", "teleport"}, known)
	CheckNeeds(c, []capability{"a-cap"}, "a-cap", "MakeItSo", false)
	CheckNeeds(c, []capability{"a-cap"}, "b-cap", "Other", false) // not declared: fine
	CheckNeeds(c, []capability{"a-cap"}, "a-cap", "Set", true)    // set: fine
	c.ExpectedFailures(map[string]string{"TC-009": "x", "TC-001": "ok"}, func(id string) bool { return id == "TC-001" })
	c.TimeoutScale(-2)
	c.Duration("Timeouts.Call", -time.Second)
	c.Duration("Timeouts.Poll", 0)
	c.Count("ConcurrentPods", -3)
	c.Count("BenchmarkPods", 0)
	c.Addf("VirtualTime and APIServer exclude each other")
	want := []string{
		"neither NewPodProvider nor NewNodeProvider is set",
		`unknown capability "teleport" (known: a-cap, b-cap)`,
		`capability "a-cap" needs MakeItSo`,
		`ExpectedFailures names unknown spec "TC-009"`,
		"TimeoutScale -2 is not a positive number",
		"Timeouts.Call is negative (-1s)",
		"ConcurrentPods is negative (-3)",
		"VirtualTime and APIServer exclude each other",
	}
	got := c.Problems()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := c.Err(); err == nil || err.Error() != "invalid my.Config: "+strings.Join(want, "; ") {
		t.Errorf("Err() = %v", err)
	}
}

func TestConfigCheckOfAValidConfigIsNil(t *testing.T) {
	c := CheckConfig("my.Config")
	c.Providers(true, false)
	CheckCapabilities(c, []capability{"a"}, []capability{"a"})
	c.TimeoutScale(0)
	c.ExpectedFailures(nil, func(string) bool { return false })
	if err := c.Err(); err != nil || len(c.Problems()) != 0 {
		t.Errorf("Err() = %v, problems %q; want none", err, c.Problems())
	}
}

func TestNameList(t *testing.T) {
	if got := NameList([]capability(nil)); got != "none" {
		t.Errorf("NameList(nil) = %q, want none", got)
	}
	if got := NameList([]string{"z", "a"}); got != "a, z" {
		t.Errorf("NameList = %q, want sorted", got)
	}
}
