package podstatus_test

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
)

// TestRemoteBackendMatchesRuntime drives the same container history through
// a runtime-style provider (every instance kept, several per name) and a
// remote-backend-style one (one instance per name with its RestartCount, no
// sandbox), feeding each status back as the previous one as a node agent
// does, and checks that both report the same container status every round.
func TestRemoteBackendMatchesRuntime(t *testing.T) {
	spec := v1.PodSpec{Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways}
	backOff := map[string][2]string{"app": crash}
	rounds := []struct {
		name     string
		runtime  []*pkgcontainer.Status // newest first
		failures map[string][2]string
		want     v1.ContainerStatus
	}{
		{
			name:    "first instance runs",
			runtime: []*pkgcontainer.Status{runningI("app", "i1", 1)},
			want:    runningC("app", "i1", 1),
		},
		{
			name:     "it exits 1 and the restart is backed off",
			runtime:  []*pkgcontainer.Status{exitedI("app", "i1", 1, 1)},
			failures: backOff,
			want:     crashLoopC("app", "i1", 1, 1),
		},
		{
			name:    "the second instance runs",
			runtime: []*pkgcontainer.Status{withRestarts(runningI("app", "i2", 5), 1), exitedI("app", "i1", 1, 1)},
			want:    withRC(withLast(runningC("app", "i2", 5), terminatedS("i1", 1, 1)), 1),
		},
		{
			name:    "it exits 2",
			runtime: []*pkgcontainer.Status{withRestarts(exitedI("app", "i2", 5, 2), 1), exitedI("app", "i1", 1, 1)},
			want:    withRC(withLast(terminatedC("app", "i2", 5, 2), terminatedS("i1", 1, 1)), 1),
		},
		{
			name:    "the third instance runs",
			runtime: []*pkgcontainer.Status{withRestarts(runningI("app", "i3", 9), 2), withRestarts(exitedI("app", "i2", 5, 2), 1), exitedI("app", "i1", 1, 1)},
			want:    withRC(withLast(runningC("app", "i3", 9), terminatedS("i2", 5, 2)), 2),
		},
	}
	runtimePod := mkPod(spec, v1.PodStatus{})
	remotePod := mkPod(spec, v1.PodStatus{})
	for _, r := range rounds {
		rc := reasonCache(podUID, r.failures)
		rt := runtimeStatus(r.runtime...)
		remote := runtimeOnly(r.runtime[0])
		gotRuntime := podstatus.Generate(runtimePod, rt, rc)
		gotRemote := podstatus.Generate(remotePod, remote, rc)
		if d := cmp.Diff(list(r.want), gotRuntime.ContainerStatuses); d != "" {
			t.Errorf("%s: runtime-style provider: container statuses (-want +got):\n%s", r.name, d)
		}
		if d := cmp.Diff(list(r.want), gotRemote.ContainerStatuses); d != "" {
			t.Errorf("%s: remote-backend provider (one instance per name): container statuses (-want +got):\n%s", r.name, d)
		}
		if gotRuntime.Phase != v1.PodRunning || gotRemote.Phase != v1.PodRunning {
			t.Errorf("%s: phase = %s (runtime), %s (remote), want Running for both", r.name, gotRuntime.Phase, gotRemote.Phase)
		}
		runtimePod.Status, remotePod.Status = gotRuntime, gotRemote
	}
}

// TestInstanceOrderDoesNotMatter: KRI lists come in any order; the newest
// instance by CreatedAt counts, wherever it is listed.
func TestInstanceOrderDoesNotMatter(t *testing.T) {
	pod := mkPod(v1.PodSpec{Containers: containers("a", "b"), RestartPolicy: v1.RestartPolicyAlways}, v1.PodStatus{})
	instances := []*pkgcontainer.Status{
		exitedI("a", "a1", 1, 1), withRestarts(exitedI("a", "a2", 3, 2), 1), withRestarts(runningI("a", "a3", 5), 2),
		exitedI("b", "b1", 2, 0), withRestarts(runningI("b", "b2", 4), 1),
	}
	wantApp := list(
		withRC(withLast(runningC("a", "a3", 5), terminatedS("a2", 3, 2)), 2),
		withRC(withLast(runningC("b", "b2", 4), terminatedS("b1", 2, 0)), 1),
	)
	orders := [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 0, 4, 1, 3}, {3, 1, 4, 0, 2}}
	for _, order := range orders {
		var shuffled []*pkgcontainer.Status
		for _, i := range order {
			shuffled = append(shuffled, instances[i])
		}
		got := podstatus.Generate(pod, runtimeStatus(shuffled...), nil)
		if d := cmp.Diff(wantApp, got.ContainerStatuses); d != "" {
			t.Errorf("instances in order %v: container statuses (-want +got):\n%s", order, d)
		}
	}
}

// TestNilAndOddInputs: Generate never panics and returns what the doc
// comment promises for unusable input.
func TestNilAndOddInputs(t *testing.T) {
	spec := v1.PodSpec{InitContainers: containers("init"), Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways}
	emptyWant := podstatus.Generate(mkPod(spec, v1.PodStatus{}), noRuntime(), nil)

	if got := podstatus.Generate(nil, runtimeStatus(runningI("app", "a1", 1)), kri.NewReasonCache()); !cmp.Equal(got, v1.PodStatus{Phase: v1.PodPending}) {
		t.Errorf("Generate(nil pod, ...) = %+v, want a status with only Phase Pending", got)
	}
	if got := podstatus.GenerateTerminal(nil, nil, nil); !cmp.Equal(got, v1.PodStatus{Phase: v1.PodPending}) {
		t.Errorf("GenerateTerminal(nil, nil, nil) = %+v, want a status with only Phase Pending", got)
	}
	if got := podstatus.Generate(mkPod(spec, v1.PodStatus{}), nil, nil); !cmp.Equal(got, emptyWant) {
		t.Errorf("Generate(pod, nil status, nil) differs from Generate with an empty runtime status:\n%s", cmp.Diff(emptyWant, got))
	}
	// A zero ReasonCache cannot be used (its Get panics); it records
	// nothing, so it counts as no cache.
	exited := runtimeStatus(exitedI("app", "a1", 1, 1))
	noCache := podstatus.Generate(mkPod(spec, v1.PodStatus{}), exited, nil)
	if got := podstatus.Generate(mkPod(spec, v1.PodStatus{}), exited, &kri.ReasonCache{}); !cmp.Equal(got, noCache) {
		t.Errorf("Generate with a zero ReasonCache differs from Generate with a nil one:\n%s", cmp.Diff(noCache, got))
	}

	odd := &pkgcontainer.PodStatus{
		ContainerStatuses: []*pkgcontainer.Status{
			nil,
			{Name: "not-in-spec", State: pkgcontainer.ContainerStateRunning},
			{Name: "app", State: "bogus", RestartCount: math.MaxInt64, ExitCode: math.MinInt64},
		},
		ActiveContainerStatuses: []*pkgcontainer.Status{nil},
		SandboxStatuses:         []*runtimeapi.PodSandboxStatus{nil, {State: runtimeapi.PodSandboxState_SANDBOX_READY}},
		IPs:                     []string{"", "::zz"},
	}
	got := podstatus.Generate(mkPod(spec, v1.PodStatus{}), odd, &kri.ReasonCache{})
	wantApp := list(v1.ContainerStatus{Name: "app", ContainerID: "://", RestartCount: math.MaxInt32, State: waitingS("", ""), Started: ptrTo(false)})
	if d := cmp.Diff(wantApp, got.ContainerStatuses); d != "" {
		t.Errorf("Generate with nil entries, an unknown state string and out-of-range counts: app status (-want +got):\n%s", d)
	}
	if len(got.InitContainerStatuses) != 1 || got.InitContainerStatuses[0].Name != "init" {
		t.Errorf("init container statuses = %+v, want one for \"init\"", got.InitContainerStatuses)
	}
	if got.PodIP != "" || got.PodIPs != nil {
		t.Errorf("PodIP %q, PodIPs %v from invalid runtime IPs, want none", got.PodIP, got.PodIPs)
	}

	// An old restart count at the int32 limit does not wrap around.
	prev := v1.PodStatus{ContainerStatuses: list(v1.ContainerStatus{Name: "app", RestartCount: math.MaxInt32, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}})}
	got = podstatus.Generate(mkPod(spec, prev), noRuntime(), nil)
	if rc := got.ContainerStatuses[0].RestartCount; rc != math.MaxInt32 {
		t.Errorf("vanished container with previous RestartCount MaxInt32: RestartCount = %d, want %d", rc, int32(math.MaxInt32))
	}
}

// TestNameOrderAndDuplicates: statuses are sorted by name, one per name, and
// only the two newest instances of a name count.
func TestNameOrderAndDuplicates(t *testing.T) {
	pod := mkPod(v1.PodSpec{
		Containers:    []v1.Container{{Name: "zeta"}, {Name: "alpha"}, {Name: "zeta", Image: "ignored"}, {Name: "mid"}},
		RestartPolicy: v1.RestartPolicyAlways,
	}, v1.PodStatus{})
	got := podstatus.Generate(pod, runtimeStatus(
		runningI("mid", "m3", 30), exitedI("mid", "m2", 20, 2), exitedI("mid", "m1", 10, 1),
	), nil)
	var names []string
	for _, s := range got.ContainerStatuses {
		names = append(names, s.Name)
	}
	if want := []string{"alpha", "mid", "zeta"}; !slices.Equal(names, want) {
		t.Errorf("container statuses named %v, want %v (by name, one per name)", names, want)
	}
	if d := cmp.Diff(withLast(runningC("mid", "m3", 30), terminatedS("m2", 20, 2)), got.ContainerStatuses[1]); d != "" {
		t.Errorf("three instances of mid: status (-want +got):\n%s", d)
	}
}

// TestImageUserAndMounts: the fields copied from the instance and the spec.
func TestImageUserAndMounts(t *testing.T) {
	enabled, ifPossible := v1.RecursiveReadOnlyEnabled, v1.RecursiveReadOnlyIfPossible
	pod := mkPod(v1.PodSpec{Containers: []v1.Container{
		{Name: "a", Image: "spec-a", VolumeMounts: []v1.VolumeMount{
			{Name: "rw", MountPath: "/rw"},
			{Name: "ro", MountPath: "/ro", ReadOnly: true},
			{Name: "rro", MountPath: "/rro", ReadOnly: true, RecursiveReadOnly: &enabled},
			{Name: "maybe", MountPath: "/maybe", ReadOnly: true, RecursiveReadOnly: &ifPossible},
		}},
		{Name: "b", Image: "spec-b"},
		{Name: "c", Image: "spec-c"},
	}}, v1.PodStatus{})
	a := runningI("a", "a1", 1)
	a.Image, a.ImageRef, a.ImageID = "runtime-a", "ref-a", "id-a"
	a.User = &pkgcontainer.ContainerUser{Linux: &pkgcontainer.LinuxContainerUser{UID: 1000, GID: 2000, SupplementalGroups: []int64{3000}}}
	b := runningI("b", "b1", 2)
	b.ImageID = "id-b"
	got := podstatus.Generate(pod, runtimeStatus(a, b), nil)

	disabled := v1.RecursiveReadOnlyDisabled
	wantA := runningC("a", "a1", 1)
	wantA.Image, wantA.ImageID = "runtime-a", "ref-a"
	wantA.User = &v1.ContainerUser{Linux: &v1.LinuxContainerUser{UID: 1000, GID: 2000, SupplementalGroups: []int64{3000}}}
	wantA.VolumeMounts = []v1.VolumeMountStatus{
		{Name: "rw", MountPath: "/rw"},
		{Name: "ro", MountPath: "/ro", ReadOnly: true, RecursiveReadOnly: &disabled},
		{Name: "rro", MountPath: "/rro", ReadOnly: true, RecursiveReadOnly: &enabled},
		{Name: "maybe", MountPath: "/maybe", ReadOnly: true, RecursiveReadOnly: &disabled},
	}
	wantB := runningC("b", "b1", 2)
	wantB.Image, wantB.ImageID = "spec-b", "id-b"
	wantC := waitingC("c", "ContainerCreating")
	wantC.Image = "spec-c"
	if d := cmp.Diff(list(wantA, wantB, wantC), got.ContainerStatuses); d != "" {
		t.Errorf("container statuses (-want +got):\n%s", d)
	}
}

// TestCarriedOver: what Generate keeps from the previous status.
func TestCarriedOver(t *testing.T) {
	start := metav1.NewTime(at(1))
	old := metav1.NewTime(at(2))
	gate := v1.PodConditionType("example.com/gate")
	prev := v1.PodStatus{
		Phase:              v1.PodRunning,
		StartTime:          &start,
		HostIP:             "192.168.0.5",
		HostIPs:            []v1.HostIP{{IP: "192.168.0.5"}},
		ObservedGeneration: 7,
		Conditions: []v1.PodCondition{
			{Type: gate, Status: v1.ConditionFalse, LastTransitionTime: old},
			{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: old},
			{Type: v1.ContainersReady, Status: v1.ConditionFalse, LastTransitionTime: old},
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: old, ObservedGeneration: 2},
		},
		ResourceClaimStatuses: []v1.PodResourceClaimStatus{{Name: "claim", ResourceClaimName: ptrTo("claim-x")}},
	}
	pod := mkPod(v1.PodSpec{
		Containers:     containers("app"),
		ReadinessGates: []v1.PodReadinessGate{{ConditionType: gate}},
	}, prev)
	pod.Generation = 3
	got := podstatus.Generate(pod, runtimeStatus(runningI("app", "a1", 1)), nil)

	withGen := func(c v1.PodCondition, ltt metav1.Time) v1.PodCondition {
		c.ObservedGeneration, c.LastTransitionTime = 3, ltt
		return c
	}
	wantConds := []v1.PodCondition{
		prev.Conditions[0],
		withGen(sandboxOK, metav1.Time{}),
		withGen(initOK, metav1.Time{}),
		// Ready was True and turns False: a new transition, no time.
		withGen(condFalse(v1.PodReady, "ReadinessGatesNotReady", `the status of pod readiness gate "example.com/gate" is not "True", but False`), metav1.Time{}),
		// ContainersReady was False and turns True: no time either.
		withGen(crOK, metav1.Time{}),
		// PodScheduled stays True: it keeps its transition time.
		withGen(schedOK, old),
	}
	if d := cmp.Diff(wantConds, got.Conditions); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	if got.StartTime == nil || !got.StartTime.Equal(&start) {
		t.Errorf("StartTime = %v, want %v from the previous status", got.StartTime, start)
	}
	if got.HostIP != "192.168.0.5" || !cmp.Equal(got.HostIPs, prev.HostIPs) {
		t.Errorf("HostIP %q HostIPs %v, want those of the previous status", got.HostIP, got.HostIPs)
	}
	if got.ObservedGeneration != 7 {
		t.Errorf("ObservedGeneration = %d with generation 3 and previous 7, want 7", got.ObservedGeneration)
	}
	if !cmp.Equal(got.ResourceClaimStatuses, prev.ResourceClaimStatuses) {
		t.Errorf("ResourceClaimStatuses = %v, want %v", got.ResourceClaimStatuses, prev.ResourceClaimStatuses)
	}
	if got.Phase != v1.PodRunning {
		t.Errorf("Phase = %s, want Running", got.Phase)
	}

	// The readiness gate satisfied, and the Initialized condition that
	// stays true once true.
	pod.Status.Conditions[0].Status = v1.ConditionTrue
	if got := podstatus.Generate(pod, runtimeStatus(runningI("app", "a1", 1)), nil); got.Conditions[3].Status != v1.ConditionTrue {
		t.Errorf("Ready = %+v with the readiness gate true, want True", got.Conditions[3])
	}
}

// TestInitializedStaysTrue: once Initialized, a pod whose init container
// shows incomplete again (restarted in a new sandbox) stays Initialized.
func TestInitializedStaysTrue(t *testing.T) {
	spec := v1.PodSpec{InitContainers: containers("init"), Containers: containers("app")}
	status := runtimeStatus(runningI("init", "i2", 5))
	if got := podstatus.Generate(mkPod(spec, v1.PodStatus{}), status, nil); got.Conditions[1].Status != v1.ConditionFalse {
		t.Fatalf("Initialized = %+v with the init container running, want False", got.Conditions[1])
	}
	prev := v1.PodStatus{Conditions: []v1.PodCondition{condTrue(v1.PodInitialized)}}
	if got := podstatus.Generate(mkPod(spec, prev), status, nil); got.Conditions[1].Status != v1.ConditionTrue {
		t.Errorf("Initialized = %+v after it was True, want it to stay True", got.Conditions[1])
	}
}

// TestTerminalPhaseIsFinal: a terminal phase never changes, not even to the
// other terminal phase (TestTerminalPhaseReasonAsKubelet says what becomes
// of the reason and message then).
func TestTerminalPhaseIsFinal(t *testing.T) {
	spec := v1.PodSpec{Containers: containers("app"), RestartPolicy: v1.RestartPolicyNever}
	prev := v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted", Message: "The node was low on resource"}
	got := podstatus.Generate(mkPod(spec, prev), runtimeStatus(exitedI("app", "a1", 1, 0)), nil)
	if got.Phase != v1.PodFailed {
		t.Errorf("Generate after Failed/Evicted with an app that exited 0: phase %s, want Failed", got.Phase)
	}
	for _, p := range []v1.PodPhase{v1.PodPending, v1.PodRunning, v1.PodUnknown} {
		got := podstatus.Generate(mkPod(spec, v1.PodStatus{Phase: p, Reason: "R"}), runtimeStatus(exitedI("app", "a1", 1, 0)), nil)
		if got.Phase != v1.PodSucceeded || got.Reason != "" {
			t.Errorf("Generate after %s with an app that exited 0 under restart policy Never: phase %s reason %q, want Succeeded and no reason", p, got.Phase, got.Reason)
		}
	}
}

// TestReadyToStartContainers: the sandbox rules of the condition.
func TestReadyToStartContainers(t *testing.T) {
	hostNet := func(sb *runtimeapi.PodSandboxStatus, mode runtimeapi.NamespaceMode) *runtimeapi.PodSandboxStatus {
		sb.Linux = &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: &runtimeapi.NamespaceOption{Network: mode}}}
		return sb
	}
	noIP := readySandbox("sb-2", 5)
	noIP.Network.Ip = ""
	noNetwork := readySandbox("sb-3", 5)
	noNetwork.Network = nil
	tests := []struct {
		name        string
		hostNetwork bool
		sandboxes   []*runtimeapi.PodSandboxStatus
		instances   []*pkgcontainer.Status
		terminal    bool
		want        v1.PodCondition
	}{
		{name: "one ready sandbox", sandboxes: []*runtimeapi.PodSandboxStatus{readySandbox("sb-1", 1)}, want: sandboxOK},
		{name: "newest ready, listed last", sandboxes: []*runtimeapi.PodSandboxStatus{deadSandbox("sb-1", 1), readySandbox("sb-2", 5)}, want: sandboxOK},
		{name: "newest not ready, listed last", sandboxes: []*runtimeapi.PodSandboxStatus{readySandbox("sb-1", 1), deadSandbox("sb-2", 5)}, want: sandboxDown},
		{name: "two ready", sandboxes: []*runtimeapi.PodSandboxStatus{readySandbox("sb-1", 1), readySandbox("sb-2", 5)},
			want: condFalse(v1.PodReadyToStartContainers, "PodSandboxNotReady", "multiple pod sandboxes are ready and need to be reconciled")},
		{name: "no IP", sandboxes: []*runtimeapi.PodSandboxStatus{noIP},
			want: condFalse(v1.PodReadyToStartContainers, "PodSandboxNotReady", "pod sandbox has no IP address")},
		{name: "no IP, host network", hostNetwork: true, sandboxes: []*runtimeapi.PodSandboxStatus{noIP}, want: sandboxOK},
		// PodSandboxChanged checks the IP only of a sandbox that reports
		// a network status.
		{name: "no network status", sandboxes: []*runtimeapi.PodSandboxStatus{noNetwork}, want: sandboxOK},
		{name: "pod network in a host-network pod", hostNetwork: true, sandboxes: []*runtimeapi.PodSandboxStatus{hostNet(readySandbox("sb-1", 1), runtimeapi.NamespaceMode_POD)},
			want: condFalse(v1.PodReadyToStartContainers, "PodSandboxNotReady", "network namespace mode changed and sandbox needs to be recreated")},
		{name: "node network in a host-network pod", hostNetwork: true, sandboxes: []*runtimeapi.PodSandboxStatus{hostNet(readySandbox("sb-1", 1), runtimeapi.NamespaceMode_NODE)}, want: sandboxOK},
		{name: "no sandbox, no instance", want: noSandbox},
		{name: "no sandbox, an instance (remote backend)", instances: []*pkgcontainer.Status{runningI("app", "a1", 1)}, want: sandboxOK},
		{name: "no sandbox, an instance, terminal", instances: []*pkgcontainer.Status{exitedI("app", "a1", 1, 0)}, terminal: true, want: noSandbox},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status := runtimeOnly(tc.instances...)
			status.SandboxStatuses = tc.sandboxes
			gen := podstatus.Generate
			if tc.terminal {
				gen = podstatus.GenerateTerminal
			}
			got := gen(mkPod(v1.PodSpec{Containers: containers("app"), HostNetwork: tc.hostNetwork}, v1.PodStatus{}), status, nil)
			_, c := findCondition(got.Conditions, v1.PodReadyToStartContainers)
			if d := cmp.Diff(&tc.want, c); d != "" {
				t.Errorf("PodReadyToStartContainers (-want +got):\n%s", d)
			}
		})
	}
}

func findCondition(cs []v1.PodCondition, t v1.PodConditionType) (int, *v1.PodCondition) {
	for i := range cs {
		if cs[i].Type == t {
			return i, &cs[i]
		}
	}
	return -1, nil
}

// TestEphemeralContainers: ephemeral containers get statuses too, not
// touched by the prober.
func TestEphemeralContainers(t *testing.T) {
	pod := mkPod(v1.PodSpec{
		Containers:          containers("app"),
		EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}},
	}, v1.PodStatus{})
	got := podstatus.Generate(pod, runtimeStatus(runningI("app", "a1", 1), runningI("debug", "d1", 2)), nil)
	want := list(v1.ContainerStatus{Name: "debug", ContainerID: cid("d1"), Image: "busybox", State: runningS(2)})
	if d := cmp.Diff(want, got.EphemeralContainerStatuses); d != "" {
		t.Errorf("ephemeral container statuses (-want +got):\n%s", d)
	}
}

// TestDeletedPodIsNotRestarted: a pod marked for deletion is never started
// again, so a start failure does not make its containers Waiting.
func TestDeletedPodIsNotRestarted(t *testing.T) {
	pod := deleted(mkPod(v1.PodSpec{Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways}, v1.PodStatus{}))
	got := podstatus.Generate(pod, runtimeStatus(exitedI("app", "a1", 1, 1)), reasonCache(podUID, map[string][2]string{"app": crash}))
	if d := cmp.Diff(list(terminatedC("app", "a1", 1, 1)), got.ContainerStatuses); d != "" {
		t.Errorf("deleted pod with a start failure recorded: container statuses (-want +got):\n%s", d)
	}
	// The reason cache is keyed by the pod's UID.
	other := mkPod(v1.PodSpec{Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways}, v1.PodStatus{})
	other.UID = "another-uid"
	got = podstatus.Generate(other, runtimeStatus(exitedI("app", "a1", 1, 1)), reasonCache(podUID, map[string][2]string{"app": crash}))
	if d := cmp.Diff(list(terminatedC("app", "a1", 1, 1)), got.ContainerStatuses); d != "" {
		t.Errorf("start failure recorded for another pod UID: container statuses (-want +got):\n%s", d)
	}
}

// TestRestartCountNeverGoesBack: a runtime that reports a lower restart
// count than the previous status (a remote backend that lost count, a
// runtime whose old instances were garbage-collected) does not make the
// count go back.
func TestRestartCountNeverGoesBack(t *testing.T) {
	spec := v1.PodSpec{Containers: containers("app"), RestartPolicy: v1.RestartPolicyAlways}
	prev := v1.PodStatus{ContainerStatuses: list(withRC(runningC("app", "a1", 1), 5))}
	got := podstatus.Generate(mkPod(spec, prev), runtimeOnly(runningI("app", "a1", 1)), nil)
	if d := cmp.Diff(list(withRC(runningC("app", "a1", 1), 5)), got.ContainerStatuses); d != "" {
		t.Errorf("previous RestartCount 5, runtime 0: container statuses (-want +got):\n%s", d)
	}
}

// TestTiedCreationTimesKeepProviderOrder: instances with the same CreatedAt
// (the kubelet's tests leave it zero) keep the provider's order, the first
// listed counting as the newer, however many instances there are and
// whatever order the times come in.
func TestTiedCreationTimesKeepProviderOrder(t *testing.T) {
	spec := v1.PodSpec{Containers: containers("a", "b"), RestartPolicy: v1.RestartPolicyAlways}
	var instances []*pkgcontainer.Status
	// Oldest first, two instances of each name per creation time.
	for sec := range 10 {
		for _, name := range []string{"a", "b"} {
			for n := range 2 {
				s := bare(name, pkgcontainer.ContainerStateExited, 100*n+sec)
				s.CreatedAt = at(sec)
				instances = append(instances, s)
			}
		}
	}
	got := podstatus.Generate(mkPod(spec, v1.PodStatus{}), runtimeOnly(instances...), nil)
	want := list(bareStatus("a", bareTerminated(9), bareTerminated(109)), bareStatus("b", bareTerminated(9), bareTerminated(109)))
	if d := cmp.Diff(want, got.ContainerStatuses); d != "" {
		t.Errorf("40 instances, two per name and creation time: container statuses (-want +got):\n%s", d)
	}
}

// TestConcurrentUse: Generate on the same inputs and reason cache from
// several goroutines at once (run under -race) gives the same status.
func TestConcurrentUse(t *testing.T) {
	pod, status := richInputs()
	rc := reasonCache(podUID, map[string][2]string{"was": crash})
	want := podstatus.Generate(pod, status, rc)
	results := make(chan v1.PodStatus, 8)
	for range cap(results) {
		go func() { results <- podstatus.Generate(pod, status, rc) }()
	}
	for range cap(results) {
		if d := cmp.Diff(want, <-results); d != "" {
			t.Errorf("concurrent Generate differs (-first +concurrent):\n%s", d)
		}
	}
}
