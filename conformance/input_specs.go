package conformance

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The specs of what the provider is handed (KRI-POD-045 to 050): ownership
// of every input, a nil podStatus, KillPod's signals and defaults and its nil
// pod, and RefreshPodStatus of init containers.

// copyRunningPod copies rp deeply enough to notice a provider mutating it.
func copyRunningPod(rp pkgcontainer.Pod) pkgcontainer.Pod {
	cp := rp
	cp.Containers, cp.Sandboxes = nil, nil
	for _, c := range rp.Containers {
		cc := *c
		cp.Containers = append(cp.Containers, &cc)
	}
	for _, c := range rp.Sandboxes {
		cc := *c
		cp.Sandboxes = append(cp.Sandboxes, &cc)
	}
	return cp
}

// unchanged fails the spec when got differs from want, the copy taken before
// method was handed got.
func (e *podEnv) unchanged(method, what string, want, got any) {
	if !reflect.DeepEqual(want, got) {
		e.failf("%s mutated the %s it was handed:\nbefore: %+v\nafter:  %+v", method, what, want, got)
	}
}

func podInputsOwned(e *podEnv) {
	pod := e.newPod("inputs", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	want := pod.DeepCopy()

	// A pod worker's copy, handed to SyncPod and changed afterwards: the
	// provider must not have kept it.
	handed := pod.DeepCopy()
	e.noError("SyncPod", e.syncPod(handed, e.lastStatus(pod)))
	handed.Name += "-changed"
	handed.Spec.Containers[0].Name = "changed"
	handed.Spec.Containers[0].Image = "kri-conformance/changed:1"

	st := e.status(pod)
	e.unchanged("GetPodStatus", "pod", want, pod)
	for _, c := range st.ContainerStatuses {
		if c.Name != "app" || c.Image != want.Spec.Containers[0].Image {
			e.failf("after the pod handed to SyncPod was changed, GetPodStatus reports container %s with image %q: the provider kept the caller's pod; %s",
				c.Name, c.Image, describeStatus(st))
		}
	}
	var ps v1.PodStatus
	e.refresh(pod, &ps)
	e.unchanged("RefreshPodStatus", "pod", want, pod)
	if apiStatusOf(ps.ContainerStatuses, "changed") != nil || apiStatusOf(ps.ContainerStatuses, "app") == nil {
		e.failf("after the pod handed to SyncPod was changed, RefreshPodStatus names containers %v, want app and not changed: the provider kept the caller's pod", statusNames(ps.ContainerStatuses))
	}
	for _, p := range e.getPods(true) {
		if p != nil && p.ID == pod.UID && p.Name != pod.Name {
			e.failf("after the pod handed to SyncPod was changed, GetPods lists it as %s/%s, want %s", p.Namespace, p.Name, podRef(pod))
		}
	}

	rp := e.runningPod(pod)
	rpWant := copyRunningPod(rp)
	pods := []*v1.Pod{pod}
	running := []*pkgcontainer.Pod{&rp}
	possibly := map[types.UID]sets.Empty{pod.UID: {}}
	e.noError("CleanupPods", e.cleanupPods(pods, running, possibly))
	e.unchanged("CleanupPods", "desired pods", []*v1.Pod{want}, pods)
	e.unchanged("CleanupPods", "running pods", []*pkgcontainer.Pod{&rpWant}, running)
	e.unchanged("CleanupPods", "possibly running pods", map[types.UID]sets.Empty{pod.UID: {}}, possibly)

	grace := int64(0)
	e.noError("KillPod", e.killPod(pod, rp, &grace))
	e.unchanged("KillPod", "pod", want, pod)
	e.unchanged("KillPod", "running pod", rpWant, rp)
	if grace != 0 {
		e.failf("KillPod changed the grace period override it was handed from 0 to %d", grace)
	}
	e.noError("DeletePod", e.deletePod(pod))
	e.unchanged("DeletePod", "pod", want, pod)
}

func podSyncNilStatus(e *podEnv) {
	pod := e.newPod("nilstatus", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	if err := e.syncPod(pod, nil); err != nil {
		e.skipIfNotSupported("SyncPod", err)
		e.failf("SyncPod of a new pod with a nil podStatus returned %v, want nil (a nil status means the pod was not started yet)", err)
	}
	e.setLast(pod, e.status(pod))
	e.syncUntilRunning(pod)
}

func podKillSendsSIGTERM(e *podEnv) {
	long := 3 * e.st.graceSecs
	pod := e.newPod("sigterm", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	pod.Spec.TerminationGracePeriodSeconds = &long
	e.syncUntilRunning(pod)
	elapsed := e.kill(pod, nil)
	if limit := time.Duration(long) * time.Second * 2 / 3; elapsed >= limit {
		e.failf("KillPod of a container that exits on SIGTERM took %s, with a grace period of %ds: it did not send SIGTERM first, or did not notice the exit", elapsed, long)
	}
	e.expectNothingRunning(pod, "after KillPod returned nil")
}

func podKillDefaultGrace(e *podEnv) {
	pod := e.newPod("defaultgrace", v1.RestartPolicyAlways, named("stubborn", e.w().IgnoresSIGTERM()))
	pod.Spec.TerminationGracePeriodSeconds = nil
	e.syncUntilRunning(pod)
	e.hold(pod, "keeps running before KillPod", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "stubborn")).NotTo(gomega.BeNil(), "container stubborn is not running; status: %s", describeStatus(st))
	})
	running := e.runningPod(pod)
	// KillPod would wait 30 seconds: watch it for the stable window, then
	// cancel its context (it must return promptly) and let the cleanup kill
	// the container at once.
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	var killErr error
	returned := make(chan error, 1)
	go func() {
		returned <- e.try("KillPod", func(context.Context) { killErr = e.p.KillPod(ctx, pod, running, nil) })
	}()
	e.hold(pod, "not killed while the default grace period of 30s runs", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		g.Expect(runningOf(st, "stubborn")).NotTo(gomega.BeNil(),
			"KillPod without override or pod grace period stopped the SIGTERM-ignoring container at once; the default grace period is 30s: %s", describeStatus(st))
	})
	cancel()
	if err := <-returned; err != nil {
		e.fail(fmt.Sprintf("%v (after its context was cancelled)", err))
	}
	if killErr == nil {
		if st := e.status(pod); runningOf(st, "stubborn") != nil {
			e.failf("KillPod returned nil while the container still runs: %s", describeStatus(st))
		}
	}
}

func podKillNilPod(e *podEnv) {
	pod := e.newPod("nilpod", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()), named("sidecar", e.w().RunsUntilKilled()))
	e.syncUntilRunning(pod)
	zero := int64(0)
	e.expectNil("KillPod", e.killPod(nil, e.runningPod(pod), &zero), "KillPod with a nil pod and the running pod")
	e.expectNothingRunning(pod, "after KillPod with a nil pod returned nil")
}

func podRefreshInit(e *podEnv) {
	pod := e.newPod("refreshinit", v1.RestartPolicyAlways, named("app", e.w().RunsUntilKilled()))
	pod.Spec.InitContainers = []v1.Container{named("setup", e.w().ExitsWithCode(0))}
	e.syncUntilRunning(pod)
	var ps v1.PodStatus
	e.refresh(pod, &ps)
	if apiStatusOf(ps.ContainerStatuses, "setup") != nil {
		e.failf("RefreshPodStatus reports the init container setup among the app containers %v; it belongs in InitContainerStatuses", statusNames(ps.ContainerStatuses))
	}
	if app := apiStatusOf(ps.ContainerStatuses, "app"); app == nil || app.State.Running == nil {
		e.failf("RefreshPodStatus does not report the running app container as Running (statuses: %v)", statusNames(ps.ContainerStatuses))
	}
	setup := apiStatusOf(ps.InitContainerStatuses, "setup")
	switch {
	case setup == nil:
		e.failf("RefreshPodStatus reports no status for the init container setup (init statuses: %v)", statusNames(ps.InitContainerStatuses))
	case len(ps.InitContainerStatuses) != 1:
		e.failf("RefreshPodStatus reports init containers %v, want [setup]", statusNames(ps.InitContainerStatuses))
	case setup.State.Terminated == nil || setup.State.Terminated.ExitCode != 0:
		e.failf("RefreshPodStatus reports the completed init container setup as %+v, want Terminated with exit code 0", setup.State)
	}
}
