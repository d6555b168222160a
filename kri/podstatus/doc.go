// Package podstatus computes the v1.PodStatus a node agent reports for a
// pod, the way the kubelet computes it, from the runtime status a KRI
// provider returns (kri.PodLifecycleHandler.GetPodStatus) and the
// kri.ReasonCache its SyncPod reports start failures to.
//
// A node agent's pod worker does, per sync, what the kubelet's SyncPod does
// (the status first, then the runtime's work on the same runtime status):
//
//	status, err := provider.GetPodStatus(ctx, pod)
//	...
//	apiStatus := podstatus.Generate(pod, status, reasons) // pod.Status: the previous status
//	provider.RefreshPodStatus(pod, &apiStatus)            // provider-specific details
//	podstatus.UpdateReadiness(pod, &apiStatus)            // Ready conditions after the provider's probes
//	podstatus.StampTimes(&pod.Status, &apiStatus, now)    // new transition times
//	// ... send apiStatus to the API server ...
//	err = provider.SyncPod(ctx, pod, status, reasons)
//
// and, once it has stopped a pod for good, GenerateTerminal. An agent that
// knows its node's addresses calls them on a Generator made with
// WithNodeAddresses instead.
//
// The kubelet's version of this code (generateAPIPodStatus,
// convertStatusToAPIStatus, convertToAPIContainerStatuses and getPhase in
// k8s.io/kubernetes/pkg/kubelet/kubelet_pods.go, the condition generators in
// pkg/kubelet/status/generate.go) is made of unexported methods of the
// kubelet; this package is an independent implementation of the same rules,
// as they are in Kubernetes 1.37 with its default feature gates. Its
// behaviour does not depend on the process's feature gates, nor on the
// release compiled in: the kit builds against every release from 1.35 on,
// and on each it follows 1.37's rules (its tests run on each); a field only
// newer releases have (PodStatus.NodeAllocatableResourceClaimStatuses, 1.36)
// is carried over where the release has it.
//
// # Containers
//
// Every container of the spec gets exactly one status, in its list
// (ContainerStatuses, InitContainerStatuses, EphemeralContainerStatuses):
// init containers in spec order, the order they run in, app and ephemeral
// containers sorted by name, as the kubelet sorts them; runtime instances of
// names not in the spec are ignored. For each container:
//
//   - The newest instance by CreatedAt gives State, ContainerID
//     (ID.String()), Image (the spec's image when the instance has none),
//     ImageID (ImageRef, else ImageID) and RestartCount; the instance it
//     replaced, the next newest, gives LastTerminationState. Older instances
//     do not count. Instances with equal CreatedAt keep the provider's order.
//   - Running is Running since StartedAt; Exited is Terminated with exit
//     code, reason, message, times and ContainerID; Created is Waiting.
//   - The newest instance also gives Resources and AllocatedResources, as
//     the kubelet reports an in-place resize: AllocatedResources are the
//     spec's requests; Resources are the spec's resources with, for a
//     running instance, each CPU and memory request and limit the spec
//     sets taken from the instance's Resources (what the runtime applied),
//     or, when it reports none, from the previous status of the same
//     running instance.
//   - Without an instance a container is Waiting with reason
//     ReasonContainerCreating, or ReasonPodInitializing in a pod with init
//     containers, keeping the restart count and last termination of the
//     previous status; a container the previous status showed Terminated
//     stays so.
//   - A container the agent will start again (not running; its restart
//     policy allows it; the pod not being deleted) whose latest start failed
//     according to the ReasonCache is Waiting with the failure's error as
//     reason (CrashLoopBackOff, ErrImagePull, ...) and its message; the
//     termination it had becomes LastTerminationState. An init container
//     that exited 0 is never started again.
//   - A container the previous status showed Running that the runtime no
//     longer reports gets a LastTerminationState Terminated with reason
//     ContainerStatusUnknown and exit code 137, and one more restart unless
//     the pod is being deleted; one whose newest instance is in an unknown
//     state is Terminated that way. An init container the runtime no longer
//     reports is taken as completed once an app container exists.
//   - The restart count never decreases from the previous status, and a
//     container Running after the previous status showed it Terminated with
//     no higher count from the runtime counts one more restart. A new
//     instance's LastTerminationState is the termination the previous status
//     showed, unless an older instance says otherwise.
//
// So a provider that keeps every instance (a container runtime) and one that
// keeps a single instance per name carrying its RestartCount (a remote
// backend) get the same status, provided the previous status is passed back
// in pod.Status: the second relies on it for LastTerminationState.
//
// Started and Ready are set as the kubelet's prober manager sets them for
// containers without probes: a running container has started and is ready,
// a regular init container is ready once it exited 0; any other container
// keeps the Ready its conversion gave it, which is false except for a
// container the previous status showed terminated and the runtime no longer
// reports: its previous status is carried over whole, Ready included, as
// the kubelet does (so a completed init container whose instance is gone
// stays ready while it waits to run again in a new sandbox). Ephemeral
// containers are left alone (no Started, not ready). Probes in the spec are
// not run: in KRI the provider runs them and sets Started and Ready of the
// containers that have them in RefreshPodStatus (a provider without probes
// leaves these values, the kubelet's for containers without probes), after
// which UpdateReadiness brings the Ready and ContainersReady conditions up
// to date, as kuscia's agent generates them after RefreshPodStatus.
//
// # Phase
//
// As the kubelet's getPhase, for each restart policy and for container-level
// restart policies and rules: Pending while an init container has not
// completed, a restartable init container has not started before any app
// container ran in the current sandbox, or an app container has not started;
// Failed when an init container failed and will not be retried; Running
// while a container runs or some terminated container will be restarted;
// Succeeded or Failed once every app container has terminated for good.
// GenerateTerminal reports a pod whose containers have all stopped as
// Succeeded or Failed whatever its restart policy (except a static pod, as
// in the kubelet). A terminal phase in
// pod.Status is final: it is returned unchanged. Reason and Message are kept
// from pod.Status while the phase stays the same, and cleared when it
// changes. As in the kubelet's generateAPIPodStatus, a terminal phase
// restored over a computed phase that is not terminal keeps them, while one
// forced back over the other terminal phase (Failed computed as Succeeded,
// say) loses them: the kubelet clears them for the change before it refuses
// the change. A node agent that sets a reason of its own (Evicted,
// DeadlineExceeded) sets it on the result, as the kubelet's eviction and
// active-deadline handlers do after generateAPIPodStatus.
//
// # Conditions
//
// PodReadyToStartContainers, Initialized, Ready, ContainersReady and
// PodScheduled are computed as the kubelet's status package computes them,
// with the pod's readiness gates, and ObservedGeneration set to the pod's
// generation. A condition whose status is unchanged from pod.Status keeps its
// LastTransitionTime; a changed one has none: Generate has no clock, and the
// caller stamps it with StampTimes (in the kubelet, the status manager
// stamps it). Every other condition of pod.Status (DisruptionTarget,
// readiness-gate conditions, ...) is carried over unchanged, first, in its
// order; then the resize conditions (PodResizePending, PodResizeInProgress),
// which the kubelet keeps in its status manager and appends after those,
// unless the pod is being terminated (GenerateTerminal), for which the
// kubelet clears them.
// PodReadyToStartContainers follows the sandboxes as the kubelet's
// runtimeutil.PodSandboxChanged does: true when the newest sandbox is ready,
// no other is ready, its network namespace mode (when reported) is the pod's,
// and, for a pod not on the host network, it does not report a network
// status with an empty IP (a sandbox that reports no network status at all
// counts as ready); a provider without sandboxes counts as ready while it
// reports a container instance and the pod is not terminal.
//
// # Other fields
//
// PodIP and PodIPs are the first valid address of each family in status.IPs,
// the node's family first (IPv4 when unknown); a host-network pod without IPs
// gets the node's addresses. QOSClass is the pod's QoS class. StartTime and
// the resource claim statuses are carried over from pod.Status (the node
// agent owns the first, other controllers the rest); ObservedGeneration is
// the pod's generation (never lower than the previous one).
//
// Generate learns the node's addresses from the HostIPs already in
// pod.Status, which it carries over: a pod that has none (a new pod) gets no
// HostIP, and a host-network pod no PodIP, until someone sets them. A
// Generator made with WithNodeAddresses knows the node's addresses, as the
// agent does, and sets HostIP, HostIPs and a host-network pod's PodIPs from
// them as the kubelet does.
//
// # The kubelet's rules or kuscia's
//
// kuscia's agent (secretflow/kuscia pkg/agent/framework/pod.go) ported an
// older kubelet's generateAPIPodStatus. Each function says which it follows:
//
//   - Generate and GenerateTerminal follow the kubelet 1.37, Started and
//     Ready included (set as its prober manager sets them for containers
//     without probes).
//   - A Generator made with WithProbeFieldsUnset follows kuscia for Started
//     and Ready: it leaves them unset for the provider's RefreshPodStatus,
//     as kuscia's convertToAPIContainerStatuses does; everything else is the
//     kubelet 1.37's.
//   - A Generator made with AsKusciaAgent follows kuscia wherever it
//     differs for the fields a provider influences: Started and Ready as
//     above; a reported container's restart count and last termination from
//     the runtime alone; an init container without instances still to run;
//     and kuscia's getPhase, which predates restartable init containers (a
//     running sidecar keeps the pod Pending, a sidecar stopped with a
//     non-zero code fails a Never pod's initialisation). The conformance
//     suite's model of kuscia's agent uses it; it judges a sidecar pod's
//     phase by the kubelet's rules (Generate), since no provider can change
//     kuscia's.
//   - UpdateReadiness follows kuscia: the Ready and ContainersReady
//     conditions computed after RefreshPodStatus, from the Ready the
//     provider set.
//
// # Where it departs from the kubelet
//
//   - The kubelet reads the newest instance as the first one the runtime
//     lists; KRI lists come in any order, so Generate sorts by CreatedAt.
//   - The pod's spec stands for the agent's resource allocation (the
//     kubelet's allocation manager): a container's AllocatedResources are
//     its spec's requests, and its Resources start from its spec's.
//   - A container whose spec has no resources gets no Resources; the
//     kubelet reports an empty ResourceRequirements.
//   - Not computed: the pod-level Resources and AllocatedResources
//     (pod-level resources resize), resource health, image-volume
//     digests, StopSignal (an alpha feature), the AllContainersRestarting
//     condition and the in-place restart of all containers, and the status
//     manager's normalisation (RFC 3339 timestamps, truncated messages).
//   - VolumeMounts always come from the spec; the kubelet copies them from
//     the previous status once a container exists. A recursive read-only
//     mode of IfPossible is reported Disabled, since Generate cannot ask the
//     runtime whether it supports it.
//   - Without ActiveContainerStatuses, a running app container tells that
//     the pod has initialized (any app container for a provider without
//     sandboxes); the kubelet reads only ActiveContainerStatuses.
//   - A provider without sandboxes is ready to start containers while it
//     reports instances; for the kubelet, no sandbox means not ready.
//   - A sandbox's network namespace mode is compared with the pod's only when
//     the provider reports one (the kubelet's runtime always does).
//   - Image falls back to the spec's image and ImageID to the instance's
//     ImageID when the provider leaves Image or ImageRef empty.
//   - LastTransitionTime of unchanged conditions, StartTime, HostIP(s) and
//     the previous ObservedGeneration are kept as the kubelet's status
//     manager keeps them, without its clock: new transitions and a first
//     StartTime are left for the caller to stamp, with StampTimes.
//   - The kubelet merges two previous statuses, its status manager's and
//     the API server's; Generate has one, pod.Status, and treats it as both.
//   - Without WithNodeAddresses, the node's addresses are those of the
//     previous HostIPs (the kubelet reads its node object).
//   - Counts beyond the int32 range saturate instead of wrapping around.
//
// Everything here is a pure function of its inputs and is safe for
// concurrent use, provided the inputs are not modified meanwhile.
package podstatus
