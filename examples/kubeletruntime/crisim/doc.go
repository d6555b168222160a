// Package crisim makes the passive CRI fakes of k8s.io/cri-api
// (k8s.io/cri-api/pkg/apis/testing) behave like a container runtime running
// the KRI conformance suite's workloads.
//
// The fakes only record calls: a started container runs forever and a
// stopped one exits without an exit code. RuntimeService embeds a
// FakeRuntimeService and gives each container the behaviour its command
// describes in the vocabulary of package
// github.com/kri-kit/testkit/sim/workload, read from the Command and Args of the
// CreateContainer request:
//
//   - a container that runs for d exits on its own d after it started, with
//     its exit code and the CRI reason ("Completed" for 0, "Error"
//     otherwise), FinishedAt being StartedAt plus d;
//   - StopContainer(id, timeout) stops a container that exits on SIGTERM at
//     once with exit code 143 (128+SIGTERM); one that ignores SIGTERM keeps
//     running until the timeout has passed, then is killed with exit code
//     137 (128+SIGKILL), unless it exits on its own first; a timeout of 0
//     kills at once, as containerd and CRI-O do;
//   - a container whose executable is missing fails StartContainer the way
//     containerd reports it: StartContainer returns an error and the
//     instance is left exited with exit code 128, reason "StartError", the
//     error as message and no StartedAt;
//   - the command is read with the environment of the CreateContainer
//     request (workload.ParseEnv: exit $CODE exits with the value of CODE;
//     the kubelet has expanded $(VAR) references before); an ExecSync
//     command (an exec hook's or probe's) is read with that environment and
//     the container's files at that moment (workload.ParseExec: cat P and
//     test -e P see what the container and earlier execs wrote);
//   - when a container exits (on its own or killed), what its command wrote
//     is written to the host: each file under a mount to the mount's host
//     path (so the termination message file the kubelet mounts at
//     terminationMessagePath holds what echo -n MSG > PATH wrote), and its
//     standard output to its CRI log (the sandbox's LogDirectory joined with
//     the request's LogPath, reported as the status's LogPath), in the CRI
//     log format the kubelet's log reader parses;
//   - ExecSync runs a command in a running container as the kubelet runs an
//     exec lifecycle hook: read with the vocabulary in the container's
//     environment, taking the time its sleeps add up to, its writes to the
//     container's files reaching the host with the container's own at exit,
//     a non-zero exit reported as a utilexec.CodeExitError, as the CRI client
//     reports it; the kubelet's own hook runner (kuberuntime) so runs
//     postStart and preStop hooks over the simulator.
//   - a container's status reports the linux resources it was created
//     with, and UpdateContainerResources changes them in place (the
//     kubelet's in-place resize), as containerd reports those of the
//     container's spec;
//   - each sandbox has an address of its own in the loopback network
//     127.0.0.0/8 (a host-network sandbox none, as under containerd: its
//     containers use the node's 127.0.0.1), and a container whose command
//     runs httpd (workload.Server) listens for real on its port there,
//     from its start plus the sleeps before httpd until its process ends
//     (exit, stop, removal): GET answers with the container's files as
//     they are at that moment (internal/httpd.Handler), and under -vv each
//     request joins the container's CRI log. The kubelet's prober and hook
//     runner, which send HTTP and TCP probes and HTTP hooks to the pod's
//     IP, so reach the container.
//
// It also answers as real runtimes do where the kubelet relies on it:
// unknown IDs give gRPC NotFound errors from ContainerStatus,
// PodSandboxStatus and StopContainer (the kubelet treats those as "already
// gone", see crierror.IsNotFound in kuberuntime), StopPodSandbox is
// idempotent and kills the sandbox's running containers, RemovePodSandbox
// removes the sandbox's containers with it, and a second sandbox or
// container of the same name and attempt is refused with AlreadyExists, as
// containerd's name reservation refuses it (the fake would replace the
// first). Options
// .NormalizeImages makes container statuses report the fully qualified
// image name (docker.io/library/busybox:1.36 for busybox:1.36), as
// containerd and CRI-O do.
//
// Only servers run in the background: a container's natural exit is
// applied whenever the container is looked at, or, for a container that
// serves, when its time comes, so that its ports close on time. Close ends
// the servers and waits for their goroutines: whoever made a
// RuntimeService closes it once done with it. StopContainer of a
// SIGTERM-ignoring container blocks its caller (not the runtime) for the
// timeout, and returns early with the context's error when the context
// ends.
package crisim
