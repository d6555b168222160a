package workload

import (
	"cmp"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
)

// InstanceState is where an Instance is in its life: created, running,
// exited, in that order.
type InstanceState int

// The states of an Instance.
const (
	// InstanceCreated: the runtime created it; it runs from its start
	// time on.
	InstanceCreated InstanceState = iota
	// InstanceRunning: its command runs.
	InstanceRunning
	// InstanceExited: it has exited, for good.
	InstanceExited
)

func (s InstanceState) String() string {
	switch s {
	case InstanceCreated:
		return "Created"
	case InstanceRunning:
		return "Running"
	case InstanceExited:
		return "Exited"
	}
	return "InstanceState(?)"
}

// Shutdown is what SIGTERM does to an instance.
type Shutdown struct {
	// Ignores is true when only SIGKILL ends it: it runs on until it exits
	// on its own or the grace period is over (ExitCodeSIGKILL).
	Ignores bool
	// ExitCode is the code SIGTERM ends it with, unless Ignores, and the
	// code of an instance stopped before it ran.
	ExitCode int
	// Delay is how long it takes to exit after SIGTERM (a handler that
	// sleeps first). A grace period not longer than Delay ends in SIGKILL.
	Delay time.Duration
}

// Shutdown returns what SIGTERM does to a command that behaves as b, as a
// host process or as PID 1 of a container (pid1, see OnSIGTERM): the
// handler's exit code and delay, ExitCodeSIGTERM when it has none (also for
// one that ignores SIGTERM, should it be stopped before it runs).
func (b Behaviour) Shutdown(pid1 bool) Shutdown {
	ignores, code := b.OnSIGTERM(pid1)
	if ignores {
		code = ExitCodeSIGTERM
	}
	return Shutdown{Ignores: ignores, ExitCode: code, Delay: b.SIGTERMDelay}
}

// SimpleShutdown is a coarser reading of SIGTERM than Behaviour.Shutdown,
// for a simulator that does not model handlers: a command ignores SIGTERM
// when it says so (Behaviour.IgnoresSIGTERM), and exits with ExitCodeSIGTERM at once
// otherwise, whatever handler it installs.
func SimpleShutdown(b Behaviour) Shutdown {
	return Shutdown{Ignores: b.IgnoresSIGTERM, ExitCode: ExitCodeSIGTERM}
}

// InstanceOptions configure an Instance. The zero value runs the command at
// once, as a host process.
type InstanceOptions struct {
	// StartsAt is when the instance starts running (a runtime's start
	// latency, a postStart hook of a container started before it); it is
	// created until then. Zero, or a time before its creation: at once.
	StartsAt time.Time
	// PID1 makes SIGTERM act as on PID 1 of a container
	// (Behaviour.OnSIGTERM).
	PID1 bool
	// Shutdown, when set, is what SIGTERM does instead of what the
	// Behaviour says (Behaviour.Shutdown).
	Shutdown *Shutdown
}

// Instance simulates one instance of a container (one run of its command,
// what a CRI runtime calls a container) on a clock the caller keeps: no
// goroutine, no timer. The caller passes the times in: it asks Next when
// the instance's next event is due, calls Advance once its clock has come
// that far, and sends signals (SIGTERM, SIGKILL) at the times they happen.
// Each event takes effect at its own instant, so what a caller sees does
// not depend on when it asks.
//
// The instance plays its Behaviour back: created, running from its start
// time, exiting on its own RunFor later with its ExitCode (never, for a
// command that RunsUntilKilled), its files and its output written at the
// moments its command writes them (FilesAt, TerminationMessage). SIGTERM
// ends it as its Shutdown says, SIGKILL with ExitCodeSIGKILL; whatever ends
// it first wins, and an exit on its own wins a tie with a signal's end.
//
// An Instance is a value the caller owns: it is not safe for concurrent
// use, a simulator guards it with its own lock. The zero Instance is not
// valid; make one with NewInstance.
type Instance struct {
	b        Behaviour
	shutdown Shutdown
	state    InstanceState

	createdAt time.Time
	startsAt  time.Time
	// startedAt is startsAt once it runs, zero before.
	startedAt time.Time
	// Unless untilKilled (it does not exit on its own), it exits runFor
	// after its start with exitCode.
	runFor time.Duration
	// When ending, it ends at endAt with endCode (a signal's outcome),
	// unless it exits on its own before.
	endAt time.Time
	// When termPending, SIGTERM is due at termAt with termGrace
	// (SIGTERMAt).
	termAt    time.Time
	termGrace time.Duration
	// finishedAt and code once it has exited.
	finishedAt time.Time
	// writes are what other processes (hooks, execs) wrote to its files,
	// At counted from startsAt, in the order they were recorded.
	writes []Write
	// When preStopRan, its preStop hook ran (once per instance), until
	// preStopEnd (PreStop).
	preStopEnd time.Time

	// The exit codes and flags above, packed together (an instance per
	// run of every container a simulator keeps: 32 bytes of padding less
	// each).
	exitCode, endCode, code                      int32
	untilKilled, ending, termPending, preStopRan bool
}

// NewInstance returns an instance of a container whose command behaves as
// b, created at createdAt. It is created until opts.StartsAt and runs from
// then on. A command that fails to start (Behaviour.FailsToStart) is not
// the Instance's business: the caller does not make one, or ends it with
// Exit at once.
func NewInstance(b Behaviour, createdAt time.Time, opts InstanceOptions) *Instance {
	in := &Instance{b: b, state: InstanceCreated, createdAt: createdAt, startsAt: createdAt}
	if opts.StartsAt.After(createdAt) {
		in.startsAt = opts.StartsAt
	}
	in.untilKilled, in.runFor, in.exitCode = b.RunsUntilKilled, b.RunFor, int32(b.ExitCode)
	if opts.Shutdown != nil {
		in.shutdown = *opts.Shutdown
	} else {
		in.shutdown = b.Shutdown(opts.PID1)
	}
	return in
}

// ExitAfter makes the instance exit on its own with code once it has run
// for d, whatever its command says (a script of a test double). Call it
// before the instance runs.
func (in *Instance) ExitAfter(d time.Duration, code int) {
	in.untilKilled, in.runFor, in.exitCode = false, d, int32(code)
}

// IgnoreSIGTERM makes the instance ignore SIGTERM from now on, whatever its
// command says: only SIGKILL ends it. Its exit code when it is stopped
// before it runs stays as it was.
func (in *Instance) IgnoreSIGTERM() { in.shutdown.Ignores = true }

// Behaviour returns the behaviour the instance plays back.
func (in *Instance) Behaviour() Behaviour { return in.b }

// Shutdown returns what SIGTERM does to the instance.
func (in *Instance) Shutdown() Shutdown { return in.shutdown }

// State returns the state the instance was in at the latest Advance,
// signal or Exit.
func (in *Instance) State() InstanceState { return in.state }

// Running reports whether the instance runs (State is InstanceRunning).
func (in *Instance) Running() bool { return in.state == InstanceRunning }

// CreatedAt returns when the instance was created.
func (in *Instance) CreatedAt() time.Time { return in.createdAt }

// StartsAt returns when the instance runs (or ran, or would have run).
func (in *Instance) StartsAt() time.Time { return in.startsAt }

// StartedAt returns when the instance started running, zero while it is
// created and for one stopped before it ran.
func (in *Instance) StartedAt() time.Time { return in.startedAt }

// FinishedAt returns when the instance exited, zero before.
func (in *Instance) FinishedAt() time.Time { return in.finishedAt }

// ExitCode returns the code the instance exited with, 0 before.
func (in *Instance) ExitCode() int { return int(in.code) }

// ExitsAt returns when the instance exits on its own, and false when it
// does not (it runs until killed).
func (in *Instance) ExitsAt() (time.Time, bool) {
	if in.untilKilled {
		return time.Time{}, false
	}
	return in.startsAt.Add(in.runFor), true
}

// Stopping reports whether a signal has set the end of the instance: it
// ends at the returned time with the returned code unless it exits on its
// own before. It is false once the instance has exited.
func (in *Instance) Stopping() (at time.Time, code int, ok bool) {
	return in.endAt, int(in.endCode), in.ending
}

// Next returns when the next event of the instance is due: its start while
// it is created, its exit while it
// runs; false once it has exited, or when it runs until killed and no
// signal has set its end.
func (in *Instance) Next() (time.Time, bool) {
	switch in.state {
	case InstanceCreated:
		return in.startsAt, true
	case InstanceRunning:
		// The earliest of its exit on its own, its end and a SIGTERM
		// due, of those it has (straight-line: this runs for every run at
		// every Next and Advance of a pod).
		var next time.Time
		if !in.untilKilled {
			next = in.startsAt.Add(in.runFor)
		}
		if in.ending {
			next = earliest(next, in.endAt)
		}
		if in.termPending {
			next = earliest(next, in.termAt)
		}
		return next, !next.IsZero()
	}
	return time.Time{}, false
}

// earliest returns the earlier of next and t, a zero time standing for
// none.
func earliest(next, t time.Time) time.Time {
	if !t.IsZero() && (next.IsZero() || t.Before(next)) {
		return t
	}
	return next
}

// Advance carries out the events of the instance due at or before now, each
// at its own instant, and reports what happened: it started running, it
// exited (both, for one that ran and exited by now).
func (in *Instance) Advance(now time.Time) (started, exited bool) {
	if in.state == InstanceCreated {
		if in.startsAt.After(now) {
			return false, false
		}
		in.state, in.startedAt, started = InstanceRunning, in.startsAt, true
	}
	if in.state != InstanceRunning {
		return started, false
	}
	exitAt, natural := in.ExitsAt()
	if in.termPending && !in.termAt.After(now) && (!natural || !exitAt.Before(in.termAt)) {
		// The SIGTERM comes before it exits on its own (or at the same
		// instant).
		in.termPending = false
		in.SIGTERM(in.termAt, in.termAt, in.termGrace)
		if in.state == InstanceExited {
			return started, true
		}
	}
	natural = natural && !exitAt.After(now)
	killed := in.ending && !in.endAt.After(now)
	switch {
	case natural && (!killed || !exitAt.After(in.endAt)):
		in.Exit(exitAt, int(in.exitCode))
	case killed:
		in.Exit(in.endAt, int(in.endCode))
	default:
		return started, false
	}
	return started, true
}

// Exit ends the instance at at with code, at once, whatever it was doing
// (a runtime that kills it, a start that failed after the runtime had
// created it). An instance that ran is not taken to have finished before it
// started. Exit of an exited instance does nothing.
func (in *Instance) Exit(at time.Time, code int) {
	if in.state == InstanceExited {
		return
	}
	if in.state == InstanceRunning && at.Before(in.startedAt) {
		at = in.startedAt
	}
	in.state, in.finishedAt, in.code = InstanceExited, at, int32(code)
	in.ending, in.endAt, in.endCode = false, time.Time{}, 0
	in.termPending = false
}

// SIGTERM sends SIGTERM to the instance at at (now or later: after a
// preStop hook, or when its turn comes among a pod's containers) and gives
// it grace before SIGKILL, as a kubelet's runtime stops a container; now is
// the caller's present. It returns when the instance will have exited, as
// far as the signal decides it.
//
// An instance that is created exits at once (at now) with its Shutdown's
// ExitCode. One that runs ends as its Shutdown says: at at with ExitCode;
// Delay after at with ExitCode when Delay is shorter than grace, else
// killed with ExitCodeSIGKILL when grace is over; if it ignores SIGTERM,
// killed when grace is over (at at for a grace of 0). An end due at now
// happens at once, a later one when Advance reaches it, unless the instance
// exits on its own before. An earlier end set by an earlier signal stays:
// a second SIGTERM never lengthens a grace period. SIGTERM to an exited
// instance does nothing.
func (in *Instance) SIGTERM(now, at time.Time, grace time.Duration) time.Time {
	switch in.state {
	case InstanceExited:
		return in.finishedAt
	case InstanceCreated:
		in.Exit(now, in.shutdown.ExitCode)
		return now
	}
	end, code := in.shutdown.End(at, grace)
	return in.endWith(now, end, code)
}

// End is when and with what code a running command that reacts to SIGTERM
// as sh says ends, SIGTERM sent at at with grace before SIGKILL: at at
// with ExitCode; Delay after at with ExitCode when Delay is shorter than
// grace, else killed (ExitCodeSIGKILL) when grace is over; if it ignores
// SIGTERM, killed when grace is over (at at for a grace of 0 or less). It
// is the one reading of a SIGTERM handler's delay against a grace period
// that the kit's simulated runtimes share (Instance.SIGTERM, crisim's
// StopContainer), unless it exits on its own before.
func (sh Shutdown) End(at time.Time, grace time.Duration) (end time.Time, code int) {
	switch {
	case sh.Ignores || sh.Delay > 0 && sh.Delay >= grace:
		return at.Add(max(grace, 0)), ExitCodeSIGKILL
	case sh.Delay > 0:
		return at.Add(sh.Delay), sh.ExitCode
	}
	return at, sh.ExitCode
}

// SIGTERMAt plans SIGTERM to the running instance at the later time at,
// with grace before SIGKILL (a postStart hook that fails, and the kubelet
// kills the container when it ends). Advance sends it when it reaches at,
// as SIGTERM would, unless the instance has exited on its own before (a
// SIGTERM and an exit on its own at the same instant: the SIGTERM wins). A
// later SIGTERMAt replaces an earlier one that is still to come.
func (in *Instance) SIGTERMAt(at time.Time, grace time.Duration) {
	if in.state == InstanceExited {
		return
	}
	in.termPending, in.termAt, in.termGrace = true, at, grace
}

// SIGKILL kills the instance at at (ExitCodeSIGKILL), unless it exits
// before; at now or before, at once. It returns when the instance will
// have exited. An earlier end set by a signal stays.
func (in *Instance) SIGKILL(now, at time.Time) time.Time {
	switch in.state {
	case InstanceExited:
		return in.finishedAt
	case InstanceCreated:
		in.Exit(now, ExitCodeSIGKILL)
		return now
	}
	return in.endWith(now, at, ExitCodeSIGKILL)
}

// endWith sets the end of the running instance at end with code, unless an
// earlier one is set; an end not after now happens at once.
func (in *Instance) endWith(now, end time.Time, code int) time.Time {
	if !end.After(now) {
		in.Exit(now, code)
		return now
	}
	if !in.ending || in.endAt.After(end) {
		in.ending, in.endAt, in.endCode = true, end, int32(code)
	}
	return in.endAt
}

// RecordWrite records a write of another process into the instance's files
// at at (what a lifecycle hook or an exec writes), so that FilesAt and
// TerminationMessage see it beside the command's own writes. What such a
// process prints (Stdout) is returned to its caller, not added to the
// container's output, and is not recorded.
func (in *Instance) RecordWrite(at time.Time, w Write) {
	if w.Path == Stdout {
		return
	}
	w.At = max(at.Sub(in.startsAt), 0)
	in.writes = append(in.writes, w)
}

// Log appends data to the instance's output at at, as one of its own
// processes prints it: what the server its command runs logs of a request
// it was sent (Server.RequestLog), which TerminationMessage then sees in
// the log's tail.
func (in *Instance) Log(at time.Time, data string) {
	if data == "" {
		return
	}
	in.writes = append(in.writes, Write{At: max(at.Sub(in.startsAt), 0), Path: Stdout, Data: data, Append: true})
}

// played returns the behaviour of the instance with the writes recorded by
// RecordWrite and Log among its command's, in the order they happened (the
// command's first at the same moment).
func (in *Instance) played() Behaviour {
	if len(in.writes) == 0 {
		return in.b
	}
	b := in.b
	all := slices.Concat(in.b.Writes, in.writes)
	slices.SortStableFunc(all, func(x, y Write) int { return cmp.Compare(x.At, y.At) })
	b.Writes = all
	return b
}

// FilesAt returns the instance's files at t: what its command and the
// writes recorded by RecordWrite left by then (nothing before it runs).
func (in *Instance) FilesAt(t time.Time) Files {
	return in.played().FilesAt(t.Sub(in.startsAt))
}

// TerminationMessage returns the termination message of the exited
// instance of container c (Behaviour.TerminationMessage, with the writes
// recorded by RecordWrite), "" while it has not exited and for one stopped
// before it ran.
func (in *Instance) TerminationMessage(c *v1.Container) string {
	if in.state != InstanceExited || in.startedAt.IsZero() {
		return ""
	}
	return in.played().TerminationMessage(c, in.finishedAt.Sub(in.startedAt), int(in.code))
}
