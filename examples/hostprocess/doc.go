// Package hostprocess is a KRI provider that runs every container of a pod
// as a child process of the current process. It is the worked example a
// provider author reads first: small enough to read in one sitting, real
// enough to be asynchronous (processes exit when they please, signals take
// time), and complete enough to pass the conformance suite.
//
// New returns a Provider (a kri.PodProvider); NewNodeProvider returns a
// NodeProvider (a kri.NodeProvider) describing this machine.
//
// # How a pod maps onto the machine
//
//   - Sandbox: there is no isolation to set up. A pod's sandbox is the
//     directory RootDir/pods/<pod UID>/ plus a record with a random ID, listed
//     in PodStatus.SandboxStatuses: SANDBOX_READY until KillPod,
//     SANDBOX_NOTREADY afterwards (a later SyncPod creates a new one).
//   - Container: each start is one process, started with os/exec from
//     Command followed by Args (Args alone when Command is empty), in a
//     process group of its own. Its environment is PATH (Options.Path) plus
//     the container's Env (plain values); the provider's own environment is
//     not inherited. As the kubelet does, $(VAR) references to the
//     container's variables are expanded in Env, Command and Args, and $$
//     stands for $ (a script wanting the shell's $$ writes $$$$).
//     It runs in WorkingDir, or in its container directory
//     RootDir/pods/<uid>/<container>/ when WorkingDir is empty. Stdin is
//     /dev/null; stdout and stderr go to <restart count>.log in the
//     container directory. The image is not pulled: Image is only reported,
//     but an image in workload.MissingImageDomain fails the start as a pull
//     would, with workload.ErrImagePull, or with workload.ErrImageNeverPull
//     under imagePullPolicy Never, as the kubelet's image manager reports it.
//   - Termination message: terminationMessagePath is taken as a host path
//     (there is no container file system to mount it in; the API default
//     /dev/termination-log is ignored). When the process exits, what it
//     wrote there since it started (at most 4096 bytes) becomes the message
//     of its exited instance; under FallbackToLogsOnError, a non-zero exit
//     without it takes the tail of the log (80 lines, 2048 bytes), as the
//     kubelet's runtime manager does.
//   - Container ID: a random ID per start ("hostprocess://<64 hex digits>"),
//     stable for the life of that process. The provider keeps the current
//     and the previous instance of each container (and their logs).
//   - Start failure: an executable that cannot be found or run creates no
//     instance. SyncPod reports it to the ReasonCache as a
//     pkgcontainer.StartContainer result with pkgcontainer.ErrRunContainer
//     and the exec error, RefreshPodStatus reports the container Waiting
//     with reason "RunContainerError", and the next SyncPod tries again; a
//     later successful start clears the failure.
//   - Exit: one goroutine per process waits for it. The exit code is the
//     process's, or 128+N after a death by signal N (143 for SIGTERM, 137
//     for SIGKILL). When the main process exits, what is left of its
//     process group is killed, as a container's processes die with its init
//     process.
//   - Probes: exec probes run as host processes in the container's
//     environment and directory; HTTP GET and TCP probes are sent by the
//     kubelet's own probers (k8s.io/kubernetes/pkg/probe/http and
//     pkg/probe/tcp) to PodIP, the loopback address (every pod shares the
//     host's network, as a host-network pod does), or to the action's
//     host; one worker per probe as the kubelet's prober runs them (initialDelaySeconds, periodSeconds, timeoutSeconds,
//     successThreshold, failureThreshold; liveness and readiness wait for
//     the startup probe). RefreshPodStatus reports Started and Ready from
//     their results; a liveness or startup failure stops the process
//     (SIGTERM, SIGKILL after the probe's or the pod's grace period), and
//     the next SyncPod starts it again as the restart policy allows. A
//     gRPC probe always fails. The probes of an instance stop with its
//     process. A sidecar (restartable init container) with a startup probe
//     holds the next init container, and the app containers, until that
//     probe has succeeded, as the kubelet's computeInitContainerActions
//     does.
//   - Stop: KillPod sends SIGTERM to each container's process group and
//     SIGKILL once the grace period is over; Provider.Stop sends SIGKILL to
//     everything still running and reaps it. No process outlives the
//     provider: besides Stop, a Provider dropped without Stop kills its
//     processes when it is garbage collected, and every main process is
//     started with SIGKILL as its parent-death signal, so that it dies with
//     the provider's process even when that is killed outright (children a
//     main process started itself are only covered by the first two).
//   - Lifecycle hooks: an exec hook is a host process like the container
//     (its Command as it is, the container's environment and directory, a
//     process group of its own, killed when the container exits); a sleep
//     hook sleeps; an HTTP hook is a GET sent as the kubelet's hook runner
//     sends it (to PodIP unless the action names a host; any response is
//     a success, none a failure); TCP hooks, which the kubelet does not
//     run, are rejected with ErrInvalidPod. The
//     postStart hook runs right after the start and SyncPod waits for it, so
//     the next container starts after it; when it fails, the container is
//     stopped as KillPod stops it (the pod's grace period, at least 2s) and
//     the start is reported as workload.ErrPostStartHook
//     ("PostStartHookError"), and it is started again only as the restart
//     policy allows. KillPod runs each running container's preStop hook for
//     at most the grace period, then sends SIGTERM and gives what is left of
//     the grace period (at least 2s, or the whole grace period if shorter).
//
// # Telling the agent
//
// The provider keeps kri.PodSyncNotifier's duty with an embedded
// podsync.Notifier: it calls the agent's HandlePodSyncByUID for a pod when
// a container's process has started (startContainer) and when its reaper
// has recorded the exit (so also after a liveness kill, a failed postStart
// hook's kill and KillPod's kills), when a probe worker's result flips a
// container's Started or Ready, when KillPod returns (the sandbox NOTREADY,
// the containers exited), and a second after a SyncPod in which a start
// failed, since only the next SyncPod tries it again. Stop ends the calls.
//
// # What it does not do
//
// No resource limits, no volumes, no gRPC probes, no networking (every pod
// shares the host's network: two pods cannot listen on one port), no user or filesystem isolation, no image, no
// restart back-off (a container that exits is restarted by the SyncPod its
// exit notification brings, as soon as the agent makes it). A process that
// leaves its process group (setsid, setpgid) escapes the provider. Env
// valueFrom and envFrom are rejected: there is no API server to read them
// from.
//
// # Using it
//
//	p, err := hostprocess.New(hostprocess.Options{RootDir: "/var/lib/hostprocess"})
//	if err != nil { ... }
//	defer p.Stop()
//	p.SetPodSyncHandler(agent) // before Start: the agent syncs a pod when told
//	go p.Start(ctx)
//	err = p.SyncPod(ctx, pod, nil, reasonCache) // on every HandlePodSyncByUID(pod.UID)
package hostprocess
