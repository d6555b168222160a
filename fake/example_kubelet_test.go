package fake_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// kubeletExamplePod returns pod default/web with one container app.
func kubeletExamplePod(image string, command ...string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{
			{Name: "app", Image: image, Command: command},
		}},
	}
}

// workerSync is one round of a pod worker: GetPodStatus, then SyncPod.
func workerSync(p *fake.PodProvider, pod *v1.Pod, rc *kri.ReasonCache) error {
	st, err := p.GetPodStatus(context.Background(), pod)
	if err != nil {
		return err
	}
	return p.SyncPod(context.Background(), pod, st, rc)
}

// killAndStep kills the pod with the running pod its status gives, stepping
// the clock a second at a time until KillPod returns, and reports how long
// that took on the clock.
func killAndStep(p *fake.PodProvider, clk *clocktesting.FakeClock, pod *v1.Pod, override *int64) time.Duration {
	st, _ := p.GetPodStatus(context.Background(), pod)
	running := pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, st)
	start := clk.Now()
	done := make(chan error, 1)
	go func() { done <- p.KillPod(context.Background(), pod, running, override) }()
	for {
		select {
		case <-done:
			return clk.Since(start)
		case <-time.After(10 * time.Millisecond):
			if clk.HasWaiters() {
				clk.Step(time.Second)
			}
		}
	}
}

// With kubelet semantics an image that cannot be pulled is pulled again only
// after the image back-off; each sandbox gets an IP (the first pod's took
// 10.88.0.2); and "sleep infinity", as PID 1, ignores SIGTERM until the grace
// period ends.
func ExampleWithKubeletSemantics() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	p := fake.NewPodProvider(fake.WithClock(clk), fake.WithKubeletSemantics())
	rc := kri.NewReasonCache()

	pull := kubeletExamplePod("kri.invalid/team/app:1", "sleep", "infinity")
	for range 3 {
		err := workerSync(p, pull, rc)
		item, _ := rc.Get(pull.UID, "app")
		fmt.Printf("at %s: %v (SyncPod failed: %v)\n", clk.Since(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), item.Err, err != nil)
		clk.Step(5 * time.Second)
	}

	web := kubeletExamplePod("busybox:1.36", "sleep", "infinity")
	web.Name, web.UID = "web2", "uid-web2"
	grace := int64(10)
	web.Spec.TerminationGracePeriodSeconds = &grace
	_ = workerSync(p, web, rc)
	st, _ := p.GetPodStatus(context.Background(), web)
	fmt.Println("pod IPs:", st.IPs)
	took := killAndStep(p, clk, web, nil)
	snap, _ := p.Snapshot("default/web2")
	app, _ := snap.Container("app")
	fmt.Printf("KillPod took %s; sleep infinity exited %d\n", took, app.ExitCode)
	// Output:
	// at 0s: ErrImagePull (SyncPod failed: true)
	// at 5s: ImagePullBackOff (SyncPod failed: true)
	// at 10s: ErrImagePull (SyncPod failed: true)
	// pod IPs: [10.88.0.3]
	// KillPod took 10s; sleep infinity exited 137
}

// KillPod stops what the running pod lists: an agent that hands over an
// empty one stops nothing. The call log shows what it handed over.
func ExampleWithRunningPodKill() {
	p := fake.NewPodProvider(fake.WithRunningPodKill())
	pod := kubeletExamplePod("busybox:1.36", "sh", "-c", "trap 'exit 143' TERM; sleep infinity & wait")
	_ = p.SyncPod(context.Background(), pod, nil, kri.NewReasonCache())

	_ = p.KillPod(context.Background(), pod, pkgcontainer.Pod{ID: pod.UID}, nil)
	snap, _ := p.Snapshot("default/web")
	app, _ := snap.Container("app")
	fmt.Println("after KillPod of an empty running pod:", app.State)

	st, _ := p.GetPodStatus(context.Background(), pod)
	_ = p.KillPod(context.Background(), pod, pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, st), nil)
	snap, _ = p.Snapshot("default/web")
	app, _ = snap.Container("app")
	fmt.Println("after KillPod of the pod's running pod:", app.State, app.ExitCode)
	for _, c := range p.Calls(fake.ForMethod(fake.MethodKillPod)) {
		fmt.Println("KillPod handed containers", c.RunningContainers, "sandboxes", c.RunningSandboxes)
	}
	// Output:
	// after KillPod of an empty running pod: running
	// after KillPod of the pod's running pod: exited 143
	// KillPod handed containers [] sandboxes []
	// KillPod handed containers [00000002] sandboxes [00000001]
}

// A failed pull backs off: 10s, then 20s, ... in between, starts fail with
// ImagePullBackOff and the message of the last pull.
func ExampleWithImagePullBackOff() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	p := fake.NewPodProvider(fake.WithClock(clk), fake.WithImagePullBackOff())
	pod := kubeletExamplePod("kri.invalid/team/app:1", "sleep", "infinity")
	rc := kri.NewReasonCache()
	var pulls []string
	for i := range 31 {
		_ = p.SyncPod(context.Background(), pod, nil, rc)
		if item, _ := rc.Get(pod.UID, "app"); item.Err == fake.ErrImagePull {
			pulls = append(pulls, fmt.Sprint(i, "s"))
		}
		clk.Step(time.Second)
	}
	fmt.Println("pulls at", pulls)
	_ = p.SyncPod(context.Background(), pod, nil, rc)
	item, _ := rc.Get(pod.UID, "app")
	fmt.Println(item.Err)
	fmt.Println(item.Message)
	// Output:
	// pulls at [0s 10s 30s]
	// ImagePullBackOff
	// Back-off pulling image "kri.invalid/team/app:1": ErrImagePull: failed to pull image "kri.invalid/team/app:1": dial tcp: lookup kri.invalid: no such host
}

// Sandboxes get IPs in order from 10.88.0.0/16; a host-network pod gets
// none (the agent reports the node's addresses for it).
func ExampleWithPodIPs() {
	p := fake.NewPodProvider(fake.WithPodIPs())
	rc := kri.NewReasonCache()
	web := kubeletExamplePod("busybox:1.36", "sleep", "infinity")
	host := kubeletExamplePod("busybox:1.36", "sleep", "infinity")
	host.Name, host.UID, host.Spec.HostNetwork = "host", "uid-host", true
	host.Status.HostIPs = []v1.HostIP{{IP: "192.0.2.7"}}
	for _, pod := range []*v1.Pod{web, host} {
		_ = p.SyncPod(context.Background(), pod, nil, rc)
		st, _ := p.GetPodStatus(context.Background(), pod)
		api, _ := p.APIPodStatus(context.Background(), pod, rc)
		fmt.Printf("%s: runtime IPs %v, podIP %s\n", pod.Name, st.IPs, api.PodIP)
	}
	// Output:
	// web: runtime IPs [10.88.0.2], podIP 10.88.0.2
	// host: runtime IPs [], podIP 192.0.2.7
}

// As PID 1, a command without a SIGTERM handler ignores SIGTERM; one that
// traps it and waits exits with its handler's code.
func ExampleWithPID1Signals() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	p := fake.NewPodProvider(fake.WithClock(clk), fake.WithPID1Signals())
	for i, command := range []string{"sleep infinity", "trap 'exit 143' TERM; sleep infinity & wait"} {
		pod := kubeletExamplePod("busybox:1.36", "sh", "-c", command)
		pod.Name, pod.UID = fmt.Sprint("web", i), types.UID(fmt.Sprint("uid-web", i))
		grace := int64(5)
		pod.Spec.TerminationGracePeriodSeconds = &grace
		_ = p.SyncPod(context.Background(), pod, nil, kri.NewReasonCache())
		took := killAndStep(p, clk, pod, nil)
		snap, _ := p.Snapshot("default/" + pod.Name)
		app, _ := snap.Container("app")
		fmt.Printf("%q: exit %d after %s\n", command, app.ExitCode, took)
	}
	// Output:
	// "sleep infinity": exit 137 after 5s
	// "trap 'exit 143' TERM; sleep infinity & wait": exit 143 after 0s
}

// A container that ignores SIGTERM gets at least 2s, whatever the override.
func ExampleWithMinimumGracePeriod() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	p := fake.NewPodProvider(fake.WithClock(clk), fake.WithMinimumGracePeriod())
	pod := kubeletExamplePod("busybox:1.36", "sh", "-c", "trap '' TERM; sleep infinity")
	_ = p.SyncPod(context.Background(), pod, nil, kri.NewReasonCache())
	zero := int64(0)
	fmt.Println("KillPod with override 0 took", killAndStep(p, clk, pod, &zero))
	// Output:
	// KillPod with override 0 took 2s
}

// Fail twice, then succeed: each run of the container ends as scripted.
func ExampleContainerScript_ExitRuns() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	p := fake.NewPodProvider(fake.WithClock(clk))
	pod := kubeletExamplePod("busybox:1.36", "sleep", "infinity")
	pod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
	p.Container("default/web", "app").ExitRuns(2, time.Second, 1).ExitRuns(1, time.Second, 0)
	rc := kri.NewReasonCache()
	for range 4 {
		_ = p.SyncPod(context.Background(), pod, nil, rc)
		clk.Step(time.Second)
		snap, _ := p.Snapshot("default/web")
		app, _ := snap.Container("app")
		fmt.Println(app.State, app.ExitCode, "restarts:", app.RestartCount)
	}
	// Output:
	// exited 1 restarts: 0
	// exited 1 restarts: 1
	// exited 0 restarts: 2
	// exited 0 restarts: 2
}

// A scenario that sets kubeletSemantics makes its provider with the options
// it asks for.
func ExampleScenario_NewPodProvider() {
	s, err := fake.LoadScenario("../testdata/scenarios/flaky-job-kubelet.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("kubeletSemantics:", s.KubeletSemantics)
	if err := s.Apply(fake.NewPodProvider()); err != nil {
		fmt.Println("Apply to a default provider:", err)
	}
	p, err := s.NewPodProvider()
	if err != nil {
		fmt.Println(err)
		return
	}
	pod, _ := s.Pod("job")
	_ = p.SyncPod(context.Background(), pod, nil, kri.NewReasonCache())
	st, _ := p.GetPodStatus(context.Background(), pod)
	fmt.Println("pod IPs:", st.IPs)
	// Output:
	// kubeletSemantics: true
	// Apply to a default provider: fake: scenario "flaky-job-kubelet": Apply: the scenario sets kubeletSemantics, but the provider was made without WithKubeletSemantics (make it with the scenario's Options, or its NewPodProvider)
	// pod IPs: [10.88.0.2]
}
