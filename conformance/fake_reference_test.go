package conformance_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// helperEnv names what a re-executed test binary should do (see
// selftest_helper_test.go): run a mutant or a benign variant, preview the
// specs, call Run twice.
const helperEnv = "KRI_CONFORMANCE_HELPER"

// fakeTimeouts suit the in-memory fake on the real clock: short waits, a
// one-second grace period.
var fakeTimeouts = conformance.Timeouts{
	Call:        5 * time.Second,
	State:       10 * time.Second,
	Poll:        10 * time.Millisecond,
	Stable:      100 * time.Millisecond,
	ShortRun:    100 * time.Millisecond,
	GracePeriod: time.Second,
}

// fakeConfig runs the suite against the fake providers, with every
// capability declared. pod and node, when not nil, adjust each new provider
// (the mutants install their interceptors there).
func fakeConfig(pod func(*fake.PodProvider), node func(*fake.NodeProvider)) conformance.Config {
	return conformance.Config{
		NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) {
			p := fake.NewPodProvider()
			if pod != nil {
				pod(p)
			}
			return p, nil
		},
		NewNodeProvider: func(ctx context.Context) (kri.NodeProvider, error) {
			n := fake.NewNodeProvider()
			if err := n.Err(); err != nil {
				return nil, err
			}
			context.AfterFunc(ctx, n.Close)
			if node != nil {
				node(n)
			}
			return n, nil
		},
		Capabilities: fakeCapabilities(),
		TriggerNodeStatusUpdate: func(ctx context.Context, p kri.NodeProvider) error {
			n, ok := p.(*fake.NodeProvider)
			if !ok {
				return errors.New("not the fake NodeProvider")
			}
			n.MarkNotReady("KRIConformance", "triggered by the conformance suite")
			return nil
		},
		MakeBackendUnhealthy: func(ctx context.Context, p kri.NodeProvider) error {
			n, ok := p.(*fake.NodeProvider)
			if !ok {
				return errors.New("not the fake NodeProvider")
			}
			n.FailPingsUntilHealed(nil)
			return nil
		},
		Timeouts:    fakeTimeouts,
		VirtualTime: true,
	}
}

// TestFakeIsConformant runs the whole suite against the fake providers; it is
// what 'make conformance' runs.
func TestFakeIsConformant(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("helper process")
	}
	conformance.Run(t, fakeConfig(nil, nil))
}

// podSpecCapabilities are the capabilities of what the pod spec asks of the
// node that the fake does not simulate (yet): its reference run, the
// mutants and the benign variants built on it do not declare them (their
// specs are skipped). The mutants of the pod-spec specs are built on the
// hostprocess example (selftest_hostprocess_test.go), which implements them
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
