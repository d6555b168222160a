package workload_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kri-kit/testkit/sim/workload"
)

// A simulator runs a container's lifecycle hook against the container's
// current run: how long it takes, whether it fails, what it writes.
func ExampleRunHook() {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	web := v1.Container{Name: "web", Command: []string{"sh", "-c", "httpd -f -vv -p 8080 -h /www"}}
	run := workload.NewInstance(workload.OfEnv(&web), t0, workload.InstanceOptions{})
	run.Advance(t0)

	for _, h := range []*v1.LifecycleHandler{
		{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "sleep 2; echo -n warm > /tmp/state"}}},
		{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "exit 3"}}},
		{HTTPGet: &v1.HTTPGetAction{Path: "/started", Port: intstr.FromInt32(8080)}},
		{HTTPGet: &v1.HTTPGetAction{Path: "/started", Port: intstr.FromInt32(9090)}},
		{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
	} {
		hook := workload.RunHook(&web, h, run, t0)
		fmt.Printf("%s: takes %s, failed %v", hook.Action, hook.Takes, hook.Failed)
		if hook.Detail != "" {
			fmt.Printf(" (%s)", hook.Detail)
		}
		fmt.Println()
	}
	out, _ := run.FilesAt(t0)(workload.Stdout)
	fmt.Printf("server log: %q\n", out)
	// Output:
	// exec: takes 2s, failed false
	// exec: takes 0s, failed true (exec ["sh" "-c" "exit 3"] exited with code 3)
	// httpGet :8080/started: takes 0s, failed false
	// httpGet :9090/started: takes 0s, failed true (httpGet :9090/started: nothing listens on port 9090)
	// tcpSocket: takes 0s, failed true (the handler has no exec, httpGet or sleep action)
	// server log: "127.0.0.1:40000: url:/started\n127.0.0.1:40000: response:404\n"
}

// A simulator that kills a running instance runs the container's preStop
// hook first: SIGTERM comes when the hook ends, with what is left of the
// grace period. A second kill does not run the hook again.
func ExampleInstance_PreStop() {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	app := v1.Container{Name: "app", Command: []string{"sh", "-c", "sleep infinity"},
		Lifecycle: &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "sleep 3"}}}}}
	run := workload.NewInstance(workload.OfEnv(&app), t0, workload.InstanceOptions{})
	run.Advance(t0)
	preStop := func() (workload.Hook, bool) {
		return workload.RunHook(&app, app.Lifecycle.PreStop, run, t0), true
	}

	grace := workload.GracePeriod(&v1.Pod{}, nil) // 30s: the pod sets none
	sigterm, left, ran := run.PreStop(t0, grace, preStop)
	fmt.Println(sigterm.Sub(t0), left, ran)
	sigterm, left, ran = run.PreStop(t0.Add(time.Second), 5*time.Second, preStop)
	fmt.Println(sigterm.Sub(t0), left, ran)
	// Output:
	// 3s 27s true
	// 3s 3s false
}
