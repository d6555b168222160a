package workload_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
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
		{"a trap whose handler sleeps first", []string{"sh", "-c", "trap 'sleep 1.5; exit 0' TERM; sleep infinity & wait"}, nil, workload.Behaviour{RunsUntilKilled: true, TrapsSIGTERM: true, SIGTERMDelay: 1500 * time.Millisecond}},
		{"a sleeping handler in double quotes, spaced", []string{"sh", "-c", `trap " sleep 2 ;exit 143 " SIGTERM; sleep 3 & wait`}, nil, workload.Behaviour{RunFor: 3 * time.Second, TrapsSIGTERM: true, SIGTERMExitCode: 143, SIGTERMDelay: 2 * time.Second}},
		{"a later trap clears the handler's delay", []string{"sh", "-c", "trap 'sleep 1; exit 0' TERM; trap 'exit 1' TERM; sleep infinity & wait"}, nil, workload.Behaviour{RunsUntilKilled: true, TrapsSIGTERM: true, SIGTERMExitCode: 1}},
		{"a handler that sleeps without exiting is outside the vocabulary", []string{"sh", "-c", "trap 'sleep 1' TERM; sleep infinity & wait"}, nil, forever},
		{"a handler that exits before it sleeps is outside the vocabulary", []string{"sh", "-c", "trap 'exit 0; sleep 1' TERM; sleep infinity & wait"}, nil, forever},
		{"a handler with three statements is outside the vocabulary", []string{"sh", "-c", "trap 'sleep 1; sleep 1; exit 0' TERM; sleep infinity & wait"}, nil, forever},
		{"a handler that sleeps a word is outside the vocabulary", []string{"sh", "-c", "trap 'sleep x; exit 0' TERM; sleep infinity & wait"}, nil, forever},
		{"a trap of another handler is outside the vocabulary", []string{"sh", "-c", "trap 'echo bye' TERM; sleep infinity & wait"}, nil, forever},
		{"a trap with mismatched quotes is outside the vocabulary", []string{"sh", "-c", `trap 'exit 1" TERM; sleep 1`}, nil, forever},
		{"sleep & without wait is outside the vocabulary", []string{"sh", "-c", "sleep 1 & true"}, nil, forever},
		{"one unknown statement spoils the script", []string{"sh", "-c", "sleep 1; ls /x; exit 3"}, nil, forever},
		{"sh without -c runs until killed", []string{"sh", "script.sh"}, nil, forever},
		{"missing executable", []string{"/nonexistent/app", "--flag"}, nil, workload.Behaviour{MissingExecutable: "/nonexistent/app"}},
		{"missing executable in args", nil, []string{"/nonexistent/x"}, workload.Behaviour{MissingExecutable: "/nonexistent/x"}},
		{"empty script exits 0", []string{"sh", "-c", " ; "}, nil, workload.Behaviour{}},
		{"the vocabulary is not expanded", []string{"sh", "-c", "exit $CODE"}, nil, forever},
		{"echo prints a line", []string{"sh", "-c", "echo hello world; exit 1"}, nil,
			workload.Behaviour{ExitCode: 1, Writes: []workload.Write{{Path: workload.Stdout, Data: "hello world\n", Append: true}}}},
		{"echo -n writes a file", []string{"sh", "-c", "sleep 1; echo -n DONE > /dev/termination-log"}, nil,
			workload.Behaviour{RunFor: time.Second, Writes: []workload.Write{{At: time.Second, Path: "/dev/termination-log", Data: "DONE"}}}},
		{"echo appends without a space", []string{"/bin/echo", "a", ">>/tmp/log"}, nil,
			workload.Behaviour{Writes: []workload.Write{{Path: "/tmp/log", Data: "a\n", Append: true}}}},
		{"rm -f removes a file", []string{"sh", "-c", "echo ok > /tmp/health; sleep 10; rm -f /tmp/health; sleep infinity"}, nil,
			workload.Behaviour{RunsUntilKilled: true, RunFor: 10 * time.Second, Writes: []workload.Write{
				{Path: "/tmp/health", Data: "ok\n"}, {At: 10 * time.Second, Path: "/tmp/health", Remove: true}}}},
		{"echo of a quoted word is outside the vocabulary", []string{"sh", "-c", "echo 'a b'"}, nil, forever},
		{"echo to a relative path is outside the vocabulary", []string{"sh", "-c", "echo a > log"}, nil, forever},
		{"echo to two paths is outside the vocabulary", []string{"sh", "-c", "echo a > /x /y"}, nil, forever},
		{"echo of a variable is outside the vocabulary", []string{"sh", "-c", "echo $HOME"}, nil, forever},
		{"rm without -f is outside the vocabulary", []string{"sh", "-c", "rm /tmp/x"}, nil, forever},
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

func TestParseEnv(t *testing.T) {
	env := map[string]string{"CODE": "7", "WORD": "seven", "EMPTY": ""}
	forever := workload.Behaviour{RunsUntilKilled: true, Unknown: true}
	for _, tt := range []struct {
		script string
		want   workload.Behaviour
	}{
		{"exit $CODE", workload.Behaviour{ExitCode: 7}},
		{"exit ${CODE}", workload.Behaviour{ExitCode: 7}},
		{"false; exit $UNSET", workload.Behaviour{ExitCode: 1}}, // a bare exit, as in sh
		{"false; exit $EMPTY", workload.Behaviour{ExitCode: 1}},
		{"exit $WORD", forever},
		{"exit ${CODE", forever},
		{"exit $$CODE", forever},
		{"exit $(CODE)", forever}, // command substitution: the kubelet expands $(CODE) before sh sees it
		{"exit $1A", forever},
	} {
		got := workload.ParseEnv([]string{"sh", "-c", tt.script}, nil, env)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseEnv(sh -c %q, %v) (-want +got):\n%s", tt.script, env, diff)
		}
	}
}

func TestExpandAsTheKubelet(t *testing.T) {
	c := &v1.Container{
		Command: []string{"sh", "-c"},
		Args:    []string{"exit $(CODE); $$CODE $(NOPE) $$(CODE)"},
		Env:     []v1.EnvVar{{Name: "BASE", Value: "3"}, {Name: "CODE", Value: "$(BASE)1"}, {Name: "LATER", Value: "$(AFTER)"}, {Name: "AFTER", Value: "x"}},
	}
	command, args, env := workload.Expand(c)
	if diff := cmp.Diff([]string{"sh", "-c"}, command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"exit 31; $CODE $(NOPE) $(CODE)"}, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"BASE": "3", "CODE": "31", "LATER": "$(AFTER)", "AFTER": "x"}, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	e := &v1.Container{Command: []string{"sh", "-c", "exit $CODE"}, Env: []v1.EnvVar{{Name: "CODE", Value: "9"}}}
	if got := workload.OfEnv(e); got.ExitCode != 9 || got.RunsUntilKilled {
		t.Errorf("OfEnv(exit $CODE with CODE=9) = %+v, want exit 9", got)
	}
	if got := workload.OfEnv(nil); !got.RunsUntilKilled {
		t.Errorf("OfEnv(nil) = %+v, want RunsUntilKilled", got)
	}
}

func TestOfHandler(t *testing.T) {
	c := &v1.Container{Env: []v1.EnvVar{{Name: "CODE", Value: "4"}}}
	for _, tt := range []struct {
		h    *v1.LifecycleHandler
		want workload.Behaviour
		ok   bool
	}{
		{&v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "exit $CODE"}}}, workload.Behaviour{ExitCode: 4}, true},
		{&v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sleep", "2"}}}, workload.Behaviour{RunFor: 2 * time.Second}, true},
		{&v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "exit $(CODE)"}}}, workload.Behaviour{RunsUntilKilled: true, Unknown: true}, true},
		{&v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/"}}, workload.Behaviour{}, false},
		{nil, workload.Behaviour{}, false},
	} {
		got, ok := workload.OfHandler(c, tt.h)
		if ok != tt.ok || !cmp.Equal(got, tt.want) {
			t.Errorf("OfHandler(%+v) = %+v, %v; want %+v, %v", tt.h, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFileAt(t *testing.T) {
	b := workload.Parse([]string{"sh", "-c", "echo -n a > /f; echo b; sleep 1; echo -n c >> /f; sleep 1; rm -f /f; echo d; sleep infinity"}, nil)
	for _, tt := range []struct {
		path   string
		at     time.Duration
		want   string
		exists bool
	}{
		{"/f", 0, "a", true},
		{"/f", 1500 * time.Millisecond, "ac", true},
		{"/f", 2 * time.Second, "", false},
		{"/g", time.Hour, "", false},
		{workload.Stdout, 0, "b\n", true},
		{workload.Stdout, time.Hour, "b\nd\n", true},
	} {
		got, exists := b.FileAt(tt.path, tt.at)
		if got != tt.want || exists != tt.exists {
			t.Errorf("FileAt(%q, %s) = %q, %v; want %q, %v", tt.path, tt.at, got, exists, tt.want, tt.exists)
		}
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
	if got, want := workload.Of(c), (workload.Behaviour{RunFor: time.Second, ExitCode: 7}); !cmp.Equal(got, want) {
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
		{"sleep 1; ls /x", effect{code: 143}, effect{code: 143}}, // unknown: taken to handle SIGTERM
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
	f.Add("sh", "echo -n MSG > /dev/termination-log; exit $CODE")
	f.Add("sh", "echo a >>/x; rm -f /x; exit ${CODE}")
	f.Fuzz(func(t *testing.T, exe, script string) {
		b := workload.ParseEnv([]string{exe, "-c", script}, nil, map[string]string{"CODE": script})
		for i, w := range b.Writes {
			if w.At < 0 || w.At > b.RunFor || (i > 0 && w.At < b.Writes[i-1].At) || (w.Path != workload.Stdout && !strings.HasPrefix(w.Path, "/")) {
				t.Fatalf("Parse(%q, -c, %q) = %+v: write %d out of order, outside the run or to a relative path", exe, script, b, i)
			}
		}
		if b.RunFor < 0 || b.ExitCode < 0 || b.ExitCode > 255 {
			t.Fatalf("Parse(%q, -c, %q) = %+v: negative run time or exit code outside 0..255", exe, script, b)
		}
		if b.FailsToStart() && (b.RunsUntilKilled || b.RunFor != 0) {
			t.Fatalf("Parse(%q, -c, %q) = %+v: a container that fails to start has no run", exe, script, b)
		}
	})
}

func TestReads(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   workload.Behaviour
	}{
		{"cat of a missing file fails", "cat /tmp/x", workload.Behaviour{ExitCode: 1}},
		{"test -e of a missing file fails", "test -e /tmp/x", workload.Behaviour{ExitCode: 1}},
		{"[ -f ] of a file written before succeeds", "echo ok > /tmp/x; [ -f /tmp/x ]",
			workload.Behaviour{Writes: []workload.Write{{Path: "/tmp/x", Data: "ok\n"}}}},
		{"cat prints what was written", "echo -n hi > /tmp/x; cat /tmp/x",
			workload.Behaviour{Writes: []workload.Write{{Path: "/tmp/x", Data: "hi"}, {Path: workload.Stdout, Data: "hi", Append: true}}}},
		{"a removed file is gone", "echo ok > /tmp/x; rm -f /tmp/x; test -e /tmp/x",
			workload.Behaviour{ExitCode: 1, Writes: []workload.Write{{Path: "/tmp/x", Data: "ok\n"}, {Path: "/tmp/x", Remove: true}}}},
		{"a failed read does not end the script", "test -e /tmp/x; sleep 1",
			workload.Behaviour{RunFor: time.Second}},
		{"a relative path is outside the vocabulary", "test -e tmp/x", workload.Behaviour{RunsUntilKilled: true, Unknown: true}},
		{"test -d is outside the vocabulary", "test -d /tmp", workload.Behaviour{RunsUntilKilled: true, Unknown: true}},
		{"[ without ] is outside the vocabulary", "[ -e /tmp/x", workload.Behaviour{RunsUntilKilled: true, Unknown: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := workload.Parse([]string{"sh", "-c", tt.script}, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(sh -c %q) differs (-want +got):\n%s", tt.script, diff)
			}
		})
	}
}

func TestOfProbe(t *testing.T) {
	c := &v1.Container{Name: "web", Command: []string{"sh", "-c", "echo ok > /tmp/health; sleep 10; rm -f /tmp/health; sleep infinity"},
		Env: []v1.EnvVar{{Name: "F", Value: "/tmp/health"}}}
	files := workload.OfEnv(c).FilesAt
	exec := func(cmd ...string) *v1.Probe {
		return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: cmd}}}
	}
	tests := []struct {
		name  string
		probe *v1.Probe
		at    time.Duration
		want  bool
	}{
		{"cat while the file exists", exec("cat", "/tmp/health"), 5 * time.Second, true},
		{"cat after it was removed", exec("cat", "/tmp/health"), 10 * time.Second, false},
		{"test -e under sh while it exists", exec("sh", "-c", "test -e /tmp/health"), 0, true},
		{"test -e under sh after it was removed", exec("sh", "-c", "test -e /tmp/health"), 11 * time.Second, false},
		{"a file the container never wrote", exec("test", "-e", "/tmp/other"), time.Second, false},
		{"true", exec("true"), 0, true},
		{"false", exec("false"), 0, false},
		{"exit 3", exec("sh", "-c", "exit 3"), 0, false},
		{"a probe that outlives its timeout fails", exec("sleep", "2"), 0, false},
		{"a probe within its timeout", exec("sh", "-c", "sleep 0.5; true"), 0, true},
		{"a command outside the vocabulary fails (timeout)", exec("wget", "-q", "localhost"), 0, false},
		{"the probe reads the container's environment", exec("sh", "-c", "exit $CODE"), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := workload.OfProbe(c, tt.probe, files(tt.at))
			if !ok {
				t.Fatalf("OfProbe(%v) = _, false; want an exec probe", tt.probe.Exec.Command)
			}
			if got := b.Succeeds(workload.ProbeTimeout(tt.probe)); got != tt.want {
				t.Errorf("probe %v run %v after start: Succeeds = %v (behaviour %+v), want %v", tt.probe.Exec.Command, tt.at, got, b, tt.want)
			}
		})
	}
	if _, ok := workload.OfProbe(c, &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{}}}, nil); ok {
		t.Error("OfProbe of a TCP probe = _, true; want false (outside the vocabulary)")
	}
	if _, ok := workload.OfProbe(c, nil, nil); ok {
		t.Error("OfProbe(nil probe) = _, true; want false")
	}
	if got, want := workload.ProbeTimeout(&v1.Probe{TimeoutSeconds: 3}), 3*time.Second; got != want {
		t.Errorf("ProbeTimeout(timeoutSeconds 3) = %v, want %v", got, want)
	}
	if got, want := workload.ProbeTimeout(nil), time.Second; got != want {
		t.Errorf("ProbeTimeout(nil) = %v, want %v", got, want)
	}
}

func TestParseExec(t *testing.T) {
	files := workload.Files(func(p string) (string, bool) { return "up\n", p == "/run/ok" })
	tests := []struct {
		argv []string
		code int
	}{
		{[]string{"cat", "/run/ok"}, 0},
		{[]string{"sh", "-c", "test -e /run/missing"}, 1},
		{[]string{"sh", "-c", "exit $CODE"}, 4},
	}
	for _, tt := range tests {
		b := workload.ParseExec(tt.argv, map[string]string{"CODE": "4"}, files)
		if b.ExitCode != tt.code || b.Unknown {
			t.Errorf("ParseExec(%q) = %+v, want exit code %d", tt.argv, b, tt.code)
		}
	}
	if b := workload.ParseExec([]string{"cat", "/run/ok"}, nil, files); len(b.Writes) != 1 || b.Writes[0].Data != "up\n" {
		t.Errorf("ParseExec(cat /run/ok).Writes = %+v, want the file printed on stdout", b.Writes)
	}
}
