package kubeletruntime_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/examples/kubeletruntime"
	"github.com/kri-kit/testkit/examples/kubeletruntime/crisim"
	"github.com/kri-kit/testkit/internal/httpd/httpdtest"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
	"github.com/kri-kit/testkit/sim/workload"
)

// The provider's calls of the agent's HandlePodSyncByUID, seen by an agent
// that syncs its pod only when the provider calls, as kuscia's does: a pod
// reaches a state in what this agent publishes only through the calls.

// notifiedAgent syncs one pod as kuscia's pod worker does (GetPodStatus,
// the API status built from it and refined by RefreshPodStatus, then
// SyncPod), once at first and then once after each batch of calls for its
// pod, in a goroutine of its own.
type notifiedAgent struct {
	p   *kubeletruntime.Provider
	pod *v1.Pod
	rc  *kri.ReasonCache

	kick chan struct{}

	mu        sync.Mutex
	calls     int
	published v1.PodStatus
	synced    []error // each SyncPod's error
	failure   error   // a GetPodStatus that failed
}

// HandlePodSyncByUID is the agent's PodSyncHandler.
func (a *notifiedAgent) HandlePodSyncByUID(uid types.UID) {
	if uid != a.current().UID {
		return
	}
	a.mu.Lock()
	a.calls++
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// startAgent hands a new agent for pod to p (before Start, as the agent
// does), starts p and the agent's worker, whose first sync runs half a
// RelistPeriod later; both end when the test ends.
func startAgent(t *testing.T, p *kubeletruntime.Provider, pod *v1.Pod) *notifiedAgent {
	t.Helper()
	a := &notifiedAgent{p: p, pod: pod, rc: kri.NewReasonCache(), kick: make(chan struct{}, 1)}
	p.SetPodSyncHandler(a)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Start(ctx) })
	wg.Go(func() {
		// The pod comes a while after Start, away from the PLEG's
		// first relist, which would otherwise see what the first
		// SyncPod starts by chance.
		select {
		case <-ctx.Done():
			return
		case <-time.After(kubeletruntime.RelistPeriod / 2):
		}
		for {
			a.sync(ctx)
			select {
			case <-ctx.Done():
				return
			case <-a.kick:
			}
		}
	})
	t.Cleanup(func() { cancel(); p.Stop(); wg.Wait() })
	return a
}

// current is the pod as the agent has it now.
func (a *notifiedAgent) current() *v1.Pod {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pod
}

// update replaces the agent's pod with a new version of it (same UID) and
// syncs it, as kuscia's agent syncs a pod whose spec changed; the calls
// counted so far are returned.
func (a *notifiedAgent) update(pod *v1.Pod) int {
	a.mu.Lock()
	a.pod = pod
	calls := a.calls
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
	return calls
}

// sync is one round of kuscia's pod worker: publish the status built from
// GetPodStatus, then SyncPod.
func (a *notifiedAgent) sync(ctx context.Context) {
	pod := a.current()
	st, err := a.p.GetPodStatus(ctx, pod)
	if err != nil {
		a.mu.Lock()
		a.failure = err
		a.mu.Unlock()
		return
	}
	api := podstatus.Generate(pod, st, a.rc)
	a.p.RefreshPodStatus(pod, &api)
	a.mu.Lock()
	a.published = *api.DeepCopy()
	a.mu.Unlock()
	err = a.p.SyncPod(ctx, pod, st, a.rc)
	a.mu.Lock()
	a.synced = append(a.synced, err)
	a.mu.Unlock()
}

// waitPublished waits until cond holds of the published status, and
// returns it. It gives up shortly before the test's deadline with what was
// published last.
func (a *notifiedAgent) waitPublished(t *testing.T, what string, cond func(v1.PodStatus) bool) v1.PodStatus {
	t.Helper()
	deadline, hasDeadline := t.Deadline()
	for {
		a.mu.Lock()
		published, calls, syncs, failure := *a.published.DeepCopy(), a.calls, len(a.synced), a.failure
		a.mu.Unlock()
		if failure != nil {
			t.Fatalf("GetPodStatus: %v", failure)
		}
		if cond(published) {
			return published
		}
		if hasDeadline && time.Until(deadline) < 10*time.Second {
			t.Fatalf("the agent never published %s: %d calls, %d syncs; last published %+v", what, calls, syncs, published.ContainerStatuses)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func publishedStatus(api v1.PodStatus, name string) v1.ContainerStatus {
	for _, c := range api.ContainerStatuses {
		if c.Name == name {
			return c
		}
	}
	return v1.ContainerStatus{}
}

// A container's start and exit, found by the kubelet's PLEG, reach the
// agent as calls.
func TestNotifiesContainerStartAndExit(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{})
	pod := newPod("start-exit", v1.RestartPolicyNever, shell("app", "sleep 2; exit 3"))
	a := startAgent(t, p, pod)
	// The first sync published the pod before its container started.
	a.waitPublished(t, "app running", func(api v1.PodStatus) bool { return publishedStatus(api, "app").State.Running != nil })
	got := a.waitPublished(t, "app terminated with exit code 3", func(api v1.PodStatus) bool {
		term := publishedStatus(api, "app").State.Terminated
		return term != nil && term.ExitCode == 3
	})
	if got.Phase != v1.PodFailed {
		t.Errorf("phase %s after the only container exited 3 under RestartPolicy Never, want Failed", got.Phase)
	}
}

// A readiness probe's result, from the prober's readiness manager, reaches
// the agent as a call: the container is published Ready, then not Ready
// once its server answers 404, without any change of the container.
func TestNotifiesReadinessChanges(t *testing.T) {
	rs := simulator(t)
	p := newProvider(t, kubeletruntime.Options{RuntimeService: rs})
	port := httpdtest.Port(t)
	web := readyWeb(port)
	pod := newPod("readiness", v1.RestartPolicyAlways, web)
	a := startAgent(t, p, pod)
	got := a.waitPublished(t, "web Ready", func(api v1.PodStatus) bool { return ready(api, "web") })
	id := pkgcontainer.ParseContainerID(klog.Background(), publishedStatus(got, "web").ContainerID).ID
	if _, _, err := rs.ExecSync(t.Context(), id, []string{"rm", "-f", "/www/ready"}, 0); err != nil {
		t.Fatalf("ExecSync rm -f /www/ready in web: %v", err)
	}
	got = a.waitPublished(t, "web running and not Ready", func(api v1.PodStatus) bool {
		cs := publishedStatus(api, "web")
		return cs.State.Running != nil && !cs.Ready
	})
	if cs := publishedStatus(got, "web"); cs.RestartCount != 0 || pkgcontainer.ParseContainerID(klog.Background(), cs.ContainerID).ID != id {
		t.Errorf("web was restarted: %+v", cs)
	}
}

// The end of a crash-loop back-off reaches the agent as a call: its sync
// restarts the container, whose exit brings the next back-off, and so on.
// Without the call the pod stops at the first back-off (restart count 1).
// The back-off is longer than the PLEG's relist period, so that the sync
// after an exit comes before the back-off has ended.
func TestNotifiesCrashLoopBackOffEnd(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{InitialBackOff: 3 * kubeletruntime.RelistPeriod, MaxBackOff: 3 * kubeletruntime.RelistPeriod})
	pod := newPod("crash", v1.RestartPolicyAlways, shell("app", "exit 1"))
	a := startAgent(t, p, pod)
	a.waitPublished(t, "app in CrashLoopBackOff", func(api v1.PodStatus) bool {
		w := publishedStatus(api, "app").State.Waiting
		return w != nil && w.Reason == "CrashLoopBackOff"
	})
	a.waitPublished(t, "app restarted 3 times", func(api v1.PodStatus) bool { return publishedStatus(api, "app").RestartCount >= 3 })
}

// countingImages counts the pulls of an image service.
type countingImages struct {
	internalapi.ImageManagerService
	pulls atomic.Int32
}

func (c *countingImages) PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, config *runtimeapi.PodSandboxConfig) (string, error) {
	c.pulls.Add(1)
	return c.ImageManagerService.PullImage(ctx, image, auth, config)
}

// The end of an image pull back-off reaches the agent as a call: its sync
// pulls again. Without the call the image is pulled once, and the pod
// stays in ImagePullBackOff.
func TestNotifiesImagePullBackOffEnd(t *testing.T) {
	images := &countingImages{ImageManagerService: crisim.NewImageService()}
	p := newProvider(t, kubeletruntime.Options{ImageService: images, InitialBackOff: 2 * time.Second, MaxBackOff: 4 * time.Second})
	app := container("app", "sleep", "infinity")
	app.Image = workload.MissingImageDomain + "/app" // no tag: the image manager's back-off key has ":latest"
	pod := newPod("pull", v1.RestartPolicyAlways, app)
	a := startAgent(t, p, pod)
	a.waitPublished(t, "app in ImagePullBackOff", func(api v1.PodStatus) bool {
		w := publishedStatus(api, "app").State.Waiting
		return w != nil && w.Reason == "ImagePullBackOff"
	})
	a.waitPublished(t, "a third pull of app's image", func(v1.PodStatus) bool { return images.pulls.Load() >= 3 })
}

// A sidecar that runs for less than RelistPeriod is seen started while it
// runs, so that the app container starts beside it: the SyncPod that
// started it asks the PLEG for a relist at once, as the kubelet's SyncPod
// does. Without that, the next relist finds it exited, and the app
// container starts only after the sidecar's restart (KRI-POD-067 fails).
// The first sync comes half a relist period after Start, so that the
// sidecar's 300ms run falls between two periodic relists.
func TestRelistsAfterASyncPodThatStartedContainers(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{})
	always := v1.ContainerRestartPolicyAlways
	helper := shell("helper", "sleep 0.3; exit 1")
	helper.RestartPolicy = &always
	pod := newPod("short-sidecar", v1.RestartPolicyNever, container("app", "sleep", "infinity"))
	pod.Spec.InitContainers = []v1.Container{helper}
	a := startAgent(t, p, pod)
	a.waitPublished(t, "app running beside its short-lived sidecar", func(api v1.PodStatus) bool {
		return publishedStatus(api, "app").State.Running != nil
	})
	var app, first *pkgcontainer.Status
	deadline, hasDeadline := t.Deadline()
	for first == nil || first.State != pkgcontainer.ContainerStateExited {
		if hasDeadline && time.Until(deadline) < 10*time.Second {
			t.Fatalf("the sidecar's first run never exited: %+v", first)
		}
		st, err := p.GetPodStatus(t.Context(), pod)
		if err != nil {
			t.Fatalf("GetPodStatus: %v", err)
		}
		for _, c := range st.ContainerStatuses {
			switch {
			case c.Name == "app":
				app = c
			case c.Name == "helper" && c.RestartCount == 0:
				first = c
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !app.StartedAt.Before(first.FinishedAt) {
		t.Errorf("app started at %s, after the sidecar's first run ended at %s: its start was not seen while it ran",
			app.StartedAt.Format(time.RFC3339Nano), first.FinishedAt.Format(time.RFC3339Nano))
	}
}

// A resize in place, which changes no container's state (no PLEG event),
// reaches the agent as a call once the runtime manager has done it (its
// RequestPodReinspect): the sync it brings publishes the new resources.
func TestNotifiesResizeInPlace(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{})
	resources := func(cpu, memory string) v1.ResourceRequirements {
		l := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(memory)}
		return v1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
	}
	app := container("app", "sleep", "infinity")
	app.Resources = resources("250m", "64Mi")
	app.ResizePolicy = []v1.ContainerResizePolicy{
		{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired},
		{ResourceName: v1.ResourceMemory, RestartPolicy: v1.NotRequired},
	}
	pod := newPod("resize", v1.RestartPolicyAlways, app)
	a := startAgent(t, p, pod)
	memoryLimit := func(api v1.PodStatus) string {
		r := publishedStatus(api, "app").Resources
		if r == nil {
			return ""
		}
		m := r.Limits[v1.ResourceMemory]
		return m.String()
	}
	a.waitPublished(t, "app running with 64Mi", func(api v1.PodStatus) bool {
		return publishedStatus(api, "app").State.Running != nil && memoryLimit(api) == "64Mi"
	})
	resized := pod.DeepCopy()
	resized.Spec.Containers[0].Resources = resources("500m", "128Mi")
	a.update(resized)
	got := a.waitPublished(t, "app running with 128Mi", func(api v1.PodStatus) bool { return memoryLimit(api) == "128Mi" })
	if cs := publishedStatus(got, "app"); cs.RestartCount != 0 || cs.State.Running == nil {
		t.Errorf("app was restarted by a resize in place: %+v", cs)
	}
}
