// Package remotebackend is a KRI provider in front of a remote container
// service, with a simulation of such a service to run it against. It is the
// worked example of the freedoms the kri contract leaves a remote provider,
// and it passes the conformance suite with every capability of the KRI
// call contract declared and, of what the pod spec asks, env-expansion,
// probes, network-probes, sidecars and lifecycle-hooks, with no expected
// failures.
//
// # What a remote backend is
//
// A remote provider does not run containers itself: it hands each pod to a
// service that runs it somewhere else — Azure Container Instances, AWS
// Fargate, or another Kubernetes cluster, as kuscia's K8sProvider does
// (pkg/agent/provider/pod/k8s_provider.go in secretflow/kuscia). The
// service decides how containers run: it restarts them itself, with its own
// back-off; it names images its own way; and it shows one run of each
// container at a time, with a count of the restarts and the termination of
// the run before. There is no sandbox a node agent could see, and no
// history of dead instances to collect.
//
// # The Service
//
// Service simulates such a backend on a k8s.io/utils/clock, so that tests
// drive it on a fake clock. Apply submits a pod (a *v1.Pod, copied); the
// Service runs its containers in their environment, with $(VAR) expanded
// as the kubelet expands it, by the workload vocabulary (package workload:
// how long a container runs, its exit code, whether it ignores SIGTERM,
// whether its executable or image is missing), init containers one at a
// time in order, each to exit code 0 before the next and before the app
// containers. What the pod spec asks of whoever runs the containers it does
// itself, as the kubelet does, with workload.Pod:
//
//   - probes: exec probes against the container's files (what its command
//     and its hooks wrote), HTTP and TCP probes answered by the server its
//     command starts (httpd -f -p PORT -h DIR), gRPC probes taken to
//     succeed; readiness and startup results are its Started and Ready, a
//     failed liveness or startup probe kills the run (with the probe's
//     terminationGracePeriodSeconds, else the pod's) and it restarts as
//     the policy says;
//   - lifecycle hooks: postStart (exec, httpGet, sleep) once the container
//     has started, no other container starting before it ends; a failed one
//     kills the run, which waits in PostStartHookError before it restarts as
//     the policy says; preStop before SIGTERM, its time taken from the grace
//     period;
//   - restartable init containers (sidecars): started in order among the
//     init containers, the next once the sidecar runs (and, with a startup
//     probe, has started, the first time), restarted whatever the pod's
//     policy, stopped once the app containers are done for good, and on
//     Stop after the app containers, the last first.
//
// It reports, per container (ContainerView):
//
//   - the current run: ID, state (Running or Exited), start and finish
//     times, exit code and reason ("Completed" for 0, "Error" otherwise);
//     an exited run stays current until the next one starts;
//   - the last termination: the run before the current one;
//   - the restart count: the number of runs before the current one;
//   - why it waits, while the Service means to start it and has not:
//     CrashLoopBackOff, or the failure of the latest start (a missing
//     executable, RunContainerError; an image that cannot be pulled,
//     ErrImagePull; an invalid image reference, InvalidImageName; a failed
//     postStart hook, PostStartHookError);
//   - whether it has started and is ready, from its probes;
//   - its image, normalised as containerd and CRI-O normalise it
//     (docker.io/library/busybox:1.36 for busybox:1.36).
//
// Restarts follow the pod's restart policy (an init container is restarted
// only when it failed, and not under Never). Each waits a crash-loop
// back-off counted from the exit: BackOff.Initial (default 200ms), doubled
// for every further restart up to BackOff.Max (default 2s), and back to
// Initial once 2×Max has passed without a back-off — the rules of the
// kubelet's runtime (kuberuntime_manager.go doBackOff, with a
// client-go flowcontrol.Backoff), except that the kubelet restarts the first
// exit at once and the Service waits Initial for it too, so that every
// exited run can be seen. A start that fails creates no run and counts no
// restart; the Service retries it after the same back-off, whatever the
// restart policy, as the kubelet keeps trying to pull an image. Stop runs
// the preStop hooks, then sends SIGTERM (to the sidecars once the app
// containers have exited): a container exits as its handler says (at once
// with 143 without one), one that ignores it, or whose handler takes longer
// than what is left of the grace period, is killed when it is over (137).
// A resubmission
// may change only images, as the API server allows: a running container
// whose image changed is stopped and started again with the new one, and
// one waiting to be retried is retried at once.
//
// The Service is evaluated lazily: every exit, kill and restart happens at
// the exact instant the behaviour, the grace period and the back-off say,
// and each call first brings the Service up to the clock's present, so the
// times it reports do not depend on when anyone looks. Run (which the
// provider's Start runs) keeps it up to date between calls.
//
// # The provider
//
// Provider keeps nothing of its own: each method is one or two calls to the
// Service and a mapping of the answer.
//
//   - SyncPod submits the pod (Apply; idempotent) and reports to the
//     ReasonCache the outcome of the latest start of each container the
//     Service has tried: success, clearing an earlier failure; the start
//     failure, with pkgcontainer.ErrRunContainer, workload.ErrImagePull or
//     workload.ErrPostStartHook, and an error naming the container (for a
//     failed postStart hook while the Service waits to restart it); or
//     pkgcontainer.ErrCrashLoopBackOff while the Service backs off, which is
//     no error (kuscia's CRIProvider turns back-off-only failures into nil
//     the same way). It does not read
//     podStatus: the Service knows what runs.
//   - GetPodStatus reports one instance per container that has run, the
//     current run, with the Service's restart count and image, CreatedAt =
//     StartedAt; no sandboxes, no ActiveContainerStatuses.
//   - RefreshPodStatus replaces the container statuses of the status the
//     agent built with the Service's (state, last termination, restart
//     count, ContainerID, image, Started and Ready from the probes), as
//     kuscia's K8sProvider copies the
//     container statuses of its backend pod. A container waiting in
//     back-off is Waiting CrashLoopBackOff with the exited run as its last
//     termination, as the kubelet shows it (kubelet_pods.go,
//     convertToAPIContainerStatuses).
//   - GetPods(false) lists pods with a running container and their running
//     containers, GetPods(true) every pod and every current run.
//   - KillPod stops the pod on the Service with the grace period (the
//     override, else DeletionGracePeriodSeconds, else
//     TerminationGracePeriodSeconds) and waits until nothing of it runs;
//     DeletePod removes it from the Service; CleanupPods removes every pod
//     none of its arguments names.
//   - Start runs the Service's loop until Stop. Stop leaves the Service's
//     pods alone: a remote backend's pods outlive the agent in front of it.
//
// # Telling the agent
//
// Its notifications come from the backend, as kuscia's K8sProvider's come
// from its backend informer (k8s_provider.go handleBackendPodChanged): New
// watches the Service (Service.Watch) and the embedded podsync.Notifier
// calls the agent's HandlePodSyncByUID for every pod whose view the
// Service reports changed (a start, an exit, a restart after the back-off,
// a failed start tried again, Started or Ready flipped by a probe, a
// stop) or which it deleted. The Service sees a change when it carries it
// out: Run, which Start runs, sets its timers to the pods' next events
// (workload.Pod.Next), so each change is reported at its own instant; an
// event that changes nothing (a probe with the same result) is not. Stop
// ends the watch.
//
// # The kri freedoms it uses
//
// Each is a sentence of the kri.PodLifecycleHandler documentation:
//
//   - Restarts by the backend, with back-off (SyncPod): "A provider may
//     delay a restart (crash-loop back-off, as the kubelet's runtime does)
//     or leave restarts to its backend."
//   - One instance per container (GetPodStatus): "a remote provider may
//     report only the newest instance of each name." Restarts show as new
//     container IDs and a growing RestartCount across calls, which is how a
//     node agent counts them.
//   - No sandboxes (GetPodStatus): "A runtime provider reports the pod's
//     sandboxes, one of them ready while a container of the pod runs; a
//     remote provider may report none." and "ActiveContainerStatuses may
//     be left empty".
//   - Normalised images (GetPodStatus, RefreshPodStatus): "Image should
//     name the image the instance was created from: the spec's reference
//     or the runtime's normalised form of it."
//   - The backend's statuses (RefreshPodStatus): "a remote provider may
//     replace container statuses with its backend's."
//
// It uses none of the others: KillPod gives no minimum grace period of its
// own, and DeletePod forgets the pod at once.
//
// # What it does not do
//
// No pod IPs, volumes, logs, resource limits or node provider; no
// container restart rules (a restart policy on an app container, or one
// other than Always on an init container), which Apply rejects; no network
// latency or backend outages. It reports no termination messages (a remote
// service reports how a run exited, not a file in its container), so the
// capability termination-message stays undeclared, and with it the hook
// specs that read what a hook wrote there (KRI-POD-062, 064, 090); it has no
// local images, so image-pull-policy stays undeclared too. The kubelet
// gives a container at least 2s after its preStop hook
// (minimumGracePeriodInSeconds); the Service gives what is left of the
// grace period. The Service keeps everything in memory.
//
// # Using it
//
//	svc, err := remotebackend.NewService(remotebackend.ServiceOptions{})
//	if err != nil { ... }
//	p, err := remotebackend.New(svc)
//	if err != nil { ... }
//	p.SetPodSyncHandler(agent) // before Start: the agent syncs a pod when told
//	go p.Start(ctx)
//	defer p.Stop()
//	err = p.SyncPod(ctx, pod, nil, reasonCache) // on every HandlePodSyncByUID(pod.UID)
package remotebackend
