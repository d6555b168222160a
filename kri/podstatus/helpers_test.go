package podstatus_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
)

// The helpers below build the inputs of Generate (pods, runtime instances,
// sandboxes, reason caches) and the API statuses it should return, in the
// vocabulary of the kubelet's tests (runningState, succeededState, ...).

const (
	podUID      = types.UID("uid-1")
	runtimeType = "fake"
	crashLoop   = "CrashLoopBackOff"
	crashMsg    = "back-off 10s restarting failed container"
)

var base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at is base plus s seconds.
func at(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }

func mt(s int) metav1.Time { return metav1.NewTime(at(s)) }

// cid is the API ContainerID of the runtime instance id.
func cid(id string) string { return runtimeType + "://" + id }

func ptrTo[T any](v T) *T { return &v }

// ---- inputs ----

func mkPod(spec v1.PodSpec, previous v1.PodStatus) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: podUID, Namespace: "ns", Name: "pod"},
		Spec:       spec,
		Status:     previous,
	}
}

func deleted(p *v1.Pod) *v1.Pod {
	now := metav1.NewTime(at(100))
	p.DeletionTimestamp = &now
	return p
}

func containers(names ...string) []v1.Container {
	out := make([]v1.Container, len(names))
	for i, n := range names {
		out[i] = v1.Container{Name: n}
	}
	return out
}

func sidecar(name string) v1.Container {
	return v1.Container{Name: name, RestartPolicy: ptrTo(v1.ContainerRestartPolicyAlways)}
}

func withPolicy(name string, p v1.ContainerRestartPolicy) v1.Container {
	return v1.Container{Name: name, RestartPolicy: &p}
}

func instance(name, id string, created int, state pkgcontainer.State) *pkgcontainer.Status {
	return &pkgcontainer.Status{
		ID:        pkgcontainer.ContainerID{Type: runtimeType, ID: id},
		Name:      name,
		State:     state,
		CreatedAt: at(created),
	}
}

// runningI is an instance created and started at second created.
func runningI(name, id string, created int) *pkgcontainer.Status {
	s := instance(name, id, created, pkgcontainer.ContainerStateRunning)
	s.StartedAt = at(created)
	return s
}

// exitedI is an instance created and started at second created that exited
// with code one second later, with the CRI's reason for it.
func exitedI(name, id string, created, code int) *pkgcontainer.Status {
	s := instance(name, id, created, pkgcontainer.ContainerStateExited)
	s.StartedAt, s.FinishedAt, s.ExitCode = at(created), at(created+1), code
	s.Reason = exitReason(code)
	return s
}

func createdI(name, id string, created int) *pkgcontainer.Status {
	return instance(name, id, created, pkgcontainer.ContainerStateCreated)
}

func withRestarts(s *pkgcontainer.Status, n int) *pkgcontainer.Status {
	s.RestartCount = n
	return s
}

func exitReason(code int) string {
	if code == 0 {
		return "Completed"
	}
	return "Error"
}

func readySandbox(id string, created int) *runtimeapi.PodSandboxStatus {
	return &runtimeapi.PodSandboxStatus{
		Id:        id,
		State:     runtimeapi.PodSandboxState_SANDBOX_READY,
		CreatedAt: at(created).UnixNano(),
		Network:   &runtimeapi.PodSandboxNetworkStatus{Ip: "10.0.0.10"},
		Metadata:  &runtimeapi.PodSandboxMetadata{Name: "pod", Namespace: "ns", Uid: string(podUID)},
	}
}

func deadSandbox(id string, created int) *runtimeapi.PodSandboxStatus {
	sb := readySandbox(id, created)
	sb.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	return sb
}

// runtimeStatus is a runtime status with a ready sandbox and the given
// instances, every one of them in that sandbox.
func runtimeStatus(instances ...*pkgcontainer.Status) *pkgcontainer.PodStatus {
	return &pkgcontainer.PodStatus{
		ID: podUID, Name: "pod", Namespace: "ns",
		SandboxStatuses:         []*runtimeapi.PodSandboxStatus{readySandbox("sb-1", 0)},
		ContainerStatuses:       instances,
		ActiveContainerStatuses: instances,
	}
}

// stoppedRuntime is a runtime status after KillPod: the sandbox is not
// ready and nothing runs.
func stoppedRuntime(instances ...*pkgcontainer.Status) *pkgcontainer.PodStatus {
	s := runtimeStatus(instances...)
	s.SandboxStatuses = []*runtimeapi.PodSandboxStatus{deadSandbox("sb-1", 0)}
	s.ActiveContainerStatuses = nil
	return s
}

// noRuntime is the runtime status of a pod the provider has nothing for.
func noRuntime() *pkgcontainer.PodStatus {
	return &pkgcontainer.PodStatus{ID: podUID, Name: "pod", Namespace: "ns"}
}

// reasonCache records a failed start, with the given reason and message,
// for each container named in failures.
func reasonCache(uid types.UID, failures map[string][2]string) *kri.ReasonCache {
	rc := kri.NewReasonCache()
	for name, f := range failures {
		r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, name)
		r.Fail(errors.New(f[0]), f[1])
		rc.Update(uid, pkgcontainer.PodSyncResult{SyncResults: []*pkgcontainer.SyncResult{r}})
	}
	return rc
}

// ---- expected API statuses ----

func waitingS(reason, msg string) v1.ContainerState {
	return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason, Message: msg}}
}

func runningS(started int) v1.ContainerState {
	return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: mt(started)}}
}

// terminatedS is the state of exitedI(name, id, created, code).
func terminatedS(id string, created, code int) v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		ExitCode: int32(code), Reason: exitReason(code),
		StartedAt: mt(created), FinishedAt: mt(created + 1), ContainerID: cid(id),
	}}
}

// unknownS is the termination the kubelet infers for a container that was
// running and that the runtime no longer reports.
func unknownS() v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		Reason:   pkgcontainer.ContainerReasonStatusUnknown,
		Message:  "The container could not be located when the pod was deleted.  The container used to be Running",
		ExitCode: 137,
	}}
}

// waitingC is a container without an instance (or without one that says
// more): not started, not ready.
func waitingC(name, reason string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: waitingS(reason, ""), Started: ptrTo(false)}
}

// runningC is the status of runningI(name, id, created).
func runningC(name, id string, created int) v1.ContainerStatus {
	return v1.ContainerStatus{
		Name: name, ContainerID: cid(id), State: runningS(created),
		Started: ptrTo(true), Ready: true,
	}
}

// terminatedC is the status of exitedI(name, id, created, code).
func terminatedC(name, id string, created, code int) v1.ContainerStatus {
	return v1.ContainerStatus{
		Name: name, ContainerID: cid(id), State: terminatedS(id, created, code),
		Started: ptrTo(false),
	}
}

// createdC is the status of createdI(name, id, created).
func createdC(name, id string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, ContainerID: cid(id), State: waitingS("", ""), Started: ptrTo(false)}
}

// crashLoopC is the status of exitedI(name, id, created, code) when the
// agent will start it again and its latest start failed with CrashLoopBackOff.
func crashLoopC(name, id string, created, code int) v1.ContainerStatus {
	c := terminatedC(name, id, created, code)
	c.LastTerminationState, c.State = c.State, waitingS(crashLoop, crashMsg)
	return c
}

func withLast(c v1.ContainerStatus, last v1.ContainerState) v1.ContainerStatus {
	c.LastTerminationState = last
	return c
}

func withState(c v1.ContainerStatus, state v1.ContainerState) v1.ContainerStatus {
	c.State = state
	return c
}

func withRC(c v1.ContainerStatus, n int32) v1.ContainerStatus {
	c.RestartCount = n
	return c
}

func withReady(c v1.ContainerStatus, ready bool) v1.ContainerStatus {
	c.Ready = ready
	return c
}

// startedC is runningState with Started set, as a previous status shows a
// container the prober has seen started.
func startedC(name string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}, Started: ptrTo(true)}
}

// ---- expected conditions ----

func condTrue(t v1.PodConditionType) v1.PodCondition {
	return v1.PodCondition{Type: t, Status: v1.ConditionTrue}
}

func condFalse(t v1.PodConditionType, reason, msg string) v1.PodCondition {
	return v1.PodCondition{Type: t, Status: v1.ConditionFalse, Reason: reason, Message: msg}
}

var (
	sandboxOK      = condTrue(v1.PodReadyToStartContainers)
	noSandbox      = condFalse(v1.PodReadyToStartContainers, "PodSandboxNotReady", "no pod sandbox exists")
	sandboxDown    = condFalse(v1.PodReadyToStartContainers, "PodSandboxNotReady", "pod sandbox is not ready")
	initOK         = condTrue(v1.PodInitialized)
	initCompleted  = v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue, Reason: "PodCompleted"}
	crOK           = condTrue(v1.ContainersReady)
	crCompleted    = condFalse(v1.ContainersReady, "PodCompleted", "")
	crFailed       = condFalse(v1.ContainersReady, "PodFailed", "")
	schedOK        = condTrue(v1.PodScheduled)
	initIncomplete = func(names string) v1.PodCondition {
		return condFalse(v1.PodInitialized, "ContainersNotInitialized", "containers with incomplete status: ["+names+"]")
	}
	crUnready = func(names string) v1.PodCondition {
		return condFalse(v1.ContainersReady, "ContainersNotReady", "containers with unready status: ["+names+"]")
	}
)

// conds is the list of conditions Generate sets, Ready following
// ContainersReady (the pods have no readiness gates).
func conds(sandbox, initialized, containersReady v1.PodCondition) []v1.PodCondition {
	ready := containersReady
	ready.Type = v1.PodReady
	return []v1.PodCondition{sandbox, initialized, ready, containersReady, schedOK}
}

// want is the expected status of a BestEffort pod.
func want(phase v1.PodPhase, conditions []v1.PodCondition, app []v1.ContainerStatus, init ...v1.ContainerStatus) v1.PodStatus {
	s := v1.PodStatus{Phase: phase, Conditions: conditions, ContainerStatuses: app, QOSClass: v1.PodQOSBestEffort}
	if len(init) > 0 {
		s.InitContainerStatuses = init
	}
	return s
}

func list(cs ...v1.ContainerStatus) []v1.ContainerStatus { return cs }

// genCase is one input/output pair of Generate (GenerateTerminal when
// terminal), taken from the kubelet test named in from.
type genCase struct {
	from     string // kubelet test and case
	pod      *v1.Pod
	status   *pkgcontainer.PodStatus
	failures map[string][2]string // container: reason, message of the last failed start
	terminal bool
	want     v1.PodStatus
}

func runCases(t *testing.T, cases []genCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.from, func(t *testing.T) {
			rc := reasonCache(tc.pod.UID, tc.failures)
			gen, name := podstatus.Generate, "Generate"
			if tc.terminal {
				gen, name = podstatus.GenerateTerminal, "GenerateTerminal"
			}
			got := gen(tc.pod, tc.status, rc)
			// The kubelet's tests check app statuses by name; Generate
			// lists them sorted by name, as the kubelet does
			// (TestStatusesSortedByName checks the order itself).
			want := *tc.want.DeepCopy()
			byName := func(a, b v1.ContainerStatus) int { return strings.Compare(a.Name, b.Name) }
			slices.SortStableFunc(want.ContainerStatuses, byName)
			slices.SortStableFunc(want.EphemeralContainerStatuses, byName)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s(pod, status, reasons) returned an unexpected status (-want +got):\n%s", name, d)
			}
		})
	}
}

// crash is the failure SyncPod records for a container in back-off.
var crash = [2]string{crashLoop, crashMsg}
