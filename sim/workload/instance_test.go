package workload_test

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func sec(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Second))) }

func shell(script string) workload.Behaviour {
	return workload.Parse([]string{"sh", "-c", script}, nil)
}

// An instance ends as its command and the signals say, each event at its
// own instant, whenever the caller advances it.
func TestInstanceEnds(t *testing.T) {
	tests := []struct {
		name   string
		script string
		opts   workload.InstanceOptions
		signal func(in *workload.Instance)
		// wantAt is when it exits (seconds after t0), wantCode its code.
		wantAt   float64
		wantCode int
	}{
		{"exits on its own", "sleep 2; exit 3", workload.InstanceOptions{}, nil, 2, 3},
		{"starts late, then runs its time", "sleep 2; exit 3", workload.InstanceOptions{StartsAt: sec(1)}, nil, 3, 3},
		{"SIGTERM: exits at once with 143", "sleep infinity", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGTERM(sec(1), sec(1), 30*time.Second) }, 1, workload.ExitCodeSIGTERM},
		{"SIGTERM: trap 'exit N'", "trap 'exit 4' TERM; sleep infinity & wait", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGTERM(sec(1), sec(1), 30*time.Second) }, 1, 4},
		{"SIGTERM ignored: killed at the end of grace", "trap '' TERM; sleep infinity", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGTERM(sec(1), sec(1), 5*time.Second) }, 6, workload.ExitCodeSIGKILL},
		{"SIGTERM ignored, a shorter second grace wins", "trap '' TERM; sleep infinity", workload.InstanceOptions{},
			func(in *workload.Instance) {
				in.SIGTERM(sec(1), sec(1), 5*time.Second)
				in.SIGTERM(sec(2), sec(2), time.Second)
				in.SIGTERM(sec(2), sec(2), 9*time.Second)
			}, 3, workload.ExitCodeSIGKILL},
		{"SIGTERM ignored, exits on its own within grace", "trap '' TERM; sleep 3; exit 5", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGTERM(sec(1), sec(1), 5*time.Second) }, 3, 5},
		{"SIGTERM ignored, grace 0: killed at once", "trap '' TERM; sleep infinity", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGTERM(sec(1), sec(1), 0) }, 1, workload.ExitCodeSIGKILL},
		{"shutdown within grace", "trap 'sleep 2; exit 6' TERM; sleep infinity & wait", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGTERM(sec(1), sec(1), 5*time.Second) }, 3, 6},
		{"shutdown longer than grace: killed", "trap 'sleep 9; exit 6' TERM; sleep infinity & wait", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGTERM(sec(1), sec(1), 5*time.Second) }, 6, workload.ExitCodeSIGKILL},
		{"PID 1 ignores SIGTERM without a handler", "sleep infinity", workload.InstanceOptions{PID1: true},
			func(in *workload.Instance) { in.SIGTERM(sec(1), sec(1), 2*time.Second) }, 3, workload.ExitCodeSIGKILL},
		{"SimpleShutdown: 143 whatever the handler", "trap 'exit 4' TERM; sleep infinity & wait", workload.InstanceOptions{Shutdown: ptr(workload.SimpleShutdown(shell("trap 'exit 4' TERM")))},
			func(in *workload.Instance) { in.SIGTERM(sec(1), sec(1), 2*time.Second) }, 1, workload.ExitCodeSIGTERM},
		{"SIGTERM sent later (after a preStop hook)", "sleep infinity", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGTERM(sec(1), sec(4), 2*time.Second) }, 4, workload.ExitCodeSIGTERM},
		{"SIGTERM to a created instance: exits at once", "sleep infinity", workload.InstanceOptions{StartsAt: sec(5)},
			func(in *workload.Instance) { in.SIGTERM(sec(1), sec(1), 2*time.Second) }, 1, workload.ExitCodeSIGTERM},
		{"SIGTERMAt: delivered when due", "sleep infinity", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGTERMAt(sec(2), 30*time.Second) }, 2, workload.ExitCodeSIGTERM},
		{"SIGTERMAt ignored: killed at the end of grace", "trap '' TERM; sleep infinity", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGTERMAt(sec(2), 3*time.Second) }, 5, workload.ExitCodeSIGKILL},
		{"SIGTERMAt after an exit on its own: no effect", "sleep 1; exit 8", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGTERMAt(sec(2), 30*time.Second) }, 1, 8},
		{"SIGTERMAt at the instant it exits on its own: SIGTERM wins", "sleep 2; exit 8", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGTERMAt(sec(2), 30*time.Second) }, 2, workload.ExitCodeSIGTERM},
		{"SIGKILL later", "trap '' TERM; sleep infinity", workload.InstanceOptions{},
			func(in *workload.Instance) { in.SIGKILL(sec(1), sec(3)) }, 3, workload.ExitCodeSIGKILL},
		{"ExitAfter overrides the command", "sleep infinity", workload.InstanceOptions{},
			func(in *workload.Instance) { in.ExitAfter(4*time.Second, 9) }, 4, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := workload.NewInstance(shell(tt.script), t0, tt.opts)
			in.Advance(sec(1))
			if tt.signal != nil {
				tt.signal(in)
			}
			// Advance in steps, as a caller that wakes at Next would, and
			// in one leap: both see the same end.
			stepped := *in
			for range 100 {
				next, ok := stepped.Next()
				if !ok {
					break
				}
				stepped.Advance(next)
			}
			in.Advance(sec(60))
			for _, got := range []*workload.Instance{&stepped, in} {
				if got.State() != workload.InstanceExited || !got.FinishedAt().Equal(sec(tt.wantAt)) || got.ExitCode() != tt.wantCode {
					t.Errorf("%q: %s at %s with %d, want exited at %vs with %d",
						tt.script, got.State(), got.FinishedAt().Sub(t0), got.ExitCode(), tt.wantAt, tt.wantCode)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// Next tells when the next event is due, and nothing once it has exited or
// while it runs until killed.
func TestInstanceNext(t *testing.T) {
	in := workload.NewInstance(shell("sleep infinity"), t0, workload.InstanceOptions{StartsAt: sec(1)})
	if next, ok := in.Next(); !ok || !next.Equal(sec(1)) {
		t.Errorf("created instance: Next = %v, %v; want its start at 1s", next.Sub(t0), ok)
	}
	if started, exited := in.Advance(sec(1)); !started || exited || !in.StartedAt().Equal(sec(1)) {
		t.Errorf("Advance to its start: started %v exited %v at %v, want started at 1s", started, exited, in.StartedAt().Sub(t0))
	}
	if next, ok := in.Next(); ok {
		t.Errorf("running until killed: Next = %v, want none", next.Sub(t0))
	}
	in.SIGKILL(sec(2), sec(4))
	if next, ok := in.Next(); !ok || !next.Equal(sec(4)) {
		t.Errorf("killed at 4s: Next = %v, %v; want 4s", next.Sub(t0), ok)
	}
	in.Advance(sec(4))
	if next, ok := in.Next(); ok {
		t.Errorf("exited: Next = %v, want none", next.Sub(t0))
	}
}

// The files and the termination message hold what the command and the
// recorded writes (a hook's) left, at their times; what a hook prints is
// not the container's.
func TestInstanceFiles(t *testing.T) {
	c := &v1.Container{TerminationMessagePath: "/dev/termination-log"}
	in := workload.NewInstance(shell("echo a > /tmp/f; sleep 2; echo b >> /tmp/f; sleep infinity"), t0, workload.InstanceOptions{})
	in.RecordWrite(sec(1), workload.Write{Path: "/tmp/f", Data: "hook\n", Append: true})
	in.RecordWrite(sec(1), workload.Write{Path: workload.Stdout, Data: "printed\n", Append: true})
	in.RecordWrite(sec(3), workload.Write{Path: "/dev/termination-log", Data: "bye"})
	for _, tt := range []struct {
		at   float64
		want string
	}{{0.5, "a\n"}, {1, "a\nhook\n"}, {2, "a\nhook\nb\n"}} {
		if got, _ := in.FilesAt(sec(tt.at))("/tmp/f"); got != tt.want {
			t.Errorf("/tmp/f at %vs = %q, want %q", tt.at, got, tt.want)
		}
	}
	if out, _ := in.FilesAt(sec(5))(workload.Stdout); out != "" {
		t.Errorf("stdout = %q, want nothing: a hook's output is not the container's", out)
	}
	if msg := in.TerminationMessage(c); msg != "" {
		t.Errorf("TerminationMessage of a running instance = %q, want none", msg)
	}
	in.Advance(sec(4))
	in.SIGKILL(sec(4), sec(4))
	if msg := in.TerminationMessage(c); msg != "bye" {
		t.Errorf("TerminationMessage = %q, want %q, the hook's write", msg, "bye")
	}
}

// What Log records is the container's own output: the log's tail becomes
// the termination message of a container that fails without writing one.
func TestInstanceLog(t *testing.T) {
	c := &v1.Container{TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: v1.TerminationMessageFallbackToLogsOnError}
	in := workload.NewInstance(shell("echo started; sleep infinity"), t0, workload.InstanceOptions{})
	in.Log(sec(2), "127.0.0.1:40000: url:/prestop\n")
	if out, _ := in.FilesAt(sec(1))(workload.Stdout); out != "started\n" {
		t.Errorf("output at 1s = %q, want only the command's %q", out, "started\n")
	}
	if out, _ := in.FilesAt(sec(3))(workload.Stdout); out != "started\n127.0.0.1:40000: url:/prestop\n" {
		t.Errorf("output at 3s = %q, want the command's line and then the logged one", out)
	}
	in.Advance(sec(4))
	in.SIGKILL(sec(4), sec(4))
	if msg := in.TerminationMessage(c); !strings.Contains(msg, "url:/prestop") {
		t.Errorf("TerminationMessage of a killed instance (FallbackToLogsOnError) = %q, want the log's tail with the logged line", msg)
	}
}
