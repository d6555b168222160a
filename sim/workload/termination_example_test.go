package workload_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

// A simulator reports the termination message of an instance when it exits:
// the file at terminationMessagePath as the command left it, or, for a
// failed container under FallbackToLogsOnError that wrote none, the tail of
// its output.
func ExampleBehaviour_TerminationMessage() {
	wrote := v1.Container{
		Command:                []string{"sh", "-c", "echo -n saved > /dev/termination-log; exit 0"},
		TerminationMessagePath: "/dev/termination-log",
	}
	b := workload.OfEnv(&wrote)
	fmt.Printf("%q\n", b.TerminationMessage(&wrote, b.RunFor, b.ExitCode))

	failed := v1.Container{
		Command:                  []string{"sh", "-c", "echo cannot connect; exit 1"},
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: v1.TerminationMessageFallbackToLogsOnError,
	}
	b = workload.OfEnv(&failed)
	fmt.Printf("%q\n", b.TerminationMessage(&failed, b.RunFor, b.ExitCode))

	// Killed (exit 137) after 5s, before it wrote anything.
	slow := v1.Container{
		Command:                []string{"sh", "-c", "sleep 10; echo -n late > /dev/termination-log"},
		TerminationMessagePath: "/dev/termination-log",
	}
	b = workload.OfEnv(&slow)
	fmt.Printf("%q\n", b.TerminationMessage(&slow, 5*time.Second, workload.ExitCodeSIGKILL))
	fmt.Printf("%q\n", b.TerminationMessage(nil, 0, 0))
	// Output:
	// "saved"
	// "cannot connect\n"
	// ""
	// ""
}
