package hostprocesstest_test

import (
	"slices"
	"testing"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/examples/hostprocess/hostprocesstest"
)

func TestCapabilitiesAreKnownAndDistinct(t *testing.T) {
	caps := hostprocesstest.Capabilities()
	for i, c := range caps {
		if !slices.Contains(conformance.AllCapabilities(), c) {
			t.Errorf("%q is no capability of the suite", c)
		}
		if slices.Contains(caps[:i], c) {
			t.Errorf("%q is listed twice", c)
		}
	}
	caps[0] = "changed by a caller"
	if hostprocesstest.Capabilities()[0] == caps[0] {
		t.Error("a caller's change of the slice reached the next caller")
	}
}
