package fake_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	clocktesting "k8s.io/utils/clock/testing"
)

const probeScenario = `name: unready
pods:
- metadata: {name: web, uid: uid-web}
  spec:
    containers:
    - name: app
      image: busybox
      command: ["sleep", "infinity"]
      readinessProbe:
        exec: {command: ["true"]}
        periodSeconds: 1
        failureThreshold: 1
scripts:
- pod: web
  container:
    name: app
    probes: {readiness: fail}
`

func TestScenarioProbes(t *testing.T) {
	s, err := fake.ParseScenario("unready.yaml", []byte(probeScenario))
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(scenarioT0)
	p, err := s.NewPodProvider(fake.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	pod, _ := s.Pod("web")
	if err := p.SyncPod(context.Background(), pod, nil, kri.NewReasonCache()); err != nil {
		t.Fatal(err)
	}
	clk.Step(5 * time.Second)
	snap, _ := p.Snapshot("default/web")
	app, _ := snap.Container("app")
	if !app.Started || app.Ready {
		t.Errorf("app Started %v Ready %v, want started and not ready (readiness scripted to fail, although its command is true)", app.Started, app.Ready)
	}
}

func TestParseScenarioProbeErrors(t *testing.T) {
	base := probeScenario[:strings.Index(probeScenario, "    probes:")]
	for _, tt := range []struct{ probes, msg string }{
		{"{liveliness: fail}", `scripts[0].container.probes.liveliness: unknown probe "liveliness" (want startup, liveness or readiness)`},
		{"{readiness: flaky}", `scripts[0].container.probes.readiness: invalid result "flaky" (want pass or fail)`},
		{"{}", "scripts[0].container.probes: empty"},
	} {
		_, err := fake.ParseScenario("bad.yaml", []byte(base+"    probes: "+tt.probes+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("probes %s: error %v, want one containing %q", tt.probes, err, tt.msg)
		}
	}
}
