// Package fake provides in-memory KRI providers for unit tests: a
// PodProvider that simulates a node runtime's pod and container lifecycle,
// and a NodeProvider that simulates the node. Both are deterministic: every
// duration and timestamp comes from an injectable k8s.io/utils/clock clock
// and every ID from an injectable IDSource, so a test that steps a
// clocktesting.FakeClock sees containers start, exit and be killed without
// sleeping, and gets the same IDs on every run.
//
// # What PodProvider simulates
//
// Per pod, a sandbox and, per container, instances that go created → running
// → exited, with IDs, image, hash (pkgcontainer.HashContainer), timestamps,
// exit code, restart count and reason. SyncPod reconciles like a kubelet
// runtime: it creates the sandbox if missing, runs init containers one at a
// time in order, each to success before the next and before any app
// container, starts app containers that are not running and restarts exited
// ones as the pod's RestartPolicy allows, never touching a running one. Every
// start attempt is reported to the ReasonCache handed to SyncPod. KillPod
// sends SIGTERM (exit code 143) and, to containers that ignore it, SIGKILL
// (137) once the grace period is over, waiting for that on the clock.
//
// # Command vocabulary
//
// A container behaves as its Command followed by its Args say, so the same
// manifest means the same thing to the fake and to a host-process runtime.
// The interpreter is package workload, for other simulated providers to
// share. The executable is compared by base name (/bin/sh is sh):
//
//	sleep N                 run N seconds (decimals allowed), exit 0
//	sleep infinity          run until killed
//	true / false            exit 0 / exit 1 at once
//	sh -c "SCRIPT"          SCRIPT: statements separated by ';' or newlines
//	                        among sleep N, sleep infinity, exit N, true,
//	                        false, ':' and trap '' TERM (ignore SIGTERM),
//	                        each optionally prefixed by exec
//	/nonexistent/...        an executable that is missing: every start fails
//	                        with pkgcontainer.ErrRunContainer
//	anything else           runs until killed (no command at all, too)
//
// An image under kri.invalid/ (workload.MissingImageDomain) cannot be pulled:
// every start of its container fails with workload.ErrImagePull until the
// pod's spec names another image.
//
// Scripts override the vocabulary: see PodProvider.Container and
// PodProvider.Pod.
//
// # Scripting and observing
//
// Scripts set faults and timings per pod, container and method, with counts:
//
//	fp.Container("default/web", "app").FailStarts(2, pkgcontainer.ErrRunContainer, "pull failed")
//	fp.Container("default/web", "app").ExitAfter(5*time.Second, 3)
//	fp.Pod("default/web").Fail(fake.MethodKillPod, 1, errBoom)
//
// Interceptors (WithInterceptors, SetInterceptors) wrap each method of the
// fake in the manner of controller-runtime's interceptor package. The call
// log (Calls, ResetCalls) records every call with the error it returned;
// Snapshot and Snapshots copy the simulated state; Subscribe and WaitFor
// observe state transitions without polling.
//
// Everything the fake returns is a copy and every pod handed in is copied:
// callers and the fake never share memory. Both providers are safe for
// concurrent use.
package fake
