package podstatus_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// The cases of the kubelet's container-status conversion tests
// (TestConvertToAPIContainerStatuses in pkg/kubelet/kubelet_pods_test.go,
// TestGenerateAPIPodStatusWith... in pkg/kubelet/kubelet_test.go). Their
// runtime instances have no ID and no CreatedAt, as there: the ContainerID is
// "://" and instances keep the order they are listed in. The kubelet tests
// compare State and LastTerminationState (or the converted statuses); here
// the whole status is compared. Their runtime statuses have no sandbox:
// Generate then counts the pod ready to start containers while the runtime
// reports instances for it (a remote backend), where the kubelet would not.

const noID = "://"

// bare is a runtime instance as the kubelet's tests write them: a name, a
// state and an exit code, nothing else.
func bare(name string, state pkgcontainer.State, exitCode int) *pkgcontainer.Status {
	return &pkgcontainer.Status{Name: name, State: state, ExitCode: exitCode}
}

func bareExited(name string, code int) *pkgcontainer.Status {
	return bare(name, pkgcontainer.ContainerStateExited, code)
}

// bareTerminated is the state of bareExited(name, code).
func bareTerminated(code int32) v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code, ContainerID: noID}}
}

func bareStatus(name string, state, last v1.ContainerState) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, ContainerID: noID, State: state, LastTerminationState: last, Started: ptrTo(false)}
}

func runtimeOnly(instances ...*pkgcontainer.Status) *pkgcontainer.PodStatus {
	return &pkgcontainer.PodStatus{ID: podUID, Name: "pod", Namespace: "ns", ContainerStatuses: instances}
}

var testError = [2]string{"test-error", ""}

func TestConvertContainerStatuses(t *testing.T) {
	const from = "TestConvertToAPIContainerStatuses/"
	spec := v1.PodSpec{Containers: containers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyAlways}
	wasRunning := v1.PodStatus{ContainerStatuses: list(
		v1.ContainerStatus{Name: "containerA", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
		v1.ContainerStatus{Name: "containerB", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
	)}
	failedRC5 := func(name string) v1.ContainerStatus {
		return v1.ContainerStatus{Name: name, RestartCount: 5, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: -1}}}
	}
	vanished := func(name string, restarts int32) v1.ContainerStatus {
		return withRC(withLast(waitingC(name, "ContainerCreating"), unknownS()), restarts)
	}
	idStatus := func(name, id string, state pkgcontainer.State, startedAt time.Time) *pkgcontainer.Status {
		return &pkgcontainer.Status{Name: name, ID: pkgcontainer.ContainerID{ID: id}, State: state, StartedAt: startedAt}
	}
	runningAgain := func(name string) v1.ContainerStatus {
		return v1.ContainerStatus{
			Name: name, ContainerID: "://" + name, RestartCount: 6,
			State:                v1.ContainerState{Running: &v1.ContainerStateRunning{}},
			LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: -1}},
			Started:              ptrTo(true), Ready: true,
		}
	}
	appRunning := idStatus("containerA", "foo", pkgcontainer.ContainerStateRunning, time.Unix(1, 0).UTC())
	appRunningStatus := v1.ContainerStatus{
		Name: "containerA", ContainerID: "://foo",
		State:   v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(1, 0).UTC())}},
		Started: ptrTo(true), Ready: true,
	}
	runCases(t, []genCase{
		{
			from:   from + "no current status, with previous statuses and deletion",
			pod:    deleted(mkPod(spec, wasRunning)),
			status: &pkgcontainer.PodStatus{},
			want: want(v1.PodRunning, conds(noSandbox, initOK, crUnready("containerA containerB")),
				list(vanished("containerA", 0), vanished("containerB", 0))),
		},
		{
			from:   from + "no current status, with previous statuses and no deletion",
			pod:    mkPod(spec, wasRunning),
			status: &pkgcontainer.PodStatus{},
			want: want(v1.PodRunning, conds(noSandbox, initOK, crUnready("containerA containerB")),
				list(vanished("containerA", 1), vanished("containerB", 1))),
		},
		{
			from:   from + "no current status, keeping previous restartCount",
			pod:    mkPod(spec, v1.PodStatus{ContainerStatuses: list(failedRC5("containerA"), failedRC5("containerB"))}),
			status: &pkgcontainer.PodStatus{},
			want: want(v1.PodRunning, conds(noSandbox, initOK, crUnready("containerA containerB")),
				list(withStarted(failedRC5("containerA"), false), withStarted(failedRC5("containerB"), false))),
		},
		{
			from: from + "currently running with lower restartCount; should keeping previous restartCount",
			pod:  mkPod(spec, v1.PodStatus{ContainerStatuses: list(failedRC5("containerA"), failedRC5("containerB"))}),
			status: &pkgcontainer.PodStatus{ContainerStatuses: []*pkgcontainer.Status{
				idStatus("containerA", "containerA", pkgcontainer.ContainerStateRunning, time.Time{}),
				idStatus("containerB", "containerB", pkgcontainer.ContainerStateRunning, time.Time{}),
			}},
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crOK),
				list(runningAgain("containerA"), runningAgain("containerB"))),
		},
		{
			from: from + "Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally",
			pod: mkPod(v1.PodSpec{
				InitContainers: containers("init-1"), Containers: containers("containerA"), RestartPolicy: v1.RestartPolicyAlways,
			}, v1.PodStatus{}),
			status: &pkgcontainer.PodStatus{ContainerStatuses: []*pkgcontainer.Status{appRunning}},
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crOK), list(appRunningStatus), v1.ContainerStatus{
				Name: "init-1",
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
					Reason:  "Completed",
					Message: "Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally",
				}},
				Started: ptrTo(false), Ready: true,
			}),
		},
		{
			from: from + "Unable to get sidecar container status from container runtime and pod has been initialized, sidecar container should be waiting",
			pod: mkPod(v1.PodSpec{
				InitContainers: []v1.Container{sidecar("sidecar-1")}, Containers: containers("containerA"), RestartPolicy: v1.RestartPolicyAlways,
			}, v1.PodStatus{}),
			status: &pkgcontainer.PodStatus{ContainerStatuses: []*pkgcontainer.Status{appRunning}},
			want: want(v1.PodPending, conds(sandboxOK, initOK, crUnready("sidecar-1")),
				list(appRunningStatus), waitingC("sidecar-1", "PodInitializing")),
		},
	})
}

func withStarted(c v1.ContainerStatus, started bool) v1.ContainerStatus {
	c.Started = &started
	return c
}

// TestReasonCacheCases: TestGenerateAPIPodStatusWithReasonCache runs its
// cases once with the containers as app containers and once as init
// containers; so does this test (adding an app container "app" to the
// second run, which the API requires).
func TestReasonCacheCases(t *testing.T) {
	const from = "TestGenerateAPIPodStatusWithReasonCache/"
	type rcCase struct {
		name        string
		containers  []string
		statuses    []*pkgcontainer.Status
		failures    map[string][2]string
		oldStatuses []v1.ContainerStatus
		// app and init are the expected statuses of the containers,
		// as app and as init containers; phase and cond likewise.
		app, init           []v1.ContainerStatus
		appPhase, initPhase v1.PodPhase
		appConds, initConds []v1.PodCondition
	}
	ts := time.Unix(123456789, 987654321)
	unknownWasRunning := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		ExitCode: 137, Reason: pkgcontainer.ContainerReasonStatusUnknown,
		Message: "The container could not be located when the pod was terminated",
	}}
	oldRecord := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}
	cases := []rcCase{
		{
			name:        "for container with no historical record, State should be Waiting, LastTerminationState should be retrieved from old status from apiserver",
			containers:  []string{"without-old-record", "with-old-record"},
			oldStatuses: list(v1.ContainerStatus{Name: "with-old-record", LastTerminationState: oldRecord}),
			app: list(waitingC("without-old-record", "ContainerCreating"),
				withLast(waitingC("with-old-record", "ContainerCreating"), oldRecord)),
			init: list(waitingC("without-old-record", "PodInitializing"),
				withLast(waitingC("with-old-record", "PodInitializing"), oldRecord)),
			appPhase: v1.PodPending, initPhase: v1.PodPending,
			appConds:  conds(noSandbox, initOK, crUnready("without-old-record with-old-record")),
			initConds: conds(noSandbox, initIncomplete("without-old-record with-old-record"), crUnready("app")),
		},
		{
			name:       "for running container, State should be Running, LastTerminationState should be retrieved from latest terminated status",
			containers: []string{"running"},
			statuses: []*pkgcontainer.Status{
				{Name: "running", State: pkgcontainer.ContainerStateRunning, StartedAt: ts},
				bareExited("running", 1),
			},
			app: list(v1.ContainerStatus{
				Name: "running", ContainerID: noID,
				State:                v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(ts)}},
				LastTerminationState: bareTerminated(1),
				Started:              ptrTo(true), Ready: true,
			}),
			init: list(v1.ContainerStatus{
				Name: "running", ContainerID: noID,
				State:                v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(ts)}},
				LastTerminationState: bareTerminated(1),
				Started:              ptrTo(true),
			}),
			appPhase: v1.PodRunning, initPhase: v1.PodPending,
			appConds:  conds(sandboxOK, initOK, crOK),
			initConds: conds(sandboxOK, initIncomplete("running"), crUnready("app")),
		},
		{
			name:       "for terminated container, State is Terminated without a recent start error and Waiting with one, LastTerminationState the termination before",
			containers: []string{"without-reason", "with-reason"},
			statuses: []*pkgcontainer.Status{
				bareExited("without-reason", 1), bareExited("with-reason", 2),
				bareExited("without-reason", 3), bareExited("with-reason", 4),
				bareExited("succeed", 0), bareExited("succeed", 5),
			},
			failures: map[string][2]string{"with-reason": testError, "succeed": testError},
			app: list(bareStatus("without-reason", bareTerminated(1), bareTerminated(3)),
				bareStatus("with-reason", waitingS("test-error", ""), bareTerminated(2))),
			init: list(bareStatus("without-reason", bareTerminated(1), bareTerminated(3)),
				bareStatus("with-reason", waitingS("test-error", ""), bareTerminated(2))),
			appPhase: v1.PodRunning, initPhase: v1.PodPending,
			appConds:  conds(sandboxOK, initOK, crUnready("without-reason with-reason")),
			initConds: conds(sandboxOK, initIncomplete("without-reason with-reason"), crUnready("app")),
		},
		{
			name:       "for unknown container status, a container that was running is Terminated, not Waiting",
			containers: []string{"unknown"},
			statuses: []*pkgcontainer.Status{
				bare("unknown", pkgcontainer.ContainerStateUnknown, 0),
				bare("unknown", pkgcontainer.ContainerStateRunning, 0),
			},
			oldStatuses: list(v1.ContainerStatus{Name: "unknown", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}),
			app: list(withRC(bareStatus("unknown", unknownWasRunning,
				v1.ContainerState{Running: &v1.ContainerStateRunning{}}), 1)),
			init: list(withRC(bareStatus("unknown", unknownWasRunning,
				v1.ContainerState{Running: &v1.ContainerStateRunning{}}), 1)),
			appPhase: v1.PodRunning, initPhase: v1.PodPending,
			appConds:  conds(sandboxOK, initOK, crUnready("unknown")),
			initConds: conds(sandboxOK, initIncomplete("unknown"), crUnready("app")),
		},
	}
	var gen []genCase
	for _, c := range cases {
		gen = append(gen, genCase{
			from:     from + c.name,
			pod:      mkPod(v1.PodSpec{Containers: containers(c.containers...), RestartPolicy: v1.RestartPolicyOnFailure}, v1.PodStatus{ContainerStatuses: c.oldStatuses}),
			status:   runtimeOnly(c.statuses...),
			failures: c.failures,
			want:     want(c.appPhase, c.appConds, c.app),
		}, genCase{
			from: from + c.name + " (init containers)",
			pod: mkPod(v1.PodSpec{
				InitContainers: containers(c.containers...), Containers: containers("app"), RestartPolicy: v1.RestartPolicyOnFailure,
			}, v1.PodStatus{InitContainerStatuses: c.oldStatuses}),
			status:   runtimeOnly(c.statuses...),
			failures: c.failures,
			want:     want(c.initPhase, c.initConds, list(waitingC("app", "PodInitializing")), c.init...),
		})
	}
	runCases(t, gen)
}

// runtimeTwice is the runtime status of TestGenerateAPIPodStatusWith
// DifferentRestartPolicies and ...WithContainerRestartPolicies: containers
// "succeed" and "failed" have each exited twice, the newest first.
func runtimeTwice() *pkgcontainer.PodStatus {
	return runtimeOnly(bareExited("succeed", 0), bareExited("failed", 1), bareExited("succeed", 2), bareExited("failed", 3))
}

var bothFailedToStart = map[string][2]string{"succeed": testError, "failed": testError}

func TestRestartPolicyCases(t *testing.T) {
	const from = "TestGenerateAPIPodStatusWithDifferentRestartPolicies/"
	spec := func(p v1.RestartPolicy, init bool) v1.PodSpec {
		if init {
			return v1.PodSpec{InitContainers: containers("succeed", "failed"), Containers: containers("app"), RestartPolicy: p}
		}
		return v1.PodSpec{Containers: containers("succeed", "failed"), RestartPolicy: p}
	}
	initDone := func(c v1.ContainerStatus) v1.ContainerStatus { return withReady(c, true) }
	succeedT := bareStatus("succeed", bareTerminated(0), bareTerminated(2))
	failedT := bareStatus("failed", bareTerminated(1), bareTerminated(3))
	succeedW := bareStatus("succeed", waitingS("test-error", ""), bareTerminated(0))
	failedW := bareStatus("failed", waitingS("test-error", ""), bareTerminated(1))
	initializing := list(waitingC("app", "PodInitializing"))
	runCases(t, []genCase{
		{
			from: from + "Never", pod: mkPod(spec(v1.RestartPolicyNever, false), v1.PodStatus{}),
			status: runtimeTwice(), failures: bothFailedToStart,
			want: want(v1.PodFailed, conds(sandboxOK, initOK, crFailed), list(succeedT, failedT)),
		},
		{
			from: from + "OnFailure", pod: mkPod(spec(v1.RestartPolicyOnFailure, false), v1.PodStatus{}),
			status: runtimeTwice(), failures: bothFailedToStart,
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("succeed failed")), list(succeedT, failedW)),
		},
		{
			from: from + "Always", pod: mkPod(spec(v1.RestartPolicyAlways, false), v1.PodStatus{}),
			status: runtimeTwice(), failures: bothFailedToStart,
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("succeed failed")), list(succeedW, failedW)),
		},
		{
			from: from + "Never (init containers)", pod: mkPod(spec(v1.RestartPolicyNever, true), v1.PodStatus{}),
			status: runtimeTwice(), failures: bothFailedToStart,
			want: want(v1.PodFailed, conds(sandboxOK, initIncomplete("failed"), crFailed), initializing, initDone(succeedT), failedT),
		},
		{
			from: from + "OnFailure (init containers)", pod: mkPod(spec(v1.RestartPolicyOnFailure, true), v1.PodStatus{}),
			status: runtimeTwice(), failures: bothFailedToStart,
			want: want(v1.PodPending, conds(sandboxOK, initIncomplete("failed"), crUnready("app")), initializing, initDone(succeedT), failedW),
		},
		{
			// An init container that exited 0 is not started again, even
			// with restart policy Always.
			from: from + "Always (init containers)", pod: mkPod(spec(v1.RestartPolicyAlways, true), v1.PodStatus{}),
			status: runtimeTwice(), failures: bothFailedToStart,
			want: want(v1.PodPending, conds(sandboxOK, initIncomplete("failed"), crUnready("app")), initializing, initDone(succeedT), failedW),
		},
	})
}

func TestContainerRestartPolicyCases(t *testing.T) {
	const from = "TestGenerateAPIPodStatusWithContainerRestartPolicies/"
	ruleOn := func(code int32) v1.Container {
		c := withPolicy("failed", v1.ContainerRestartPolicyNever)
		c.RestartPolicyRules = []v1.ContainerRestartRule{{
			Action:    v1.ContainerRestartRuleActionRestart,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{code}},
		}}
		return c
	}
	both := func(p v1.ContainerRestartPolicy) []v1.Container {
		return []v1.Container{withPolicy("succeed", p), withPolicy("failed", p)}
	}
	spec := func(cs ...v1.Container) v1.PodSpec {
		return v1.PodSpec{Containers: cs, RestartPolicy: v1.RestartPolicyAlways}
	}
	succeedT := bareStatus("succeed", bareTerminated(0), bareTerminated(2))
	failedT := bareStatus("failed", bareTerminated(1), bareTerminated(3))
	succeedW := bareStatus("succeed", waitingS("test-error", ""), bareTerminated(0))
	failedW := bareStatus("failed", waitingS("test-error", ""), bareTerminated(1))
	runCases(t, []genCase{
		{
			from: from + "container restart policy rules match", pod: mkPod(spec(ruleOn(1)), v1.PodStatus{}),
			status: runtimeTwice(), failures: bothFailedToStart,
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("failed")), list(failedW)),
		},
		{
			from: from + "container restart policy rules not match", pod: mkPod(spec(ruleOn(2)), v1.PodStatus{}),
			status: runtimeTwice(), failures: bothFailedToStart,
			want: want(v1.PodFailed, conds(sandboxOK, initOK, crFailed), list(failedT)),
		},
		{
			from: from + "container restart policy never", pod: mkPod(spec(both(v1.ContainerRestartPolicyNever)...), v1.PodStatus{}),
			status: runtimeTwice(), failures: bothFailedToStart,
			want: want(v1.PodFailed, conds(sandboxOK, initOK, crFailed), list(succeedT, failedT)),
		},
		{
			from: from + "container restart policy OnFailure", pod: mkPod(spec(both(v1.ContainerRestartPolicyOnFailure)...), v1.PodStatus{}),
			status: runtimeTwice(), failures: bothFailedToStart,
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("succeed failed")), list(succeedT, failedW)),
		},
		{
			from: from + "container restart policy Always", pod: mkPod(spec(both(v1.ContainerRestartPolicyAlways)...), v1.PodStatus{}),
			status: runtimeTwice(), failures: bothFailedToStart,
			want: want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("succeed failed")), list(succeedW, failedW)),
		},
	})
}

// TestSortedContainers: TestGenerateAPIPodStatusWithSortedContainers lists
// ten instances in a shuffled order and wants the statuses in order: sorted
// by name, which is also their spec order here.
func TestSortedContainers(t *testing.T) {
	var (
		spec      v1.PodSpec
		instances []*pkgcontainer.Status
		wantList  []v1.ContainerStatus
		names     []string
	)
	for i := range 10 {
		name := fmt.Sprintf("%dcontainer", i)
		names = append(names, name)
		spec.Containers = append(spec.Containers, v1.Container{Name: name})
		s := &pkgcontainer.Status{ID: pkgcontainer.BuildContainerID("test", fmt.Sprint(i)), Name: name}
		if i%2 == 0 {
			instances = append(instances, s)
		} else {
			instances = append([]*pkgcontainer.Status{s}, instances...)
		}
		wantList = append(wantList, v1.ContainerStatus{
			Name: name, ContainerID: fmt.Sprintf("test://%d", i), State: waitingS("", ""), Started: ptrTo(false),
		})
	}
	msg := fmt.Sprint(names)
	runCases(t, []genCase{{
		from:   "TestGenerateAPIPodStatusWithSortedContainers",
		pod:    mkPod(spec, v1.PodStatus{}),
		status: runtimeOnly(instances...),
		want:   want(v1.PodPending, conds(sandboxOK, initOK, crUnready(msg[1:len(msg)-1])), wantList),
	}})
}

// TestStatusesSortedByName: app and ephemeral statuses come sorted by name,
// as the kubelet sorts them (kubetypes.SortedContainerStatuses), init
// statuses in spec order, the order they run in.
func TestStatusesSortedByName(t *testing.T) {
	spec := v1.PodSpec{
		InitContainers:      []v1.Container{{Name: "zinit"}, {Name: "ainit"}},
		Containers:          []v1.Container{{Name: "web"}, {Name: "app"}, {Name: "sidecar"}},
		EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug"}}, {EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "attach"}}},
	}
	got := podstatus.Generate(mkPod(spec, v1.PodStatus{}), nil, nil)
	names := func(ss []v1.ContainerStatus) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name)
		}
		return out
	}
	for _, c := range []struct {
		list string
		got  []v1.ContainerStatus
		want []string
	}{
		{"InitContainerStatuses", got.InitContainerStatuses, []string{"zinit", "ainit"}},
		{"ContainerStatuses", got.ContainerStatuses, []string{"app", "sidecar", "web"}},
		{"EphemeralContainerStatuses", got.EphemeralContainerStatuses, []string{"attach", "debug"}},
	} {
		if !slices.Equal(names(c.got), c.want) {
			t.Errorf("Generate lists %s as %v, want %v", c.list, names(c.got), c.want)
		}
	}
}
