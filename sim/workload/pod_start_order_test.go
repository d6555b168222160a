package workload_test

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

// A simulator that starts the runs itself (a fake runtime) asks the Pod
// which containers' turn has come, in the kubelet's start order, and
// starts them: here, the init container first; once it has completed, the
// app container.
func ExamplePod_StartInTurn() {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "setup", Image: "busybox", Command: []string{"sh", "-c", "sleep 1"}}},
		Containers:     []v1.Container{{Name: "app", Image: "busybox", Command: []string{"sleep", "infinity"}}},
	}}
	p := &workload.Pod{CallerStarts: true}
	sync := func(now time.Time) {
		p.Advance(now)
		p.StartInTurn(&pod.Spec, func(c *v1.Container, isInit bool) {
			fmt.Printf("%v: start %s\n", now.Sub(t0), c.Name)
			p.StartRun(c, isInit, now, workload.RunOptions{})
			p.Advance(now)
		})
	}
	sync(t0)
	sync(t0.Add(500 * time.Millisecond)) // setup runs: nothing to start
	sync(t0.Add(2 * time.Second))
	// Output:
	// 0s: start setup
	// 2s: start app
}

// A Pod put together by hand, not by NewPod, starts its containers in the
// same order.
func TestReconcileOfAPodNotMadeByNewPod(t *testing.T) {
	setup, app := shc("setup", "sleep 1"), shc("app", "sleep infinity")
	p := &workload.Pod{
		Init: []*workload.PodContainer{{Name: "setup", IsInit: true, Spec: &setup, Image: setup.Image, Behaviour: workload.OfEnv(&setup)}},
		App:  []*workload.PodContainer{{Name: "app", Spec: &app, Image: app.Image, Behaviour: workload.OfEnv(&app)}},
	}
	p.Reconcile(t0)
	p.Advance(t0.Add(500 * time.Millisecond))
	if !p.Container("setup").Running() || p.Container("app").Current != nil {
		t.Fatalf("at 0.5s: want setup running, app not started; setup running=%v, app current=%v", p.Container("setup").Running(), p.Container("app").Current)
	}
	p.Advance(t0.Add(2 * time.Second))
	if !p.Container("app").Running() {
		t.Errorf("at 2s, after setup completed at 1s: app not running")
	}
}
