package conformance

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The notify specs (KRI-POD-092, 093, 094, 108): the provider's duty to call
// HandlePodSyncByUID (kri.PodSyncNotifier). kuscia's agent syncs a pod
// again only on such a call (pods_controller.go syncLoopIteration has no
// resync; pod_workers.go completeWork queues retries nothing reads), so
// each spec waits for what the agent publishes, syncing only when kuscia's
// agent would (agent_cadence.go). Every other spec waits so too: these
// three name the cases the duty exists for, a container that exits by
// itself, a restart, and a failed start to be tried again.
var podNotifySpecs = []*specDef{
	{id: "KRI-POD-092", level: Must, kind: kindPod, groups: []string{"notify"}, pod: podNotifyCompletion,
		text: "a pod whose only container runs to completion under RestartPolicy Never is published Succeeded: the provider calls HandlePodSyncByUID once the container has started and once it has exited"},
	{id: "KRI-POD-093", level: Must, kind: kindPod, groups: []string{"notify"}, caps: []Capability{CapRestartPolicies}, pod: podNotifyRestarts,
		text: "the restarts of a crash-looping container are published: the provider calls HandlePodSyncByUID when the container exits, when it has started again, and when a crash-loop back-off that held the restart ends"},
	{id: "KRI-POD-094", level: Must, kind: kindPod, groups: []string{"notify"}, caps: []Capability{CapImagePullPolicy}, pod: podNotifyPullRetried,
		text: "a container whose image cannot be pulled is published Waiting with ErrImagePull or ImagePullBackOff, and its pull is tried again: the provider calls HandlePodSyncByUID for a failed start it will retry, once its back-off has ended"},
	{id: "KRI-POD-108", level: Must, kind: kindPod, groups: []string{"notify"}, pod: podNotifyWhileKilling,
		text: "a pod whose container exits while another pod's KillPod runs is published Succeeded: the provider calls HandlePodSyncByUID for it without waiting for the other pod's KillPod to return"},
}

func podNotifyCompletion(e *podEnv) {
	pod := e.newPod("completes", v1.RestartPolicyNever, named("main", e.w().RunsFor(e.st.t.ShortRun)))
	e.step(fmt.Sprintf("syncing a pod whose container runs for %s and exits 0, under RestartPolicy Never, only when kuscia's agent would", e.st.t.ShortRun))
	e.syncUntilPublished(pod, "phase Succeeded, main Terminated with exit code 0", func(g gomega.Gomega, s v1.PodStatus) {
		cs := apiStatusOf(s.ContainerStatuses, "main")
		g.Expect(cs != nil && cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0).To(gomega.BeTrue(), "kuscia's agent publishes container main as not exited 0: %s", describeAPIStatus(s))
		g.Expect(s.Phase).To(gomega.Equal(v1.PodSucceeded), "kuscia's agent publishes phase %s: %s", s.Phase, describeAPIStatus(s))
	})
}

func podNotifyRestarts(e *podEnv) {
	pod := e.newPod("crashloop", v1.RestartPolicyAlways, named("app", e.w().ExitsWithCode(1)))
	e.step("syncing a pod whose container exits 1 at once, under RestartPolicy Always, only when kuscia's agent would")
	e.syncUntilPublished(pod, "container app with 2 restarts, its last termination exit code 1", func(g gomega.Gomega, s v1.PodStatus) {
		cs := apiStatusOf(s.ContainerStatuses, "app")
		g.Expect(cs).NotTo(gomega.BeNil(), "kuscia's agent publishes no status of container app: %s", describeAPIStatus(s))
		g.Expect(cs.RestartCount).To(gomega.BeNumerically(">=", 2), "kuscia's agent publishes container app with %d restarts: %s", cs.RestartCount, describeAPIStatus(s))
		g.Expect(cs.LastTerminationState.Terminated).NotTo(gomega.BeNil(), "kuscia's agent publishes no last termination of container app: %s", describeAPIStatus(s))
		g.Expect(cs.LastTerminationState.Terminated.ExitCode).To(gomega.BeEquivalentTo(1), "kuscia's agent publishes the last termination of container app with exit code %d: %s", cs.LastTerminationState.Terminated.ExitCode, describeAPIStatus(s))
	})
}

// pullBackOff is the kubelet's first image pull back-off
// (kuberuntime_manager.go: the image back-off starts at 10s) and its pod
// workers' back-off after a failed sync (kubelet.go backOffPeriod).
const pullBackOff = 10 * time.Second

func podNotifyPullRetried(e *podEnv) {
	pod := e.newPod("pullretry", v1.RestartPolicyAlways, named("app", e.w().PullFails()))
	e.step(fmt.Sprintf("syncing a pod whose image %s cannot be pulled, only when kuscia's agent would, until SyncPod has tried the pull three times", pod.Spec.Containers[0].Image))
	reasons := []string{reasonErrImagePull, reasonImagePullBackOff}
	// The third SyncPod may wait for a back-off to end: the kubelet's
	// first image pull back-off and its pod workers' back-off after a
	// failed sync are 10s each.
	e.untilAsAgent(pod, e.st.t.State+2*pullBackOff, fmt.Sprintf("pod %s: the pull failure published and SyncPod called three times", podRef(pod)), func(g gomega.Gomega) {
		e.trySync(pod)
		s := e.publishedOf(pod)
		cs := apiStatusOf(s.ContainerStatuses, "app")
		g.Expect(cs != nil && cs.State.Waiting != nil && slices.Contains(reasons, cs.State.Waiting.Reason)).To(gomega.BeTrue(),
			"kuscia's agent publishes container app, whose image cannot be pulled, without ErrImagePull or ImagePullBackOff: %s", describeAPIStatus(s))
		n := e.syncPods(pod)
		g.Expect(n).To(gomega.BeNumerically(">=", 3), "kuscia's agent has called SyncPod %d times: a pull that failed is tried again only when the provider calls HandlePodSyncByUID once its back-off has ended", n)
	})
}

// podNotifyWhileKilling kills a pod whose container ignores SIGTERM, so
// that its KillPod runs out the grace period, and meanwhile syncs a pod
// whose container runs for ShortRun and exits: kuscia's agent kills a pod
// in that pod's worker while the workers of the other pods go on
// (pod_workers.go managePodLoop, one goroutine a pod), and learns of the
// other pod's exit only from HandlePodSyncByUID.
func podNotifyWhileKilling(e *podEnv) {
	grace := 3*e.st.graceSecs + minimumGraceSecs
	killed := e.stubbornPod("killed", grace)
	st := e.status(killed)
	e.publish(killed, st)
	running := pkgcontainer.ConvertPodStatusToRunningPod(e.runtimeName(st), st)
	e.step(fmt.Sprintf("killing pod %s, whose container ignores SIGTERM, with its grace period of %ds, and meanwhile syncing a pod whose container runs for %s and exits 0, under RestartPolicy Never, only when kuscia's agent would",
		podRef(killed), grace, e.st.t.ShortRun))
	var killErr, callErr error
	killing := make(chan struct{})
	go func() {
		defer close(killing)
		// It runs out the grace period: the call timeout on top of it.
		callErr = e.tryWithin("KillPod", time.Duration(grace)*time.Second+e.st.t.Call, func(ctx context.Context) { killErr = e.p.KillPod(ctx, killed, running, nil) })
	}()
	defer func() { <-killing }() // also when the spec fails: no call outlives it
	pod := e.newPod("exits", v1.RestartPolicyNever, named("main", e.w().RunsFor(e.st.t.ShortRun)))
	e.syncUntilPublished(pod, "phase Succeeded, main Terminated with exit code 0, while another pod's KillPod runs", func(g gomega.Gomega, s v1.PodStatus) {
		cs := apiStatusOf(s.ContainerStatuses, "main")
		g.Expect(cs != nil && cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0).To(gomega.BeTrue(),
			"kuscia's agent publishes container main as not exited 0 (pod %s's KillPod runs, or ran, meanwhile): %s", podRef(killed), describeAPIStatus(s))
		g.Expect(s.Phase).To(gomega.Equal(v1.PodSucceeded), "kuscia's agent publishes phase %s: %s", s.Phase, describeAPIStatus(s))
	})
	select {
	case <-killing:
		e.diagnose("pod %s's KillPod had returned before the other pod was published Succeeded", podRef(killed))
	default:
	}
	<-killing
	if callErr != nil {
		e.failf("%v", callErr)
	}
	e.noError("KillPod", killErr)
}
