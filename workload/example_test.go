package workload_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/workload"
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
