// Package kubeletruntime is a KRI PodProvider that is the kubelet's own
// runtime manager, k8s.io/kubernetes/pkg/kubelet/kuberuntime
// .NewKubeGenericRuntimeManager, over CRI services, by default the CRI
// fakes of k8s.io/cri-api/pkg/apis/testing made to run the conformance
// suite's workloads by package crisim, or over a real CRI runtime's
// endpoint with DialCRI (package e2e runs the conformance suite so against
// containerd).
//
// It is wrapped as secretflow/kuscia wraps the runtime manager in its
// CRIProvider (pkg/agent/provider/pod/cri_provider.go), the provider the
// KRI interfaces come from, minus what a simulated node has none of
// (volumes, DNS, image credentials):
//
//   - SyncPod calls the runtime manager's SyncPod with a crash-loop
//     back-off of the provider's own (flowcontrol.Backoff), records the
//     result with ReasonCache.Update and returns nil when every failed
//     action was only a back-off (CrashLoopBackOff, ImagePullBackOff), else
//     result.Error() as it is;
//   - KillPod, GetPods and GetPodStatus are the runtime manager's, the pod
//     of GetPodStatus being looked up as the kubelet's PLEG does, and so
//     are their errors: passed through unwrapped, as kuscia's CRIProvider
//     passes them (with a cancelled context, SyncPod returns failed to
//     "CreatePodSandbox" ... rpc error: code = Canceled, which carries
//     neither the context's error nor the gRPC status);
//   - the pods' probes run in the kubelet's own prober manager
//     (k8s.io/kubernetes/pkg/kubelet/prober.NewManager, as kuscia's
//     CRIProvider builds its copy, pkg/agent/prober): exec probes with the
//     runtime manager as its command runner (RunInContainer, a CRI
//     ExecSync), HTTP and TCP probes sent to the pod's IP in the status
//     RefreshPodStatus keeps (see network.go; crisim serves its containers'
//     files at a loopback address per sandbox), and the liveness,
//     readiness and startup results managers shared with the runtime
//     manager: SyncPod adds the pod's probe workers (probeManager.AddPod,
//     as the kubelet's SyncPod); the runtime manager's next SyncPod kills
//     and restarts a container whose liveness probe failed
//     (computePodActions), in the sync the provider asks for on
//     livenessManager.Updates(); KillPod stops the liveness and startup
//     probes and, once the containers are stopped, all of the pod's (as
//     the kubelet's SyncTerminatingPod and kuscia's CRIProvider.KillPod);
//     DeletePod, CleanupPods (for the pods it does not keep) and Stop end
//     any left;
//   - RefreshPodStatus only refines the status the agent built, with the
//     prober manager's UpdatePodStatus (Started from the startup probe,
//     Ready from the readiness probe; running, started containers without
//     them), and keeps it for the probe workers, which read the pod's
//     status from it as from the kubelet's status manager; it adds no
//     container status;
//   - lifecycle hooks run in the runtime manager's hook runner: exec hooks
//     through ExecSync, HTTP hooks with a client as the kubelet's (no
//     certificate check, no redirect to another host) to the action's
//     Host, else to the pod's first IP in the runtime's status (an HTTP
//     hook of a pod without one fails, as in the kubelet);
//   - DeletePod makes sure nothing of the pod runs and lets it go: the
//     kubelet's runtime has no delete, its garbage collector removes dead
//     containers and sandboxes later, which Start runs every GCPeriod;
//   - CleanupPods kills the running pods it is not told about, with a grace
//     period of 1 second, as the kubelet's HandlePodCleanups does.
//
// # Notifications
//
// The provider implements kri.PodSyncNotifier with an embedded
// podsync.Notifier, and tells the agent a pod needs a sync as kuscia's
// CRIProvider does (syncLoopIteration): while Start runs, the kubelet's own
// GenericPLEG (pkg/kubelet/pleg) relists the runtime every RelistPeriod
// (1s, the kubelet's), and at once after a SyncPod that did something and
// failed in nothing (as the kubelet's SyncPod requests a relist), and every
// event but ContainerRemoved is a call, as is every readiness and startup
// update and every liveness failure of the prober's results managers. What
// CRIProvider misses it adds: a resize in place is a call (the runtime
// manager's RequestPodReinspect), and a SyncPod
// that met a back-off or a failure asks for a call when it is over (the
// kubelet's pod workers requeue so, pod_workers.go completeWork): a
// crash-loop back-off at the expiration its BackoffError carries, an image
// pull back-off when the image manager's back-off entry ends, any other
// failed start after InitialBackOff (the kubelet's backOffPeriod). Stop
// ends the relist, the relay and the pending calls.
//
// Where the runtime manager's behaviour is the kubelet's, the provider keeps
// it, also where it differs from a literal reading of the KRI contract: a
// container always gets at least 2 seconds after SIGTERM (the runtime
// manager's minimumGracePeriodInSeconds), even with a grace period of 0;
// a deleted pod is listed until the garbage collector has removed it;
// RefreshPodStatus sets Started on every status it is handed; and two
// concurrent SyncPods of one pod make the second one fail (the runtime
// refuses the duplicate container name, as containerd does), because the
// kubelet never runs two.
//
// Every method is safe for concurrent use. The provider writes files only
// under Options.RootDir (the runtime manager's checkpoint, image pull
// records and pod log directories) and starts goroutines only within calls
// and within Start.
package kubeletruntime
