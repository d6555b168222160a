package workload_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/workload"
)

func TestParse(t *testing.T) {
	forever := workload.Behaviour{RunsUntilKilled: true, Unknown: true}
	tests := []struct {
		name          string
		command, args []string
		want          workload.Behaviour
	}{
		{"no command runs until killed", nil, nil, forever},
		{"unknown command runs until killed", []string{"nginx", "-g", "daemon off;"}, nil, forever},
		{"sleep infinity", []string{"sleep", "infinity"}, nil, workload.Behaviour{RunsUntilKilled: true}},
		{"sleep inf", []string{"/bin/sleep", "inf"}, nil, workload.Behaviour{RunsUntilKilled: true}},
		{"sleep N runs N seconds then exits 0", []string{"sleep", "2.5"}, nil, workload.Behaviour{RunFor: 2500 * time.Millisecond}},
		{"command and args are joined", []string{"sleep"}, []string{"3"}, workload.Behaviour{RunFor: 3 * time.Second}},
		{"negative sleep is outside the vocabulary", []string{"sleep", "-1"}, nil, forever},
		{"a sleep beyond time.Duration runs until killed", []string{"sleep", "1e12"}, nil, workload.Behaviour{RunsUntilKilled: true}},
		{"sleep NaN is outside the vocabulary", []string{"sleep", "NaN"}, nil, forever},
		{"sleep of a word is outside the vocabulary", []string{"sleep", "soon"}, nil, forever},
		{"true exits 0", []string{"true"}, nil, workload.Behaviour{}},
		{"false exits 1", []string{"/usr/bin/false"}, nil, workload.Behaviour{ExitCode: 1}},
		{"sh exit N", []string{"sh", "-c", "exit 3"}, nil, workload.Behaviour{ExitCode: 3}},
		{"exit keeps the low byte", []string{"sh", "-c", "exit 257"}, nil, workload.Behaviour{ExitCode: 1}},
		{"bare exit exits 0", []string{"sh", "-c", "false; exit"}, nil, workload.Behaviour{ExitCode: 1}},
		{"exit of a word is outside the vocabulary", []string{"sh", "-c", "exit x"}, nil, forever},
		{"sleep then exit", []string{"/bin/sh", "-c", "sleep 1; exit 4"}, nil, workload.Behaviour{RunFor: time.Second, ExitCode: 4}},
		{"sleeps add up, newlines separate", []string{"ash", "-c", "sleep 1\nsleep 0.5"}, nil, workload.Behaviour{RunFor: 1500 * time.Millisecond}},
		{"the first exit ends the script", []string{"sh", "-c", "exit 2; sleep 5; exit 3"}, nil, workload.Behaviour{ExitCode: 2}},
		{"exec prefix is dropped", []string{"sh", "-c", "exec sleep 1"}, nil, workload.Behaviour{RunFor: time.Second}},
		{"trap '' TERM ignores SIGTERM", []string{"sh", "-c", "trap '' TERM; sleep infinity"}, nil, workload.Behaviour{RunsUntilKilled: true, IgnoresSIGTERM: true}},
		{"trap \"\" SIGTERM", []string{"bash", "-c", `trap "" SIGTERM; sleep 2`}, nil, workload.Behaviour{RunFor: 2 * time.Second, IgnoresSIGTERM: true}},
		{"trap '' 15", []string{"dash", "-c", "trap '' 15; exit 0"}, nil, workload.Behaviour{IgnoresSIGTERM: true}},
		{"a trap with a handler before a foreground sleep is deferred", []string{"sh", "-c", "trap 'exit 143' TERM; sleep infinity"}, nil, workload.Behaviour{RunsUntilKilled: true, TrapsSIGTERM: true, SIGTERMExitCode: 143, TrapDeferred: true}},
		{"a trap with a handler and wait", []string{"sh", "-c", "trap 'exit 143' TERM; sleep infinity & wait"}, nil, workload.Behaviour{RunsUntilKilled: true, TrapsSIGTERM: true, SIGTERMExitCode: 143}},
		{"a trap with a handler in double quotes, SIGTERM, finite wait", []string{"sh", "-c", `trap "exit 3" SIGTERM; sleep 2 & wait; exit 1`}, nil, workload.Behaviour{RunFor: 2 * time.Second, ExitCode: 1, TrapsSIGTERM: true, SIGTERMExitCode: 3}},
		{"the last trap wins", []string{"sh", "-c", "trap 'exit 143' TERM; trap '' TERM; sleep infinity & wait"}, nil, workload.Behaviour{RunsUntilKilled: true, IgnoresSIGTERM: true}},
		{"a handler after an ignoring trap", []string{"sh", "-c", "trap '' TERM; trap 'exit 0' 15; sleep infinity & wait"}, nil, workload.Behaviour{RunsUntilKilled: true, TrapsSIGTERM: true}},
		{"a trap of another handler is outside the vocabulary", []string{"sh", "-c", "trap 'echo bye' TERM; sleep infinity & wait"}, nil, forever},
		{"a trap with mismatched quotes is outside the vocabulary", []string{"sh", "-c", `trap 'exit 1" TERM; sleep 1`}, nil, forever},
		{"sleep & without wait is outside the vocabulary", []string{"sh", "-c", "sleep 1 & true"}, nil, forever},
		{"one unknown statement spoils the script", []string{"sh", "-c", "sleep 1; echo hi; exit 3"}, nil, forever},
		{"sh without -c runs until killed", []string{"sh", "script.sh"}, nil, forever},
		{"missing executable", []string{"/nonexistent/app", "--flag"}, nil, workload.Behaviour{MissingExecutable: "/nonexistent/app"}},
		{"missing executable in args", nil, []string{"/nonexistent/x"}, workload.Behaviour{MissingExecutable: "/nonexistent/x"}},
		{"empty script exits 0", []string{"sh", "-c", " ; "}, nil, workload.Behaviour{}},
		{"the vocabulary is not expanded", []string{"sh", "-c", "exit $CODE"}, nil, forever},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := workload.Parse(tt.command, tt.args)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q, %q) (-want +got):\n%s", tt.command, tt.args, diff)
			}
			if got.FailsToStart() != (tt.want.MissingExecutable != "") {
				t.Errorf("Parse(%q, %q).FailsToStart() = %v", tt.command, tt.args, got.FailsToStart())
			}
		})
	}
}

func TestParseDoesNotAliasItsInput(t *testing.T) {
	command := make([]string, 1, 4)
	command[0] = "sh"
	args := []string{"-c", "exit 1"}
	_ = workload.Parse(command, args)
	if got := command[:2][1]; got != "" {
		t.Fatalf("Parse wrote %q into the spare capacity of the caller's Command", got)
	}
}

func TestImageMissing(t *testing.T) {
	for image, want := range map[string]bool{
		"kri.invalid/kri-conformance/missing:1":             true,
		"kri.invalid/app@sha256:" + strings.Repeat("a", 64): true,
		"kri.invalid:5000/app":                              false, // another host (with a port) is another registry
		"busybox:1.36":                                      false,
		"docker.io/library/busybox:1.36":                    false,
		"example.com/kri.invalid/app:1":                     false,
		"KRI.invalid/Bad Name":                              false,
		"":                                                  false,
	} {
		if got := workload.ImageMissing(image); got != want {
			t.Errorf("ImageMissing(%q) = %v, want %v", image, got, want)
		}
	}
}

func TestOf(t *testing.T) {
	c := &v1.Container{Command: []string{"sh", "-c"}, Args: []string{"sleep 1; exit 7"}}
	if got, want := workload.Of(c), (workload.Behaviour{RunFor: time.Second, ExitCode: 7}); got != want {
		t.Errorf("Of(%v) = %+v, want %+v", c, got, want)
	}
	if got := workload.Of(nil); !got.RunsUntilKilled {
		t.Errorf("Of(nil) = %+v, want RunsUntilKilled", got)
	}
}

func TestOnSIGTERM(t *testing.T) {
	type effect struct {
		ignores bool
		code    int
	}
	ignores := effect{ignores: true}
	tests := []struct {
		script     string
		host, pid1 effect
	}{
		{"sleep infinity", effect{code: 143}, ignores},
		{"sleep 5; exit 3", effect{code: 143}, ignores},
		{"trap '' TERM; sleep infinity", ignores, ignores},
		{"trap 'exit 0' TERM; sleep infinity & wait", effect{code: 0}, effect{code: 0}},
		{"trap 'exit 143' TERM; sleep infinity", effect{code: 143}, ignores},
		{"sleep 1; echo hi", effect{code: 143}, effect{code: 143}}, // unknown: taken to handle SIGTERM
	}
	for _, tt := range tests {
		b := workload.Parse([]string{"sh", "-c", tt.script}, nil)
		for _, pid1 := range []bool{false, true} {
			want := tt.host
			if pid1 {
				want = tt.pid1
			}
			var got effect
			got.ignores, got.code = b.OnSIGTERM(pid1)
			if got != want {
				t.Errorf("Parse(sh -c %q).OnSIGTERM(pid1=%v) = %+v, want %+v", tt.script, pid1, got, want)
			}
		}
	}
}

func TestExitReason(t *testing.T) {
	for code, want := range map[int]string{0: "Completed", 1: "Error", workload.ExitCodeSIGTERM: "Error", workload.ExitCodeSIGKILL: "Error"} {
		if got := workload.ExitReason(code); got != want {
			t.Errorf("ExitReason(%d) = %q, want %q", code, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"sleep infinity", "trap '' TERM; sleep 1; exit 3", "exec true", "exit 999999999999999999999", "sleep 1e308"} {
		f.Add("sh", s)
	}
	f.Fuzz(func(t *testing.T, exe, script string) {
		b := workload.Parse([]string{exe, "-c", script}, nil)
		if b.RunFor < 0 || b.ExitCode < 0 || b.ExitCode > 255 {
			t.Fatalf("Parse(%q, -c, %q) = %+v: negative run time or exit code outside 0..255", exe, script, b)
		}
		if b.FailsToStart() && (b.RunsUntilKilled || b.RunFor != 0) {
			t.Fatalf("Parse(%q, -c, %q) = %+v: a container that fails to start has no run", exe, script, b)
		}
	})
}
