package conformance

import (
	"fmt"
	"reflect"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The cleanup specs (KRI-POD-021 to 023): CleanupPods as the agent's
// housekeeping calls it (pod.go HandlePodCleanups), with the desired,
// running and possibly running pods it hands over.
var podCleanupSpecs = []*specDef{
	{id: "KRI-POD-021", alone: true, level: Must, kind: kindPod, groups: []string{"cleanup"}, pod: podCleanupKeepsDesired,
		text: "CleanupPods leaves every desired pod running, its containers keeping their IDs"},
	{id: "KRI-POD-022", alone: true, level: Must, kind: kindPod, groups: []string{"cleanup"}, pod: podCleanupKeepsPossiblyRunning,
		text: "CleanupPods leaves pods named only by runningPods or possiblyRunningPods untouched"},
	{id: "KRI-POD-023", alone: true, level: Should, kind: kindPod, groups: []string{"cleanup"}, caps: []Capability{CapOrphanCleanup}, pod: podCleanupDropsOrphans,
		note: "Lowered to SHOULD: kuscia's housekeeping kills the running orphans GetPods(false) lists itself, with KillPod (pod.go HandlePodCleanups; KRI-POD-005 and 056), before it calls CleanupPods.",
		text: "CleanupPods stops and forgets a pod named by none of its arguments (an orphan)"},
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
