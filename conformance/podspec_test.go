package conformance_test

import (
	"slices"

	"github.com/kri-kit/testkit/conformance"
)

// podSpecCapabilities are the capabilities of what the pod spec asks of the
// node that the fake does not simulate (yet): its reference run, the
// mutants and the benign variants built on it do not declare them (their
// specs are skipped). The mutants of the pod-spec specs are built on the
// hostprocess example (podspec_mutants_test.go), which implements them
// with real processes; the fake's mutants run those specs too.
var podSpecCapabilities = []conformance.Capability{}

// fakeCapabilities are the capabilities the fake declares.
func fakeCapabilities() []conformance.Capability {
	return slices.DeleteFunc(conformance.AllCapabilities(), func(c conformance.Capability) bool {
		return slices.Contains(podSpecCapabilities, c)
	})
}

// fakeDeclares reports whether the fake declares every capability spec s
// needs.
func fakeDeclares(s conformance.SpecInfo) bool {
	for _, c := range s.Capabilities {
		if slices.Contains(podSpecCapabilities, c) {
			return false
		}
	}
	return true
}
