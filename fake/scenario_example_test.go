package fake_test

import (
	"context"
	"fmt"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// A controller test plays a shipped scenario: the image of the pod cannot be
// pulled twice, then the container starts after a 2s start latency.
func ExampleLoadScenario() {
	s, err := fake.LoadScenario("../testdata/scenarios/image-pull-recovery.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	p := fake.NewPodProvider(fake.WithClock(clk))
	if err := s.Apply(p); err != nil {
		fmt.Println(err)
		return
	}
	pod, _ := s.Pod("default/puller")
	rc := kri.NewReasonCache()
	ctx := context.Background()
	for sync := 1; sync <= 3; sync++ {
		err := p.SyncPod(ctx, pod, nil, rc)
		if item, failed := rc.Get(pod.UID, "app"); failed {
			fmt.Printf("sync %d: %v (error returned: %t)\n", sync, item.Err, err != nil)
		} else {
			fmt.Printf("sync %d: started (error returned: %t)\n", sync, err != nil)
		}
	}
	snap, _ := p.Snapshot("default/puller")
	app, _ := snap.Container("app")
	fmt.Println("app:", app.State)
	clk.Step(2 * time.Second)
	snap, _ = p.Snapshot("default/puller")
	app, _ = snap.Container("app")
	fmt.Println("2s later:", app.State, "restarts:", app.RestartCount)
	// Output:
	// sync 1: ErrImagePull (error returned: true)
	// sync 2: ErrImagePull (error returned: true)
	// sync 3: started (error returned: false)
	// app: created
	// 2s later: running restarts: 0
}

// A scenario is decoded strictly: a mistake is reported with the file, the
// line and the field.
func ExampleParseScenario() {
	_, err := fake.ParseScenario("testdata/scenarios/x.yaml", []byte(`name: x
pods:
- metadata: {name: web, uid: web-1}
  spec:
    containers:
    - name: app
      command: [sh, -c, "sleep infinity"]
scripts:
- pod: default/web
  container:
    name: app
    exitAfter: {after: 5x, code: 3}
`))
	fmt.Println(err)
	// Output:
	// testdata/scenarios/x.yaml:12: scripts[0].container.exitAfter.after: invalid duration "5x" (want a Go duration such as 500ms, 5s or 1m30s)
}
