package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// The concurrency spec (KRI-POD-028): many pods synced, read, refreshed,
// cleaned up, killed and deleted at once, one worker a pod, as the agent's
// pod workers do.
var podConcurrencySpecs = []*specDef{
	{id: "KRI-POD-028", alone: true, level: Must, kind: kindPod, groups: []string{"concurrency"}, pod: podConcurrentPods,
		note: "Each lifecycle now also refreshes its pod and, once it runs, calls a CleanupPods naming every pod, which must leave it running. Formerly each pod was synced by two workers at once, which no agent does (one worker per pod); now one worker syncs it while GetPods and RefreshPodStatus run alongside.",
		text: "N pods synced (one worker each, with GetPods and RefreshPodStatus alongside), queried, refreshed, cleaned up (naming every pod), killed and deleted concurrently all succeed, without duplicate containers and without the cleanup stopping any"},
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
