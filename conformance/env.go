package conformance

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// Report entry names the summary reads back from the Ginkgo report.
const (
	entryExpectedFailure = "kri:expected-failure"
	entryCleanup         = "kri:cleanup"
)

// base is what every spec body gets: the settings, a Gomega whose failures
// go through the spec's fail handler, and the guarded way to call the
// provider.
type base struct {
	st   *settings
	spec *specDef
	// ctx lives as long as the spec (cleanup included); provider calls get
	// a context derived from it.
	ctx    context.Context
	cancel context.CancelFunc
	g      gomega.Gomega
	// failHandler fails the spec (or, for an expected failure, records the
	// failure and aborts the body).
	failHandler func(message string, callerSkip ...int)
}

// xfailAbort aborts the body of a spec listed in Config.ExpectedFailures at
// its first failure.
type xfailAbort struct{}

// runSpec runs spec s of registration reg: it applies the skips (benchmark,
// capabilities, missing factory), builds the environment and runs the body,
// turning the failure of an expected-failure spec into a reported skip.
func runSpec(reg *registration, s *specDef) {
	st, err := reg.settings()
	if err != nil {
		ginkgo.Fail(err.Error())
	}
	if s.benchmark && !strings.Contains(ginkgo.GinkgoLabelFilter(), labelBenchmark) {
		ginkgo.Skip("benchmark specs run only when the label filter asks for them (-ginkgo.label-filter=benchmark)")
	}
	for _, c := range s.caps {
		if !st.caps[c] {
			ginkgo.Skip(fmt.Sprintf("needs capability %q, which Config.Capabilities does not declare", c))
		}
	}
	switch {
	case s.kind == kindPod && st.cfg.NewPodProvider == nil:
		ginkgo.Skip("Config.NewPodProvider is nil: the pod specs do not apply")
	case s.kind == kindNode && st.cfg.NewNodeProvider == nil:
		ginkgo.Skip("Config.NewNodeProvider is nil: the node specs do not apply")
	}

	reason, xfail := st.cfg.ExpectedFailures[s.id]
	var failures []string
	b := &base{st: st, spec: s}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	ginkgo.DeferCleanup(b.cancel) // runs last: cleanups run in reverse order
	b.failHandler = func(message string, callerSkip ...int) {
		if xfail {
			failures = append(failures, message)
			panic(xfailAbort{})
		}
		skip := 0
		if len(callerSkip) > 0 {
			skip = callerSkip[0]
		}
		ginkgo.Fail(message, skip+1)
	}
	b.g = gomega.NewGomega(b.failHandler)

	body := func() {
		switch s.kind {
		case kindPod:
			s.pod(newPodEnv(b, !s.noStart))
		case kindNode:
			s.node(newNodeEnv(b))
		}
	}
	if !xfail {
		body()
		return
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(xfailAbort); !ok {
					panic(r)
				}
			}
		}()
		body()
	}()
	if len(failures) > 0 {
		first := firstLine(failures[0])
		ginkgo.AddReportEntry(entryExpectedFailure, reason+": "+first, ginkgo.ReportEntryVisibilityNever)
		ginkgo.Skip(fmt.Sprintf("expected failure (Config.ExpectedFailures: %s): %s", reason, first))
	}
	ginkgo.Fail(fmt.Sprintf("%s passed but Config.ExpectedFailures lists it (%q): remove it from the list", s.id, reason))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// fail fails the spec with msg.
func (b *base) fail(msg string) {
	b.failHandler(msg, 1)
}

func (b *base) failf(format string, args ...any) {
	b.failHandler(fmt.Sprintf(format, args...), 1)
}

// callError is a provider call that did not return in time or panicked.
type callError struct {
	method string
	msg    string
	hung   bool
}

func (e *callError) Error() string { return e.msg }

// try runs fn, one provider call named method, in its own goroutine with a
// context derived from the spec's. It returns a *callError when fn panicked
// (with the value and stack) or did not return within the call timeout; the
// goroutine of a call that hangs is abandoned after its context is
// cancelled. try never fails the spec itself.
func (b *base) try(method string, fn func(ctx context.Context)) error {
	return b.tryWithin(method, b.st.t.Call, fn)
}

// tryWithin is try with another bound than the call timeout.
func (b *base) tryWithin(method string, within time.Duration, fn func(ctx context.Context)) error {
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	var panicked any
	var stack []byte
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				panicked, stack = r, debug.Stack()
			}
		}()
		fn(ctx)
	}()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case <-done:
		cancel()
		if panicked != nil {
			return &callError{method: method, msg: fmt.Sprintf("%s panicked: %v\n\n%s", method, panicked, stack)}
		}
		return nil
	case <-timer.C:
		cancel()
		return &callError{method: method, hung: true, msg: fmt.Sprintf("%s did not return within %s", method, within)}
	}
}

// do is try that fails the spec on a hang or a panic.
func (b *base) do(method string, fn func(ctx context.Context)) {
	if err := b.try(method, fn); err != nil {
		b.fail(err.Error())
	}
}

// noError fails the spec when err is not nil, and skips it, naming the
// operation, when err is ErrNotSupported.
func (b *base) noError(method string, err error) {
	if err == nil {
		return
	}
	b.skipIfNotSupported(method, err)
	b.failf("%s returned an unexpected error: %v", method, err)
}

// expectNil fails the spec, saying what returned err, unless err is nil; an
// ErrNotSupported skips it.
func (b *base) expectNil(method string, err error, what string) {
	if err == nil {
		return
	}
	b.skipIfNotSupported(method, err)
	b.failf("%s returned %v, want nil", what, err)
}

func (b *base) skipIfNotSupported(method string, err error) {
	if errors.Is(err, ErrNotSupported) {
		ginkgo.Skip(fmt.Sprintf("%s is not supported by the provider (%v)", method, err))
	}
}

// note records a problem that does not fail the spec (seen while cleaning
// up) in the report and the spec's output.
func (b *base) note(msg string) {
	ginkgo.GinkgoWriter.Println("kri conformance: " + msg)
	ginkgo.AddReportEntry(entryCleanup, msg, ginkgo.ReportEntryVisibilityFailureOrVerbose)
}

// eventually polls f with the state timeout and the poll interval until it
// passes; desc says what is awaited.
func (b *base) eventually(desc string, f func(g gomega.Gomega)) {
	b.g.Eventually(f).WithTimeout(b.st.t.State).WithPolling(b.st.t.Poll).
		Should(gomega.Succeed(), "not reached within %s: %s", b.st.t.State, desc)
}

// consistently checks that f keeps passing for the stable window.
func (b *base) consistently(desc string, f func(g gomega.Gomega)) {
	b.g.Consistently(f).WithTimeout(b.st.t.Stable).WithPolling(b.st.t.Poll).
		Should(gomega.Succeed(), "did not hold for %s: %s", b.st.t.Stable, desc)
}

// uniqueSuffix makes names and UIDs unique across specs and processes.
func uniqueSuffix() string {
	id := strings.ReplaceAll(string(newUID()), "-", "")
	return id[:10]
}
