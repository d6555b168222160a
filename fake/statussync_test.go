package fake_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
)

// syncWith calls SyncPod with the given status, failing the test on error.
func (f *fixture) syncWith(pod *v1.Pod, st *pkgcontainer.PodStatus) {
	f.t.Helper()
	if err := f.p.SyncPod(context.Background(), pod, st, f.rc); err != nil {
		f.t.Fatalf("SyncPod(%s): %v", pod.Name, err)
	}
}

// lastSync returns the latest SyncPod call in the log.
func (f *fixture) lastSync() fake.Call {
	f.t.Helper()
	calls := f.p.Calls(fake.ForMethod(fake.MethodSyncPod))
	if len(calls) == 0 {
		f.t.Fatal("no SyncPod call logged")
	}
	return calls[len(calls)-1]
}

func runningCount(st *pkgcontainer.PodStatus, name string) int {
	n := 0
	for _, c := range st.ContainerStatuses {
		if c.Name == name && c.State == pkgcontainer.ContainerStateRunning {
			n++
		}
	}
	return n
}

func readySandboxes(st *pkgcontainer.PodStatus) int {
	n := 0
	for _, sb := range st.SandboxStatuses {
		if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			n++
		}
	}
	return n
}

func TestStaleStatusDelaysARestart(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        []fake.Option
		wantRestart bool
	}{
		{name: "default: the fake's own state decides", wantRestart: true},
		{name: "status-driven: the stale status decides", opts: []fake.Option{fake.WithStatusDrivenSync()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.opts...)
			pod := newPod("web", v1.RestartPolicyAlways, container("app", "sh", "-c", "sleep 5; exit 3"))
			f.mustSync(pod)
			stale := f.status(pod)
			first := stale.FindContainerStatusByName("app").ID.ID
			f.clock.Step(5 * time.Second)
			f.syncWith(pod, stale)
			if c := f.lastSync(); !strings.Contains(c.StaleStatus, `container "app": podStatus shows `+first+` running, the runtime's newest is `+first+` exited (exit code 3)`) {
				t.Errorf("Call.StaleStatus = %q, want it to say app is shown running but has exited", c.StaleStatus)
			}
			cur := f.current(pod, "app")
			if restarted := cur.ID.ID != first; restarted != tc.wantRestart {
				t.Fatalf("SyncPod with a status showing app running after it exited: restarted = %v, want %v (%s)", restarted, tc.wantRestart, describe(f.status(pod)))
			}
			f.mustSync(pod) // a fresh status
			if c := f.lastSync(); c.StaleStatus != "" {
				t.Errorf("Call.StaleStatus of a sync with a fresh status = %q, want empty", c.StaleStatus)
			}
			if c := f.current(pod, "app"); !running(c) || c.RestartCount != 1 {
				t.Fatalf("after a sync with a fresh status app is %+v, want running with restart count 1", c)
			}
		})
	}
}

func TestStatusDrivenSyncOfAnEmptyStatusRestartsThePod(t *testing.T) {
	f := newFixture(t, fake.WithStatusDrivenSync())
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.mustSync(pod)
	f.syncWith(pod, nil) // as a controller that lost the status would
	if c := f.lastSync(); !strings.HasPrefix(c.StaleStatus, "podStatus is nil, but the runtime has sandbox") {
		t.Errorf("Call.StaleStatus = %q, want it to say the status is nil", c.StaleStatus)
	}
	st := f.status(pod)
	if readySandboxes(st) != 2 || runningCount(st, "app") != 2 {
		t.Fatalf("after SyncPod with a nil status: %s; want a second ready sandbox and a second running app (the kubelet's runtime kills only what the status shows)", describe(st))
	}
	// The next sync sees two ready sandboxes: everything is killed and
	// the pod starts over in a new one.
	f.syncWith(pod, st)
	st = f.status(pod)
	if readySandboxes(st) != 1 || runningCount(st, "app") != 1 || st.SandboxStatuses[0].Metadata.Attempt != 1 {
		t.Fatalf("after a sync with the status showing two sandboxes: %s; want one ready sandbox (attempt 1) and one running app", describe(st))
	}
	if c := st.FindContainerStatusByName("app"); c.RestartCount != 1 {
		t.Errorf("app restarted in the new sandbox has restart count %d, want 1 (the status's 0, plus one)", c.RestartCount)
	}
}

func TestStatusDrivenSyncDetails(t *testing.T) {
	t.Run("init containers start one per sync", func(t *testing.T) {
		f := newFixture(t, fake.WithStatusDrivenSync())
		pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
		pod.Spec.InitContainers = []v1.Container{container("init-1", "true"), container("init-2", "true")}
		for i, want := range []string{"init-1", "init-2", "app"} {
			f.mustSync(pod)
			st := f.status(pod)
			if len(st.ContainerStatuses) != i+1 || st.ContainerStatuses[0].Name != want {
				t.Fatalf("sync %d: %s; want %s started last", i+1, describe(st), want)
			}
		}
	})
	t.Run("the restart count continues from the status", func(t *testing.T) {
		f := newFixture(t, fake.WithStatusDrivenSync())
		pod := newPod("web", v1.RestartPolicyAlways, container("app", "false"))
		f.mustSync(pod)
		st := f.status(pod)
		st.FindContainerStatusByName("app").RestartCount = 7
		f.syncWith(pod, st)
		if c := f.current(pod, "app"); c.RestartCount != 8 {
			t.Fatalf("restart count %d, want 8 (the status's 7, plus one)", c.RestartCount)
		}
	})
	t.Run("a pod whose containers are done has its sandbox stopped", func(t *testing.T) {
		f := newFixture(t, fake.WithStatusDrivenSync())
		pod := newPod("job", v1.RestartPolicyNever, container("app", "true"))
		f.mustSync(pod)
		f.mustSync(pod)
		st := f.status(pod)
		if readySandboxes(st) != 0 {
			t.Fatalf("after app completed under restartPolicy Never: %s, want the sandbox stopped", describe(st))
		}
		f.mustSync(pod)
		if st := f.status(pod); len(st.SandboxStatuses) != 1 || len(st.ContainerStatuses) != 1 {
			t.Fatalf("a sync of the finished pod: %s, want no new sandbox or container", describe(st))
		}
	})
	t.Run("a nil entry in the status is an error that changes nothing", func(t *testing.T) {
		f := newFixture(t, fake.WithStatusDrivenSync())
		pod := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
		st := &pkgcontainer.PodStatus{ContainerStatuses: []*pkgcontainer.Status{nil}}
		err := f.p.SyncPod(context.Background(), pod, st, f.rc)
		if err == nil || !strings.Contains(err.Error(), "podStatus.ContainerStatuses[0] is nil") {
			t.Fatalf("SyncPod = %v, want an error naming podStatus.ContainerStatuses[0]", err)
		}
		if _, ok := f.p.Snapshot("default/web"); ok {
			t.Fatal("the rejected SyncPod made the pod known")
		}
	})
}

func TestStaleStatusIsRecorded(t *testing.T) {
	f := newFixture(t)
	web := newPod("web", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	other := newPod("other", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.syncWith(web, nil) // a new pod: nil is up to date
	f.mustSync(other)
	f.syncWith(web, f.status(other))
	f.syncWith(web, &pkgcontainer.PodStatus{ID: web.UID})
	got := f.p.Calls(fake.ForMethod(fake.MethodSyncPod), fake.StaleStatus())
	if len(got) != 2 {
		t.Fatalf("stale SyncPod calls: %+v, want the two with another pod's status and an empty one", got)
	}
	if s := got[0].StaleStatus; !strings.Contains(s, `podStatus is of pod UID "uid-other", not "uid-web"`) {
		t.Errorf("StaleStatus with another pod's status = %q", s)
	}
	if s := got[1].StaleStatus; !strings.Contains(s, "podStatus shows no sandbox, the runtime has sandbox") ||
		!strings.Contains(s, `container "app": podStatus shows no instance, the runtime's newest is`) {
		t.Errorf("StaleStatus with an empty status = %q", s)
	}
}
