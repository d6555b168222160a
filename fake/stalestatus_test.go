package fake_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
)

// TestStaleStatusShowsAContainerTheRuntimeLacks checks the staleness check's
// last part, which its steady path (every status found by a started
// container) skips: a status that also shows a container the runtime never
// started is stale, beside the up-to-date ones.
func TestStaleStatusShowsAContainerTheRuntimeLacks(t *testing.T) {
	f := newFixture(t)
	web := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(web)
	st := f.status(web)
	f.syncWith(web, st) // up to date
	extra := *st.ContainerStatuses[0]
	extra.Name, extra.ID.ID = "ghost", "ghost-id"
	st.ContainerStatuses = append(st.ContainerStatuses, &extra)
	f.syncWith(web, st)
	got := f.p.Calls(fake.ForMethod(fake.MethodSyncPod), fake.StaleStatus())
	if len(got) != 1 {
		t.Fatalf("stale SyncPod calls: %+v, want the one whose status shows a ghost container", got)
	}
	if s := got[0].StaleStatus; s != `container "ghost": podStatus shows ghost-id `+string(pkgcontainer.ContainerStateRunning)+`, the runtime has no instance of it` {
		t.Errorf("StaleStatus = %q", s)
	}
}
