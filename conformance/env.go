package conformance

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/kri-kit/testkit/suite"
)

// Report entry names the summary reads back from the Ginkgo report (those
// of package suite, with the prefix kri).
const (
	entryExpectedFailure = "kri:" + suite.EntryExpectedFailure
	entryCleanup         = "kri:cleanup"
	// entryWarning carries the failure of a SHOULD spec that does not fail
	// the run (no strict mode): the spec is a skip in Ginkgo's terms.
	entryWarning = "kri:" + suite.EntryWarning
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
	// failHandler fails the spec (or, for an expected failure or the
	// warning of a SHOULD spec, records the failure and aborts the body).
	failHandler func(message string, callerSkip ...int)
	// progress says what a long wait waits for (progressEvery); nil means
	// a step (ginkgo.By, on the console under -v).
	progress func(text string)
	// failSpec is failHandler without the check that the spec's bubble
	// was abandoned: the watchdog's failure (virtual_time.go).
	failSpec func(message string, skip int)
	// cleanups run in reverse order when the body ends, inside the bubble
	// under Config.VirtualTime (see deferCleanup).
	cleanups []func()
	// vt is the synctest bubble of the spec (virtual_time.go), nil on the
	// real clock.
	vt *bubble
}

// xfailAbort aborts the body of a spec whose failure is recorded rather
// than reported to Ginkgo (an expected failure, a SHOULD warning).
type xfailAbort struct{}

// recorded is a failure recorded by the fail handler of such a spec.
type recorded struct {
	message  string
	location types.CodeLocation
	// stopped: the failure is a check's gomega.StopTrying.
	stopped bool
}

// runSpec runs spec s of registration reg: it applies the skips (benchmark,
// capabilities, missing factory), builds the environment and runs the body.
//
// Two kinds of failure are recorded instead of failing the spec in Ginkgo's
// terms: that of a spec listed in Config.ExpectedFailures (reported as an
// expected failure, a skip) and, without strict mode, that of a SHOULD spec
// (reported as a warning, a skip carrying the kri:warning report entry).
// Either way the body stops at its first failure and the cleanups run. So
// Ginkgo's own result, and with it the exit status, fails for exactly the
// failures that fail the run (suite.Suite.Settle reports the end); the
// summary (summary.go) tells the warnings and expected failures apart from
// real skips.
func runSpec(reg *registration, s *specDef) {
	st, err := reg.settings()
	if err != nil {
		ginkgo.Fail(err.Error())
	}
	if s.benchmark && !strings.Contains(ginkgo.GinkgoLabelFilter(), labelBenchmark) {
		ginkgo.Skip("benchmark specs run only when the label filter asks for them (-ginkgo.label-filter=benchmark)")
	}
	if s.benchmark && st.cfg.VirtualTime {
		ginkgo.Skip("benchmark specs measure the real clock: run them without Config.VirtualTime")
	}
	if reason := suite.CapabilitySkip(s.caps, func(c Capability) bool { return st.caps[c] }); reason != "" {
		ginkgo.Skip(reason)
	}
	switch {
	case s.kind == kindPod && st.cfg.NewPodProvider == nil:
		ginkgo.Skip("Config.NewPodProvider is nil: the pod specs do not apply")
	case s.kind == kindNode && st.cfg.NewNodeProvider == nil:
		ginkgo.Skip("Config.NewNodeProvider is nil: the node specs do not apply")
	}

	reason, xfail := st.cfg.ExpectedFailures[s.id]
	if xfail && st.skipXFail {
		kriSuite.SkipExpectedFailure(reason)
	}
	tolerate := suite.Tolerated(s.level, st.strict, xfail)

	var failures []recorded
	inBody := false // the fail handler may abort the body only
	b := &base{st: st, spec: s}
	b.failSpec = func(message string, skip int) {
		if tolerate && inBody {
			failures = append(failures, recorded{message: message, location: types.NewCodeLocation(skip + 1)})
			panic(xfailAbort{})
		}
		ginkgo.Fail(message, skip+1)
	}
	b.failHandler = func(message string, callerSkip ...int) {
		skip := 0
		if len(callerSkip) > 0 {
			skip = callerSkip[0]
		}
		if b.vt != nil && b.vt.abandoned.Load() {
			panic(bubbleAbandoned{}) // Ginkgo has moved on
		}
		b.failSpec(message, skip+1)
	}
	b.g = gomega.NewGomega(b.failHandler)

	body := func() {
		b.ctx, b.cancel = context.WithCancel(context.Background())
		defer b.runCleanups()
		b.deferCleanup(b.cancel) // runs last: cleanups run in reverse order
		switch s.kind {
		case kindPod:
			s.pod(newPodEnv(b, !s.noStart))
		case kindNode:
			s.node(newNodeEnv(b))
		}
	}
	run := body
	if st.cfg.VirtualTime {
		run = func() { b.runVirtual(reg.t, body) }
	}
	if !tolerate {
		run()
		return
	}
	func() {
		inBody = true
		defer func() {
			inBody = false
			if r := recover(); r != nil {
				if _, ok := r.(xfailAbort); !ok {
					panic(r)
				}
			}
		}()
		run()
	}()
	end := suite.End{ID: s.id, Level: s.level, Strict: st.strict, XFail: xfail, Reason: reason}
	if len(failures) > 0 {
		end.Failure = &suite.Failure{Message: failures[0].message, Location: failures[0].location}
	}
	kriSuite.Settle(end)
}

// firstLine is the first line of s, trimmed (suite.FirstLine).
func firstLine(s string) string { return suite.FirstLine(s) }

// deferCleanup registers f to run when the spec's body ends, whether it
// passed or failed, after the cleanups registered later (ginkgo.DeferCleanup
// would run it outside the bubble of Config.VirtualTime).
func (b *base) deferCleanup(f func()) { b.cleanups = append(b.cleanups, f) }

// runCleanups runs the cleanups, the last registered first.
func (b *base) runCleanups() {
	for i := len(b.cleanups) - 1; i >= 0; i-- {
		b.cleanups[i]()
	}
	b.cleanups = nil
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
	b.begin(method)
	defer b.end()
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
	if suite.IsNotSupported(err) {
		ginkgo.Skip(fmt.Sprintf("%s is not supported by the provider (%v)", method, err))
	}
}

// note records a problem that does not fail the spec (seen while cleaning
// up) in the report and the spec's output.
func (b *base) note(msg string) {
	ginkgo.GinkgoWriter.Println("kri conformance: " + msg)
	b.reportEntry(entryCleanup, msg, ginkgo.ReportEntryVisibilityFailureOrVerbose)
}

// eventually polls f with the state timeout and the poll interval until it
// passes; desc says what is awaited. On a timeout the spec fails with a
// message whose first line says what was awaited and what the last check
// saw ("<desc>: not reached within 6s; last seen: <its failure>"), followed
// by the count of checks and the last check's full failure and location. A
// check that calls gomega.StopTrying ends the wait at once ("<desc>: gave up
// after N checks: <its message>"). A failure of the spec itself inside f
// (b.fail) stops the wait at once too, with its own message.
func (b *base) eventually(desc string, f func(g gomega.Gomega)) {
	b.eventuallyFor(b.st.t.State, desc, f)
}

// eventuallyFor is eventually with a timeout of d instead of the state
// timeout.
func (b *base) eventuallyFor(d time.Duration, desc string, f func(g gomega.Gomega)) {
	var last *recorded
	attempts := 0
	start := time.Now()
	said := start
	ok := b.poller().Eventually(func() error {
		attempts++
		b.advanced()
		// On the real clock a long wait says, every progressEvery, what it
		// waits for (as tryUntilAsAgent does).
		if b.vt == nil && last != nil && time.Since(said) >= progressEvery {
			said = time.Now()
			b.sayProgress(fmt.Sprintf("still waiting (%s of %s) for %s; last seen: %s", time.Since(start).Round(time.Second), d, desc, gist(last.message)))
		}
		var err error
		last, err = attempt(f)
		return err
	}).WithTimeout(d).WithPolling(b.st.t.Poll).Should(gomega.Succeed())
	if ok || last == nil {
		return
	}
	if last.stopped {
		b.failHandler(fmt.Sprintf("%s: gave up after %d checks in %s: %s%s",
			desc, attempts, time.Since(start).Round(time.Millisecond), gist(last.message), last.rest()), 1)
	}
	b.failHandler(fmt.Sprintf("%s: not reached within %s; last seen: %s\n\n"+
		"Checked %d times, every %s, for %s; the last check failed%s:\n%s",
		desc, d, gist(last.message),
		attempts, b.st.t.Poll, time.Since(start).Round(time.Millisecond), last.at(), strings.TrimSpace(last.message)), 1)
}

// sayProgress says what a long wait waits for.
func (b *base) sayProgress(text string) {
	if b.progress != nil {
		b.progress(text)
		return
	}
	b.step(text)
}

// consistently checks that f keeps passing for the stable window; desc says
// what must hold. The first failing check fails the spec with a message
// whose first line says what did not hold, when, and what was seen.
func (b *base) consistently(desc string, f func(g gomega.Gomega)) {
	b.consistentlyFor(b.st.t.Stable, desc, f)
}

// consistentlyFor is consistently with a window of d instead of the stable
// window.
func (b *base) consistentlyFor(d time.Duration, desc string, f func(g gomega.Gomega)) {
	var last *recorded
	attempts := 0
	start := time.Now()
	var brokenAfter time.Duration
	ok := b.poller().Consistently(func() error {
		attempts++
		b.advanced()
		var err error
		if last, err = attempt(f); last != nil {
			brokenAfter = time.Since(start).Round(time.Millisecond)
		}
		return err
	}).WithTimeout(d).WithPolling(b.st.t.Poll).Should(gomega.Succeed())
	if ok || last == nil {
		return
	}
	b.failHandler(fmt.Sprintf("%s: did not hold for %s; after %s (check %d) saw: %s\n\n"+
		"The check failed%s:\n%s",
		desc, d, brokenAfter, attempts, gist(last.message),
		last.at(), strings.TrimSpace(last.message)), 1)
}

// at is " at <location>" of a recorded failure, "" when it has none.
func (r *recorded) at() string {
	if r.location.FileName == "" {
		return ""
	}
	return " at " + r.location.String()
}

// rest is the part of the message after its first line, set off by a blank
// line ("" for a one-line message).
func (r *recorded) rest() string {
	_, rest, found := strings.Cut(strings.TrimSpace(r.message), "\n")
	if !found {
		return ""
	}
	return "\n\n" + rest
}

// poller is the Gomega that runs the polls of eventually and consistently:
// its failure message is not used (they write their own), so its handler
// only lets the assertion return false.
func (b *base) poller() gomega.Gomega {
	return gomega.NewGomega(func(string, ...int) {})
}

// attemptHalt stops one check of a poll at its first failed assertion.
type attemptHalt struct{}

// stopTrying is what gomega.StopTrying's error also implements.
type stopTrying interface{ IsStopTrying() bool }

// attempt runs one check f with a Gomega of its own. It returns the check's
// first failed assertion (nil if none) and the error the poll is to see: the
// failure, or the polling signal (gomega.StopTrying, gomega.TryAgainAfter)
// the check raised, which Gomega then acts on. Any other panic (the spec's
// own failure, a skip) goes on up.
func attempt(f func(g gomega.Gomega)) (failed *recorded, err error) {
	g := gomega.NewGomega(func(message string, callerSkip ...int) {
		skip := 0
		if len(callerSkip) > 0 {
			skip = callerSkip[0]
		}
		failed = &recorded{message: message, location: types.NewCodeLocation(skip + 1)}
		panic(attemptHalt{})
	})
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if _, ok := r.(attemptHalt); ok {
			err = errors.New(failed.message)
			return
		}
		if signal, ok := r.(gomega.PollingSignalError); ok {
			st, _ := signal.(stopTrying)
			failed = &recorded{message: signal.Error(), stopped: st != nil && st.IsStopTrying()}
			err = signal
			return
		}
		panic(r)
	}()
	f(g)
	return nil, nil
}

// gist is the one-line form of an assertion's failure: its first line, or,
// when that is only Gomega's "Expected" (an assertion without description),
// the whole message on one line.
func gist(message string) string {
	first := firstLine(message)
	if first != "Expected" {
		return first
	}
	return strings.Join(strings.Fields(message), " ")
}

// uniqueSuffix makes names and UIDs unique across specs and processes.
func uniqueSuffix() string {
	id := strings.ReplaceAll(string(newUID()), "-", "")
	return id[:10]
}
