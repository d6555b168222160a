package workload_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kri-kit/testkit/sim/workload"
)

// A simulated runtime asks what a container will do when it starts it, and
// plays that back on its own clock.
func ExampleOf() {
	for _, c := range []v1.Container{
		{Name: "server", Command: []string{"sleep", "infinity"}},
		{Name: "job", Command: []string{"sh", "-c", "sleep 0.5; exit 3"}},
		{Name: "stubborn", Command: []string{"sh", "-c", "trap '' TERM; sleep infinity"}},
		{Name: "broken", Command: []string{"/nonexistent/app"}},
	} {
		b := workload.Of(&c)
		switch {
		case b.FailsToStart():
			fmt.Printf("%s: fails to start, %s is missing\n", c.Name, b.MissingExecutable)
		case b.RunsUntilKilled:
			fmt.Printf("%s: runs until killed, ignores SIGTERM: %v\n", c.Name, b.IgnoresSIGTERM)
		default:
			fmt.Printf("%s: exits %d (%s) after %s\n", c.Name, b.ExitCode, workload.ExitReason(b.ExitCode), b.RunFor)
		}
	}
	// Output:
	// server: runs until killed, ignores SIGTERM: false
	// job: exits 3 (Error) after 500ms
	// stubborn: runs until killed, ignores SIGTERM: true
	// broken: fails to start, /nonexistent/app is missing
}

func ExampleParse() {
	b := workload.Parse([]string{"sh", "-c"}, []string{"exit 0"})
	fmt.Println(b.ExitCode, workload.ExitReason(b.ExitCode), b.RunsUntilKilled)
	// Output: 0 Completed false
}

// What SIGTERM does to a command as a host process and as PID 1 of a
// container, where a process without a handler ignores it.
func ExampleBehaviour_OnSIGTERM() {
	for _, script := range []string{
		"sleep infinity",
		"trap 'exit 143' TERM; sleep infinity",
		"trap 'exit 143' TERM; sleep infinity & wait",
		"trap '' TERM; sleep infinity",
	} {
		b := workload.Parse([]string{"sh", "-c", script}, nil)
		say := func(pid1 bool) string {
			if ignores, code := b.OnSIGTERM(pid1); !ignores {
				return fmt.Sprintf("exits %d", code)
			}
			return "ignores it"
		}
		fmt.Printf("%-44s host: %-9s PID 1: %s\n", script, say(false), say(true))
	}
	// Output:
	// sleep infinity                               host: exits 143 PID 1: ignores it
	// trap 'exit 143' TERM; sleep infinity         host: exits 143 PID 1: ignores it
	// trap 'exit 143' TERM; sleep infinity & wait  host: exits 143 PID 1: exits 143
	// trap '' TERM; sleep infinity                 host: ignores it PID 1: ignores it
}

// A container whose shutdown takes a while: its SIGTERM handler sleeps,
// then exits (the app container of the sidecar KillPod specs).
func ExampleBehaviour_slowShutdown() {
	b := workload.Parse([]string{"sh", "-c", "trap 'sleep 1.5; exit 64' TERM; sleep infinity & wait"}, nil)
	_, code := b.OnSIGTERM(true)
	fmt.Println("runs until killed:", b.RunsUntilKilled, "| on SIGTERM exits", code, "after", b.SIGTERMDelay)
	// Output: runs until killed: true | on SIGTERM exits 64 after 1.5s
}

// The kubelet expands $(VAR) in Command and Args before the runtime runs
// them; sh then reads $VAR from the environment.
func ExampleOfEnv() {
	c := v1.Container{
		Command: []string{"sh", "-c"},
		Args:    []string{"echo -n exiting > /dev/termination-log; exit $(CODE)"},
		Env:     []v1.EnvVar{{Name: "CODE", Value: "3"}},
	}
	b := workload.OfEnv(&c)
	msg, _ := b.FileAt("/dev/termination-log", b.RunFor)
	fmt.Println(b.ExitCode, msg)
	// Output: 3 exiting
}

func ExampleExpand() {
	c := v1.Container{
		Command: []string{"sh", "-c", "exit $$CODE; $(CODE) $(UNSET)"},
		Env:     []v1.EnvVar{{Name: "BASE", Value: "4"}, {Name: "CODE", Value: "$(BASE)2"}},
	}
	command, _, env := workload.Expand(&c)
	fmt.Printf("%q %s\n", command[2], env["CODE"])
	// Output: "exit $CODE; 42 $(UNSET)" 42
}

func ExampleParseEnv() {
	b := workload.ParseEnv([]string{"sh", "-c", "exit $CODE"}, nil, map[string]string{"CODE": "5"})
	fmt.Println(b.ExitCode)
	// Output: 5
}

// A lifecycle hook's exec action is described by the same vocabulary.
func ExampleOfHandler() {
	c := v1.Container{Name: "app"}
	for _, h := range []*v1.LifecycleHandler{
		{Exec: &v1.ExecAction{Command: []string{"true"}}},
		{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "sleep 2; exit 1"}}},
		{HTTPGet: &v1.HTTPGetAction{Path: "/healthz"}},
	} {
		b, ok := workload.OfHandler(&c, h)
		fmt.Println(ok, b.RunFor, b.ExitCode)
	}
	// Output:
	// true 0s 0
	// true 2s 1
	// false 0s 0
}

// A simulator replays a command's writes: what it printed, and the files it
// wrote and removed, at any moment of its run.
func ExampleBehaviour_FileAt() {
	b := workload.Parse([]string{"sh", "-c", "echo ok > /tmp/health; echo started; sleep 10; rm -f /tmp/health; sleep infinity"}, nil)
	_, before := b.FileAt("/tmp/health", 5*time.Second)
	_, after := b.FileAt("/tmp/health", 10*time.Second)
	out, _ := b.FileAt(workload.Stdout, time.Minute)
	fmt.Printf("%v %v %q\n", before, after, out)
	// Output: true false "started\n"
}

// A simulated runtime reports a container whose postStart hook failed with
// ErrPostStartHook, as the kubelet's runtime manager does.
func ExampleErrPostStartHook() {
	c := v1.Container{Name: "app", Command: []string{"sleep", "infinity"}, Lifecycle: &v1.Lifecycle{
		PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "exit 3"}}},
	}}
	hook, _ := workload.OfHandler(&c, c.Lifecycle.PostStart)
	if hook.ExitCode != 0 {
		fmt.Println(workload.ErrPostStartHook)
	}
	// Output: PostStartHookError
}

// A readiness probe that tests for a file the container writes and later
// removes: ready while the file exists, not after.
func ExampleOfProbe() {
	c := &v1.Container{Name: "web", Command: []string{"sh", "-c", "echo ok > /tmp/health; sleep 10; rm -f /tmp/health; sleep infinity"}}
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"cat", "/tmp/health"}}}}
	container := workload.OfEnv(c)
	for _, d := range []time.Duration{time.Second, 12 * time.Second} {
		b, _ := workload.OfProbe(c, probe, container.FilesAt(d))
		fmt.Printf("after %v: succeeds %v\n", d, b.Succeeds(workload.ProbeTimeout(probe)))
	}
	// Output:
	// after 1s: succeeds true
	// after 12s: succeeds false
}

// A CRI simulator's ExecSync: the command runs against the container's
// files at that moment, here 3s after a start that wrote /tmp/health.
func ExampleParseExec() {
	container := workload.Parse([]string{"sh", "-c", "echo ok > /tmp/health; sleep infinity"}, nil)
	b := workload.ParseExec([]string{"cat", "/tmp/health"}, nil, container.FilesAt(3*time.Second))
	out, _ := b.FileAt(workload.Stdout, b.RunFor)
	fmt.Printf("exit %d, stdout %q\n", b.ExitCode, out)
	// Output: exit 0, stdout "ok\n"
}

// A container that serves a file with httpd and removes it after ten
// seconds, and its HTTP readiness probe as a simulator evaluates it at two
// moments of the container's run: passing while the file is served, then
// failing with 404.
func ExampleNetProbeAt() {
	c := &v1.Container{
		Name:    "web",
		Command: []string{"sh", "-c", "trap 'exit 143' TERM; echo ok > /tmp/healthz; httpd -f -p 8080 -h /tmp & sleep 10; rm -f /tmp/healthz; sleep infinity & wait"},
		Ports:   []v1.ContainerPort{{Name: "http", ContainerPort: 8080}},
	}
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}}
	b := workload.OfEnv(c)
	for _, d := range []time.Duration{5 * time.Second, 12 * time.Second} {
		success, _, _ := workload.NetProbeAt(c, probe, b, d, nil)
		fmt.Printf("after %v: listening %v, probe succeeds %v\n", d, b.ListensAt(8080, d), success)
	}
	// Output:
	// after 5s: listening true, probe succeeds true
	// after 12s: listening true, probe succeeds false
}
