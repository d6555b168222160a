package fake_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// jobCompletion is the code under test: a Job-style controller that waits,
// without polling, until its pod is done (the fake's WaitFor wakes on every
// transition), then reads the status a kubelet would report, as the
// controller's reconcile would read it from the API server.
func jobCompletion(ctx context.Context, provider *fake.PodProvider, pod *v1.Pod, rc *kri.ReasonCache) (v1.PodStatus, error) {
	done := func(s fake.PodSnapshot, ok bool) bool {
		if !ok {
			return false
		}
		for _, c := range s.Containers {
			if c.State != pkgcontainer.ContainerStateExited {
				return false
			}
		}
		return len(s.Containers) > 0
	}
	if _, err := provider.WaitFor(ctx, pod.Namespace+"/"+pod.Name, done); err != nil {
		return v1.PodStatus{}, err
	}
	return provider.APIPodStatus(ctx, pod, rc)
}

// A Job whose pod has a native sidecar (a log shipper, restartable init
// container) with a preStop hook that flushes for 2s, run to completion on
// a FakeClock in a testing/synctest bubble, beside a pod worker that syncs
// every second: the work exits 0 at 5s; the fake then stops the sidecar,
// running its preStop hook first (2s, writing "flushed" to the sidecar's
// termination message file) and sending SIGTERM after it, so the sidecar
// exits 143 at 7s; the pod is Succeeded. Nothing sleeps: the test steps the
// clock and synctest.Wait lets every goroutine settle after each step.
func TestJobWithSidecarAndPreStopRunsToCompletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		epoch := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		clk := clocktesting.NewFakeClock(epoch)
		provider := fake.NewPodProvider(fake.WithClock(clk))
		shipper := sidecarContainer(container("shipper", "sh", "-c", exitsOnSIGTERM))
		shipper.TerminationMessagePath = "/dev/termination-log"
		shipper.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{
			Command: []string{"sh", "-c", "sleep 2; echo -n flushed > /dev/termination-log"},
		}}}
		pod := newPod("report", v1.RestartPolicyNever, container("work", "sh", "-c", "sleep 5; exit 0"))
		pod.Spec.InitContainers = []v1.Container{shipper}
		rc := kri.NewReasonCache()

		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer func() { cancel(); provider.Stop(); wg.Wait() }()
		wg.Go(func() { _ = provider.Start(ctx) })
		wg.Go(func() { clockWorker(ctx, clk, provider, pod, rc) })
		var status v1.PodStatus
		var jobErr error
		var doneAt time.Time
		jobDone := make(chan struct{})
		wg.Go(func() {
			defer close(jobDone)
			status, jobErr = jobCompletion(ctx, provider, pod, rc)
			doneAt = clk.Now()
		})

		synctest.Wait()
		for range 30 {
			select {
			case <-jobDone:
			default:
				clk.Step(time.Second)
				synctest.Wait()
				continue
			}
			break
		}
		select {
		case <-jobDone:
		default:
			s, _ := provider.Snapshot("default/report")
			t.Fatalf("after 30s the Job controller still waits; pod: %+v", s)
		}
		if jobErr != nil {
			t.Fatalf("jobCompletion: %v", jobErr)
		}
		if got, want := doneAt.Sub(epoch), 7*time.Second; got != want {
			t.Errorf("the Job completed after %v, want %v (work exits at 5s, the shipper's preStop takes 2s, then SIGTERM ends it)", got, want)
		}
		if status.Phase != v1.PodSucceeded {
			t.Fatalf("phase %s, want Succeeded; init %+v, app %+v", status.Phase, status.InitContainerStatuses, status.ContainerStatuses)
		}
		work, ship := status.ContainerStatuses[0].State.Terminated, status.InitContainerStatuses[0].State.Terminated
		if work == nil || ship == nil {
			t.Fatalf("want both containers terminated: work %+v, shipper %+v", status.ContainerStatuses[0].State, status.InitContainerStatuses[0].State)
		}
		if work.ExitCode != 0 || work.FinishedAt.Sub(epoch) != 5*time.Second {
			t.Errorf("work terminated %+v, want exit 0 at 5s", work)
		}
		if ship.ExitCode != 143 || ship.FinishedAt.Sub(epoch) != 7*time.Second || ship.Message != "flushed" {
			t.Errorf("shipper terminated with exit %d at %v, message %q; want 143 at 7s (SIGTERM after the 2s preStop hook), message %q (written by the hook)",
				ship.ExitCode, ship.FinishedAt.Sub(epoch), ship.Message, "flushed")
		}
		for _, c := range provider.Calls(fake.ForMethod(fake.MethodSyncPod), fake.Returned()) {
			if c.Err != nil {
				t.Errorf("SyncPod at %v failed: %v", c.Began.Sub(epoch), c.Err)
			}
		}
	})
}
