package conformance

import (
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The init container specs (KRI-POD-010, 011): one at a time, in spec order,
// each to success before the next and before any app container.
var podInitSpecs = []*specDef{
	{id: "KRI-POD-010", level: Must, kind: kindPod, groups: []string{"init"}, caps: []Capability{CapInitContainers}, pod: podInitOrder,
		text: "init containers run one at a time in spec order, each to successful completion before the next and before any app container"},
	{id: "KRI-POD-011", level: Must, kind: kindPod, groups: []string{"init"}, caps: []Capability{CapInitContainers}, pod: podInitFailureBlocks,
		text: "a failed init container (RestartPolicy Never) blocks the later init containers and every app container"},
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
	e.trySyncUntil(pod, "init container first exited 1", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		blocked(g, st)
		var codes []int
		for _, c := range exitedOf(st, "first") {
			codes = append(codes, c.ExitCode)
		}
		g.Expect(codes).To(gomega.ContainElement(1), "first has not exited 1: %s", describeStatus(st))
	})
	e.trySyncHolding(pod, "later containers blocked", blocked)
}
