package conformance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri/podstatus"
	"github.com/kri-kit/testkit/workload"
)

// podSpecs are the specs of the PodLifecycleHandler contract. IDs are stable:
// never renumber, only append.
var podSpecs = []*specDef{
	{id: "KRI-POD-001", level: Must, kind: kindPod, groups: []string{"sync"}, pod: podSyncStartsContainers,
		note: "Formerly GetPodStatus also had to report the pod's UID, name and namespace; that is KRI-POD-084 (SHOULD) now. Now the status kuscia's agent publishes must show the pod Running with every app container Running.",
		text: "SyncPod of a new pod returns nil and starts every app container: GetPodStatus reports each running, and the agent publishes the pod Running with each container Running"},
	{id: "KRI-POD-002", level: Must, kind: kindPod, groups: []string{"status"}, pod: podStatusOfUnknownPod,
		note: "Formerly the status also had to carry the pod's UID, name and namespace; that is KRI-POD-084 (SHOULD) now.",
		text: "GetPodStatus of a pod the provider never saw returns a non-nil status without containers, sandboxes or IPs, and no error"},
	{id: "KRI-POD-003", level: Must, kind: kindPod, groups: []string{"sync"}, pod: podSyncIsIdempotent,
		note: "Since the suite models kuscia's agent, an unexpected SyncPod error fails only this spec and KRI-POD-001 (kuscia's syncPod returns it as the outcome of the sync, which its pod worker reports as failed: pod_workers.go managePodLoop, \"Error syncing pod\"); every other spec notes it and goes on.",
		text: "SyncPod is idempotent: syncing a running pod again returns nil and neither duplicates nor restarts its containers, which keep their IDs"},
	{id: "KRI-POD-004", level: Must, kind: kindPod, groups: []string{"status"}, pod: podContainerIDs,
		text: "container IDs are non-empty, unique across containers and pods, and stable while the container runs"},
	{id: "KRI-POD-005", level: Must, kind: kindPod, groups: []string{"status"}, pod: podGetPods,
		note: "Formerly GetPods(false) had to leave out pods without a running container and exited containers; then it listed every pod with a running container or a ready sandbox, exited containers allowed, and had to leave out killed pods (the kubelet's getPods, onlyRunningReady). Formerly GetPods(true) also had to list a killed pod with its containers even when GetPodStatus reported nothing of it; then a provider could forget a pod it kills. Since the suite models kuscia's agent, this MUST is what its housekeeping reads (pod.go HandlePodCleanups keys the pods of GetPods(false) by UID): the names, namespaces, containers and states of GetPods, GetPods(true) and what it reports of a killed pod are KRI-POD-086 (SHOULD).",
		text: "GetPods(false) lists, by UID, every pod with a running container, and soon stops listing a pod KillPod has stopped"},
	{id: "KRI-POD-006", level: Must, kind: kindPod, groups: []string{"status"}, pod: podExitedContainer,
		text: "a container that exits is reported exited with its exit code, with StartedAt and FinishedAt set and FinishedAt not before CreatedAt"},
	{id: "KRI-POD-007", level: Must, kind: kindPod, groups: []string{"restart"}, caps: []Capability{CapRestartPolicies}, pod: podRestartNever,
		note: "Since the suite models kuscia's agent, which stops syncing a pod once its phase is terminal, the pod keeps a third container running, so that SyncPod is still called after the two others exited.",
		text: "with RestartPolicy Never, an exited container is not restarted, whatever its exit code"},
	{id: "KRI-POD-008", level: Must, kind: kindPod, groups: []string{"restart"}, caps: []Capability{CapRestartPolicies}, pod: podRestartOnFailure,
		note: "Formerly both instances had to be in one GetPodStatus; now restarts are seen across polls (a new container ID or a higher RestartCount), as a remote backend shows one run at a time.",
		text: "with RestartPolicy OnFailure, a container that exits non-zero is restarted as a new instance and one that exits 0 is not"},
	{id: "KRI-POD-009", level: Must, kind: kindPod, groups: []string{"restart"}, caps: []Capability{CapRestartPolicies}, pod: podRestartAlways,
		note: "Formerly both instances had to be in one GetPodStatus; now restarts are seen across polls.",
		text: "with RestartPolicy Always, a container that exits 0 is restarted as a new instance"},
	{id: "KRI-POD-010", level: Must, kind: kindPod, groups: []string{"init"}, caps: []Capability{CapInitContainers}, pod: podInitOrder,
		text: "init containers run one at a time in spec order, each to successful completion before the next and before any app container"},
	{id: "KRI-POD-011", level: Must, kind: kindPod, groups: []string{"init"}, caps: []Capability{CapInitContainers}, pod: podInitFailureBlocks,
		text: "a failed init container (RestartPolicy Never) blocks the later init containers and every app container"},
	{id: "KRI-POD-012", level: Must, kind: kindPod, groups: []string{"reason-cache"}, caps: []Capability{CapStartFailures}, pod: podStartFailureRecorded,
		note: "Since KRI-POD-045 was added, SyncPod's error must name the container. Since the suite models kuscia's agent, the MUST is what the agent publishes: the container Waiting with the failure's reason, which the ReasonCache or RefreshPodStatus may give (kuscia's K8sProvider writes no ReasonCache entry and returns nil, and its RefreshPodStatus copies the backend's Waiting reason); SyncPod's error and the ReasonCache entry are KRI-POD-085 (SHOULD).",
		text: "a container whose start fails is published Waiting with the failure's reason (from the ReasonCache SyncPod writes, or from RefreshPodStatus), not as still being created"},
	{id: "KRI-POD-086", level: Should, kind: kindPod, groups: []string{"status"}, pod: podGetPodsDetails,
		note: "Split from KRI-POD-005 as a SHOULD: kuscia's agent never calls GetPods(true), keys the pods of GetPods(false) by UID and hands an orphan's running pod back to KillPod; in KRI the PLEG that reads container states lives inside the provider (kuscia's CRIProvider).",
		text: "GetPods(false) lists each running pod under its name and namespace with its running containers as running; GetPods(true) also lists exited containers; of a killed pod, GetPods(true) and GetPodStatus report the same containers (none once the provider forgets it), each exited with a non-zero code"},
	{id: "KRI-POD-085", level: Should, kind: kindPod, groups: []string{"reason-cache"}, caps: []Capability{CapStartFailures}, pod: podStartFailureReturned,
		note: "Split from KRI-POD-012 and KRI-POD-052 as a SHOULD: kuscia's agent only logs SyncPod's error (pod_workers.go managePodLoop; its ported completeWork queues a retry in a work queue nothing reads), and reads the ReasonCache only to publish a Waiting reason, which RefreshPodStatus may give instead.",
		text: "a failed container start makes SyncPod return an error naming that container and no other that started, and is recorded in the ReasonCache for that container only, with error and message"},
	{id: "KRI-POD-013", level: Must, kind: kindPod, groups: []string{"reason-cache"}, caps: []Capability{CapStartFailures}, pod: podStartSuccessClears,
		note: "Formerly the spec fixed the pod by changing the container's command under the same UID, which the API server forbids; now only the image changes (from one that cannot be pulled). Formerly the entry had to be gone at the first GetPodStatus that showed the container running; now it may be cleared by the next SyncPod, which is handed that status: a backend that starts containers asynchronously learns of the success one sync later, and the kubelet reads an entry only for a container that is not running (kubelet_pods.go convertToAPIContainerStatuses).",
		text: "a later successful start of the container clears its ReasonCache entry, at the latest in the SyncPod after the first GetPodStatus that shows the container running"},
	{id: "KRI-POD-014", level: Must, kind: kindPod, groups: []string{"kill"}, pod: podKillStopsAll,
		note: "Since the suite models kuscia's agent, this spec alone judges a KillPod that returns while containers still run (syncTerminatingPod's guard); every other spec retries the termination as the agent does. It also judges the exit codes of the killed containers still reported, from which the agent publishes the final status.",
		text: "after KillPod returns nil, GetPodStatus reports no running container of the pod, and each killed container it still reports exited with a non-zero code"},
	{id: "KRI-POD-015", level: Must, kind: kindPod, groups: []string{"kill"}, pod: podKillUnknownOrStopped,
		text: "KillPod of an unknown pod, of a pod whose containers have all exited and of an already killed pod returns nil"},
	{id: "KRI-POD-016", level: Must, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillGraceOne,
		note: "Formerly the override was 0 and KillPod had to return within the suite's grace period; node agents pass at least 1 and the kubelet's runtime gives at least 2 seconds, so now the override is 1 and KillPod must not wait for the pod's much longer grace period.",
		text: "KillPod with gracePeriodOverride 1 (what an agent passes for orphans) stops a SIGTERM-ignoring container without waiting for the pod's much longer grace period"},
	{id: "KRI-POD-017", level: Must, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillGraceOverride,
		text: "KillPod with gracePeriodOverride G does not stop a SIGTERM-ignoring container before G, and does not wait for the pod's longer grace period"},
	{id: "KRI-POD-018", level: Should, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillPodGrace,
		note: "Lowered to SHOULD: node agents always pass an override (pod_workers.go calculateEffectiveGracePeriod).",
		text: "KillPod without override gives a SIGTERM-ignoring container the pod's TerminationGracePeriodSeconds, not less"},
	{id: "KRI-POD-019", level: Should, kind: kindPod, groups: []string{"delete"}, pod: podDeleteUnknown,
		note: "Lowered to SHOULD: kuscia's agent only logs DeletePod's error (pods_controller.go syncTerminatedPod) and finishes the pod anyway.",
		text: "DeletePod of a pod the provider does not know returns nil"},
	{id: "KRI-POD-020", level: Must, kind: kindPod, groups: []string{"delete"}, pod: podDeleteForgets,
		note: "Formerly a pod, killed or still running, had to be forgotten as soon as DeletePod returned; now the agent's order (KillPod, then DeletePod) is used, nothing of the pod may run afterwards and it must be forgotten within the state timeout (dead containers may be collected later).",
		text: "after KillPod and DeletePod no container of the pod runs again, and the pod is soon no longer listed by GetPods(true) and reported unknown by GetPodStatus"},
	{id: "KRI-POD-021", alone: true, level: Must, kind: kindPod, groups: []string{"cleanup"}, pod: podCleanupKeepsDesired,
		text: "CleanupPods leaves every desired pod running, its containers keeping their IDs"},
	{id: "KRI-POD-022", alone: true, level: Must, kind: kindPod, groups: []string{"cleanup"}, pod: podCleanupKeepsPossiblyRunning,
		text: "CleanupPods leaves pods named only by runningPods or possiblyRunningPods untouched"},
	{id: "KRI-POD-023", alone: true, level: Should, kind: kindPod, groups: []string{"cleanup"}, caps: []Capability{CapOrphanCleanup}, pod: podCleanupDropsOrphans,
		note: "Lowered to SHOULD: kuscia's housekeeping kills the running orphans GetPods(false) lists itself, with KillPod (pod.go HandlePodCleanups; KRI-POD-005 and 056), before it calls CleanupPods.",
		text: "CleanupPods stops and forgets a pod named by none of its arguments (an orphan)"},
	{id: "KRI-POD-024", level: Must, kind: kindPod, groups: []string{"refresh"}, pod: podRefreshUnknown,
		note: "Since the contract was grounded in the node agent, Ready and Started may change: the kubelet's prober sets them on every status.",
		text: "RefreshPodStatus leaves the status of a pod the provider does not know unchanged, but for its containers' Ready and Started"},
	{id: "KRI-POD-025", level: Must, kind: kindPod, groups: []string{"refresh"}, pod: podRefreshContainers,
		text: "RefreshPodStatus names only containers of the pod's spec: Running for a running one, Terminated with its exit code for an exited one"},
	{id: "KRI-POD-026", level: Must, kind: kindPod, groups: []string{"refresh"}, caps: []Capability{CapStartFailures}, pod: podRefreshWaiting,
		text: "RefreshPodStatus reports a container whose start failed as Waiting with a reason"},
	{id: "KRI-POD-027", alone: true, level: Must, kind: kindPod, groups: []string{"context"}, pod: podCancelledContext,
		note: "Formerly the error had to wrap the context's, then also a gRPC status code Canceled or DeadlineExceeded was accepted; now any error (or nil) is: the kubelet's runtime manager over containerd, wrapped as kuscia's CRIProvider wraps it (return result.Error()), returns a string (failed to \"CreatePodSandbox\" ... rpc error: code = Canceled) in which neither survives, and the agent only needs the call to return (kuscia pods_controller.go syncPod hands the error to its pod worker, which retries).",
		text: "every method called with a cancelled context returns within the call timeout, with an error or nil"},
	{id: "KRI-POD-028", level: Must, kind: kindPod, groups: []string{"concurrency"}, pod: podConcurrentPods,
		note: "Each lifecycle now also refreshes its pod and, once it runs, calls a CleanupPods naming every pod, which must leave it running. Formerly each pod was synced by two workers at once, which no agent does (one worker per pod); now one worker syncs it while GetPods and RefreshPodStatus run alongside.",
		text: "N pods synced (one worker each, with GetPods and RefreshPodStatus alongside), queried, refreshed, cleaned up (naming every pod), killed and deleted concurrently all succeed, without duplicate containers and without the cleanup stopping any"},
	{id: "KRI-POD-029", level: Should, kind: kindPod, groups: []string{"lifecycle"}, pod: podStartReturnsOnCancel,
		note: "A SHOULD: kuscia's agent cancels Start's context when it shuts down, then calls Stop (pods_controller.go Run), and exits; a Start that outlives it breaks nothing the agent does.",
		text: "Start blocks until its context is cancelled, then returns"},
	{id: "KRI-POD-030", level: Should, kind: kindPod, groups: []string{"lifecycle"}, pod: podStopEndsStart,
		note: "Lowered to SHOULD: kuscia's agent cancels Start's context before it calls Stop (pods_controller.go Run: syncLoop returns once the context is done, then provider.Stop()), so it never needs Stop to end Start.",
		text: "Stop ends a running Start and returns once Start has returned"},
	{id: "KRI-POD-031", level: Should, kind: kindPod, groups: []string{"lifecycle"}, pod: podSecondStop,
		text: "a second Stop is a harmless no-op"},
	{id: "KRI-POD-032", level: Should, kind: kindPod, groups: []string{"lifecycle"}, noStart: true, pod: podStopWithoutStart,
		note: "Lowered to SHOULD: the agent calls Stop once, after Start.",
		text: "Stop of a provider whose Start was never called returns at once"},
	{id: "KRI-POD-033", level: Must, kind: kindPod, groups: []string{"lifecycle"}, noStart: true, pod: podCallsBeforeStart,
		text: "calls made before Start, and while Start is starting, work"},
	{id: "KRI-POD-034", level: Should, kind: kindPod, groups: []string{"validation"}, pod: podSyncRejectsBadInput,
		note: "Until KRI-POD-036 was added this spec also required rejecting duplicate container names; that part is KRI-POD-036 (SHOULD) now. Lowered to SHOULD: agents pass API pods (with UIDs) and their own ReasonCache.",
		text: "SyncPod rejects a nil pod, a pod without UID and a nil ReasonCache with an error, and changes nothing"},
	{id: "KRI-POD-035", level: Must, kind: kindPod, groups: []string{"ownership"}, pod: podOwnership,
		note: "The requirement's words were narrowed to what the spec checks (SyncPod's inputs, GetPodStatus's and GetPods' answers); the other methods' inputs are KRI-POD-045's.",
		text: "SyncPod does not mutate the pod and status handed in, and mutating what GetPodStatus and GetPods return does not change their later answers"},
	{id: "KRI-POD-036", level: Should, kind: kindPod, groups: []string{"validation"}, pod: podSyncRejectsDuplicateNames,
		note: "Split from KRI-POD-034 and lowered to SHOULD: the API server's validation rejects such pods, and real runtimes do not repeat it.",
		text: "SyncPod rejects a pod with two containers of the same name with an error and changes nothing (the API server validates this too)"},
	{id: "KRI-POD-037", level: Must, kind: kindPod, groups: []string{"restart", "status"}, caps: []Capability{CapRestartPolicies}, pod: podRestartCount,
		note: "Formerly RefreshPodStatus was called with an empty status and had to fill it; now it is called with the status the agent built (package podstatus) and must keep the counts.",
		text: "RestartCount is 0 for the first instance of a container, grows with every restart and never decreases across calls of GetPodStatus, and RefreshPodStatus reports at least the newest instance's"},
	{id: "KRI-POD-038", level: Must, kind: kindPod, groups: []string{"restart", "status"}, caps: []Capability{CapRestartPolicies}, pod: podRestartTimestamps,
		note: "Met by providers that mirror pods into a backend cluster too: the API keeps whole seconds and no creation time, so a restart within the second the previous run finished in ties with it. Such a provider converts the backend's v1.PodStatus with podstatus.RuntimeStatus, which orders a container's runs by their restart counts. Since the suite models kuscia's agent, CreatedAt is judged only between instances one GetPodStatus reports together, which the agent sorts by it (pod.go convertToAPIContainerStatuses): a provider that reports one instance per container, as kuscia's K8sProvider does, may leave it unset.",
		text: "an exited instance has StartedAt and FinishedAt set, neither before its CreatedAt; of the instances of a container one GetPodStatus reports together, each has CreatedAt set and one that replaces another is created after it and not before it finished"},
	{id: "KRI-POD-039", level: Should, kind: kindPod, groups: []string{"status"}, pod: podExitReason,
		text: "an exited container carries a Reason in GetPodStatus and in the Terminated state RefreshPodStatus reports"},
	{id: "KRI-POD-040", level: Should, kind: kindPod, groups: []string{"status"}, pod: podInstanceImages,
		note: "Lowered to SHOULD, and a normalised name (docker.io/library/busybox:1.36 for busybox:1.36) now matches: the agent reports the runtime's string and compares it with nothing.",
		text: "every container instance, running or exited, reports the image of its container spec (or its normalised form), in GetPodStatus and in RefreshPodStatus"},
	{id: "KRI-POD-041", level: Must, kind: kindPod, groups: []string{"kill", "status"}, pod: podSandboxes,
		note: "Formerly a running pod needed exactly one ready sandbox; a remote provider has none, and the agent needs only none after KillPod (isPodStatusCacheTerminal).",
		text: "after KillPod returns nil, GetPodStatus reports no ready sandbox"},
	{id: "KRI-POD-042", level: Must, kind: kindPod, groups: []string{"refresh", "restart"}, caps: []Capability{CapRestartPolicies}, pod: podRefreshAfterRestart,
		note: "Formerly RefreshPodStatus filled an empty status; now it refines the agent's, and a Waiting newest instance (crash-loop back-off) with the newest exited run as LastTerminationState is right. A runtime whose garbage collector removed the previous run before the status was read (kuberuntime_gc.go, while the next run is still being created) reports no last termination, as the kubelet would not: the spec then waits for the next run, at most twice.",
		text: "after a restart, RefreshPodStatus keeps the newest run's ContainerID and the run before it as LastTerminationState, with its exit code"},
	{id: "KRI-POD-043", level: Should, kind: kindPod, groups: []string{"status"}, pod: podActiveStatuses,
		note: "Lowered to SHOULD: only the kubelet's runtime manager reads ActiveContainerStatuses (computePodActions), no node agent does.",
		text: "ActiveContainerStatuses is empty or holds every running instance, each with the ID, name and state it has in ContainerStatuses"},
	{id: "KRI-POD-044", level: Should, kind: kindPod, groups: []string{"status"}, pod: podGetPodsStates,
		note: "Lowered to SHOULD: kuscia's agent never calls GetPods(true); in KRI the PLEG that compares container states lives inside the provider (kuscia's CRIProvider). It now also compares the replaced instances of a restarted container, which KRI-POD-053 checked before.",
		text: "GetPods(true) reports every container instance with the name and state GetPodStatus reports for its ID"},
	{id: "KRI-POD-045", alone: true, level: Must, kind: kindPod, groups: []string{"ownership"}, pod: podInputsOwned,
		text: "GetPodStatus, RefreshPodStatus, CleanupPods, KillPod and DeletePod do not mutate what they are handed, and SyncPod does not keep the pod: changing it afterwards changes no answer"},
	{id: "KRI-POD-046", level: Must, kind: kindPod, groups: []string{"sync"}, pod: podSyncNilStatus,
		text: "SyncPod of a new pod with a nil podStatus starts it, as with an empty one"},
	{id: "KRI-POD-047", level: Must, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillSendsSIGTERM,
		note: "Formerly the container ran as PID 1 of its own PID namespace, where it exits on SIGTERM only once its shell has installed its trap; over a real containerd on a loaded machine SIGTERM came first now and then and the kill took the whole grace period. Now the pod shares its PID namespace (spec.shareProcessNamespace), so the container exits on SIGTERM from its first instant, trap or not, and the kill's time depends only on whether SIGTERM was sent first.",
		text: "KillPod sends SIGTERM first: a container that exits on SIGTERM (in a pod that shares its PID namespace) stops without waiting for a long grace period"},
	{id: "KRI-POD-048", level: Should, kind: kindPod, groups: []string{"kill"}, caps: []Capability{CapGracePeriod}, pod: podKillDeletionGrace,
		note: "Formerly a MUST about a pod without TerminationGracePeriodSeconds (30 s); agents get defaulted pods and always pass an override. Now a SHOULD: without override, DeletionGracePeriodSeconds outranks TerminationGracePeriodSeconds, as in the kubelet's runtime (setTerminationGracePeriod).",
		text: "KillPod without override gives a SIGTERM-ignoring container the pod's DeletionGracePeriodSeconds, not its longer TerminationGracePeriodSeconds"},
	{id: "KRI-POD-049", level: Should, kind: kindPod, groups: []string{"kill"}, pod: podKillNilPod,
		note: "Lowered to SHOULD: agents pass runningPod.ToAPIPod() when they know only the running pod.",
		text: "KillPod with a nil pod, given only the running pod, stops the pod's containers"},
	{id: "KRI-POD-050", level: Must, kind: kindPod, groups: []string{"refresh", "init"}, caps: []Capability{CapInitContainers}, pod: podRefreshInit,
		text: "RefreshPodStatus reports init containers in InitContainerStatuses, not among the app containers, a completed one Terminated with exit code 0"},
}

func podSyncStartsContainers(e *podEnv) {
	e.strictSync = true
	e.step("syncing a new pod of two containers until both run")
	pod := e.newPod("web", v1.RestartPolicyAlways,
		named("app", e.w().RunsUntilKilled()), named("sidecar", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	e.step("syncing on until the agent publishes the pod Running")
	e.syncUntilPublished(pod, "phase Running, every app container Running", func(g gomega.Gomega, s v1.PodStatus) {
		g.Expect(s.Phase).To(gomega.Equal(v1.PodRunning), "kuscia's agent would publish phase %s for a pod whose containers all run: %s", s.Phase, describeAPIStatus(s))
		for _, c := range pod.Spec.Containers {
			cs := apiStatusOf(s.ContainerStatuses, c.Name)
			g.Expect(cs != nil && cs.State.Running != nil).To(gomega.BeTrue(), "kuscia's agent would publish container %q as not running: %s", c.Name, describeAPIStatus(s))
		}
	})
}

func podStatusOfUnknownPod(e *podEnv) {
	e.step("asking GetPodStatus about a pod the provider never saw")
	pod := e.newPod("ghost", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	st := e.status(pod) // checks non-nil
	if len(st.ContainerStatuses) > 0 || len(st.ActiveContainerStatuses) > 0 || len(st.SandboxStatuses) > 0 || len(st.IPs) > 0 {
		e.failf("GetPodStatus of a pod the provider never saw reports containers %s, %d sandboxes, IPs %v: kuscia's agent would publish them for a pod nothing was started for, and hand them to its first SyncPod",
			describeStatus(st), len(st.SandboxStatuses), st.IPs)
	}
}

func podSyncIsIdempotent(e *podEnv) {
	e.strictSync = true
	e.step("running a pod of two containers, then syncing it again and again")
	pod := e.newPod("steady", v1.RestartPolicyAlways,
		named("app", e.w().RunsUntilKilled()), named("sidecar", e.w().RunsUntilKilled()))
	st := e.syncUntilRunning(pod)
	ids := map[string]pkgcontainer.ContainerID{}
	for _, c := range pod.Spec.Containers {
		ids[c.Name] = runningOf(st, c.Name).ID
	}
	e.holdSync(pod, false, "one running instance per container, same ID", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		for name, id := range ids {
			inst := instancesOf(st, name)
			g.Expect(inst).To(gomega.HaveLen(1), "container %q has %d instances after SyncPod of the running pod: %s", name, len(inst), describeStatus(st))
			g.Expect(inst[0].ID).To(gomega.Equal(id), "container %q changed its ID from %s: %s", name, id.ID, describeStatus(st))
			g.Expect(inst[0].State).To(gomega.Equal(pkgcontainer.ContainerStateRunning), "container %q stopped running: %s", name, describeStatus(st))
		}
	})
}

func podContainerIDs(e *podEnv) {
	e.step("running two pods of two containers each and comparing their container IDs")
	pods := []*v1.Pod{
		e.newPod("ids-a", v1.RestartPolicyAlways, named("one", e.w().RunsUntilKilled()), named("two", e.w().RunsUntilKilled())),
		e.newPod("ids-b", v1.RestartPolicyAlways, named("one", e.w().RunsUntilKilled()), named("two", e.w().RunsUntilKilled())),
	}
	seen := map[string]string{} // container ID -> pod/container
	want := map[types.UID]map[string]pkgcontainer.ContainerID{}
	for _, pod := range pods {
		st := e.syncUntilRunning(pod)
		want[pod.UID] = map[string]pkgcontainer.ContainerID{}
		for _, c := range st.ContainerStatuses {
			where := podRef(pod) + "/" + c.Name
			if c.ID.ID == "" {
				e.failf("container %s has an empty ID: %s", where, describeStatus(st))
			}
			if other, dup := seen[c.ID.String()]; dup {
				e.failf("containers %s and %s share the ID %s", other, where, c.ID.String())
			}
			seen[c.ID.String()] = where
			if c.State == pkgcontainer.ContainerStateRunning {
				want[pod.UID][c.Name] = c.ID
			}
		}
	}
	e.consistently("container IDs stay the same while the containers run", func(g gomega.Gomega) {
		for _, pod := range pods {
			st := e.status(pod)
			for name, id := range want[pod.UID] {
				r := runningOf(st, name)
				g.Expect(r).NotTo(gomega.BeNil(), "container %s/%s stopped running: %s", podRef(pod), name, describeStatus(st))
				g.Expect(r.ID).To(gomega.Equal(id), "container %s/%s changed its ID while running: %s", podRef(pod), name, describeStatus(st))
			}
		}
	})
}

// getPodsSetup runs pod mixed (one container running, one exited) and kills
// pod killed, as KRI-POD-005 and KRI-POD-086 need them.
func (e *podEnv) getPodsSetup() (mixed, killed *v1.Pod, mixedSt *pkgcontainer.PodStatus, killedIDs map[pkgcontainer.ContainerID]string) {
	e.step("running pod mixed (one container running, one exited) and killing pod killed")
	mixed = e.newPod("mixed", v1.RestartPolicyNever, named("run", e.w().RunsUntilKilled()), named("done", e.w().ExitsWithCode(0)))
	killed = e.newPod("killed", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	mixedSt = e.syncUntil(mixed, "run running and done exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "run")).NotTo(gomega.BeNil(), "run is not running: %s", describeStatus(st))
		g.Expect(exitedOf(st, "done")).NotTo(gomega.BeEmpty(), "done has not exited: %s", describeStatus(st))
	})
	e.syncUntilRunning(killed)
	killedIDs = e.killedIDs(killed)
	e.killAsAgent(killed)
	return mixed, killed, mixedSt, killedIDs
}

// listedByUID returns the pod of list with pod's UID, or nil.
func listedByUID(list []*pkgcontainer.Pod, pod *v1.Pod) *pkgcontainer.Pod {
	for _, p := range list {
		if p != nil && p.ID == pod.UID {
			return p
		}
	}
	return nil
}

// containerIDsOf renders the containers of p by ID.
func containerIDsOf(p *pkgcontainer.Pod) map[string]string {
	out := map[string]string{}
	for _, c := range p.Containers {
		out[c.ID.String()] = c.Name + "/" + string(c.State)
	}
	return out
}

// podGetPods checks what kuscia's housekeeping reads of GetPods(false)
// (pod.go HandlePodCleanups): the UIDs of the pods that run something. A
// pod it does not list is never found as an orphan; a stopped pod it lists
// is killed again at every housekeeping once the API server has forgotten
// it.
func podGetPods(e *podEnv) {
	mixed, killed, _, _ := e.getPodsSetup()
	e.step("listing the pods with GetPods(false), as kuscia's housekeeping does")
	e.eventually(fmt.Sprintf("pod %s, killed, no longer listed by GetPods(false)", podRef(killed)), func(g gomega.Gomega) {
		if p := listedByUID(e.getPods(false), killed); p != nil {
			g.Expect(p).To(gomega.BeNil(), "GetPods(false) lists pod %s (UID %s) after KillPod stopped it (containers %v): once the pod is gone from the API server, kuscia's housekeeping (pod.go HandlePodCleanups) would take it for an orphan and kill it again at every pass", podRef(killed), killed.UID, containerIDsOf(p))
		}
	})
	running := e.getPods(false)
	if listedByUID(running, mixed) == nil {
		e.failf("GetPods(false) does not list pod %s (UID %s), whose container run is running: kuscia's housekeeping (pod.go HandlePodCleanups) keys running pods by UID and would never find it as an orphan; listed: %s", podRef(mixed), mixed.UID, describePods(running))
	}
}

// podGetPodsDetails checks what no agent path reads of GetPods: the
// names, namespaces, container lists and states (kuscia's housekeeping
// keys running pods by UID and hands an orphan's running pod back to
// KillPod; the PLEG that reads container states lives inside a CRI
// provider), and that GetPods(true) and GetPodStatus agree on a killed pod.
func podGetPodsDetails(e *podEnv) {
	mixed, killed, mixedSt, killedIDs := e.getPodsSetup()
	listed := func(list []*pkgcontainer.Pod, pod *v1.Pod, call string) *pkgcontainer.Pod {
		p := listedByUID(list, pod)
		if p == nil {
			e.failf("%s does not list pod %s (UID %s): %s", call, podRef(pod), pod.UID, describePods(list))
		}
		if p.Name != pod.Name || p.Namespace != pod.Namespace {
			e.failf("%s lists UID %s as %s/%s, want %s: kuscia's housekeeping would hand an orphan with this name to KillPod (runningPod.ToAPIPod())", call, pod.UID, p.Namespace, p.Name, podRef(pod))
		}
		return p
	}
	e.step("listing the pods with GetPods(false)")
	p := listed(e.getPods(false), mixed, "GetPods(false)")
	runID := runningOf(mixedSt, "run").ID
	got := containerIDsOf(p)
	if got[runID.String()] != "run/"+string(pkgcontainer.ContainerStateRunning) {
		e.failf("GetPods(false) lists pod %s with containers %v, want the running container run (%s) among them, running", podRef(mixed), got, runID.String())
	}
	for _, c := range p.Containers {
		if c.ID != runID && c.State == pkgcontainer.ContainerStateRunning {
			e.failf("GetPods(false) lists container %s (%s) of pod %s as running; GetPodStatus reports only %s running: %s",
				c.Name, c.ID.String(), podRef(mixed), runID.String(), describeStatus(mixedSt))
		}
	}
	e.step("listing every pod and container with GetPods(true)")
	p = listed(e.getPods(true), mixed, "GetPods(true)")
	got = containerIDsOf(p)
	for _, s := range mixedSt.ContainerStatuses {
		if _, ok := got[s.ID.String()]; !ok {
			e.failf("GetPods(true) lists pod %s with containers %v, missing %s (%s, %s)", podRef(mixed), got, s.Name, s.ID.String(), s.State)
		}
	}
	e.step("comparing what GetPods(true) and GetPodStatus still report of pod killed (a provider may forget it)")
	e.expectKilledViews(killed, killedIDs, "after KillPod of pod "+podRef(killed)+" returned nil")
}

// describePods renders a GetPods answer for failure messages.
func describePods(list []*pkgcontainer.Pod) string {
	if len(list) == 0 {
		return "no pods"
	}
	parts := make([]string, 0, len(list))
	for _, p := range list {
		if p == nil {
			parts = append(parts, "<nil>")
			continue
		}
		parts = append(parts, canonicalPod(p))
	}
	return strings.Join(parts, "; ")
}

func podExitedContainer(e *podEnv) {
	e.step("syncing a pod whose container exits 3 under RestartPolicy Never")
	pod := e.newPod("exits", v1.RestartPolicyNever, named("three", e.w().ExitsWithCode(3)))
	st := e.syncUntil(pod, "container three exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(exitedOf(st, "three")).NotTo(gomega.BeEmpty(), "three has not exited: %s", describeStatus(st))
	})
	c := exitedOf(st, "three")[0]
	switch {
	case c.ExitCode != 3:
		e.failf("container three exited with code %d, want 3", c.ExitCode)
	case c.StartedAt.IsZero() || c.FinishedAt.IsZero():
		e.failf("exited container three has StartedAt %v and FinishedAt %v, want both set", c.StartedAt, c.FinishedAt)
	case c.FinishedAt.Before(c.CreatedAt):
		// Not StartedAt: three exits at once, and a CRI runtime may record
		// its StartedAt after the exit (kri: GetPodStatus).
		e.failf("exited container three has FinishedAt %v before CreatedAt %v", c.FinishedAt, c.CreatedAt)
	}
}

// bothExited waits until containers ok and bad have exited.
func bothExited(g gomega.Gomega, st *pkgcontainer.PodStatus) {
	for _, name := range []string{"ok", "bad"} {
		g.Expect(exitedOf(st, name)).NotTo(gomega.BeEmpty(), "%s has not exited: %s", name, describeStatus(st))
	}
}

func podRestartNever(e *podEnv) {
	e.step("syncing a pod whose containers exit 0 and 3 under RestartPolicy Never while a third runs on, then syncing on")
	// run keeps the pod Running: kuscia's agent stops syncing a pod whose
	// phase is terminal, so only a pod still running shows what SyncPod
	// does with the exited containers.
	pod := e.newPod("never", v1.RestartPolicyNever, named("ok", e.w().ExitsWithCode(0)), named("bad", e.w().ExitsWithCode(3)), named("run", e.w().RunsUntilKilled()))
	st := e.syncUntil(pod, "ok and bad exited", bothExited)
	ids := map[string]pkgcontainer.ContainerID{}
	for _, name := range []string{"ok", "bad"} {
		ids[name] = exitedOf(st, name)[0].ID
	}
	e.holdSync(pod, false, "no container restarted", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		for _, name := range []string{"ok", "bad"} {
			inst := instancesOf(st, name)
			g.Expect(inst).To(gomega.HaveLen(1), "container %s was restarted under RestartPolicy Never: %s", name, describeStatus(st))
			g.Expect(inst[0].ID).To(gomega.Equal(ids[name]), "container %s was restarted under RestartPolicy Never (was %s): %s", name, ids[name].ID, describeStatus(st))
		}
	})
}

func podRestartOnFailure(e *podEnv) {
	pod := e.newPod("onfailure", v1.RestartPolicyOnFailure, named("ok", e.w().ExitsWithCode(0)), named("bad", e.w().ExitsWithCode(3)))
	e.step("syncing a pod whose container ok exits 0 and bad exits 3, under RestartPolicy OnFailure")
	ok, bad := newHistory("ok"), newHistory("bad")
	e.syncUntil(pod, "bad exited 3 and restarted, ok exited 0", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		ok.observe(st)
		bad.observe(st)
		g.Expect(ok.exitedWith(0)).To(gomega.BeTrue(), "ok has not been seen exited 0: %s%s", ok, ok.exitHidden())
		g.Expect(bad.exitedWith(3)).To(gomega.BeTrue(), "bad has not been seen exited 3: %s%s", bad, bad.exitHidden())
		g.Expect(bad.restarts()).To(gomega.BeNumerically(">=", 1), "container bad, which exited 3, was not restarted: %s", bad)
	})
	e.step("syncing on: ok, which exited 0, must not be restarted")
	e.holdSync(pod, false, "ok not restarted", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		ok.observe(st)
		g.Expect(ok.restarts()).To(gomega.BeZero(), "container ok exited 0 and was restarted under RestartPolicy OnFailure: %s", ok)
	})
}

func podRestartAlways(e *podEnv) {
	pod := e.newPod("always", v1.RestartPolicyAlways, named("ok", e.w().ExitsWithCode(0)))
	e.step("syncing a pod whose container ok exits 0, under RestartPolicy Always")
	ok := newHistory("ok")
	e.syncUntil(pod, "ok exited 0 and restarted", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		ok.observe(st)
		g.Expect(ok.exitedWith(0)).To(gomega.BeTrue(), "ok has not been seen exited 0: %s%s", ok, ok.exitHidden())
		g.Expect(ok.restarts()).To(gomega.BeNumerically(">=", 1), "container ok, which exited 0, was not restarted: %s", ok)
	})
}

func podInitOrder(e *podEnv) {
	e.step("syncing a pod with two short init containers, checking the order in every round")
	pod := e.newPod("init", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	setInitContainers(pod, named("first", e.w().RunsFor(e.st.t.ShortRun)),
		named("second", e.w().RunsFor(e.st.t.ShortRun)))
	// Every round checks the order so far; a violation fails at once.
	check := func(st *pkgcontainer.PodStatus) {
		order := []string{"first", "second", "app"}
		for i := 1; i < len(order); i++ {
			later := instancesOf(st, order[i])
			if len(later) == 0 {
				continue
			}
			for _, prev := range order[:i] {
				done := succeededOf(st, prev)
				if done == nil {
					e.failf("container %s was created before init container %s completed successfully: %s%s", order[i], prev, describeStatus(st), initHidden(pod, st))
				}
				for _, l := range later {
					if !l.StartedAt.IsZero() && l.StartedAt.Before(done.FinishedAt) {
						e.failf("container %s started at %v, before init container %s finished at %v",
							order[i], l.StartedAt.Format(time.RFC3339Nano), prev, done.FinishedAt.Format(time.RFC3339Nano))
					}
				}
			}
		}
	}
	e.syncUntil(pod, "init containers completed and app running", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		check(st)
		g.Expect(runningOf(st, "app")).NotTo(gomega.BeNil(), "app is not running: %s", describeStatus(st))
	})
}

func podInitFailureBlocks(e *podEnv) {
	e.step("syncing a pod whose first init container exits 1 under RestartPolicy Never")
	pod := e.newPod("initfail", v1.RestartPolicyNever, named("app", e.w().RunsUntilKilled()))
	setInitContainers(pod, named("first", e.w().ExitsWithCode(1)),
		named("second", e.w().ExitsWithCode(0)))
	blocked := func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		for _, name := range []string{"second", "app"} {
			g.Expect(instancesOf(st, name)).To(gomega.BeEmpty(), "container %s was created although init container first failed: %s%s", name, describeStatus(st), initHidden(pod, st))
		}
	}
	e.syncUntilOpt(pod, true, "init container first exited 1", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		blocked(g, st)
		var codes []int
		for _, c := range exitedOf(st, "first") {
			codes = append(codes, c.ExitCode)
		}
		g.Expect(codes).To(gomega.ContainElement(1), "first has not exited 1: %s", describeStatus(st))
	})
	e.holdSync(pod, true, "later containers blocked", blocked)
}

// startFailureOf says why the start of container app of pod fails.
func startFailureOf(pod *v1.Pod) string {
	c := pod.Spec.Containers[0]
	if workload.ImageMissing(c.Image) {
		return "its image " + c.Image + " cannot be pulled"
	}
	return "its executable is missing"
}

// failStart syncs pod, whose container app cannot start, as kuscia's agent
// does until the agent publishes app Waiting with the reason of the
// failure: from the ReasonCache SyncPod wrote (pod.go
// convertToAPIContainerStatuses) or from RefreshPodStatus, which may
// replace the statuses with a backend's. Either way the pod's owner sees
// why app does not run; a default reason (ContainerCreating,
// PodInitializing) or none hides it. SyncPod's error and the ReasonCache
// entry are KRI-POD-085's.
func (e *podEnv) failStart(pod *v1.Pod) {
	e.eventually(fmt.Sprintf("pod %s: the agent publishes the failed start of app", podRef(pod)), func(g gomega.Gomega) {
		st, _ := e.agentSync(pod)
		g.Expect(runningOf(st, "app")).To(gomega.BeNil(), "container app runs although its start must fail (%s): %s", startFailureOf(pod), describeStatus(st))
		s := e.publish(pod, st)
		cs := apiStatusOf(s.ContainerStatuses, "app")
		g.Expect(cs).NotTo(gomega.BeNil(), "kuscia's agent would publish no status of container app: %s", describeAPIStatus(s))
		g.Expect(cs.State.Waiting).NotTo(gomega.BeNil(), "kuscia's agent would publish container app, whose start failed (%s), as %s instead of Waiting with the failure's reason (neither the ReasonCache nor RefreshPodStatus gave one): %s", startFailureOf(pod), describeAPIStatus(s), describeStatus(st))
		g.Expect(defaultWaiting(cs.State.Waiting.Reason)).To(gomega.BeFalse(), "kuscia's agent would publish container app, whose start failed (%s), as Waiting(%q), which says it is still being created: neither the ReasonCache (SyncPod) nor RefreshPodStatus reported the failure; %s", startFailureOf(pod), cs.State.Waiting.Reason, describeStatus(st))
	})
}

// defaultWaiting reports whether reason is what the agent publishes for a
// container it knows nothing about.
func defaultWaiting(reason string) bool {
	return reason == "" || reason == "ContainerCreating" || reason == "PodInitializing"
}

func podStartFailureRecorded(e *podEnv) {
	e.step("syncing a pod whose container's executable is missing")
	pod := e.newPod("badstart", v1.RestartPolicyAlways, named("app", e.w().FailsToStart()))
	e.failStart(pod)
}

func podStartFailureReturned(e *podEnv) {
	e.step("syncing a pod whose container good starts and bad cannot (missing executable)")
	pod := e.newPod("onefails", v1.RestartPolicyAlways, named("good", e.w().RunsUntilKilled()), named("bad", e.w().FailsToStart()))
	var err error
	e.eventually(fmt.Sprintf("pod %s: SyncPod reports the failed start of bad", podRef(pod)), func(g gomega.Gomega) {
		var st *pkgcontainer.PodStatus
		st, err = e.agentSync(pod)
		g.Expect(runningOf(st, "good")).NotTo(gomega.BeNil(), "container good is not running next to bad, whose start fails: %s", describeStatus(st))
		g.Expect(err).To(gomega.HaveOccurred(), "SyncPod returned nil although container bad failed to start: kuscia's agent logs no failed sync for it")
		item, ok := e.rc.Get(pod.UID, "bad")
		g.Expect(ok).To(gomega.BeTrue(), "the ReasonCache has no entry for container bad after its start failed: kuscia's agent can publish the failure only if RefreshPodStatus reports it")
		g.Expect(item.Err).To(gomega.HaveOccurred(), "the ReasonCache entry of bad has no error")
		g.Expect(item.Message).NotTo(gomega.BeEmpty(), "the ReasonCache entry of bad has no message")
	})
	if msg := err.Error(); !strings.Contains(msg, "bad") {
		e.failf("SyncPod's error does not name the container bad whose start failed: %v", err)
	} else if strings.Contains(msg, `"good"`) {
		e.failf("SyncPod's error names container good, which started: %v", err)
	}
	if item, ok := e.rc.Get(pod.UID, "good"); ok {
		e.failf("the ReasonCache holds a failure for container good, which started, while bad failed: %v: %s (kuscia's agent would publish it should good exit and be restarted)", item.Err, item.Message)
	}
}

func podStartSuccessClears(e *podEnv) {
	pod := e.newPod("recovers", v1.RestartPolicyAlways, named("app", e.w().PullFails()))
	e.step(fmt.Sprintf("syncing a pod whose image %s cannot be pulled", pod.Spec.Containers[0].Image))
	e.failStart(pod)
	fixed := pod.DeepCopy()
	fixed.Spec.Containers[0].Image = e.w().Image
	e.step(fmt.Sprintf("changing only the image, to %s, as the API server allows, and syncing until app runs", fixed.Spec.Containers[0].Image))
	st := e.syncUntilRunning(fixed)
	if _, ok := e.rc.Get(pod.UID, "app"); !ok {
		return
	}
	// A provider whose backend starts containers asynchronously learns of
	// the success only later and may report it at the next SyncPod, the
	// first handed a status that shows app running: the kubelet reads a
	// ReasonCache entry only for a container that is not running
	// (kubelet_pods.go convertToAPIContainerStatuses skips containers that
	// ShouldContainerBeRestarted says stay as they are), so the stale
	// entry is never shown.
	id := runningOf(st, "app").ID
	e.step("app runs but its ReasonCache entry is still there: syncing once more, with the status that shows app running")
	after := e.syncOnce(fixed, false)
	if item, ok := e.rc.Get(pod.UID, "app"); ok {
		e.failf("container app runs (%s) since its image was changed to %s, but its ReasonCache entry (%v: %s) was still there after the GetPodStatus that first showed it running, "+
			"and still is after the next SyncPod, which was handed that status (and the GetPodStatus after it: %s): a successful start must clear the entry, at the latest at the first SyncPod that sees the container running",
			id.ID, e.w().Image, item.Err, item.Message, describeStatus(after))
	}
}

func podKillStopsAll(e *podEnv) {
	e.step("running a pod of two containers, then killing it")
	pod := e.newPod("kill", v1.RestartPolicyAlways,
		named("app", e.w().RunsUntilKilled()), named("sidecar", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	killed := e.killedIDs(pod)
	e.step("terminating it as kuscia's agent does: KillPod, then GetPodStatus at once")
	running, err := e.terminate(pod, agentGrace(pod))
	e.noError("KillPod", err)
	if len(running) > 0 {
		e.fail(killGuardFailure(pod, running))
	}
	// kuscia's syncTerminatedPod publishes the final status from what is
	// still reported: a killed container that exited 0 would make a pod
	// of RestartPolicy Never read Succeeded (pod.go getPhase).
	e.expectKilledStopped(pod, e.status(pod), killed, "after KillPod returned nil")
}

func podKillUnknownOrStopped(e *podEnv) {
	e.step("killing an unknown pod, a pod whose containers have all exited and a pod twice")
	unknown := e.newPod("unknown", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	err := e.killPod(unknown, pkgcontainer.Pod{ID: unknown.UID, Name: unknown.Name, Namespace: unknown.Namespace}, agentGrace(unknown))
	e.expectNil("KillPod", err, "KillPod of a pod the provider does not know")

	exited := e.newPod("exited", v1.RestartPolicyNever, named("done", e.w().ExitsWithCode(0)))
	e.syncUntil(exited, "done exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(exitedOf(st, "done")).NotTo(gomega.BeEmpty(), "done has not exited: %s", describeStatus(st))
	})
	e.expectNil("KillPod", e.killPod(exited, e.runningPod(exited), agentGrace(exited)), "KillPod of a pod whose containers have all exited")

	twice := e.newPod("twice", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.syncUntilRunning(twice)
	stale := e.runningPod(twice)
	e.expectNil("KillPod", e.killPod(twice, stale, agentGrace(twice)), "KillPod of a running pod")
	e.expectNil("KillPod", e.killPod(twice, stale, agentGrace(twice)), "KillPod of an already killed pod (same running pod as before)")
}

func (e *podEnv) stubbornPod(name string, graceSecs int64) *v1.Pod {
	pod := e.newPod(name, v1.RestartPolicyAlways, named("stubborn", e.w().IgnoresSIGTERM()))
	pod.Spec.TerminationGracePeriodSeconds = &graceSecs
	e.syncUntilRunning(pod)
	e.settle(pod, "stubborn")
	return pod
}

// settle lets container name of pod run, still running, for a moment before
// the spec sends SIGTERM: a real process is reported running before it has
// run far enough to ignore SIGTERM (sh executes its trap after it starts),
// which takes milliseconds. The moment is the short run (at most the stable
// window): a wait, not a check, so no longer than needed.
func (e *podEnv) settle(pod *v1.Pod, name string) {
	e.consistentlyFor(min(e.st.t.ShortRun, e.st.t.Stable), fmt.Sprintf("pod %s: %s keeps running before KillPod", podRef(pod), name), func(g gomega.Gomega) {
		st := e.status(pod)
		g.Expect(runningOf(st, name)).NotTo(gomega.BeNil(), "container %s is not running; status: %s", name, describeStatus(st))
	})
}

func podKillGraceOne(e *podEnv) {
	long := 3*e.st.graceSecs + 2*minimumGraceSecs
	pod := e.stubbornPod("grace1", long)
	one := int64(1)
	e.step(fmt.Sprintf("killing the pod, whose own grace period is %ds, with gracePeriodOverride 1", long))
	elapsed := e.kill(pod, &one)
	if elapsed >= time.Duration(long)*time.Second {
		e.failf("KillPod with gracePeriodOverride 1 took %s: it waited for the pod's grace period of %ds (the agent passes 1 to stop orphans and force-deleted pods quickly)", elapsed, long)
	}
	e.expectNothingRunning(pod, "after KillPod with gracePeriodOverride 1 returned nil")
}

// killObserved terminates the stubborn pod with override as kuscia's agent
// does and checks, while KillPod runs, that the container is still running
// halfway through the grace period G, and that it did not stop before G. A
// KillPod that returns while the container still runs is KRI-POD-014's: the
// agent tries the termination again, and the time counted is until the
// container stopped. It returns that time.
func (e *podEnv) killObserved(pod *v1.Pod, override *int64) time.Duration {
	running := e.runningPod(pod)
	var killErr error
	callErr := make(chan error, 1)
	start := time.Now()
	go func() {
		callErr <- e.try("KillPod", func(ctx context.Context) { killErr = e.p.KillPod(ctx, pod, running, override) })
	}()
	grace := e.st.t.GracePeriod
	time.Sleep(grace / 2)
	mid := e.status(pod)
	if time.Since(start) < grace { // the answer is from within the grace period
		if runningOf(mid, "stubborn") == nil {
			e.failf("the SIGTERM-ignoring container stopped within %s of KillPod, before the grace period of %s: %s",
				grace/2, grace, describeStatus(mid))
		}
	}
	if err := <-callErr; err != nil {
		e.fail(err.Error())
	}
	e.noError("KillPod", killErr)
	if st := e.status(pod); runningOf(st, "stubborn") != nil {
		e.diagnose("KillPod returned after %s while the SIGTERM-ignoring container still ran (KRI-POD-014 checks this): waiting for the termination kuscia's agent would try again", time.Since(start))
		e.kill(pod, override)
	}
	elapsed := time.Since(start)
	if elapsed < grace {
		e.failf("the SIGTERM-ignoring container was stopped %s after KillPod began, before the grace period of %s was over", elapsed, grace)
	}
	return elapsed
}

func podKillGraceOverride(e *podEnv) {
	long := 3*e.st.graceSecs + minimumGraceSecs
	pod := e.stubbornPod("grace-override", long)
	g := e.st.graceSecs
	e.step(fmt.Sprintf("killing the pod, whose own grace period is %ds, with gracePeriodOverride %d", long, g))
	elapsed := e.killObserved(pod, &g)
	if elapsed >= time.Duration(long)*time.Second {
		e.failf("KillPod with gracePeriodOverride %ds took %s: it waited for the pod's grace period of %ds", g, elapsed, long)
	}
	e.expectNothingRunning(pod, "after KillPod returned nil")
}

func podKillPodGrace(e *podEnv) {
	pod := e.stubbornPod("podgrace", e.st.graceSecs)
	e.step(fmt.Sprintf("killing the pod without override: TerminationGracePeriodSeconds %ds", e.st.graceSecs))
	e.killObserved(pod, nil)
	e.expectNothingRunning(pod, "after KillPod returned nil")
}

func podDeleteUnknown(e *podEnv) {
	e.step("deleting a pod the provider never saw")
	pod := e.newPod("unknown", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.expectNil("DeletePod", e.deletePod(pod), "DeletePod of a pod the provider does not know")
}

func podDeleteForgets(e *podEnv) {
	pod := e.newPod("deleted", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	e.step("killing the pod and deleting it, as the agent does once the pod is gone from the API server")
	e.killAsAgent(pod)
	e.noError("DeletePod", e.deletePod(pod))
	e.step("waiting for the pod to be forgotten, checking that none of its containers runs again")
	e.eventually(fmt.Sprintf("deleted pod %s forgotten", podRef(pod)), func(g gomega.Gomega) {
		st := e.status(pod)
		if r := runningOf(st, "app"); r != nil {
			e.failf("container app (%s) of pod %s runs after KillPod and DeletePod returned nil: %s", r.ID.String(), podRef(pod), describeStatus(st))
		}
		for _, p := range e.getPods(true) {
			g.Expect(p == nil || p.ID != pod.UID).To(gomega.BeTrue(), "GetPods(true) still lists the deleted pod %s", podRef(pod))
		}
		g.Expect(st.ContainerStatuses).To(gomega.BeEmpty(), "GetPodStatus of the deleted pod %s still reports containers: %s", podRef(pod), describeStatus(st))
		g.Expect(st.SandboxStatuses).To(gomega.BeEmpty(), "GetPodStatus of the deleted pod %s still reports %d sandboxes", podRef(pod), len(st.SandboxStatuses))
	})
}

// runningIDs returns the IDs of the running containers of pod, by name.
func (e *podEnv) runningIDs(pod *v1.Pod) map[string]pkgcontainer.ContainerID {
	st := e.status(pod)
	out := map[string]pkgcontainer.ContainerID{}
	for _, c := range pod.Spec.Containers {
		if r := runningOf(st, c.Name); r != nil {
			out[c.Name] = r.ID
		}
	}
	return out
}

// holdRunning checks for the stable window that every pod keeps running the
// same containers (no SyncPod in between).
func (e *podEnv) holdRunning(desc string, pods ...*v1.Pod) {
	want := map[types.UID]map[string]pkgcontainer.ContainerID{}
	for _, pod := range pods {
		want[pod.UID] = e.runningIDs(pod)
	}
	e.consistently(desc, func(g gomega.Gomega) {
		for _, pod := range pods {
			st := e.status(pod)
			for name, id := range want[pod.UID] {
				r := runningOf(st, name)
				g.Expect(r).NotTo(gomega.BeNil(), "container %s/%s was stopped: %s", podRef(pod), name, describeStatus(st))
				g.Expect(r.ID).To(gomega.Equal(id), "container %s/%s was replaced: %s", podRef(pod), name, describeStatus(st))
			}
		}
	})
}

func (e *podEnv) twoRunningPods() (*v1.Pod, *v1.Pod) {
	a := e.newPod("a", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	b := e.newPod("b", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.syncUntilRunning(a)
	e.syncUntilRunning(b)
	return a, b
}

func podCleanupKeepsDesired(e *podEnv) {
	e.step("running two pods, then calling CleanupPods with both as desired pods")
	a, b := e.twoRunningPods()
	before := map[types.UID]map[string]pkgcontainer.ContainerID{a.UID: e.runningIDs(a), b.UID: e.runningIDs(b)}
	e.noError("CleanupPods", e.cleanupPods([]*v1.Pod{a, b}, nil, nil))
	for _, pod := range []*v1.Pod{a, b} {
		if got := e.runningIDs(pod); !reflect.DeepEqual(got, before[pod.UID]) {
			e.failf("after CleanupPods named pod %s as desired, its running containers changed from %v to %v", podRef(pod), before[pod.UID], got)
		}
	}
	e.holdRunning("desired pods keep running after CleanupPods", a, b)
}

func podCleanupKeepsPossiblyRunning(e *podEnv) {
	e.step("running two pods, then calling CleanupPods naming one as running pod and the other as possibly running")
	a, b := e.twoRunningPods()
	before := map[types.UID]map[string]pkgcontainer.ContainerID{a.UID: e.runningIDs(a), b.UID: e.runningIDs(b)}
	// As kuscia's housekeeping hands them: the running pods of GetPods(false).
	ra, listed := e.housekept(a)
	if !listed {
		e.diagnose("GetPods(false) does not list the running pod %s; CleanupPods gets it by UID only (KRI-POD-005 checks the listing)", podRef(a))
	}
	e.noError("CleanupPods", e.cleanupPods(nil, []*pkgcontainer.Pod{&ra}, map[types.UID]sets.Empty{b.UID: {}}))
	for _, pod := range []*v1.Pod{a, b} {
		if got := e.runningIDs(pod); !reflect.DeepEqual(got, before[pod.UID]) {
			e.failf("after CleanupPods named pod %s in runningPods or possiblyRunningPods, its running containers changed from %v to %v", podRef(pod), before[pod.UID], got)
		}
	}
	e.holdRunning("pods named by runningPods and possiblyRunningPods keep running", a, b)
}

func podCleanupDropsOrphans(e *podEnv) {
	e.step("running two pods, then calling CleanupPods naming only one of them")
	orphan, desired := e.twoRunningPods()
	e.noError("CleanupPods", e.cleanupPods([]*v1.Pod{desired}, nil, nil))
	e.eventually(fmt.Sprintf("orphan pod %s stopped and forgotten", podRef(orphan)), func(g gomega.Gomega) {
		for _, p := range e.getPods(true) {
			g.Expect(p.ID).NotTo(gomega.Equal(orphan.UID), "GetPods(true) still lists the orphan pod %s", podRef(orphan))
		}
		st := e.status(orphan)
		g.Expect(st.ContainerStatuses).To(gomega.BeEmpty(), "GetPodStatus of the orphan pod %s still reports containers: %s", podRef(orphan), describeStatus(st))
	})
}

func podRefreshUnknown(e *podEnv) {
	e.step("refreshing a status of a pod the provider does not know")
	pod := e.newPod("unknown", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	in := v1.PodStatus{
		Phase:   v1.PodPending,
		Message: "set by the caller",
		ContainerStatuses: []v1.ContainerStatus{{
			Name:  "app",
			State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "KRIConformanceSentinel"}},
		}},
	}
	want := in.DeepCopy()
	e.refresh(pod, &in)
	// A prober may set Ready and Started (the kubelet's prober_manager.go
	// UpdatePodStatus sets them on every status it is handed).
	if !reflect.DeepEqual(withoutReadiness(&in), withoutReadiness(want)) {
		e.failf("RefreshPodStatus changed the status of a pod the provider does not know (beyond Ready and Started):\nbefore: %+v\nafter:  %+v", *want, in)
	}
}

// withoutReadiness returns a copy of ps without the Ready and Started of its
// container statuses.
func withoutReadiness(ps *v1.PodStatus) *v1.PodStatus {
	cp := ps.DeepCopy()
	for _, list := range [][]v1.ContainerStatus{cp.ContainerStatuses, cp.InitContainerStatuses, cp.EphemeralContainerStatuses} {
		for i := range list {
			list[i].Ready, list[i].Started = false, nil
		}
	}
	return cp
}

func podRefreshContainers(e *podEnv) {
	e.step("running a pod with one running and one exited container, then refreshing the status the agent builds")
	pod := e.newPod("refresh", v1.RestartPolicyNever, named("run", e.w().RunsUntilKilled()), named("done", e.w().ExitsWithCode(3)))
	e.syncUntil(pod, "run running and done exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "run")).NotTo(gomega.BeNil(), "run is not running: %s", describeStatus(st))
		g.Expect(exitedOf(st, "done")).NotTo(gomega.BeEmpty(), "done has not exited: %s", describeStatus(st))
	})
	ps := e.publish(pod, e.status(pod))
	if len(ps.InitContainerStatuses) > 0 {
		e.failf("RefreshPodStatus reports init containers %v for a pod without any", statusNames(ps.InitContainerStatuses))
	}
	got := map[string]v1.ContainerStatus{}
	for _, cs := range ps.ContainerStatuses {
		if cs.Name != "run" && cs.Name != "done" {
			e.failf("RefreshPodStatus names container %q, which is not in the pod's spec (statuses: %v)", cs.Name, statusNames(ps.ContainerStatuses))
		}
		got[cs.Name] = cs
	}
	if run, ok := got["run"]; !ok || run.State.Running == nil {
		e.failf("RefreshPodStatus does not report the running container run as Running: %+v", run.State)
	}
	done, ok := got["done"]
	if !ok || done.State.Terminated == nil {
		e.failf("RefreshPodStatus does not report the exited container done as Terminated: %+v", done.State)
	}
	if done.State.Terminated.ExitCode != 3 {
		e.failf("RefreshPodStatus reports container done terminated with exit code %d, want 3", done.State.Terminated.ExitCode)
	}
}

func statusNames(ss []v1.ContainerStatus) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

func podRefreshWaiting(e *podEnv) {
	e.step("syncing a pod whose container cannot start, refreshing the status the agent builds each round")
	pod := e.newPod("waiting", v1.RestartPolicyAlways, named("app", e.w().FailsToStart()))
	// SyncPod's error and the ReasonCache are the business of KRI-POD-012;
	// here only RefreshPodStatus counts.
	e.syncUntilOpt(pod, true, "RefreshPodStatus reports app Waiting with a reason", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "app")).To(gomega.BeNil(), "container app runs although its executable is missing: %s", describeStatus(st))
		ps := e.publish(pod, st)
		var app *v1.ContainerStatus
		for i, cs := range ps.ContainerStatuses {
			if cs.Name == "app" {
				app = &ps.ContainerStatuses[i]
			}
		}
		g.Expect(app).NotTo(gomega.BeNil(), "RefreshPodStatus reports no status for container app, whose start failed (statuses: %v)", statusNames(ps.ContainerStatuses))
		g.Expect(app.State.Waiting).NotTo(gomega.BeNil(), "RefreshPodStatus reports the container whose start failed as %+v, want Waiting", app.State)
		g.Expect(app.State.Waiting.Reason).NotTo(gomega.BeEmpty(), "RefreshPodStatus reports the container whose start failed as Waiting without a reason")
	})
}

func podCancelledContext(e *podEnv) {
	e.step("calling every pod method with a cancelled context")
	pod := e.newPod("cancelled", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	running := e.runningPod(pod)
	fresh := e.newPod("fresh", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	calls := []struct {
		method string
		call   func() error
	}{
		{"SyncPod", func() error { return e.p.SyncPod(ctx, fresh, emptyStatus(fresh), e.rc) }},
		{"GetPodStatus", func() error { _, err := e.p.GetPodStatus(ctx, pod); return err }},
		{"GetPods", func() error { _, err := e.p.GetPods(ctx, true); return err }},
		{"KillPod", func() error { return e.p.KillPod(ctx, pod, running, agentGrace(pod)) }},
		{"DeletePod", func() error { return e.p.DeletePod(ctx, pod) }},
		{"CleanupPods", func() error { return e.p.CleanupPods(ctx, []*v1.Pod{pod, fresh}, nil, nil) }},
	}
	// Each call must return within the call timeout (e.do fails the spec
	// otherwise); what it returns is free. The agent logs the error and
	// retries (kuscia pods_controller.go syncPod returns SyncPod's error to
	// its pod worker), and the error a real runtime returns need not carry
	// the context's: the kubelet's runtime manager over containerd, wrapped
	// as kuscia's CRIProvider wraps it (return result.Error()), returns
	// failed to "CreatePodSandbox" ... rpc error: code = Canceled, a string.
	for _, c := range calls {
		var err error
		start := time.Now()
		e.do(c.method, func(context.Context) { err = c.call() })
		e.skipIfNotSupported(c.method, err)
		ginkgo.GinkgoWriter.Printf("%s with a cancelled context returned after %s: %v\n", c.method, time.Since(start).Round(time.Millisecond), err)
	}
}

// concurrentLifecycle takes pod through its life with its pod worker and a
// GetPods and RefreshPodStatus alongside; once it
// runs, a CleanupPods naming every pod of the spec (the agent's periodic
// cleanup) must leave it running. It returns the first problem. It runs
// outside the spec's goroutine, so it never fails the spec itself.
func (e *podEnv) concurrentLifecycle(pod *v1.Pod, all []*v1.Pod) error {
	call := func(method string, fn func(ctx context.Context) error) error {
		var err error
		if cerr := e.try(method, func(ctx context.Context) { err = fn(ctx) }); cerr != nil {
			return cerr
		}
		if err != nil {
			return fmt.Errorf("%s of pod %s: %w", method, podRef(pod), err)
		}
		return nil
	}
	status := func() (*pkgcontainer.PodStatus, error) {
		var st *pkgcontainer.PodStatus
		err := call("GetPodStatus", func(ctx context.Context) error {
			var err error
			st, err = e.p.GetPodStatus(ctx, pod)
			return err
		})
		if err == nil && st == nil {
			err = fmt.Errorf("GetPodStatus of pod %s returned a nil status", podRef(pod))
		}
		return st, err
	}
	worker := func() error {
		// The agent reads the status of a new pod before its first sync
		// (an unknown pod: ID, name and namespace only).
		last, err := status()
		if err != nil {
			return err
		}
		deadline := time.Now().Add(e.st.t.State)
		for {
			if err := call("SyncPod", func(ctx context.Context) error { return e.p.SyncPod(ctx, pod, last, e.rc) }); err != nil {
				var ce *callError
				if errors.As(err, &ce) {
					return err
				}
				// The agent syncs again; KRI-POD-001 and 003 judge the error.
				e.diagnose("%v (KRI-POD-001 and 003 check this)", err)
			}
			st, err := status()
			if err != nil {
				return err
			}
			last = st
			all := true
			for _, c := range pod.Spec.Containers {
				all = all && runningOf(st, c.Name) != nil
			}
			if all {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("pod %s not running within %s: %s", podRef(pod), e.st.t.State, describeStatus(st))
			}
			time.Sleep(e.st.t.Poll)
		}
	}
	// One pod worker per pod, as in the kubelet (pod_workers.go
	// managePodLoop) and kuscia: SyncPod, KillPod and DeletePod of one pod
	// never overlap; GetPods and RefreshPodStatus run alongside.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = worker() })
	wg.Go(func() {
		errs[1] = call("GetPods", func(ctx context.Context) error { _, err := e.p.GetPods(ctx, true); return err })
		var st *pkgcontainer.PodStatus
		if errs[1] == nil {
			st, errs[1] = status()
		}
		if errs[1] == nil {
			errs[1] = call("RefreshPodStatus", func(context.Context) error {
				ps := podstatus.Generate(pod, st, e.rc)
				e.p.RefreshPodStatus(pod, &ps)
				return nil
			})
		}
	})
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	st, err := status()
	if err != nil {
		return err
	}
	for _, c := range pod.Spec.Containers {
		if n := len(instancesOf(st, c.Name)); n != 1 {
			return fmt.Errorf("pod %s: container %s has %d instances after its pod worker synced it while other pods were synced: %s", podRef(pod), c.Name, n, describeStatus(st))
		}
	}
	if err := call("CleanupPods", func(ctx context.Context) error { return e.p.CleanupPods(ctx, all, nil, nil) }); err != nil {
		return err
	}
	after, err := status()
	if err != nil {
		return err
	}
	for _, c := range pod.Spec.Containers {
		if before, now := runningOf(st, c.Name), runningOf(after, c.Name); now == nil || now.ID != before.ID {
			return fmt.Errorf("pod %s: container %s no longer runs as %s after a CleanupPods naming every pod: %s",
				podRef(pod), c.Name, before.ID, describeStatus(after))
		}
	}
	// The agent's termination: KillPod, then GetPodStatus; a container
	// still running fails it, and the agent tries again (KRI-POD-014
	// judges a KillPod that returns too early).
	deadline := time.Now().Add(e.st.t.State + time.Duration(*agentGrace(pod))*time.Second)
	for {
		running := pkgcontainer.ConvertPodStatusToRunningPod(e.runtimeName(st), st)
		if err := call("KillPod", func(ctx context.Context) error { return e.p.KillPod(ctx, pod, running, agentGrace(pod)) }); err != nil {
			return err
		}
		if st, err = status(); err != nil {
			return err
		}
		left := slices.IndexFunc(st.ContainerStatuses, func(c *pkgcontainer.Status) bool { return c.State == pkgcontainer.ContainerStateRunning })
		if left < 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pod %s: container %s still running after kuscia's agent's terminations (KillPod, then GetPodStatus) kept failing for %s", podRef(pod), st.ContainerStatuses[left].Name, e.st.t.State)
		}
		time.Sleep(e.st.t.Poll)
	}
	return call("DeletePod", func(ctx context.Context) error { return e.p.DeletePod(ctx, pod) })
}

func podConcurrentPods(e *podEnv) {
	e.step("taking several pods through their lives at once, each with its own worker")
	n := e.st.cfg.ConcurrentPods
	pods := make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = e.newPod(fmt.Sprintf("c%d", i), v1.RestartPolicyAlways,
			named("app", e.w().RunsUntilKilled()), named("sidecar", e.w().RunsUntilKilled()))
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, pod := range pods {
		wg.Go(func() { errs[i] = e.concurrentLifecycle(pod, pods) })
	}
	wg.Wait()
	var msgs []string
	for _, err := range errs {
		if err != nil {
			e.skipIfNotSupported("a concurrent call", err)
			msgs = append(msgs, firstLine(err.Error()))
		}
	}
	if len(msgs) > 0 {
		e.failf("%d of %d concurrent pod lifecycles failed:\n%s", len(msgs), n, joinLines(msgs))
	}
}

func joinLines(ss []string) string {
	out := ""
	for _, s := range ss {
		out += "  " + s + "\n"
	}
	return out
}

// startStillRunning checks for the stable window that Start has not
// returned.
func (e *podEnv) startStillRunning() {
	e.consistently("Start keeps running", func(gomega.Gomega) {
		select {
		case <-e.startDone:
			if e.startPanic != "" {
				e.fail(e.startPanic)
			}
			e.failf("Start returned (%v) while its context was live and Stop was not called", e.startErr)
		default:
		}
	})
}

// startReturned waits up to within for Start to return; it must return nil
// (or, when ctxOK, the context's error).
func (e *podEnv) startReturned(within time.Duration, after string, ctxOK bool) {
	select {
	case <-e.startDone:
	case <-time.After(within):
		e.failf("Start did not return within %s %s", within, after)
	}
	if e.startPanic != "" {
		e.fail(e.startPanic)
	}
	if e.startErr != nil && !(ctxOK && ctxErrOK(e.startErr)) {
		e.failf("Start returned %v %s, want nil", e.startErr, after)
	}
}

func podStartReturnsOnCancel(e *podEnv) {
	e.step("cancelling the context of a running Start")
	e.startStillRunning()
	e.startCancel()
	e.startReturned(e.st.t.Call, "after its context was cancelled", true)
}

func podStopEndsStart(e *podEnv) {
	e.step("calling Stop while Start runs")
	e.startStillRunning()
	e.do("Stop", func(context.Context) { e.p.Stop() })
	e.startReturned(e.st.t.Stable, "after Stop returned", false)
}

func podSecondStop(e *podEnv) {
	e.step("calling Stop twice")
	e.do("Stop", func(context.Context) { e.p.Stop() })
	e.do("Stop", func(context.Context) { e.p.Stop() })
}

func podStopWithoutStart(e *podEnv) {
	e.step("calling Stop on a provider whose Start was never called")
	e.do("Stop", func(context.Context) { e.p.Stop() })
}

func podCallsBeforeStart(e *podEnv) {
	e.step("syncing and listing pods before Start is called, then starting the provider")
	pod := e.newPod("early", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.noError("SyncPod", e.syncPod(pod, emptyStatus(pod)))
	e.setLast(pod, e.status(pod))
	e.getPods(true)
	e.start()
	e.syncUntilRunning(pod)
}

func podSyncRejectsBadInput(e *podEnv) {
	e.step("syncing a nil pod, a pod without UID and a pod with a nil ReasonCache")
	good := e.newPod("good", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	noUID := good.DeepCopy()
	noUID.UID = ""
	noUID.Name += "-nouid"
	e.expectRejected(
		rejectedSync{"a nil pod", func(ctx context.Context) error { return e.p.SyncPod(ctx, nil, nil, e.rc) }},
		rejectedSync{"a pod without UID", func(ctx context.Context) error { return e.p.SyncPod(ctx, noUID, emptyStatus(noUID), e.rc) }},
		rejectedSync{"a nil ReasonCache", func(ctx context.Context) error { return e.p.SyncPod(ctx, good, emptyStatus(good), nil) }},
	)
	e.expectNothingLeft([]*v1.Pod{good}, noUID)
}

func podSyncRejectsDuplicateNames(e *podEnv) {
	e.step("syncing a pod with two containers of the same name")
	dup := e.newPod("dup", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()), named("app", e.w().RunsUntilKilled()))
	e.expectRejected(rejectedSync{"a pod with two containers named app", func(ctx context.Context) error {
		return e.p.SyncPod(ctx, dup, emptyStatus(dup), e.rc)
	}})
	e.expectNothingLeft([]*v1.Pod{dup}, nil)
}

// rejectedSync is a SyncPod call that must be rejected.
type rejectedSync struct {
	what string
	call func(ctx context.Context) error
}

// expectRejected fails the spec when one of the calls returns nil.
func (e *podEnv) expectRejected(calls ...rejectedSync) {
	for _, c := range calls {
		var err error
		e.do("SyncPod", func(ctx context.Context) { err = c.call(ctx) })
		if err == nil {
			e.failf("SyncPod of %s returned nil, want an error", c.what)
		}
	}
}

// expectNothingLeft fails the spec when a rejected SyncPod left a trace of
// pods (by UID) or of noUID (a pod without UID, by namespace and name).
func (e *podEnv) expectNothingLeft(pods []*v1.Pod, noUID *v1.Pod) {
	for _, p := range e.getPods(true) {
		if p == nil {
			continue
		}
		left := noUID != nil && p.Namespace == noUID.Namespace && p.Name == noUID.Name
		for _, pod := range pods {
			left = left || p.ID == pod.UID
		}
		if left {
			e.failf("a rejected SyncPod left pod %s/%s (UID %s) behind", p.Namespace, p.Name, p.ID)
		}
	}
	for _, pod := range pods {
		if st := e.status(pod); len(st.ContainerStatuses) > 0 {
			e.failf("a rejected SyncPod of pod %s created containers: %s", podRef(pod), describeStatus(st))
		}
	}
}

func podOwnership(e *podEnv) {
	e.step("running a pod while checking that SyncPod leaves its inputs alone, then mutating what the provider returned")
	pod := e.newPod("owned", v1.RestartPolicyAlways,
		named("app", e.w().RunsUntilKilled()), named("sidecar", e.w().RunsUntilKilled()))
	podCopy := pod.DeepCopy()
	e.eventually(fmt.Sprintf("pod %s running, its inputs untouched", podRef(pod)), func(g gomega.Gomega) {
		in := e.lastStatus(pod)
		inCopy := copyStatus(in)
		if err := e.syncPod(pod, in); err != nil {
			e.skipIfNotSupported("SyncPod", err)
			e.diagnose("SyncPod of pod %s returned an unexpected error: %v (KRI-POD-001 and 003 check this)", podRef(pod), err)
		}
		if !reflect.DeepEqual(pod, podCopy) {
			e.failf("SyncPod mutated the pod it was handed:\nbefore: %+v\nafter:  %+v", podCopy, pod)
		}
		if !reflect.DeepEqual(in, inCopy) {
			e.failf("SyncPod mutated the status it was handed:\nbefore: %s\nafter:  %s", describeStatus(inCopy), describeStatus(in))
		}
		st := e.status(pod)
		e.setLast(pod, st)
		for _, c := range pod.Spec.Containers {
			g.Expect(runningOf(st, c.Name)).NotTo(gomega.BeNil(), "container %q is not running: %s", c.Name, describeStatus(st))
		}
	})

	// Mutate what GetPodStatus and GetPods returned; later answers must not
	// change.
	st := e.status(pod)
	want := copyStatus(st)
	for _, c := range st.ContainerStatuses {
		c.ID.ID += "-mutated"
		c.State = pkgcontainer.ContainerStateExited
		c.Name += "-mutated"
	}
	st.ContainerStatuses = append(st.ContainerStatuses[:0], st.ContainerStatuses[len(st.ContainerStatuses)-1])
	again := e.status(pod)
	if canonicalStatus(again) != canonicalStatus(want) {
		e.failf("mutating the status GetPodStatus returned changed its next answer:\nbefore: %s\nafter:  %s", canonicalStatus(want), canonicalStatus(again))
	}

	find := func() (*pkgcontainer.Pod, string) {
		for _, p := range e.getPods(true) {
			if p != nil && p.ID == pod.UID {
				return p, canonicalPod(p)
			}
		}
		e.failf("GetPods(true) does not list the running pod %s", podRef(pod))
		return nil, ""
	}
	p, before := find()
	for _, c := range p.Containers {
		c.ID.ID += "-mutated"
		c.Name += "-mutated"
	}
	p.Containers = nil
	p.Name += "-mutated"
	if _, after := find(); after != before {
		e.failf("mutating the pods GetPods returned changed its next answer:\nbefore: %s\nafter:  %s", before, after)
	}
}
