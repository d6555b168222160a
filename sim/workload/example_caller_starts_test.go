package workload_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

// A simulator whose agent decides every start (a fake runtime: the
// agent's sync asks for each start) runs its pods on a Pod in the mode
// where the caller starts the runs: it starts a run when its sync says so,
// runs its postStart hook, and stops the runs when its agent kills the pod;
// the Pod plays the runs, their probes and hooks on the caller's clock and
// reports each event.
func ExamplePod_callerStarts() {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	web := v1.Container{Name: "web", Image: "busybox", Command: []string{"sh", "-c", "echo ok > /tmp/ready; sleep infinity"}}
	web.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"cat", "/tmp/ready"}}}, InitialDelaySeconds: 1, PeriodSeconds: 1}
	web.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 2}}}
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{web}}}
	pod.Name, pod.Namespace, pod.UID = "web", "default", "uid-1"

	p := workload.NewPod(pod)
	p.CallerStarts = true
	p.OnEvent = func(e workload.PodEvent) {
		fmt.Printf("%v %s %s", e.At.Sub(t0), e.Kind, e.Container.Name)
		switch e.Kind {
		case workload.ProbeChanged:
			fmt.Printf(" %s succeeded=%v", e.Probe.Kind, e.Probe.Succeeded)
		case workload.HookRan:
			fmt.Printf(" %s until %v", e.HookKind, e.Until.Sub(t0))
		case workload.RunExited:
			fmt.Printf(" exit %d", e.Run.ExitCode())
		}
		fmt.Println()
	}

	// The agent's sync starts web, with a start latency of 1s.
	r := p.StartRun(&web, false, t0, workload.RunOptions{ID: "web-1", StartsAt: t0.Add(time.Second)})
	p.Advance(t0)
	p.PostStart(p.Container("web"), r, t0) // web has none
	p.Advance(t0.Add(3 * time.Second))
	fmt.Println("ready:", p.Container("web").Ready())

	// The agent kills the pod with a grace period of 10s.
	now := t0.Add(3 * time.Second)
	done := p.StopRuns(now, 10*time.Second, nil)
	p.Advance(done)
	fmt.Println("stopped after", done.Sub(now))
	// Output:
	// 1s RunStarted web
	// 2s ProbeChanged web readiness succeeded=true
	// ready: true
	// 3s RunKilling web
	// 3s HookRan web preStop until 5s
	// 5s RunExited web exit 143
	// stopped after 2s
}

// A simulator keeps what its runtime knows of a run beside it (Data), and
// records a start its runtime created but could not run as a run too
// (StartFailed): the container's current and previous runs are then all
// it reports.
func ExamplePod_StartFailed() {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	app := v1.Container{Name: "app", Image: "busybox", Command: []string{"sh", "-c", "exit 1"}}
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{app}}}
	pod.Name, pod.Namespace, pod.UID = "app", "default", "uid-1"
	type record struct{ sandbox string }

	p := workload.NewPod(pod)
	p.CallerStarts = true
	p.StartRun(&app, false, t0, workload.RunOptions{ID: "app-1", Data: record{sandbox: "sb-1"}})
	p.Advance(t0)
	// The next start fails in the runtime after it created the container.
	p.StartFailed(&app, false, t0.Add(10*time.Second), workload.RunOptions{ID: "app-2", Data: record{sandbox: "sb-1"}},
		128, `exec: "missing": executable file not found`)

	c := p.Container("app")
	for _, r := range []*workload.Run{c.Current, c.Previous} {
		fmt.Printf("%s in %s: exit %d at %v, restarts %d, failed start %v %s\n",
			r.ID, r.Data.(record).sandbox, r.ExitCode(), r.FinishedAt().Sub(t0), r.Restarts, r.StartFailed, r.StartMessage)
	}
	// Output:
	// app-2 in sb-1: exit 128 at 10s, restarts 1, failed start true exec: "missing": executable file not found
	// app-1 in sb-1: exit 1 at 0s, restarts 0, failed start false
}
