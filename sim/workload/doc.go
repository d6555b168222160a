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
//	                        the container), trap 'exit N' TERM (exit N on
//	                        SIGTERM) and trap 'sleep S; exit N' TERM (exit N
//	                        S seconds after SIGTERM: a shutdown that takes a
//	                        while), each optionally prefixed by exec; the
//	                        first exit or sleep infinity ends it
//	echo [-n] WORD...       print the words (and a newline unless -n) on
//	                        stdout, exit status 0
//	echo [-n] WORD... > P   write them to the file at absolute path P
//	                        (>> P appends): with P the container's
//	                        terminationMessagePath, the termination message
//	rm -f P                 remove the file at absolute path P
//	cat P                   print the file at absolute path P, exit 0; exit 1
//	                        when it does not exist
//	test -e P, test -f P,   exit 0 when the file at absolute path P exists,
//	[ -e P ], [ -f P ]      1 otherwise
//	httpd -f -p PORT -h DIR serve HTTP on TCP port PORT until killed, in
//	                        the foreground (busybox httpd): GET /P answers
//	                        200 with the file DIR/P when it exists, 404
//	                        otherwise; -vv (in any place) logs each request
//	                        (Server.RequestLog); the same followed by & (in
//	                        sh -c, alone or before the next statement, as in
//	                        httpd -f -p 8080 -h /tmp & sleep infinity & wait)
//	                        serves in the background while the script goes
//	                        on; one server per port
//	kill $!                 in sh -c, after httpd ... & with no background
//	                        statement or kill $! between: stop that server
//	                        (SIGTERM, on which it exits) while the script
//	                        goes on; from then on nothing listens on its
//	                        port (Server.Stops), as in httpd -f -p 8080 -h
//	                        /tmp & sleep 5; kill $!; sleep infinity & wait
//	                        (not after trap '' TERM, which the server
//	                        would inherit)
//	exit $VAR, exit ${VAR}  exit with the value of environment variable VAR
//	                        (ParseEnv, OfEnv and OfHandler only; unset or
//	                        empty is a bare exit, as in sh)
//	/nonexistent/...        an executable that is missing: every start fails
//	anything else           runs until killed, exits on SIGTERM (no command
//	                        at all, or one statement outside the vocabulary:
//	                        Behaviour.Unknown)
//
// Statements take effect in order: the writes of echo and rm happen at the
// time the sleeps before them add up to (Behaviour.Writes, FileAt). Words
// are literal: quotes, $, globs and other characters sh would interpret
// put a statement outside the vocabulary, except in the trap, exit and
// kill $! forms above and, with the environment known (ParseEnv, OfEnv),
// $VAR and ${VAR} in the words of echo (echo -n $NAME > P), whose values
// sh would neither split nor glob, so that a real sh and an interpreter
// always agree.
//
// # Environment and expansion
//
// A container's Env and its $(VAR) references are the kubelet's business,
// not sh's: the kubelet expands $(VAR) in Env values, Command and Args
// before the runtime sees them ($$ stands for $; an undefined $(VAR) stays
// as it is), and sh then reads $VAR from the environment. Expand does the
// kubelet's part, ParseEnv the shell's, OfEnv both. A CRI simulator gets the
// expanded command and the environment in CreateContainer and calls ParseEnv.
//
// # Hooks and probes
//
// The same vocabulary describes the exec action of a lifecycle hook (and,
// of an exec probe): OfHandler and OfProbe give its Behaviour, run in the
// container's environment. A hook that succeeds is
// "true" (or exit 0), one that fails "false" or "exit N", one that takes a
// while "sleep N" before either; the kubelet runs Exec.Command as it is,
// with no $(VAR) expansion. The writes of a command are kept in order with
// their times, so that a simulator can keep a table of each container's
// files: a probe that "starts failing after a while" is a container that
// writes a file and removes it later (echo ok > /tmp/health; sleep 10;
// rm -f /tmp/health; sleep infinity) probed by a command that tests for it
// (test -e /tmp/health, or cat /tmp/health). A command reads the files it
// wrote itself; a probe also reads the container's files at the moment it
// runs: OfProbe(c, probe, OfEnv(c).FilesAt(d)) is the probe run d after the
// container started, and Behaviour.Succeeds(ProbeTimeout(probe)) its result
// (exit 0 within timeoutSeconds).
//
// # Servers: HTTP and TCP probes and hooks
//
// A container that serves runs busybox httpd (Behaviour.Servers): it
// listens on its port from the moment the sleeps before it add up to until
// the container ends, and answers a GET with a file under its document
// root, which the container writes and removes with echo and rm -f, or
// until the script stops it with kill $! (the container running on). An
// HTTP probe on that path succeeds while the file exists and fails with 404
// once it is gone; a TCP probe of the port succeeds while httpd listens
// (busybox 1.35's nc, Debian's busybox-static, has no -k to listen for
// more than one connection, so httpd is the vocabulary's only listener):
//
//	sh -c "trap 'exit 143' TERM; echo ok > /tmp/healthz; httpd -f -p 8080 -h /tmp & sleep 10; rm -f /tmp/healthz; sleep infinity & wait"
//	sh -c "trap 'exit 143' TERM; httpd -f -p 8080 -h /tmp & sleep 10; kill $!; sleep infinity & wait"
//
// A simulator asks Behaviour.ListensAt (is it listening on port N at time
// d), HTTPGet.At (what a GET of path P on port N answers at time d, from the
// container's files then) or, for a whole probe or hook, NetProbeAt and
// HTTPHookAt, which resolve named ports and count results as the kubelet
// does. The kubelet's prober and hook runner send these requests from the
// node to the pod's IP (the node's own for a host-network pod), so a port
// is all a pod spec needs to name. gRPC probes are outside the vocabulary.
//
// Images are not interpreted, except one registry: an image under
// kri.invalid/ (MissingImageDomain) cannot be pulled, so its container fails
// to start whatever its command, until the pod's spec names another image —
// the one change of a container the API server allows.
//
// # Simulating containers on a clock
//
// Three types play the vocabulary back on a clock the caller keeps (no
// goroutine, no timer: the caller asks when the next event is due and
// advances to it): Instance, one run of a container (start, exit, SIGTERM
// with a grace period, SIGKILL, its files and termination message);
// Prober, the startup, liveness and readiness probes of one instance, whose
// results come from a ProbeFunc the caller supplies (ExecProbes for exec
// probes against the instance's files); Pod, a pod's containers in start
// order with restarts, back-off and stops, as a node agent runs them on
// its own, with what the pod spec asks of the agent: the probes of each
// run (Started and Ready; a liveness or startup failure kills the run),
// the postStart and preStop hooks (exec, HTTP and sleep actions, their
// writes in the run's files) and restartable init containers (sidecars),
// each as the kubelet's runtime manager and prober run them. The example
// backends run their pods on Pod; ExamplePod shows a service simulator of
// a few lines, ExamplePod_readinessAndSidecar the same with a readiness
// probe and a sidecar. A simulator whose agent decides every start (the
// fake provider: SyncPod starts what is missing) runs on Pod too, in the
// mode where the caller starts the runs (Pod.CallerStarts; StartRun,
// PostStart, StopRuns, ExitRun, each event to Pod.OnEvent;
// ExamplePod_callerStarts): the runs, their probes, their hooks and the
// order of a kill are Pod's, and so is the order of the starts: the
// caller asks Pod.StartInTurn which containers' turn has come (from the
// Pod's runs), or podactions.ActionsFromStatus
// (github.com/kri-kit/testkit/kri/podactions, in the kit's root module: it
// reads the kubelet's status type) what a runtime status calls for (as the
// kubelet reads the status its agent hands it), and makes each start
// its way (its faults, its back-off). The pieces both modes use are the
// same, so a pod behaves the same in both: the start order, Restarts (the
// restart policy), StartFailure (why a start fails), GracePeriod (a kill's
// grace period) and KubeletBackOff.
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
// a CRI runtime reports for an exit code; a container the runtime created
// but could not start exits with ExitCodeStartError (128) and reason
// ReasonStartError.
package workload
