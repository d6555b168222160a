package workload_test

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/sim/workload"
)

// remoteService is a user's simulated remote container service: it runs
// the containers of the pods submitted to it on its clock, with
// workload.Pod, and reports their state. Its clock is a FakeClock in this
// example; each call first brings the pods up to the clock's present.
type remoteService struct {
	clock clock.PassiveClock
	pods  map[string]*workload.Pod
}

func (s *remoteService) Submit(pod *v1.Pod) {
	p := workload.NewPod(pod)
	p.BackOff = workload.BackOff{Initial: time.Second, Max: 10 * time.Second}
	p.Reconcile(s.clock.Now())
	p.Advance(s.clock.Now())
	s.pods[pod.Name] = p
}

func (s *remoteService) Stop(name string, grace time.Duration) {
	p := s.pods[name]
	p.Advance(s.clock.Now())
	p.Stop(s.clock.Now(), grace)
}

// Report is one line per container: its current run and why it waits.
func (s *remoteService) Report(name string, start time.Time) string {
	p := s.pods[name]
	p.Advance(s.clock.Now())
	var out []string
	for _, c := range p.Containers() {
		line := c.Name + ": "
		switch r := c.Current; {
		case r == nil:
			line += "not started"
		case r.Running():
			line += fmt.Sprintf("running since %s", r.StartedAt().Sub(start))
		default:
			line += fmt.Sprintf("exited %d at %s", r.ExitCode(), r.FinishedAt().Sub(start))
		}
		if r := c.Current; r != nil && r.Restarts > 0 {
			line += fmt.Sprintf(", %d restarts", r.Restarts)
		}
		if w := c.Waiting; w != nil {
			line += fmt.Sprintf(", %v until %s", w.Err, w.Until.Sub(start))
		}
		out = append(out, line)
	}
	return strings.Join(out, "; ")
}

// A user's service simulator built on workload.Pod: the init container
// runs first, the app containers once it has completed; a crashing
// container is restarted after a back-off; a stop sends SIGTERM and kills
// what ignores it when the grace period ends.
func ExamplePod() {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	fc := clocktesting.NewFakeClock(start)
	svc := &remoteService{clock: fc, pods: map[string]*workload.Pod{}}
	sh := func(name, script string) v1.Container {
		return v1.Container{Name: name, Image: "busybox", Command: []string{"sh", "-c", script}}
	}
	pod := &v1.Pod{}
	pod.Name, pod.Namespace, pod.UID = "web", "default", "uid-1"
	pod.Spec.InitContainers = []v1.Container{sh("setup", "sleep 2")}
	pod.Spec.Containers = []v1.Container{sh("server", "trap '' TERM; sleep infinity"), sh("flaky", "sleep 1; exit 3")}
	svc.Submit(pod)

	for _, d := range []time.Duration{time.Second, 3 * time.Second, 4 * time.Second} {
		fc.SetTime(start.Add(d))
		fmt.Printf("%s: %s\n", d, svc.Report("web", start))
	}
	svc.Stop("web", 5*time.Second)
	for _, d := range []time.Duration{4 * time.Second, 9 * time.Second} {
		fc.SetTime(start.Add(d))
		fmt.Printf("%s: %s\n", d, svc.Report("web", start))
	}
	// Output:
	// 1s: setup: running since 0s; server: not started; flaky: not started
	// 3s: setup: exited 0 at 2s; server: running since 2s; flaky: exited 3 at 3s, CrashLoopBackOff until 4s
	// 4s: setup: exited 0 at 2s; server: running since 2s; flaky: running since 4s, 1 restarts
	// 4s: setup: exited 0 at 2s; server: running since 2s; flaky: exited 143 at 4s, 1 restarts
	// 9s: setup: exited 0 at 2s; server: exited 137 at 9s; flaky: exited 143 at 4s, 1 restarts
}

// The probes of a container run on the caller's clock: its readiness probe
// reads a file the container's command writes 2s after its start.
func ExampleNewProber() {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &v1.Container{
		Name:    "app",
		Command: []string{"sh", "-c", "sleep 2; echo ok > /tmp/ready; sleep infinity"},
		ReadinessProbe: &v1.Probe{
			ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"cat", "/tmp/ready"}}},
			PeriodSeconds: 1,
		},
	}
	in := workload.NewInstance(workload.OfEnv(c), start, workload.InstanceOptions{})
	prober := workload.NewProber(c, start, workload.ExecProbes(c, in.FilesAt, nil))
	for {
		at, ok := prober.Next()
		if !ok || at.After(start.Add(3*time.Second)) {
			break
		}
		in.Advance(at) // the instance at the probe's moment
		if run, _ := prober.RunNext(false); run.Changed {
			fmt.Printf("%s: %s probe succeeds: %v; ready: %v\n", run.At.Sub(start), run.Kind, run.Succeeded, prober.Ready())
		}
	}
	// Output:
	// 0s: readiness probe succeeds: false; ready: false
	// 2s: readiness probe succeeds: true; ready: true
}

// Ready reports, per container, whether it runs and is ready, as a
// service reports it to the node agent in front of it.
func (s *remoteService) Ready(name string) string {
	p := s.pods[name]
	p.Advance(s.clock.Now())
	var out []string
	for _, c := range p.Containers() {
		out = append(out, fmt.Sprintf("%s running=%v ready=%v", c.Name, c.Running(), c.Ready()))
	}
	return strings.Join(out, ", ")
}

// The same service simulator runs what the pod spec asks of a node agent
// too: the sidecar (an init container with restartPolicy Always) starts
// first, the app container once it runs; the app container is Ready once
// its readiness probe finds the file it writes after 2s; on Stop the
// sidecar gets SIGTERM only once the app container, whose shutdown takes
// 2s, has exited.
func ExamplePod_readinessAndSidecar() {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	fc := clocktesting.NewFakeClock(start)
	svc := &remoteService{clock: fc, pods: map[string]*workload.Pod{}}
	always := v1.ContainerRestartPolicyAlways
	proxy := v1.Container{Name: "proxy", Image: "busybox", RestartPolicy: &always,
		Command: []string{"sh", "-c", "trap 'exit 143' TERM; sleep infinity & wait"}}
	app := v1.Container{Name: "app", Image: "busybox",
		Command: []string{"sh", "-c", "trap 'sleep 2; exit 0' TERM; sleep 2; echo ok > /tmp/ready; sleep infinity & wait"},
		ReadinessProbe: &v1.Probe{
			ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"cat", "/tmp/ready"}}},
			PeriodSeconds: 1,
		}}
	pod := &v1.Pod{}
	pod.Name, pod.Namespace, pod.UID = "web", "default", "uid-2"
	pod.Spec.InitContainers = []v1.Container{proxy}
	pod.Spec.Containers = []v1.Container{app}
	svc.Submit(pod)

	for _, d := range []time.Duration{time.Second, 3 * time.Second} {
		fc.SetTime(start.Add(d))
		fmt.Printf("%s: %s\n", d, svc.Ready("web"))
	}
	svc.Stop("web", 10*time.Second)
	for _, d := range []time.Duration{4 * time.Second, 5 * time.Second} {
		fc.SetTime(start.Add(d))
		fmt.Printf("%s: %s\n", d, svc.Report("web", start))
	}
	// Output:
	// 1s: proxy running=true ready=true, app running=true ready=false
	// 3s: proxy running=true ready=true, app running=true ready=true
	// 4s: proxy: running since 0s; app: running since 0s
	// 5s: proxy: exited 143 at 5s; app: exited 0 at 5s
}
