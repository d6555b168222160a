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
