// Package workload interprets the small command vocabulary that the
// conformance suite's default workloads, the fake provider and the kit's
// example providers share, so that one container spec means the same thing
// to a simulated runtime as to a real shell.
//
// A provider that simulates its containers (a test backend, a remote service
// stand-in, the CRI fakes behind the kubelet's runtime manager) calls Parse
// (or Of) once per container start and plays the Behaviour back on its own
// clock. A provider that runs real processes does not need this package: a
// real sh runs the same commands to the same effect.
//
// # Vocabulary
//
// The argv is the container's Command followed by its Args. The executable
// is compared by base name (/bin/sh is sh):
//
//	sleep N                 run N seconds (decimals allowed), exit 0
//	sleep infinity          run until killed (also: sleep inf)
//	exit N                  exit N at once (N & 0xff, as a shell does)
//	true / false / :        exit 0 / exit 1 / exit 0 at once
//	sh -c "SCRIPT"          SCRIPT: statements separated by ';' or newlines
//	                        among sleep N, sleep infinity, sleep N & wait,
//	                        sleep infinity & wait, exit N, true, false, ':',
//	                        trap '' TERM (ignore SIGTERM: only SIGKILL ends
//	                        the container) and trap 'exit N' TERM (exit N on
//	                        SIGTERM), each optionally prefixed by exec; the
//	                        first exit or sleep infinity ends it
//	/nonexistent/...        an executable that is missing: every start fails
//	anything else           runs until killed, exits on SIGTERM (no command
//	                        at all, or one statement outside the vocabulary:
//	                        Behaviour.Unknown)
//
// Images are not interpreted, except one registry: an image under
// kri.invalid/ (MissingImageDomain) cannot be pulled, so its container fails
// to start whatever its command, until the pod's spec names another image —
// the one change of a container the API server allows.
//
// # What PID 1 does
//
// In a real container the command runs as PID 1 of its PID namespace, and
// the kernel does not apply a signal's default action to PID 1: a process
// that installs no handler ignores SIGTERM there. "sleep infinity" therefore
// exits on SIGTERM as a host process, but not as PID 1 of a container, where
// it lives until SIGKILL. A shell runs a trap only between commands, so a
// handler installed before a foreground sleep waits for the sleep to end;
// the shell's wait builtin is interrupted at once. A workload meant to exit on
// SIGTERM in a real container therefore installs a handler and waits:
// sh -c "trap 'exit 143' TERM; sleep infinity & wait". Behaviour.OnSIGTERM
// says what SIGTERM does to a command, as a host process (the vocabulary's
// default reading, and the fake's unless it simulates PID 1) and as PID 1.
//
// # Exit codes and reasons
//
// A container ended by SIGTERM exits with ExitCodeSIGTERM (128+15), one
// ended by SIGKILL with ExitCodeSIGKILL (128+9). ExitReason gives the reason
// a CRI runtime reports for an exit code.
package workload
