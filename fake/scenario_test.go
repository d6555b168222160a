package fake_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	clocktesting "k8s.io/utils/clock/testing"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// scenarioDir holds the shipped scenarios.
const scenarioDir = "../testdata/scenarios"

var scenarioT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// scenarioBase is a valid scenario that error cases extend or break.
const scenarioBase = `name: base
pods:
- metadata:
    name: web
    uid: uid-web
  spec:
    containers:
    - name: app
      image: busybox
`

func TestParseScenarioErrors(t *testing.T) {
	const file = "testdata/scenarios/bad.yaml"
	tests := []struct {
		name  string
		yaml  string
		line  int    // 0: no line
		field string // "": the whole file
		msg   string // a part of the message
	}{
		{"unknown top-level field", scenarioBase + "timeout: 5s\n", 10, "timeout", `unknown field "timeout" (want one of crashLoopBackOff, description, kubeletSemantics, name, pods, scripts)`},
		{"unknown script field", scenarioBase + `scripts:
- pod: default/web
  container:
    name: app
    exitAftr: {after: 5s}
`, 14, "scripts[0].container.exitAftr", `unknown field "exitAftr"`},
		{"unknown pod field, wrong case", `name: x
pods:
- metadata: {name: web, uid: u}
  spec:
    containers:
    - name: app
      Image: busybox
`, 7, "pods[0].spec.containers[0].Image", `unknown field "Image" (did you mean "image"?)`},
		{"unknown field in embedded struct", `name: x
pods:
- metadata: {name: web, uid: u}
  spec:
    containers:
    - name: app
      readinessProbe:
        exec: {command: ["true"]}
        execute: {command: ["true"]}
`, 9, "pods[0].spec.containers[0].readinessProbe.execute", `unknown field "execute"`},
		{"duplicate field", "name: a\nname: b\n", 2, "name", `duplicate field "name" (first at line 1)`},
		{"bad duration", scenarioBase + `scripts:
- pod: default/web
  container:
    name: app
    exitAfter:
      code: 3
      after: 5x
`, 16, "scripts[0].container.exitAfter.after", `invalid duration "5x"`},
		{"duration without unit", scenarioBase + `scripts:
- pod: web
  container: {name: app, startLatency: 5}
`, 12, "scripts[0].container.startLatency", `invalid duration "5"`},
		{"negative duration", scenarioBase + `scripts:
- pod: web
  container: {name: app, startLatency: -1s}
`, 12, "scripts[0].container.startLatency", `invalid duration "-1s": must not be negative`},
		{"missing exitAfter.after", scenarioBase + `scripts:
- pod: web
  container:
    name: app
    exitAfter: {code: 1}
`, 14, "scripts[0].container.exitAfter.after", "required"},
		{"exit code out of range", scenarioBase + `scripts:
- pod: web
  container:
    name: app
    exitAfter: {after: 1s, code: 256}
`, 14, "scripts[0].container.exitAfter.code", "exit code 256 out of range 0 to 255"},
		{"negative times", scenarioBase + `scripts:
- pod: web
  container:
    name: app
    failStarts:
      times: -2
`, 15, "scripts[0].container.failStarts.times", "invalid count -2"},
		{"zero times", scenarioBase + `scripts:
- pod: web
  fail: {method: KillPod, times: 0}
`, 12, "scripts[0].fail.times", "invalid count 0"},
		{"times not a count", scenarioBase + `scripts:
- pod: web
  fail: {method: KillPod, times: sometimes}
`, 12, "scripts[0].fail.times", `invalid count "sometimes"`},
		{"times of the wrong type", scenarioBase + `scripts:
- pod: web
  fail:
    method: KillPod
    times: [1]
`, 14, "scripts[0].fail.times", `expected an integer or a string, got a list`},
		{"unknown method", scenarioBase + `scripts:
- pod: web
  fail: {method: Kill}
`, 12, "scripts[0].fail.method", `unknown method "Kill"`},
		{"method that is not per pod", scenarioBase + `scripts:
- pod: web
  fail: {method: GetPods}
`, 12, "scripts[0].fail.method", "GetPods is not called for one pod"},
		{"method that returns no error", scenarioBase + `scripts:
- fail: {method: RefreshPodStatus}
`, 11, "scripts[0].fail.method", `unknown method "RefreshPodStatus"`},
		{"missing method", scenarioBase + `scripts:
- pod: web
  fail: {times: 1}
`, 12, "scripts[0].fail.method", "required"},
		{"unknown error name", scenarioBase + `scripts:
- pod: web
  container:
    name: app
    failStarts: {times: 2, error: ImagePullError}
`, 14, "scripts[0].container.failStarts.error", `unknown error "ImagePullError" (want one of `},
		{"script naming a pod not in pods", scenarioBase + `scripts:
- pod: other/web
  container: {name: app, ignoreSIGTERM: true}
`, 11, "scripts[0].pod", `no pod "other/web" in pods`},
		{"script naming a container not in the pod", scenarioBase + `scripts:
- pod: default/web
  container:
    name: sidecar
    ignoreSIGTERM: true
`, 13, "scripts[0].container.name", `pod "default/web" has no container "sidecar"`},
		{"invalid pod key", scenarioBase + `scripts:
- pod: a/b/c
  fail: {method: KillPod}
`, 11, "scripts[0].pod", `invalid pod "a/b/c" (want namespace/name)`},
		{"container script without pod", scenarioBase + `scripts:
- container: {name: app, ignoreSIGTERM: true}
`, 11, "scripts[0].pod", "required for a container script"},
		{"container and fail", scenarioBase + `scripts:
- pod: web
  container: {name: app, ignoreSIGTERM: true}
  fail: {method: KillPod}
`, 13, "scripts[0].fail", "either container or fail, not both"},
		{"neither container nor fail", scenarioBase + `scripts:
- pod: web
`, 11, "scripts[0]", "a script needs container or fail"},
		{"nothing scripted", scenarioBase + `scripts:
- pod: web
  container:
    name: app
`, 12, "scripts[0].container", "nothing scripted"},
		{"duplicate pod key", scenarioBase + `- metadata:
    name: web
    namespace: default
    uid: uid-web-2
  spec:
    containers: [{name: app}]
`, 11, "pods[1].metadata.name", `duplicate pod "default/web" (pods[0] has`},
		{"duplicate uid", scenarioBase + `- metadata: {name: db, uid: uid-web}
  spec:
    containers: [{name: app}]
`, 10, "pods[1].metadata.uid", `duplicate uid "uid-web"`},
		{"missing metadata.name", `name: x
pods:
- metadata:
    uid: u
  spec:
    containers: [{name: app}]
`, 3, "pods[0].metadata.name", "required"},
		{"missing metadata.uid", `name: x
pods:
- metadata:
    name: web
  spec:
    containers: [{name: app}]
`, 3, "pods[0].metadata.uid", "required"},
		{"missing metadata", `name: x
pods:
- spec:
    containers: [{name: app}]
`, 3, "pods[0].metadata.name", "required"},
		{"missing name", strings.Replace(scenarioBase, "name: base\n", "description: no name\n", 1), 1, "name", "required"},
		{"no pods", "name: x\npods: []\n", 2, "pods", "at least one pod"},
		{"pod without containers", "name: x\npods:\n- metadata: {name: a, uid: u}\n", 3, "pods[0].spec.containers", "at least one container"},
		{"duplicate container name", `name: x
pods:
- metadata: {name: a, uid: u}
  spec:
    initContainers: [{name: app}]
    containers: [{name: app}]
`, 6, "pods[0].spec.containers[0].name", `duplicate container name "app"`},
		{"unknown restart policy", `name: x
pods:
- metadata: {name: a, uid: u}
  spec:
    restartPolicy: Sometimes
    containers: [{name: app}]
`, 5, "pods[0].spec.restartPolicy", `unknown restart policy "Sometimes"`},
		{"negative grace period", `name: x
pods:
- metadata: {name: a, uid: u}
  spec:
    terminationGracePeriodSeconds: -1
    containers: [{name: app}]
`, 5, "pods[0].spec.terminationGracePeriodSeconds", "must not be negative"},
		{"not a pod", `name: x
pods:
- kind: Deployment
  metadata: {name: a, uid: u}
  spec:
    containers: [{name: app}]
`, 3, "pods[0].kind", `must be Pod, not "Deployment"`},
		{"value of the wrong type", `name: x
pods:
- metadata: {name: a, uid: u}
  spec:
    containers:
    - name: app
      ports:
      - containerPort: http
`, 8, "pods[0].spec.containers[0].ports[0].containerPort", `expected an integer, got "http"`},
		{"bad quantity", `name: x
pods:
- metadata: {name: a, uid: u}
  spec:
    containers:
    - name: app
      resources:
        limits: {cpu: 1x}
`, 8, "pods[0].spec.containers[0].resources.limits.cpu", `invalid value "1x": quantities must match`},
		{"number for a string beneath an embedded struct", `name: x
pods:
- metadata: {name: a, uid: u}
  spec:
    containers:
    - name: app
      readinessProbe:
        httpGet: {path: /healthz, port: 80}
    - name: sidecar
      readinessProbe:
        httpGet: {path: 1, port: 80}
`, 11, "pods[0].spec.containers[1].readinessProbe.httpGet.path", `expected a string, got "1" (quote it`},
		{"number for apiVersion", "name: x\npods:\n- apiVersion: 1\n  metadata: {name: a, uid: u}\n", 3, "pods[0].apiVersion", `expected a string, got "1"`},
		{"empty tagged value, found by the decoder", `name: x
pods:
- metadata: {name: a, uid: u}
  spec:
    terminationGracePeriodSeconds: !
    containers: [{name: app}]
`, 5, "pods[0].spec.terminationGracePeriodSeconds", `expected an integer, got ""`},
		{"null key", "name: x\npods:\n- metadata: {name: a, uid: u}\n  spec:\n    nodeSelector: {~: a}\n", 5, "pods[0].spec.nodeSelector", "a key must not be null"},
		{"unknown anchor", "name: &podsx x\ndescription: *podsx\n\npods: *pods\n", 4, "", "invalid YAML: unknown anchor 'pods' referenced"},
		{"syntax error on line 1", "%x\nname: x\n", 1, "", "invalid YAML"},
		{"list where a mapping belongs", "name: x\npods:\n- metadata: [a]\n", 3, "pods[0].metadata", "expected a mapping, got a list"},
		{"mapping where a list belongs", "name: x\npods:\n  web: {}\n", 2, "pods", "expected a list, got a mapping"},
		{"bad merge", "name: x\n<<: [[a]]\n", 2, "", "a merge (<<) takes a mapping"},
		{"merged field set again", `name: x
pods:
- metadata: {name: a, uid: u}
  spec:
    containers:
    - &app {name: app, image: busybox}
    - <<: *app
      name: other
`, 8, "pods[0].spec.containers[1].name", `duplicate field "name" (first at line 6)`},
		{"invalid YAML", "name: x\npods: [\n", 2, "", "invalid YAML"},
		{"tab indentation", "name: x\npods:\n\t- a\n", 3, "", "invalid YAML"},
		{"empty file", "", 0, "", "empty scenario"},
		{"only a comment", "# nothing\n", 0, "", "empty scenario"},
		{"null document", "---\n", 2, "", "empty scenario"},
		{"not a mapping", "- name: x\n", 1, "", "a scenario is a mapping"},
		{"two documents", scenarioBase + "---\nname: second\n", 10, "", "more than one YAML document"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := fake.ParseScenario(file, []byte(tc.yaml))
			if err == nil {
				t.Fatalf("ParseScenario = %+v, nil; want an error", s)
			}
			var se *fake.ScenarioError
			if !errors.As(err, &se) {
				t.Fatalf("error %q (%T) is not a *fake.ScenarioError", err, err)
			}
			if se.File != file || se.Line != tc.line || se.Field != tc.field {
				t.Errorf("error %q: file, line, field = %q, %d, %q; want %q, %d, %q", err, se.File, se.Line, se.Field, file, tc.line, tc.field)
			}
			want := file + ": "
			if tc.line > 0 {
				want = file + ":" + strconv.Itoa(tc.line) + ": "
			}
			if tc.field != "" {
				want += tc.field + ": "
			}
			if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q: want it to start with %q and contain %q", err, want, tc.msg)
			}
		})
	}
}

func TestParseScenarioAliasBomb(t *testing.T) {
	// 1,000 aliases of a container of 300 variables: 300,000 variables
	// once expanded, from a 13 kB file.
	var b strings.Builder
	b.WriteString("name: bomb\npods:\n- metadata: {name: a, uid: u}\n  spec:\n    containers:\n    - &c {name: c, env: [")
	for i := range 300 {
		fmt.Fprintf(&b, "{name: E%d, value: v}, ", i)
	}
	b.WriteString("]}\n- metadata: {name: b, uid: u2}\n  spec:\n    containers: [")
	for range 1000 {
		b.WriteString("*c, ")
	}
	b.WriteString("]\n")
	_, err := fake.ParseScenario("bomb.yaml", []byte(b.String()))
	if err == nil || !strings.HasPrefix(err.Error(), "bomb.yaml:9: ") || !strings.Contains(err.Error(), "too complex") {
		t.Errorf("ParseScenario of an alias bomb = %v; want a too complex error on line 9", err)
	}
}

func TestParseScenarioAccepts(t *testing.T) {
	const doc = `name: anchors
description: pods sharing a container spec through an anchor and a merge
pods:
- metadata: {name: a, uid: uid-a}
  spec:
    restartPolicy: OnFailure
    containers:
    - &app
      name: app
      image: busybox
      command: [sh, -c, "sleep 1; exit 0"]
      securityContext: {privileged: yes}
      ports: [{containerPort: 0x50}]
      resources: {limits: {cpu: 0.5, memory: 64Mi}}
- metadata:
    name: b
    namespace: other
    uid: uid-b
    labels: {app.kubernetes.io/name: b, tier: 1}
  spec:
    containers:
    - <<: *app
scripts:
- pod: other/b
  container: {name: app, failStarts: {times: always}}
- pod: a
  fail: {method: GetPodStatus, times: -1}
- fail: {method: CleanupPods, message: boom}
`
	s, err := fake.ParseScenario("anchors.yaml", []byte(doc))
	if err != nil {
		t.Fatalf("ParseScenario: %v", err)
	}
	if s.Name != "anchors" || !strings.HasPrefix(s.Description, "pods sharing") {
		t.Errorf("Name, Description = %q, %q", s.Name, s.Description)
	}
	pods := s.Pods()
	if len(pods) != 2 {
		t.Fatalf("Pods() has %d pods, want 2", len(pods))
	}
	if pods[0].Namespace != "default" || pods[1].Namespace != "other" {
		t.Errorf("namespaces %q, %q; want default (defaulted), other", pods[0].Namespace, pods[1].Namespace)
	}
	main := pods[1].Spec.Containers[0]
	if main.Name != "app" || main.Image != "busybox" || len(main.Command) != 3 || main.Ports[0].ContainerPort != 80 {
		t.Errorf("merged container = %+v; want the spec of app", main)
	}
	if p := main.SecurityContext.Privileged; p == nil || !*p {
		t.Errorf("privileged: yes decoded as %v, want true (YAML 1.1, as sigs.k8s.io/yaml decodes it)", p)
	}
	if q := main.Resources.Limits.Cpu(); q.MilliValue() != 500 {
		t.Errorf("cpu limit = %v, want 500m", q)
	}

	// Pods and Pod hand out copies.
	pods[0].Name = "changed"
	pods[0].Spec.Containers[0].Image = "changed"
	again := s.Pods()
	if again[0].Name != "a" || again[0].Spec.Containers[0].Image != "busybox" {
		t.Errorf("changing the result of Pods changed the scenario: %q, %q", again[0].Name, again[0].Spec.Containers[0].Image)
	}
	b, ok := s.Pod("other/b")
	if !ok || b.UID != "uid-b" {
		t.Fatalf("Pod(other/b) = %v, %v", b, ok)
	}
	b.Labels["tier"] = "changed"
	if b2, _ := s.Pod("other/b"); b2.Labels["tier"] != "1" {
		t.Errorf("changing the result of Pod changed the scenario: tier = %q", b2.Labels["tier"])
	}
	if a, ok := s.Pod("a"); !ok || a.UID != "uid-a" {
		t.Errorf("Pod(a) = %v, %v; want pod default/a", a, ok)
	}
	if _, ok := s.Pod("default/b"); ok {
		t.Error("Pod(default/b) found a pod; want none")
	}

	// The scripts work: app of other/b never starts, GetPodStatus of a fails every
	// time, CleanupPods fails once with the message.
	ctx := context.Background()
	p := fake.NewPodProvider(fake.WithClock(clocktesting.NewFakeClock(scenarioT0)))
	if err := s.Apply(p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	rc := kri.NewReasonCache()
	for i := range 3 {
		if err := p.SyncPod(ctx, again[1], nil, rc); err == nil {
			t.Fatalf("SyncPod #%d of other/b = nil; want the scripted start failure", i+1)
		}
		if item, ok := rc.Get("uid-b", "app"); !ok || !errors.Is(item.Err, pkgcontainer.ErrRunContainer) {
			t.Fatalf("after SyncPod #%d the reason of app is %v, %v; want RunContainerError", i+1, item, ok)
		}
	}
	for i := range 3 {
		if _, err := p.GetPodStatus(ctx, again[0]); err == nil {
			t.Fatalf("GetPodStatus #%d of default/a = nil error; want the scripted failure", i+1)
		}
	}
	if _, err := p.GetPodStatus(ctx, again[1]); err != nil {
		t.Errorf("GetPodStatus of other/b: %v; want no error (the fault is for default/a)", err)
	}
	if err := p.CleanupPods(ctx, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("first CleanupPods = %v; want the scripted error boom", err)
	}
	if err := p.CleanupPods(ctx, nil, nil, nil); err != nil {
		t.Errorf("second CleanupPods = %v; want nil", err)
	}
}

func TestScenarioApplyNilProvider(t *testing.T) {
	s, err := fake.ParseScenario("base.yaml", []byte(scenarioBase))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(nil); err == nil {
		t.Error("Apply(nil) = nil; want an error")
	}
}

func TestLoadScenarioShipped(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("%s holds %d scenarios, want at least 3", scenarioDir, len(files))
	}
	for _, f := range files {
		s, err := fake.LoadScenario(f)
		if err != nil {
			t.Errorf("LoadScenario(%s): %v", f, err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(f), ".yaml"); s.Name != want || s.Description == "" || len(s.Pods()) == 0 {
			t.Errorf("%s: name %q (want %q), description %q, %d pods", f, s.Name, want, s.Description, len(s.Pods()))
		}
	}
	_, err = fake.LoadScenario(filepath.Join(scenarioDir, "missing.yaml"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("LoadScenario of a missing file = %v; want a not-exist error naming the file", err)
	}
}

// scenarioPlay loads a shipped scenario onto a provider driven by a fake
// clock.
func scenarioPlay(t *testing.T, file, podKey string) (*fake.PodProvider, *clocktesting.FakeClock, *v1.Pod) {
	t.Helper()
	s, err := fake.LoadScenario(filepath.Join(scenarioDir, file))
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(scenarioT0)
	p := fake.NewPodProvider(fake.WithClock(clk))
	if err := s.Apply(p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	pod, ok := s.Pod(podKey)
	if !ok {
		t.Fatalf("scenario %s has no pod %s", file, podKey)
	}
	return p, clk, pod
}

// scenarioContainer returns the snapshot of one container of a pod.
func scenarioContainer(t *testing.T, p *fake.PodProvider, podKey, name string) fake.ContainerSnapshot {
	t.Helper()
	snap, ok := p.Snapshot(podKey)
	if !ok {
		t.Fatalf("the provider does not know pod %s", podKey)
	}
	c, ok := snap.Container(name)
	if !ok {
		t.Fatalf("pod %s has no container %s", podKey, name)
	}
	return c
}

func TestScenarioCrashLoop(t *testing.T) {
	p, clk, pod := scenarioPlay(t, "crash-loop.yaml", "default/crasher")
	ctx := context.Background()
	rc := kri.NewReasonCache()
	ids := map[string]bool{}
	var sidecarID string
	for run := range 4 {
		status, err := p.GetPodStatus(ctx, pod)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.SyncPod(ctx, pod, status, rc); err != nil {
			t.Fatalf("SyncPod #%d: %v", run+1, err)
		}
		app := scenarioContainer(t, p, "default/crasher", "app")
		if app.State != pkgcontainer.ContainerStateRunning || app.RestartCount != run {
			t.Fatalf("after SyncPod #%d app is %s with restart count %d; want running, %d", run+1, app.State, app.RestartCount, run)
		}
		if ids[app.ID] {
			t.Fatalf("run %d of app reuses container ID %s", run+1, app.ID)
		}
		ids[app.ID] = true
		sidecar := scenarioContainer(t, p, "default/crasher", "sidecar")
		if run == 0 {
			sidecarID = sidecar.ID
		}
		if sidecar.State != pkgcontainer.ContainerStateRunning || sidecar.RestartCount != 0 || sidecar.ID != sidecarID {
			t.Fatalf("after SyncPod #%d sidecar is %s, restart count %d, ID %s; want the first instance (%s) running", run+1, sidecar.State, sidecar.RestartCount, sidecar.ID, sidecarID)
		}

		clk.Step(time.Second)
		if app := scenarioContainer(t, p, "default/crasher", "app"); app.State != pkgcontainer.ContainerStateRunning {
			t.Fatalf("1s into run %d app is %s; want running (it sleeps 2s)", run+1, app.State)
		}
		clk.Step(time.Second)
		app = scenarioContainer(t, p, "default/crasher", "app")
		if app.State != pkgcontainer.ContainerStateExited || app.ExitCode != 3 || !app.FinishedAt.Equal(app.StartedAt.Add(2*time.Second)) {
			t.Fatalf("2s into run %d app is %s with exit code %d, ran %v; want exited 3 after 2s", run+1, app.State, app.ExitCode, app.FinishedAt.Sub(app.StartedAt))
		}
	}
	status, err := p.GetPodStatus(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	if st := status.FindContainerStatusByName("app"); st == nil || st.RestartCount != 3 || st.ExitCode != 3 || st.State != pkgcontainer.ContainerStateExited {
		t.Errorf("GetPodStatus reports app as %+v; want exited 3 with restart count 3", st)
	}
}

func TestScenarioImagePullRecovery(t *testing.T) {
	p, clk, pod := scenarioPlay(t, "image-pull-recovery.yaml", "default/puller")
	ctx := context.Background()
	rc := kri.NewReasonCache()
	for attempt := 1; attempt <= 2; attempt++ {
		err := p.SyncPod(ctx, pod, nil, rc)
		if err == nil || !strings.Contains(err.Error(), "ErrImagePull") {
			t.Fatalf("SyncPod #%d = %v; want the ErrImagePull failure", attempt, err)
		}
		item, ok := rc.Get(pod.UID, "app")
		if !ok || !errors.Is(item.Err, fake.ErrImagePull) || !strings.Contains(item.Message, "i/o timeout") {
			t.Fatalf("after SyncPod #%d the ReasonCache holds %+v, %v; want ErrImagePull with the scripted message", attempt, item, ok)
		}
		var ps v1.PodStatus
		p.RefreshPodStatus(pod, &ps)
		if len(ps.ContainerStatuses) != 1 || ps.ContainerStatuses[0].State.Waiting == nil || ps.ContainerStatuses[0].State.Waiting.Reason != "ErrImagePull" {
			t.Fatalf("after SyncPod #%d RefreshPodStatus gives %+v; want app waiting with reason ErrImagePull", attempt, ps.ContainerStatuses)
		}
		if app := scenarioContainer(t, p, "default/puller", "app"); app.ID != "" || !errors.Is(app.LastStartError, fake.ErrImagePull) {
			t.Fatalf("after SyncPod #%d app is %+v; want never created, last start error ErrImagePull", attempt, app)
		}
		clk.Step(10 * time.Second) // a back-off, as a kubelet would wait
	}

	if err := p.SyncPod(ctx, pod, nil, rc); err != nil {
		t.Fatalf("SyncPod #3: %v; want the start to succeed", err)
	}
	if item, ok := rc.Get(pod.UID, "app"); ok {
		t.Fatalf("after SyncPod #3 the ReasonCache still holds %+v; want it cleared", item)
	}
	created := scenarioT0.Add(20 * time.Second)
	app := scenarioContainer(t, p, "default/puller", "app")
	if app.State != pkgcontainer.ContainerStateCreated || app.LastStartError != nil || !app.CreatedAt.Equal(created) {
		t.Fatalf("after SyncPod #3 app is %+v; want created at %v, waiting out its 2s start latency", app, created)
	}
	clk.Step(1999 * time.Millisecond)
	if app := scenarioContainer(t, p, "default/puller", "app"); app.State != pkgcontainer.ContainerStateCreated {
		t.Fatalf("1.999s after the start app is %s; want still created", app.State)
	}
	clk.Step(time.Millisecond)
	app = scenarioContainer(t, p, "default/puller", "app")
	if app.State != pkgcontainer.ContainerStateRunning || !app.StartedAt.Equal(created.Add(2*time.Second)) || app.RestartCount != 0 {
		t.Fatalf("2s after the start app is %+v; want running since %v, restart count 0", app, created.Add(2*time.Second))
	}
	var ps v1.PodStatus
	p.RefreshPodStatus(pod, &ps)
	if st := ps.ContainerStatuses; len(st) != 1 || st[0].State.Running == nil || st[0].State.Waiting != nil {
		t.Errorf("RefreshPodStatus gives %+v; want app running", st)
	}
	// A later sync leaves the running container alone.
	if err := p.SyncPod(ctx, pod, nil, rc); err != nil {
		t.Fatal(err)
	}
	if again := scenarioContainer(t, p, "default/puller", "app"); again.ID != app.ID || again.State != pkgcontainer.ContainerStateRunning {
		t.Errorf("SyncPod #4 changed app: %+v; want %s still running", again, app.ID)
	}
}

// scenarioAwaitTerminating waits, without polling, until container name of
// the pod ignores the SIGTERM that KillPod sent: from then on KillPod waits
// on the clock for the grace period, so the test may step it.
func scenarioAwaitTerminating(t *testing.T, p *fake.PodProvider, key, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := p.WaitFor(ctx, key, func(s fake.PodSnapshot, _ bool) bool {
		c, _ := s.Container(name)
		return c.Terminating
	}); err != nil {
		t.Fatalf("%s of %s never started terminating: %v", name, key, err)
	}
}

// scenarioRunningPod returns the running pod of the given UID from GetPods.
func scenarioRunningPod(t *testing.T, p *fake.PodProvider, pod *v1.Pod) pkgcontainer.Pod {
	t.Helper()
	pods, err := p.GetPods(context.Background(), false)
	if err != nil {
		t.Fatalf("GetPods: %v", err)
	}
	for _, rp := range pods {
		if rp.ID == pod.UID {
			return *rp
		}
	}
	t.Fatalf("GetPods(false) does not list pod %s", pod.UID)
	return pkgcontainer.Pod{}
}

func TestScenarioSlowTermination(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p, clk, pod := scenarioPlay(t, "slow-termination.yaml", "default/stubborn")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.SyncPod(ctx, pod, nil, kri.NewReasonCache()); err != nil {
		t.Fatal(err)
	}
	running := scenarioRunningPod(t, p, pod)
	if len(running.Containers) != 2 {
		t.Fatalf("running pod has %d containers, want 2", len(running.Containers))
	}
	if clk.HasWaiters() {
		t.Fatalf("the clock has %d waiters before KillPod; want none (both containers run until killed)", clk.Waiters())
	}

	killed := clk.Now()
	done := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() { done <- p.KillPod(ctx, pod, running, nil) })
	defer wg.Wait()
	scenarioAwaitTerminating(t, p, "default/stubborn", "app")

	select {
	case err := <-done:
		t.Fatalf("KillPod returned %v before the grace period was over", err)
	default:
	}
	if side := scenarioContainer(t, p, "default/stubborn", "sidecar"); side.State != pkgcontainer.ContainerStateExited || side.ExitCode != 143 || !side.FinishedAt.Equal(killed) {
		t.Fatalf("sidecar is %s with exit code %d at %v; want exited 143 at once", side.State, side.ExitCode, side.FinishedAt)
	}
	clk.Step(9 * time.Second)
	app := scenarioContainer(t, p, "default/stubborn", "app")
	if app.State != pkgcontainer.ContainerStateRunning || !app.Terminating {
		t.Fatalf("9s into the grace period app is %s (terminating %v); want running, terminating", app.State, app.Terminating)
	}
	select {
	case err := <-done:
		t.Fatalf("KillPod returned %v 9s into a 10s grace period", err)
	default:
	}

	clk.Step(time.Second)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("KillPod: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("KillPod did not return once the 10s grace period was over")
	}
	app = scenarioContainer(t, p, "default/stubborn", "app")
	if app.State != pkgcontainer.ContainerStateExited || app.ExitCode != 137 || !app.FinishedAt.Equal(killed.Add(10*time.Second)) || app.Terminating {
		t.Errorf("after KillPod app is %+v; want exited 137 at %v", app, killed.Add(10*time.Second))
	}
	if pods, err := p.GetPods(ctx, false); err != nil || len(pods) != 0 {
		t.Errorf("GetPods(false) after KillPod = %d pods, %v; want none running", len(pods), err)
	}
}

func TestScenarioFlakyRuntime(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("scripted container", func(t *testing.T) {
		p, clk, pod := scenarioPlay(t, "flaky-runtime.yaml", "default/api")
		if err := p.SyncPod(ctx, pod, nil, kri.NewReasonCache()); err != nil {
			t.Fatal(err)
		}
		if w := scenarioContainer(t, p, "default/api", "worker"); w.State != pkgcontainer.ContainerStateCreated {
			t.Fatalf("worker is %s at once; want created (1s start latency)", w.State)
		}
		clk.Step(time.Second)
		if w := scenarioContainer(t, p, "default/api", "worker"); w.State != pkgcontainer.ContainerStateRunning {
			t.Fatalf("worker is %s after 1s; want running", w.State)
		}
		clk.Step(4999 * time.Millisecond)
		if w := scenarioContainer(t, p, "default/api", "worker"); w.State != pkgcontainer.ContainerStateRunning {
			t.Fatalf("worker is %s 4.999s after starting; want running (exits after 5s)", w.State)
		}
		clk.Step(time.Millisecond)
		w := scenarioContainer(t, p, "default/api", "worker")
		if w.State != pkgcontainer.ContainerStateExited || w.ExitCode != 3 || !w.FinishedAt.Equal(scenarioT0.Add(6*time.Second)) {
			t.Fatalf("worker is %s with exit code %d at %v; want exited 3 at %v, its command notwithstanding", w.State, w.ExitCode, w.FinishedAt, scenarioT0.Add(6*time.Second))
		}
		if err := p.SyncPod(ctx, pod, nil, kri.NewReasonCache()); err != nil {
			t.Fatal(err)
		}
		if again := scenarioContainer(t, p, "default/api", "worker"); again.ID != w.ID || again.RestartCount != 0 {
			t.Errorf("under restartPolicy Never SyncPod restarted worker: %+v", again)
		}
	})

	t.Run("scripted faults", func(t *testing.T) {
		p, clk, pod := scenarioPlay(t, "flaky-runtime.yaml", "default/api")
		if err := p.SyncPod(ctx, pod, nil, kri.NewReasonCache()); err != nil {
			t.Fatal(err)
		}
		clk.Step(time.Second)
		if _, err := p.GetPods(ctx, false); err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("first GetPods = %v; want the scripted failure", err)
		}
		running := scenarioRunningPod(t, p, pod)
		if err := p.KillPod(ctx, pod, running, nil); err == nil || !strings.Contains(err.Error(), "DeadlineExceeded") {
			t.Fatalf("first KillPod = %v; want the scripted failure", err)
		}
		if s := scenarioContainer(t, p, "default/api", "server"); s.State != pkgcontainer.ContainerStateRunning {
			t.Fatalf("a failed KillPod stopped server: %s", s.State)
		}

		done := make(chan error, 1)
		var wg sync.WaitGroup
		wg.Go(func() { done <- p.KillPod(ctx, pod, running, nil) })
		defer wg.Wait()
		scenarioAwaitTerminating(t, p, "default/api", "worker")
		if s := scenarioContainer(t, p, "default/api", "server"); s.State != pkgcontainer.ContainerStateExited || s.ExitCode != 143 {
			t.Fatalf("server is %s with exit code %d; want exited 143 at once", s.State, s.ExitCode)
		}
		clk.Step(4 * time.Second)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("second KillPod: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("KillPod did not return once the 4s grace period was over")
		}
		w := scenarioContainer(t, p, "default/api", "worker")
		if w.State != pkgcontainer.ContainerStateExited || w.ExitCode != 137 || !w.FinishedAt.Equal(scenarioT0.Add(5*time.Second)) {
			t.Errorf("worker is %s with exit code %d at %v; want killed (137) at the end of the grace period, %v", w.State, w.ExitCode, w.FinishedAt, scenarioT0.Add(5*time.Second))
		}
	})
}

func FuzzParseScenario(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"name: x\npods: [\n",
		scenarioBase + "scripts:\n- pod: web\n  container: {name: app, exitAfter: {after: 5x}}\n",
		scenarioBase + "scripts:\n- pod: web\n  fail: {method: KillPod, times: always}\n",
		"a: &a [*a]\n",
		"a: &a {b: 1}\nb: {<<: *a}\n",
		"name: x\npods:\n- <<: {metadata: {name: a, uid: u}}\n  spec: {containers: [{name: c, command: [sh, -c, 'sleep 1; exit 2']}]}\n",
		"x: &x [a, a, a, a]\ny: &y [*x, *x, *x, *x]\nz: [*y, *y, *y, *y]\n",
		"name: x\npods:\n- metadata: {name: a, uid: u, creationTimestamp: 2020-01-01T00:00:00Z}\n  spec: {containers: [{name: c, resources: {limits: {cpu: !!binary aGk=}}}]}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := fake.ParseScenario("fuzz.yaml", data)
		if err != nil {
			var se *fake.ScenarioError
			if !errors.As(err, &se) || se.File != "fuzz.yaml" || !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q (%T) does not name the file", err, err)
			}
			return
		}
		// A scenario that parses can be applied, to a provider made with
		// the options it asks for, and its pods synced.
		p := fake.NewPodProvider(append(s.Options(), fake.WithClock(clocktesting.NewFakeClock(scenarioT0)))...)
		if err := s.Apply(p); err != nil {
			t.Fatalf("Apply of a parsed scenario: %v", err)
		}
		rc := kri.NewReasonCache()
		for _, pod := range s.Pods() {
			if pod.Name == "" || pod.UID == "" || pod.Namespace == "" {
				t.Fatalf("parsed pod without name, uid or namespace: %+v", pod.ObjectMeta)
			}
			// Start failures and scripted faults are fine; rejecting the
			// pod itself is not.
			err := p.SyncPod(context.Background(), pod, nil, rc)
			if err != nil && strings.HasPrefix(err.Error(), "fake: pod ") {
				t.Fatalf("SyncPod rejects a parsed pod: %v", err)
			}
		}
	})
}

// scenarioWantError checks that ParseScenario rejects doc with a
// *fake.ScenarioError at file:line naming field, whose text contains msg.
func scenarioWantError(t *testing.T, file, doc string, line int, field, msg string) {
	t.Helper()
	s, err := fake.ParseScenario(file, []byte(doc))
	if err == nil {
		t.Fatalf("ParseScenario = %+v, nil; want an error", s)
	}
	var se *fake.ScenarioError
	if !errors.As(err, &se) {
		t.Fatalf("error %q (%T) is not a *fake.ScenarioError", err, err)
	}
	if se.File != file || se.Line != line || se.Field != field {
		t.Errorf("error %q: file, line, field = %q, %d, %q; want %q, %d, %q", err, se.File, se.Line, se.Field, file, line, field)
	}
	want := file + ": "
	if line > 0 {
		want = file + ":" + strconv.Itoa(line) + ": "
	}
	if field != "" {
		want += field + ": "
	}
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q: want it to start with %q and contain %q", err, want, msg)
	}
}

// The decoder's errors: found in file order whatever the order of the JSON
// the decoder reads, with the file's own key names and lines.
func TestParseScenarioDecodeErrors(t *testing.T) {
	const file = "decode.yaml"
	container := func(lines ...string) string {
		return "name: x\npods:\n- metadata: {name: a, uid: u}\n  spec:\n    containers:\n    - name: app\n      " + strings.Join(lines, "\n      ") + "\n"
	}
	tests := []struct {
		name  string
		yaml  string
		line  int
		field string
		msg   string
	}{
		{"unknown fields out of alphabetical order", container("zzz: 1", "aaa: 1"), 7, "pods[0].spec.containers[0].zzz", `unknown field "zzz"`},
		{"bad values out of alphabetical order", container("ports: x", "command: y"), 7, "pods[0].spec.containers[0].ports", `expected a list, got "x"`},
		{"unknown field before a bad value", container("Image: a", "ports: x"), 7, "pods[0].spec.containers[0].Image", `unknown field "Image" (did you mean "image"?)`},
		{"bad value before an unknown field", container("ports: x", "Image: a"), 7, "pods[0].spec.containers[0].ports", `expected a list, got "x"`},
		{"unknown field in a later item", container("image: a") + "    - name: b\n      Image: b\n", 9, "pods[0].spec.containers[1].Image", `unknown field "Image"`},
		{"empty tag for a list, in a later item", container("command: [a]") + "    - name: b\n      command: !\n", 9, "pods[0].spec.containers[1].command", `expected a list, got ""`},
		{"key read by YAML 1.1", "name: x\nyes: 1\n", 2, "yes", `unknown field "yes" (want one of crashLoopBackOff, description, kubeletSemantics, name, pods, scripts)`},
		{"bad values under keys read by YAML 1.1, in file order", "name: x\npods:\n- metadata:\n    name: a\n    uid: u\n    labels:\n      b: [c]\n      0x10: [a]\n", 7, "pods[0].metadata.labels.b", "expected a string, got a list"},
		{"unknown key with a dot", "name: x\npods:\n- metadata: {name: a, uid: u}\n  spec:\n    a.b: 1\n", 5, `pods[0].spec["a.b"]`, `unknown field "a.b"`},
		{"mapping for a string in a map", "name: x\npods:\n- metadata: {name: a, uid: u, annotations: {a.b/c: {d: 1}}}\n", 3, `pods[0].metadata.annotations["a.b/c"]`, "expected a string, got a mapping"},
		{"list for an int-or-string beneath an embedded struct", container("readinessProbe:", "  tcpSocket: {port: [1]}"), 8, "pods[0].spec.containers[0].readinessProbe.tcpSocket.port", "expected an integer or a string, got a list"},
		{"bad time", "name: x\npods:\n- metadata:\n    name: a\n    uid: u\n    creationTimestamp: yesterday\n", 6, "pods[0].metadata.creationTimestamp", `invalid value "yesterday": parsing time`},
		{"bad value in an anchored node", container("resources: &r {limits: {cpu: 1x}}", "env: [{name: A, value: b}]") + "    - name: b\n      resources: *r\n", 7, "pods[0].spec.containers[0].resources.limits.cpu", `invalid value "1x"`},
		{"alias within its own node", "name: x\npods:\n- metadata: &m {name: a, uid: u, labels: {x: *m}}\n", 3, "pods[0].metadata.labels.x", "alias *m stands for a node that holds it"},
		{"merge within its own node", "a: &a {b: {<<: *a}}\n", 1, "a.b", "alias *a stands for a node that holds it"},
		{"alias of an enclosing list", "name: &n x\npods: &p [*p]\n", 2, "pods[0]", "alias *p stands for a node that holds it"},
		{"deep list where a pod belongs", "name: x\npods:\n- " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n", 3, "pods[0]", "expected a mapping, got a list"},
		{"deep value under an unknown field", "name: x\nx: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n", 2, "x", `unknown field "x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scenarioWantError(t, file, tc.yaml, tc.line, tc.field, tc.msg)
		})
	}
}

// ParseScenario reads values as sigs.k8s.io/yaml reads them: its pods equal
// those sigs.k8s.io/yaml decodes from the same file (namespace defaulted).
func TestParseScenarioDecodesAsSigsYAML(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped scenarios: %v", err)
	}
	docs := map[string][]byte{"coercions.yaml": []byte(`name: coercions
pods:
- apiVersion: v1
  metadata: {name: a, uid: 7, labels: {tier: 1, on: yes, big: 9007199254740993}, annotations: {f: 1.5}}
  spec:
    terminationGracePeriodSeconds: 0x1e
    containers:
    - name: app
      args: [1, true, 0.5, ~]
      ports: [{containerPort: 0x50, name: 8080}]
      securityContext: &sc {privileged: yes, runAsUser: 0o17}
      resources: &r {limits: {cpu: 0.5, memory: 64Mi}, requests: {cpu: 100m}}
      readinessProbe: {httpGet: {path: /x, port: http}, periodSeconds: 3}
    - name: other
      securityContext: {<<: *sc, runAsGroup: 1}
      resources: *r
`)}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = data
	}
	for name, data := range docs {
		s, err := fake.ParseScenario(name, data)
		if err != nil {
			t.Errorf("ParseScenario(%s): %v", name, err)
			continue
		}
		var want struct {
			Pods []*v1.Pod `json:"pods"`
		}
		if err := sigsyaml.Unmarshal(data, &want); err != nil {
			t.Fatalf("sigs.k8s.io/yaml: %s: %v", name, err)
		}
		for _, pod := range want.Pods {
			if pod.Namespace == "" {
				pod.Namespace = "default"
			}
		}
		if diff := cmp.Diff(want.Pods, s.Pods()); diff != "" {
			t.Errorf("%s: pods differ from those sigs.k8s.io/yaml decodes (-sigs +ParseScenario):\n%s", name, diff)
		}
	}
}

func BenchmarkParseScenario(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(scenarioDir, "flaky-runtime.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fake.ParseScenario("flaky-runtime.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// An error that the decoder finds and ParseScenario must locate.
func BenchmarkParseScenarioBadValue(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(scenarioDir, "flaky-runtime.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	data = bytes.Replace(data, []byte("restartPolicy: Never"), []byte("restartPolicy: Never\n    activeDeadlineSeconds: soon"), 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fake.ParseScenario("flaky-runtime.yaml", data); err == nil || !strings.Contains(err.Error(), "activeDeadlineSeconds: expected an integer") {
			b.Fatalf("ParseScenario = %v; want the bad activeDeadlineSeconds", err)
		}
	}
}

// A bad value in a wide mapping whose keys YAML 1.1 reads as numbers: the
// lines of the keys, by their JSON names, are found once per mapping.
func BenchmarkParseScenarioWideMapping(b *testing.B) {
	var doc strings.Builder
	doc.WriteString("name: x\npods:\n- metadata:\n    name: a\n    uid: u\n    labels:\n")
	for i := range 2000 {
		fmt.Fprintf(&doc, "      0x%x: v\n", i+1)
	}
	doc.WriteString("      bad: {a: 1}\n")
	data := []byte(doc.String())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fake.ParseScenario("wide.yaml", data); err == nil || !strings.HasPrefix(err.Error(), "wide.yaml:2007: pods[0].metadata.labels.bad: expected a string") {
			b.Fatalf("ParseScenario = %v; want the bad label on line 2007", err)
		}
	}
}

// TestScenarioCrashLoopBackOff: crashLoopBackOff: true in a scenario turns
// the provider's crash-loop back-off on: the crash-loop scenario's app is
// then not restarted at every sync.
func TestScenarioCrashLoopBackOff(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(scenarioDir, "crash-loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("name: crash-loop\n"), []byte("name: crash-loop\ncrashLoopBackOff: true\n"), 1)
	s, err := fake.ParseScenario("crash-loop-backoff.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if !s.CrashLoopBackOff {
		t.Fatal("ParseScenario dropped crashLoopBackOff: true")
	}
	clk := clocktesting.NewFakeClock(scenarioT0)
	p := fake.NewPodProvider(fake.WithClock(clk))
	if err := s.Apply(p); err != nil {
		t.Fatal(err)
	}
	pod, _ := s.Pod("default/crasher")
	ctx, rc := context.Background(), kri.NewReasonCache()
	sync := func() error {
		st, err := p.GetPodStatus(ctx, pod)
		if err != nil {
			t.Fatal(err)
		}
		return p.SyncPod(ctx, pod, st, rc)
	}
	var backedOff bool
	for range 3 { // runs of 2 s, each followed by a sync right after the exit
		if err := sync(); errors.Is(err, pkgcontainer.ErrCrashLoopBackOff) {
			backedOff = true
			break
		} else if err != nil {
			t.Fatal(err)
		}
		clk.Step(2 * time.Second)
	}
	if !backedOff {
		t.Fatalf("with crashLoopBackOff: true, SyncPod restarted app at every sync; want ErrCrashLoopBackOff once it has restarted (app is %+v)", scenarioContainer(t, p, "default/crasher", "app"))
	}

	bad := bytes.Replace(data, []byte("crashLoopBackOff: true"), []byte("crashLoopBackOff: sometimes"), 1)
	if _, err := fake.ParseScenario("bad.yaml", bad); err == nil || !strings.Contains(err.Error(), "bad.yaml:") || !strings.Contains(err.Error(), "crashLoopBackOff") {
		t.Errorf("ParseScenario of crashLoopBackOff: sometimes = %v, want an error naming the file, line and field", err)
	}
}

func TestScenarioFlakyJobKubelet(t *testing.T) {
	s, err := fake.LoadScenario(filepath.Join(scenarioDir, "flaky-job-kubelet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.KubeletSemantics {
		t.Fatal("KubeletSemantics is false, want true (the file sets kubeletSemantics)")
	}
	clk := clocktesting.NewFakeClock(scenarioT0)
	if err := s.Apply(fake.NewPodProvider(fake.WithClock(clk))); err == nil || !strings.Contains(err.Error(), "WithKubeletSemantics") {
		t.Fatalf("Apply to a provider made without WithKubeletSemantics = %v, want an error naming the option", err)
	}
	p, err := s.NewPodProvider(fake.WithClock(clk))
	if err != nil {
		t.Fatalf("NewPodProvider: %v", err)
	}
	pod, _ := s.Pod("job")
	rc := kri.NewReasonCache()
	sync := func() error {
		st, err := p.GetPodStatus(context.Background(), pod)
		if err != nil {
			t.Fatal(err)
		}
		return p.SyncPod(context.Background(), pod, st, rc)
	}
	// A pod worker syncing every second for 30s.
	var codes []int
	seen := map[string]bool{}
	for range 30 {
		if err := sync(); err != nil && !errors.Is(err, pkgcontainer.ErrCrashLoopBackOff) {
			t.Fatalf("SyncPod: %v", err)
		}
		clk.Step(time.Second)
		job := scenarioContainer(t, p, "default/job", "job")
		if job.State == pkgcontainer.ContainerStateExited && !seen[job.ID] {
			seen[job.ID] = true
			codes = append(codes, job.ExitCode)
		}
	}
	if !slices.Equal(codes, []int{1, 1, 0}) {
		t.Fatalf("job runs exited with %v, want [1 1 0] (exitRuns: twice 1, then 0)", codes)
	}
	job := scenarioContainer(t, p, "default/job", "job")
	if job.RestartCount != 2 {
		t.Errorf("job restart count %d, want 2", job.RestartCount)
	}
	// The second restart waited out the crash-loop back-off: runs end at
	// 1s, 2s (restarted at once), then 10s after the second exit.
	if got := job.CreatedAt.Sub(scenarioT0); got != 12*time.Second {
		t.Errorf("third run created at %s, want 12s (10s back-off after the exit at 2s)", got)
	}
	st, _ := p.GetPodStatus(context.Background(), pod)
	if len(st.IPs) != 1 {
		t.Errorf("pod IPs %v, want one (kubelet semantics)", st.IPs)
	}
}

func TestExitRuns(t *testing.T) {
	f := newFixture(t)
	pod := newPod("runs", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f.p.Container("default/runs", "app").ExitRuns(2, time.Second, 1).ExitRuns(0, time.Second, 9).ExitRuns(1, 2*time.Second, 256+3)
	var got []string
	for range 4 {
		f.mustSync(pod)
		f.clock.Step(5 * time.Second)
		cur := f.current(pod, "app")
		got = append(got, fmt.Sprintf("%s/%d after %s", cur.State, cur.ExitCode, cur.FinishedAt.Sub(cur.StartedAt)))
	}
	want := []string{"exited/1 after 1s", "exited/1 after 1s", "exited/3 after 2s"}
	if !slices.Equal(got[:3], want) || !strings.HasPrefix(got[3], "running/") {
		t.Errorf("runs: %q, want %q then running (sleep infinity: the scripted runs are used up)", got, want)
	}
	// Scripts are per run: a failed start consumes none.
	f2 := newFixture(t)
	pod2 := newPod("runs2", v1.RestartPolicyAlways, container("app", "sleep", "infinity"))
	f2.p.Container("default/runs2", "app").FailStarts(1, nil, "boom").ExitRuns(1, time.Second, 7)
	if err := f2.sync(pod2); err == nil {
		t.Fatal("first SyncPod succeeded, want the scripted start failure")
	}
	f2.mustSync(pod2)
	f2.clock.Step(time.Second)
	if cur := f2.current(pod2, "app"); cur.State != pkgcontainer.ContainerStateExited || cur.ExitCode != 7 {
		t.Errorf("first run after a failed start: %s exit %d, want exited 7", cur.State, cur.ExitCode)
	}
}

func TestParseScenarioExitRunsErrors(t *testing.T) {
	base := "name: x\npods:\n- metadata: {name: web, uid: u}\n  spec:\n    containers:\n    - {name: app, command: [sleep, infinity]}\nscripts:\n- pod: web\n  container:\n    name: app\n"
	for _, tc := range []struct{ yaml, want string }{
		{"    exitRuns: []\n", "x.yaml:11: scripts[0].container.exitRuns: empty: want at least one run"},
		{"    exitRuns: [{code: 1}]\n", "x.yaml:11: scripts[0].container.exitRuns[0].after: required"},
		{"    exitRuns: [{after: 1s, times: 0}]\n", "x.yaml:11: scripts[0].container.exitRuns[0].times: invalid count 0 (want a number of at least 1: later runs follow the command)"},
		{"    exitRuns: [{after: 1s, times: always}]\n", "x.yaml:11: scripts[0].container.exitRuns[0].times: invalid count always (want a number of at least 1: later runs follow the command)"},
		{"    exitRuns: [{after: 1s, code: 256}]\n", "x.yaml:11: scripts[0].container.exitRuns[0].code: exit code 256 out of range 0 to 255"},
		{"    exitRuns: [{after: -1s}]\n", `x.yaml:11: scripts[0].container.exitRuns[0].after: invalid duration "-1s": must not be negative`},
	} {
		_, err := fake.ParseScenario("x.yaml", []byte(base+tc.yaml))
		if err == nil || err.Error() != tc.want {
			t.Errorf("exitRuns %q: error %v, want %q", strings.TrimSpace(tc.yaml), err, tc.want)
		}
	}
}
