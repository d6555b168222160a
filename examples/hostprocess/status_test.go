package hostprocess

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/internal/k8scompat"
	"github.com/kri-kit/testkit/kri"
)

func TestGetPodStatusOfUnknownPod(t *testing.T) {
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	st, err := p.GetPodStatus(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	want := &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("status of an unknown pod (-want +got):\n%s", diff)
	}
	if _, err := p.GetPodStatus(context.Background(), nil); !errors.Is(err, ErrInvalidPod) {
		t.Errorf("GetPodStatus(nil) = %v, want ErrInvalidPod", err)
	}
	// A UID that could never be synced is just unknown.
	pod.UID = "../x"
	if st, err := p.GetPodStatus(context.Background(), pod); err != nil || st.ID != "../x" {
		t.Errorf("GetPodStatus(bad UID) = %+v, %v", st, err)
	}
}

func TestGetPodStatus(t *testing.T) {
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"), shell("done", "exit 0"))
	pod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
	mustSync(t, p, pod, kri.NewReasonCache())
	waitContainerExited(t, p, pod, "done")
	st := podStatus(t, p, pod)

	if st.ID != pod.UID || st.Name != pod.Name || st.Namespace != pod.Namespace || st.TimeStamp.IsZero() {
		t.Errorf("identity %q %q %q %v", st.ID, st.Name, st.Namespace, st.TimeStamp)
	}
	if len(st.SandboxStatuses) != 1 {
		t.Fatalf("%d sandboxes, want 1", len(st.SandboxStatuses))
	}
	sb := st.SandboxStatuses[0]
	if sb.Id == "" || sb.State != runtimeapi.PodSandboxState_SANDBOX_READY || sb.CreatedAt <= 0 ||
		sb.Metadata.GetName() != pod.Name || sb.Metadata.GetNamespace() != pod.Namespace || sb.Metadata.GetUid() != string(pod.UID) {
		t.Errorf("sandbox status %v", sb)
	}
	if len(st.ContainerStatuses) != 2 || len(st.ActiveContainerStatuses) != 2 {
		t.Fatalf("%d statuses, %d active, want 2, 2", len(st.ContainerStatuses), len(st.ActiveContainerStatuses))
	}
	// Newest first: "done" started after "app".
	if st.ContainerStatuses[0].Name != "done" {
		t.Errorf("statuses not newest first: %s, %s", st.ContainerStatuses[0].Name, st.ContainerStatuses[1].Name)
	}
	app := st.FindContainerStatusByName("app")
	if app.State != pkgcontainer.ContainerStateRunning || !app.FinishedAt.IsZero() || app.ExitCode != 0 {
		t.Errorf("app %+v, want running without finish time", app)
	}

	// The running pod built from the status is what KillPod and
	// GetPods(false) agree on.
	rp := pkgcontainer.ConvertPodStatusToRunningPod(RuntimeName, st)
	if len(rp.Containers) != 1 || rp.Containers[0].ID != app.ID || len(rp.Sandboxes) != 1 ||
		rp.Sandboxes[0].ID.ID != sb.Id || rp.Sandboxes[0].State != pkgcontainer.ContainerStateRunning {
		t.Errorf("running pod %+v", rp)
	}

	// The status belongs to the caller.
	st.ContainerStatuses[0].Name = "changed"
	st.SandboxStatuses[0].Id = "changed"
	again := podStatus(t, p, pod)
	if again.ContainerStatuses[0].Name != "done" || again.SandboxStatuses[0].Id == "changed" {
		t.Error("changing a returned status changed the provider's records")
	}
}

func TestGetPods(t *testing.T) {
	p := newProvider(t)
	mixed := makePod("mixed", v1.RestartPolicyNever, ctr("run", "sleep", "infinity"), ctr("done", "true"))
	finished := makePod("finished", v1.RestartPolicyNever, ctr("done", "true"))
	for _, pod := range []*v1.Pod{mixed, finished} {
		mustSync(t, p, pod, kri.NewReasonCache())
		waitContainerExited(t, p, pod, "done")
	}
	running, err := p.GetPods(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	// finished runs no container but keeps its ready sandbox until
	// KillPod, as in the kubelet's runtime: it is listed too, with its
	// sandbox and no container.
	if len(running) != 2 || running[0].ID != mixed.UID || running[0].Name != mixed.Name || running[0].Namespace != "ns" || running[1].ID != finished.UID {
		t.Fatalf("GetPods(false) = %+v, want the pod with a running container, then the one with only a ready sandbox", running)
	}
	if len(running[1].Containers) != 0 || len(running[1].Sandboxes) != 1 || running[1].Sandboxes[0].State != pkgcontainer.ContainerStateRunning {
		t.Errorf("GetPods(false) lists finished with containers %+v and sandboxes %+v, want no container and its ready sandbox", running[1].Containers, running[1].Sandboxes)
	}
	if len(running[0].Containers) != 1 || running[0].Containers[0].Name != "run" || running[0].Containers[0].State != pkgcontainer.ContainerStateRunning {
		t.Errorf("GetPods(false) containers %+v, want only the running one", running[0].Containers)
	}
	if c := running[0].Containers[0]; c.ID.Type != RuntimeName || c.Hash == 0 || c.Image == "" {
		t.Errorf("container %+v lacks fields", c)
	}
	if sandboxID, createdAt, ok := k8scompat.ContainerOrigin(running[0].Containers[0]); ok && (sandboxID == "" || createdAt == 0) {
		t.Errorf("container %+v lacks its sandbox ID or creation time", running[0].Containers[0])
	}
	if len(running[0].Sandboxes) != 1 || running[0].Sandboxes[0].State != pkgcontainer.ContainerStateRunning {
		t.Errorf("sandboxes %+v", running[0].Sandboxes)
	}

	all, err := p.GetPods(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != mixed.UID || all[1].ID != finished.UID {
		t.Fatalf("GetPods(true) = %+v, want both pods in the order first seen", all)
	}
	if len(all[0].Containers) != 2 || len(all[1].Containers) != 1 || all[1].Containers[0].State != pkgcontainer.ContainerStateExited {
		t.Errorf("GetPods(true) containers %+v / %+v", all[0].Containers, all[1].Containers)
	}
	if err := p.KillPod(testCtx(t), finished, pkgcontainer.Pod{}, nil); err != nil {
		t.Fatal(err)
	}
	if running, err = p.GetPods(context.Background(), false); err != nil || len(running) != 1 || running[0].ID != mixed.UID {
		t.Errorf("GetPods(false) after KillPod of finished = %+v, %v; want only mixed", running, err)
	}
}

func TestRefreshPodStatus(t *testing.T) {
	p := newProvider(t)
	pod := withInit(makePod("uid-1", v1.RestartPolicyAlways,
		ctr("run", "sleep", "infinity"),
		shell("crash", "exit 3"),
		ctr("broken", "/nonexistent/bin"),
	), ctr("init", "true"))

	// Unknown pod: unchanged.
	api := v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{{Name: "ghost"}}}
	orig := api.DeepCopy()
	p.RefreshPodStatus(pod, &api)
	if !equality.Semantic.DeepEqual(&api, orig) {
		t.Errorf("RefreshPodStatus changed the status of an unknown pod: %s", cmp.Diff(orig, &api))
	}
	p.RefreshPodStatus(nil, &api) // no panic
	p.RefreshPodStatus(pod, nil)

	rc := kri.NewReasonCache()
	mustSync(t, p, pod, rc)
	p.RefreshPodStatus(pod, &api)
	if len(api.ContainerStatuses) != 3 || len(api.InitContainerStatuses) != 1 {
		t.Fatalf("statuses %+v", api)
	}
	for _, cs := range api.ContainerStatuses {
		if cs.State.Waiting == nil || cs.State.Waiting.Reason != "PodInitializing" {
			t.Errorf("%s before init completed: %+v, want Waiting PodInitializing", cs.Name, cs.State)
		}
	}
	waitContainerExited(t, p, pod, "init")
	if err := syncPod(t, p, pod, rc); !errors.Is(err, pkgcontainer.ErrRunContainer) {
		t.Fatalf("SyncPod = %v, want ErrRunContainer for broken", err)
	}
	first := waitContainerExited(t, p, pod, "crash")
	_ = syncPod(t, p, pod, rc) // restarts crash
	second := waitContainerExited(t, p, pod, "crash")

	p.RefreshPodStatus(pod, &api)
	if api.Phase != v1.PodPending {
		t.Error("RefreshPodStatus changed a field it does not own")
	}
	byName := map[string]v1.ContainerStatus{}
	for _, cs := range append(api.InitContainerStatuses, api.ContainerStatuses...) {
		byName[cs.Name] = cs
	}
	if _, ok := byName["ghost"]; ok || len(byName) != 4 {
		t.Errorf("statuses for %v, want exactly the spec's containers", cmp.Diff(nil, byName))
	}
	if run := byName["run"]; run.State.Running == nil || !run.Ready || run.Started == nil || !*run.Started ||
		run.ContainerID == "" || run.Image != "busybox:stable" {
		t.Errorf("run: %+v", run)
	}
	crash := byName["crash"]
	if term := crash.State.Terminated; term == nil || term.ExitCode != 3 || term.ContainerID != second.ID.String() || term.FinishedAt.IsZero() {
		t.Errorf("crash state %+v, want Terminated 3 of the second instance", crash.State)
	}
	if last := crash.LastTerminationState.Terminated; last == nil || last.ContainerID != first.ID.String() {
		t.Errorf("crash last state %+v, want the first instance", crash.LastTerminationState)
	}
	if crash.RestartCount != 1 || crash.Ready {
		t.Errorf("crash restarts %d ready %v", crash.RestartCount, crash.Ready)
	}
	if broken := byName["broken"]; broken.State.Waiting == nil || broken.State.Waiting.Reason != "RunContainerError" || broken.Ready {
		t.Errorf("broken: %+v, want Waiting RunContainerError", broken.State)
	}
	if init := byName["init"]; init.State.Terminated == nil || !init.Ready {
		t.Errorf("init: %+v", init)
	}
}

func TestReturnedObjectsBelongToTheCaller(t *testing.T) {
	p := newProvider(t)
	pod := makePod("uid-1", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	mustSync(t, p, pod, kri.NewReasonCache())
	// Changing the pod handed in changes nothing the provider keeps.
	pod.Name = "renamed"
	pod.Spec.Containers[0].Image = "changed"
	st := podStatus(t, p, makePod("uid-1", "", ctr("app", "true")))
	if st.Name != "pod-uid-1" || st.ContainerStatuses[0].Image != "busybox:stable" {
		t.Errorf("provider kept a reference to the pod: %+v", st)
	}
	pods, _ := p.GetPods(context.Background(), true)
	pods[0].Containers[0].Name = "changed"
	pods, _ = p.GetPods(context.Background(), true)
	if pods[0].Containers[0].Name != "app" {
		t.Error("changing GetPods' result changed the provider's records")
	}
}
