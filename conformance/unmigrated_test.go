package conformance_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// unmigrated is a provider written before the duty to notify: it wraps the
// fake by embedding kri.PodProvider, which hides the fake's
// SetPodSyncHandler (the wrapper trap), so it does not implement
// kri.PodSyncNotifier.
type unmigrated struct{ kri.PodProvider }

// helperUnmigrated runs the suite against unmigrated providers.
const helperUnmigrated = "unmigrated"

func init() {
	extraHelpers[helperUnmigrated] = func() conformance.Config {
		cfg := fakeConfig(nil, nil)
		cfg.NewPodProvider = func(ctx context.Context) (kri.PodProvider, error) {
			return unmigrated{fake.NewPodProvider()}, nil
		}
		return cfg
	}
}

// TestProviderWithoutNotifierIsToldAtOnce: a provider that does not
// implement kri.PodSyncNotifier is told so once, at the first pod spec,
// the verdict's first reason names the duty, and the specs that need a
// second sync fail at once, naming it, instead of waiting out their
// timeouts (KRI-POD-008 and 009 among them, whose failures once did not
// name it).
func TestProviderWithoutNotifierIsToldAtOnce(t *testing.T) {
	skipInHelper(t)
	run := runHelper(t, helperUnmigrated, 5*time.Minute)
	if run.err == nil {
		t.Fatalf("the run passed; output:\n%s", tail(run.output))
	}
	banner := "the pod provider (conformance_test.unmigrated) does not implement kri.PodSyncNotifier"
	if n := strings.Count(run.output, "KRI conformance: "+banner); n != 1 {
		t.Errorf("the console says %d times %q, want once; output:\n%s", n, banner, tail(run.output))
	}
	for _, want := range []string{"SetPodSyncHandler", "interceptor.NewPodProvider", "podsync.Notifier"} {
		if !strings.Contains(run.output, want) {
			t.Errorf("the console's explanation does not name %s", want)
		}
	}
	_, verdict, ok := strings.Cut(run.summary, "\nverdict: not conformant\n")
	if !ok || !strings.HasPrefix(verdict, "  "+banner) {
		t.Errorf("the verdict's first reason is not the missing duty; summary:\n%s", run.summary)
	}
	for _, id := range []string{"KRI-POD-001", "KRI-POD-008", "KRI-POD-009"} {
		why := run.why(id)
		if !strings.Contains(why, "does not implement kri.PodSyncNotifier") {
			t.Errorf("%s does not name the duty: %s", id, why)
		}
		sr, _ := run.specReport(id)
		if !strings.Contains(why, "failed at once instead of waiting out") {
			t.Errorf("%s waited (%s) instead of failing at once: %s", id, sr.RunTime, why)
		}
	}
	if t.Failed() {
		return
	}
	// Every failed spec that fails for the missing calls says so.
	var silent []string
	for _, id := range run.failedIDs() {
		if why := run.why(id); !strings.Contains(why, "kri.PodSyncNotifier") {
			silent = append(silent, id+": "+firstLine(why))
		}
	}
	if len(silent) > 0 {
		t.Logf("failed specs whose failure does not name the duty (not all need a call):\n%s", strings.Join(silent, "\n"))
	}
}

// TestUnmigratedProvider runs the whole suite, on the real clock and at the
// default timeouts, as an adopter would, against a provider that does not
// implement kri.PodSyncNotifier. It runs only with KRI_UNMIGRATED=1: it is
// the measurement of how soon such a provider gets its verdict (issue 49:
// 47 s for the whole run, the first failure at 0.1 s; before, the first
// failure came after 69 s and each spec that needed a second sync waited
// out its minute).
func TestUnmigratedProvider(t *testing.T) {
	if os.Getenv("KRI_UNMIGRATED") == "" || os.Getenv(helperEnv) != "" {
		t.Skip("set KRI_UNMIGRATED=1 to run the suite against a provider that hides SetPodSyncHandler")
	}
	cfg := fakeConfig(nil, nil)
	cfg.NewPodProvider = func(ctx context.Context) (kri.PodProvider, error) {
		return unmigrated{fake.NewPodProvider()}, nil
	}
	cfg.Timeouts = conformance.Timeouts{}
	cfg.VirtualTime = false
	conformance.Run(t, cfg)
}
