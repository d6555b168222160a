package podactions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri/podactions"
)

// shc, sidecarOf and execProbe are sim/workload's test helpers of the same
// names (the tests below moved here from there with ActionsFromStatus).
func shc(name, script string) v1.Container {
	return v1.Container{Name: name, Image: "busybox", Command: []string{"sh", "-c", script}}
}

func sidecarOf(c v1.Container) v1.Container {
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

func execProbe(script string, delay, period, success, failure int32) *v1.Probe {
	return &v1.Probe{
		ProbeHandler:        v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", script}}},
		InitialDelaySeconds: delay, PeriodSeconds: period, SuccessThreshold: success, FailureThreshold: failure,
	}
}

// describeActions renders a, as "kill sandbox(1) init[a] apps[b c]".
func describeActions(a podactions.PodActions) string {
	var parts []string
	if a.KillPod {
		parts = append(parts, "kill")
	}
	if a.CreateSandbox {
		parts = append(parts, fmt.Sprintf("sandbox(%d)", a.Attempt))
	}
	names := func(cs []*v1.Container) string {
		var n []string
		for _, c := range cs {
			n = append(n, c.Name)
		}
		return strings.Join(n, " ")
	}
	if len(a.StartInit) > 0 {
		parts = append(parts, "init["+names(a.StartInit)+"]")
	}
	if len(a.StartApps) > 0 {
		parts = append(parts, "apps["+names(a.StartApps)+"]")
	}
	return strings.Join(parts, " ")
}

// cs is a container status of the active sandbox: state "running",
// "created", or an exit code.
func cs(name string, state any) *pkgcontainer.Status {
	s := &pkgcontainer.Status{Name: name, ID: pkgcontainer.ContainerID{Type: "sim", ID: name + "-1"}}
	switch v := state.(type) {
	case string:
		s.State = map[string]pkgcontainer.State{"running": pkgcontainer.ContainerStateRunning, "created": pkgcontainer.ContainerStateCreated}[v]
	case int:
		s.State, s.ExitCode = pkgcontainer.ContainerStateExited, v
	}
	return s
}

func TestActionsFromStatus(t *testing.T) {
	ready := []*runtimeapi.PodSandboxStatus{{Id: "sb", State: runtimeapi.PodSandboxState_SANDBOX_READY, Metadata: &runtimeapi.PodSandboxMetadata{Attempt: 2}}}
	notReady := []*runtimeapi.PodSandboxStatus{{Id: "sb", State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, Metadata: &runtimeapi.PodSandboxMetadata{Attempt: 2}}}
	proxy := sidecarOf(shc("proxy", "sleep infinity"))
	proxy.StartupProbe = execProbe("test -e /tmp/up", 0, 1, 1, 3)
	for _, tt := range []struct {
		name       string
		policy     v1.RestartPolicy
		init, apps []v1.Container
		sandboxes  []*runtimeapi.PodSandboxStatus
		statuses   []*pkgcontainer.Status
		started    bool // what the startup manager says of every run
		want       string
	}{
		{name: "a new pod: a sandbox, then its first init container", init: []v1.Container{shc("setup", "true"), shc("more", "true")}, apps: []v1.Container{shc("app", "sleep 1")},
			want: "kill sandbox(0) init[setup]"},
		{name: "a new pod without init containers: every app container", apps: []v1.Container{shc("a", "sleep 1"), shc("b", "sleep 1")},
			want: "kill sandbox(0) apps[a b]"},
		{name: "the sandbox died: a new one, its attempt the next", apps: []v1.Container{shc("app", "sleep 1")}, sandboxes: notReady,
			statuses: []*pkgcontainer.Status{cs("app", 137)}, want: "kill sandbox(3) apps[app]"},
		{name: "the sandbox of a done pod died under Never: no new one", policy: v1.RestartPolicyNever, apps: []v1.Container{shc("app", "sleep 1")},
			sandboxes: notReady, statuses: []*pkgcontainer.Status{cs("app", 0)}, want: "kill"},
		{name: "an init container runs: wait", init: []v1.Container{shc("setup", "sleep 1")}, apps: []v1.Container{shc("app", "sleep 1")},
			sandboxes: ready, statuses: []*pkgcontainer.Status{cs("setup", "running")}, want: ""},
		{name: "an init container completed: the next", init: []v1.Container{shc("setup", "true"), shc("more", "true")}, apps: []v1.Container{shc("app", "sleep 1")},
			sandboxes: ready, statuses: []*pkgcontainer.Status{cs("setup", 0)}, want: "init[more]"},
		{name: "the last init container completed: the app containers", init: []v1.Container{shc("setup", "true")}, apps: []v1.Container{shc("app", "sleep 1")},
			sandboxes: ready, statuses: []*pkgcontainer.Status{cs("setup", 0)}, want: "apps[app]"},
		{name: "an init container failed under Always: again", init: []v1.Container{shc("setup", "exit 1")}, apps: []v1.Container{shc("app", "sleep 1")},
			sandboxes: ready, statuses: []*pkgcontainer.Status{cs("setup", 1)}, want: "init[setup]"},
		{name: "an init container failed under Never: the pod is killed", policy: v1.RestartPolicyNever, init: []v1.Container{shc("setup", "exit 1")},
			apps: []v1.Container{shc("app", "sleep 1")}, sandboxes: ready, statuses: []*pkgcontainer.Status{cs("setup", 1)}, want: "kill"},
		{name: "a sidecar runs, its startup probe not yet passed: wait", init: []v1.Container{proxy, shc("setup", "true")}, apps: []v1.Container{shc("app", "sleep 1")},
			sandboxes: ready, statuses: []*pkgcontainer.Status{cs("proxy", "running")}, want: ""},
		{name: "a sidecar has started: the next init container", init: []v1.Container{proxy, shc("setup", "true")}, apps: []v1.Container{shc("app", "sleep 1")},
			sandboxes: ready, statuses: []*pkgcontainer.Status{cs("proxy", "running")}, started: true, want: "init[setup]"},
		{name: "a sidecar exited beside a running app: it alone again", init: []v1.Container{proxy}, apps: []v1.Container{shc("app", "sleep 1")},
			sandboxes: ready, statuses: []*pkgcontainer.Status{cs("proxy", 1), cs("app", "running")}, want: "init[proxy]"},
		{name: "app containers: a running one is kept, an exited one restarted under Always", apps: []v1.Container{shc("a", "sleep 1"), shc("b", "sleep 1")},
			sandboxes: ready, statuses: []*pkgcontainer.Status{cs("a", "running"), cs("b", 0)}, want: "apps[b]"},
		{name: "OnFailure: a succeeded app container stays down", policy: v1.RestartPolicyOnFailure, apps: []v1.Container{shc("a", "sleep 1"), shc("b", "sleep 1")},
			sandboxes: ready, statuses: []*pkgcontainer.Status{cs("a", "created"), cs("b", 0)}, want: ""},
		{name: "nothing left to run: the pod is killed, its sidecars with it", policy: v1.RestartPolicyNever, init: []v1.Container{proxy}, apps: []v1.Container{shc("app", "sleep 1")},
			sandboxes: ready, statuses: []*pkgcontainer.Status{cs("proxy", "running"), cs("app", 0)}, started: true, want: "kill"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{RestartPolicy: tt.policy, InitContainers: tt.init, Containers: tt.apps}}
			st := &pkgcontainer.PodStatus{SandboxStatuses: tt.sandboxes, ContainerStatuses: tt.statuses, ActiveContainerStatuses: tt.statuses}
			asked := ""
			got := podactions.ActionsFromStatus(context.Background(), pod, st, func(name, id string) bool {
				asked = name + "/" + id
				return tt.started
			})
			if d := describeActions(got); d != tt.want {
				t.Errorf("ActionsFromStatus = %q, want %q", d, tt.want)
			}
			for _, c := range append(got.StartInit, got.StartApps...) {
				if !pointsInto(c, pod) {
					t.Errorf("container %s to start is not a pointer into the pod handed in", c.Name)
				}
			}
			if strings.Contains(tt.name, "startup probe") && asked != "proxy/proxy-1" {
				t.Errorf("the startup manager was asked of %q, want proxy/proxy-1 (the run the status shows)", asked)
			}
		})
	}
}

// Nil input is no panic: a nil pod has nothing to do, a nil status shows
// nothing, a nil startup answer is "not started".
func TestActionsFromStatusNilInput(t *testing.T) {
	if got := describeActions(podactions.ActionsFromStatus(context.Background(), nil, nil, nil)); got != "" {
		t.Errorf("nil pod: %q, want nothing", got)
	}
	proxy := sidecarOf(shc("proxy", "sleep infinity"))
	proxy.StartupProbe = execProbe("test -e /tmp/up", 0, 1, 1, 3)
	pod := &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{proxy, shc("setup", "true")}, Containers: []v1.Container{shc("app", "sleep 1")}}}
	if got := describeActions(podactions.ActionsFromStatus(context.Background(), pod, nil, nil)); got != "kill sandbox(0) init[proxy]" {
		t.Errorf("nil status: %q, want kill sandbox(0) init[proxy]", got)
	}
	st := &pkgcontainer.PodStatus{
		SandboxStatuses:         []*runtimeapi.PodSandboxStatus{{State: runtimeapi.PodSandboxState_SANDBOX_READY, Metadata: &runtimeapi.PodSandboxMetadata{}}},
		ActiveContainerStatuses: []*pkgcontainer.Status{cs("proxy", "running")},
	}
	st.ContainerStatuses = st.ActiveContainerStatuses
	if got := describeActions(podactions.ActionsFromStatus(context.Background(), pod, st, nil)); got != "" {
		t.Errorf("nil startup answer, proxy running with a startup probe: %q, want nothing (not started)", got)
	}
}

func pointsInto(c *v1.Container, pod *v1.Pod) bool {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if &list[i] == c {
				return true
			}
		}
	}
	return false
}

// A simulator that acts on the runtime status its agent hands it, as the
// kubelet's runtime does, asks what that status calls for.
func ExampleActionsFromStatus() {
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "setup", Image: "busybox"}},
		Containers:     []v1.Container{{Name: "app", Image: "busybox"}},
	}}
	// No sandbox yet: a new one, and the first init container in it.
	a := podactions.ActionsFromStatus(context.Background(), pod, &pkgcontainer.PodStatus{}, nil)
	fmt.Println(a.CreateSandbox, a.Attempt, a.StartInit[0].Name)

	// setup has completed in the ready sandbox: the app container.
	setup := &pkgcontainer.Status{Name: "setup", State: pkgcontainer.ContainerStateExited}
	st := &pkgcontainer.PodStatus{
		SandboxStatuses:         []*runtimeapi.PodSandboxStatus{{State: runtimeapi.PodSandboxState_SANDBOX_READY, Metadata: &runtimeapi.PodSandboxMetadata{}}},
		ContainerStatuses:       []*pkgcontainer.Status{setup},
		ActiveContainerStatuses: []*pkgcontainer.Status{setup},
	}
	a = podactions.ActionsFromStatus(context.Background(), pod, st, nil)
	fmt.Println(a.CreateSandbox, a.StartApps[0].Name)
	// Output:
	// true 0 setup
	// false app
}
