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
// exit code, reason, restart count. SyncPod reconciles like a kubelet
// runtime: it creates the sandbox if missing, runs init containers one at a
// time in order, each to success before the next and before any app
// container, starts app containers that are not running and restarts exited
// ones as the pod's RestartPolicy allows, never touching a running one. Every
// start attempt is reported to the ReasonCache handed to SyncPod. KillPod
// sends SIGTERM (exit code 143, or the code of the command's handler) and,
// to containers that ignore it, SIGKILL (137) once the grace period is over,
// waiting for that on the clock. In every mode a sandbox the fake stops
// takes the containers still in it along: one no kill is stopping gets
// SIGKILL (137) at once, as the CRI's StopPodSandbox requires.
// CleanupPods stops each orphan the same way and forgets it once none of its
// containers runs. Each method's documentation says exactly what it does.
//
// # Two modes: the default and WithKubeletSemantics
//
// By default SyncPod works from the fake's own state, which is always
// current, and the fake forgives a controller mistakes the kubelet's runtime
// (pkg/kubelet/kuberuntime over a CRI runtime) would punish.
// WithKubeletSemantics turns every one of these differences off; each has an
// option of its own too:
//
//   - WithStatusDrivenSync: SyncPod acts on the podStatus it is handed, as
//     computePodActions does. A stale status delays a restart; a nil or
//     empty one for a running pod recreates the sandbox and starts the pod
//     again beside the old containers. Without it the status is ignored, but
//     the call log still records a stale one (Call.StaleStatus, the
//     StaleStatus filter).
//   - WithCrashLoopBackOff (or SetCrashLoopBackOff): restarts wait out the
//     kubelet's crash-loop back-off (10s doubling to 300s) on the provider's
//     clock, reported as pkgcontainer.ErrCrashLoopBackOff. Without it every
//     sync restarts an exited container.
//   - WithStartErrorInstances: a container that cannot run leaves an exited
//     instance (exit code 128, reason StartError) and counts a restart, as
//     under containerd. Without it a failed start leaves no instance.
//   - WithRunningPodKill: KillPod stops only the containers and sandboxes
//     of the running pod it is handed; a container the running pod leaves
//     out dies with its sandbox if the running pod lists that (SIGKILL at
//     once, exit code 137, reason Error, as containerd's StopPodSandbox
//     kills it), and otherwise runs on. Without it KillPod stops everything
//     of the pod, so an agent that passes an incomplete running pod is not
//     caught.
//   - WithImagePullBackOff: a failed pull is retried only after the image
//     back-off (10s doubling to 300s), ErrImagePullBackOff meanwhile.
//     Without it every sync pulls again and fails with ErrImagePull.
//   - WithPodIPs: sandboxes have IPs (10.88.0.0/16), reported in
//     PodStatus.IPs; host-network pods have none. Without it no pod has an
//     IP.
//   - WithPID1Signals: commands react to SIGTERM as PID 1 of a container:
//     "sleep infinity" ignores it and is killed with 137 when the grace
//     period ends. Without it they act as host processes and exit 143.
//   - WithMinimumGracePeriod: at least 2s between SIGTERM and SIGKILL.
//     Without it a grace period of 0 kills at once.
//
// The default stays the default because the conformance suite and the
// kit's users build on it: with WithKubeletSemantics the suite's reference
// run fails five restart specs, whose SyncPods meet the 10s crash-loop
// back-off (see the README, "Two modes").
//
// In both modes the fake does what the pod spec asks of the runtime, as the
// kubelet's runtime manager does (see "What the pod spec asks" below). Even
// WithKubeletSemantics does not simulate ephemeral containers,
// container-level restart policies (but for restartable init containers),
// OOM kills, the enforcement of resource limits, a restart of a running
// container whose image changed, pull time, or garbage collection (each
// container keeps its current instance and the one before; DeletePod
// forgets at once).
//
// # What the pod spec asks
//
// By default, with no option:
//
//   - env and $(VAR): a container's Env values, Command and Args are
//     expanded as the kubelet expands them ($$ stands for $), and sh reads
//     $VAR from that environment (workload.OfEnv);
//   - termination messages: an exited instance's Message is the file at its
//     terminationMessagePath as its command left it (echo ... > PATH), the
//     last 4096 bytes; with FallbackToLogsOnError and a non-zero exit code,
//     a missing or empty file gives the tail of what it printed (80 lines,
//     2048 bytes), as kuberuntime's getTerminationMessage does;
//   - imagePullPolicy Never: a container whose image is missing (under
//     workload.MissingImageDomain) is never created; every start fails
//     with ErrImageNeverPull and the image manager's message, with no
//     back-off;
//   - native sidecars (init containers with restartPolicy Always): each
//     starts in spec order and the next init container once it runs (and,
//     when it has a startup probe, once that probe has succeeded, the first
//     time); it is started again whenever it exits, whatever the pod's policy; once
//     every app container has exited for good the pod is stopped (sidecars
//     get SIGTERM, the sandbox stops) and nothing starts again; KillPod
//     (and CleanupPods) stops the sidecars after every other container, the
//     last first, each running its preStop hook at once and then waiting
//     for its turn within the grace period, as the kubelet's
//     terminationOrdering does. A running sidecar is started and
//     ready in RefreshPodStatus;
//   - lifecycle hooks (run by workload.Pod as workload.RunHook says): a
//     postStart hook runs for as long as its action takes once its
//     container runs, and the containers SyncPod starts after it run once
//     it has ended; one that fails kills the container at its end (preStop
//     hook, then SIGTERM) and is reported to the ReasonCache as
//     ErrPostStartHook (PostStartHookError). KillPod runs a running
//     container's preStop hook before SIGTERM, for at most the grace
//     period, and gives the container what is left of it. What a hook
//     writes (echo ... >> PATH) goes to the container's files, at the time
//     it writes it. ContainerScript.PostStartHook and PreStopHook (scenario
//     keys postStartHook, preStopHook) impose hooks whatever the spec says;
//     EventPostStartHook and EventPreStopHook show each run.
//
// # In-place resize
//
// In both modes SyncPod applies changed CPU and memory requests and limits
// of a running app container as the kubelet's runtime manager does: in
// place when the container's resize policy is NotRequired for every
// changed resource (EventContainerResized; same ID), else by killing it
// with the pod's grace period and starting it again at once, whatever the
// pod's restart policy. GetPodStatus reports what each instance runs with
// in its Resources, and RefreshPodStatus the API's Resources and
// AllocatedResources. Every resize can be applied (the fake has no node
// capacity and no memory usage); init containers are not resized.
//
// # Probes
//
// The startup, liveness and readiness probes of an app container or a
// sidecar run on the provider's clock as the kubelet's prober workers run
// them (a plain init container is not probed, as the kubelet's prober
// manager does not, and the API server rejects such probes): the first
// initialDelaySeconds after the start, then every periodSeconds; a result
// flips after successThreshold successes or failureThreshold failures in a
// row; liveness and readiness wait for the startup probe to succeed. An exec
// probe runs its command in the vocabulary of package workload against the
// container's files at that moment (cat P, test -e P for a file the
// container's command writes with echo and removes with rm -f, or its hooks
// write); an HTTP or TCP probe is answered by the server the container's
// command runs (httpd -f -p PORT -h DIR: a GET succeeds while the file it
// asks for is under DIR, a TCP probe while httpd listens), as if the pod's
// network reached it; a gRPC probe succeeds (outside the vocabulary). Probes
// and the other events of a pod's containers due since the last read run at
// their own moments, in time order (at one instant: the runs' starts and
// exits, then the kills after failed postStart hooks and the sidecars'
// turns to stop, then probes; containers in spec order), whenever the fake
// is read, so results do not depend on when a test looks. RefreshPodStatus and Snapshot report a
// running container Started once its startup probe has succeeded and Ready
// while its readiness probe succeeds (from its first success); a liveness
// or startup failure kills the container as KillPod would (its probe's
// terminationGracePeriodSeconds, else the pod's grace period) and the next
// SyncPod starts it again as the restart policy and back-off allow. Results
// are published as EventProbeSucceeded and EventProbeFailed (Message: the
// probe kind); probes stop with their container. ContainerScript.FailProbe,
// PassProbe and ResetProbe script the results from now on ("readiness of
// container web fails from now on"), scenario files with probes: {readiness:
// fail}.
//
// # Notifying the agent
//
// PodProvider implements kri.PodSyncNotifier: an agent hands it its handler
// with SetPodSyncHandler (a test with WithPodSyncHandler), and in both
// modes the fake calls HandlePodSyncByUID(pod UID) whenever what an agent
// publishes or acts on changes: on every event it publishes but
// EventPodDeleted (sandboxes created and stopped; containers created,
// started, killed, exited; hooks, resizes, probe results), at the simulated
// time of the transition; after a failed or refused start, at once when the
// Waiting reason RefreshPodStatus reports changed, and again when the start
// is due: when its crash-loop or image-pull back-off ends, else after 10s
// (the kubelet's pod-worker back-off), so that an agent that syncs on every
// call is not kept in a loop of failing starts. Without crash-loop back-off
// (by default every sync restarts an exited container) the changes of a
// pod's SyncPods notify at most once a second (the kubelet PLEG's relist
// period), so that a container that exits as it starts is restarted once a
// second, not in a loop. What a call of the fake
// does is notified before it returns, in its goroutine; what time brings,
// from Start's loop (without Start, at the next call). The handler is
// never called under the fake's lock, so it may call the fake back. Stop
// ends the calls, and a pod DeletePod forgot gets none.
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
//	                        among sleep N, sleep infinity, sleep N & wait,
//	                        exit N, true, false, ':', trap '' TERM (ignore
//	                        SIGTERM), trap 'exit N' TERM (exit N on
//	                        SIGTERM) and trap 'sleep S; exit N' TERM (exit N
//	                        S seconds after SIGTERM, or SIGKILL when the
//	                        grace period is shorter), each optionally
//	                        prefixed by exec
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
//	fp.Container("default/web", "app").ExitRuns(2, time.Second, 1) // fail twice, then as before
//	fp.Pod("default/web").Fail(fake.MethodKillPod, 1, errBoom)
//
// Interceptors (WithInterceptors, SetInterceptors; WithNodeInterceptors and
// NodeProvider.SetInterceptors) wrap each method of the fake with the
// functions of package kri/interceptor, which wraps any provider so. The call
// log (Calls, ResetCalls) records every call as the caller saw it, with the
// error it returned. A call enters the log when it begins, before any of its
// effects is visible, and is completed when it returns (Call.Returned), so a
// test that sees an effect finds its call logged. WaitForCalls waits for
// calls and SubscribeCalls delivers them; Snapshot and Snapshots copy the
// simulated state; Subscribe and WaitFor observe state transitions. None of
// them polls.
//
// # Time: FakeClock.Step and testing/synctest
//
// With WithClock(clocktesting.NewFakeClock(...)) nothing happens until the
// test steps the clock. What Step does, per k8s.io/utils/clock/testing:
// before it returns it sets the time and fires every timer then due — it
// runs AfterFunc callbacks itself (the fake's own only signal its Start loop
// and wake WaitFor) and sends on the channels of timers, After and tickers.
// Every read of the fake (Snapshot, GetPodStatus, GetPods, WaitFor's check,
// any call) applies the transitions due at the clock's current time, so as
// soon as Step returns a read shows containers exited and latencies and
// grace periods over.
//
// What Step does not wait for: goroutines that its timers wake. A KillPod
// waiting out a grace period returns a little after Step; while Start runs,
// subscribers get the events of time passing a little after Step (without
// Start, at the next call); the controller's own goroutines blocked on the
// clock run later, and a timer one of them arms after that Step (a retry or
// resync interval computed once it has seen the new state) is not fired by
// it. A test that steps again before the controller has armed its timer
// races it; HasWaiters only counts timers, it cannot tell which.
//
// For a controller with timers of its own, run the test in a
// testing/synctest bubble instead, with the fake on the real clock (the
// default). Time in a bubble moves only when every goroutine in it is
// blocked, and synctest.Wait returns when they all are: the controller is
// idle. Make the provider inside the bubble — its channels must belong to
// the bubble for Start and WaitFor to count as blocked (a provider made
// outside makes the bubble hang) — and stop everything before the bubble's
// function returns:
//
//	synctest.Test(t, func(t *testing.T) {
//		provider := fake.NewPodProvider() // real clock: the bubble's
//		ctx, cancel := context.WithCancel(t.Context())
//		var wg sync.WaitGroup
//		defer func() { cancel(); provider.Stop(); wg.Wait() }()
//		wg.Go(func() { _ = provider.Start(ctx) })
//		wg.Go(func() { controller.Run(ctx, provider) }) // the code under test
//
//		time.Sleep(30 * time.Second) // the bubble's clock: instant
//		synctest.Wait()              // the controller and the fake are idle
//		snap, _ := provider.Snapshot("default/web")
//		// ... assert on snap, provider.Calls(...), ...
//	})
//
// TestInASynctestBubble in this package runs this pattern with a resyncing
// pod worker and crash-loop back-off.
//
// A FakeClock works in a bubble too, for a controller whose timers use the
// clock it is given: make the clock inside the bubble, and after each
// clk.Step call synctest.Wait(), which returns once every goroutine the
// step woke (the controller, the fake's Start loop, a KillPod waiting out a
// grace period) has done its work and blocked again. The next Step then
// cannot race the controller's next timer; TestFakeClockInASynctestBubble
// runs it.
//
// Everything the fake returns is a copy and every pod handed in is copied:
// callers and the fake never share memory. Both providers are safe for
// concurrent use.
package fake
