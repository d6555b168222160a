// Package vkremote is an example virtual-kubelet provider of the
// remote-service shape, gated on the kit's vk suite: it forwards each pod
// to a container service reached over HTTP, and learns what became of it by
// polling. Providers in front of a cloud's container instances, an HPC
// batch gateway or another cluster have this shape; read this package for
// how such a provider meets what VK asks of it, and its TestConformance for
// how to run the suite against one without the real service.
//
// # The pieces
//
//   - Service (service.go, api.go) stands for the remote service: an
//     http.Handler with a small JSON API of its own model, Groups of
//     containers (create, get, list by tag, delete with a grace period,
//     health), with a latency per request, a start delay (a group is
//     Pending before its containers run) and a stop delay (containers take
//     that long to exit after SIGTERM; a shorter grace period kills them,
//     exit code 137). A container's env may set its own stop delay and
//     exit code (EnvStopAfter, EnvStopExitCode): the service's stand-in
//     for an image whose SIGTERM handler decides.
//   - Client (client.go) calls it. Its one piece of VK knowledge: an answer
//     404 becomes an error VK's errdefs.IsNotFound reads as NotFound
//     (errdefs.AsNotFound). VK follows Cause, as github.com/pkg/errors'
//     Wrap provides, not Unwrap: wrapped further with fmt.Errorf's %w it is
//     no longer NotFound to VK, which then leaves a deleted pod Terminating
//     (the suite's KVK-POD-006 says so).
//   - Provider (provider.go) is the node.PodLifecycleHandler and
//     node.PodNotifier VK drives. Node (node.go) is the node.NodeProvider:
//     Ping is the service's health check, which fails once the service has
//     lost its backend (Service.SetHealthy).
//
// # How the provider meets VK's contract
//
//   - Async: NotifyPods keeps VK's callback and starts a poll loop that
//     lists the node's groups every PollInterval and notifies each pod whose
//     group's Version grew (VK never calls GetPodStatus of an async
//     provider). Notifications are ordered: a status is taken and handed to
//     VK under one lock, so VK never gets the poll loop's Running after
//     DeletePod's Succeeded. Every pod handed to VK is a copy the provider
//     never changes (VK keeps it, node/pod.go enqueuePodStatusUpdate).
//   - CreatePod is idempotent: the group's ID is the pod's UID, chosen by
//     the client, and the service's create answers the group it runs
//     already. A CreatePod VK retries, or one after the provider restarted,
//     starts nothing again.
//   - GetPod answers the pod as VK gave it (VK's podsEqual compares its spec
//     with the API's, node/pod.go) with the status the service last
//     reported, from memory: no call to the service per sync. A pod it does
//     not run is nil and errdefs.NotFound, so VK calls CreatePod.
//   - DeletePod passes the pod's grace period (DeletionGracePeriodSeconds)
//     to the service, waits for the containers to exit, notifies VK of the
//     terminal status (Succeeded, or Failed when one was killed) with every
//     container terminated and its exit code, and forgets the pod. A pod the
//     service does not run answers NotFound, which VK takes for done.
//   - GetPods lists the service's groups of this node, not the provider's
//     memory, so that VK's deleteDanglingPods finds the groups a previous
//     run left behind; it rebuilds their pods from the groups' tags.
//
// What it leaves out, as a real provider would not: a group the service
// loses on its own (the provider would notify the pod Failed), containers
// that exit or restart on their own, resources, volumes, probes, logs and
// exec.
//
// # Testing it without the service
//
// TestConformance declares every capability the service honestly has:
// exit-codes and grace-period, the suite's container that traps SIGTERM
// (vk.Workloads.TrapsSIGTERM, by default a shell script the service cannot
// run) given in the service's terms, its stop delay and exit code in its
// env; and backend-failures, its Config.MakeBackendUnhealthy turning the
// service's health check to 503 (Service.SetHealthy), which Ping reports.
// The service's containers never exit, fail or restart on their own, and
// it runs no commands, init containers, probes or hooks: the capabilities
// that need those (container-restarts, start-failures, init-containers,
// termination-messages, the probes, env, lifecycle-hooks) would each need
// a scheduler of container runs in the service (runs that end, back-off,
// restart counts, the order of init containers), which this example leaves
// out, so their specs are skipped. TestConformance runs
// vk.Run with VirtualTime: every spec gets a Service
// of its own, served by net/http over in-memory pipes (memnet_test.go;
// net.Pipe connections block on channels, which testing/synctest can wait
// out, where a real socket would keep the bubble's clock from moving), so
// the provider's HTTP client, the service's delays, the poll loop and VK's
// controllers all run on the bubble's clock: the suite's minutes of VK time
// take about two seconds. The same provider over a real loopback socket,
// on the real clock, is TestProviderOverLoopback. A provider in front of a
// real service can do the same: fake the service's API with an
// http.Handler, or run the suite on the real clock (no VirtualTime)
// against a test instance of the service.
package vkremote
