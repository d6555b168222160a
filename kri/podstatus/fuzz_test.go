package podstatus_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
)

// fuzzReader turns fuzz bytes into choices; past the end every choice is 0.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// n returns a number in [0, max).
func (r *fuzzReader) n(max int) int { return int(r.byte()) % max }

func (r *fuzzReader) bool() bool { return r.byte()&1 == 1 }

func pick[T any](r *fuzzReader, from ...T) T { return from[r.n(len(from))] }

// Few names, so that instances, previous statuses and reasons often hit
// spec containers, and sometimes names the spec does not have.
var fuzzNames = []string{"a", "b", "c", "d", "e"}

func (r *fuzzReader) int() int {
	return pick(r, 0, 1, -1, 2, 137, 255, math.MaxInt32, math.MaxInt32+1, math.MinInt64, math.MaxInt64, r.n(1000))
}

func (r *fuzzReader) container() v1.Container {
	c := v1.Container{Name: pick(r, fuzzNames...), Image: pick(r, "", "img")}
	if r.bool() {
		p := pick(r, v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever, "Bogus")
		c.RestartPolicy = &p
		if r.bool() {
			c.RestartPolicyRules = []v1.ContainerRestartRule{{
				Action: pick(r, v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers, "Bogus"),
				ExitCodes: pick(r, nil, &v1.ContainerRestartRuleOnExitCodes{
					Operator: pick(r, v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleOnExitCodesOpNotIn, "Bogus"),
					Values:   []int32{int32(r.n(3))},
				}),
			}}
		}
	}
	if r.bool() {
		rro := pick(r, v1.RecursiveReadOnlyEnabled, v1.RecursiveReadOnlyIfPossible, v1.RecursiveReadOnlyDisabled)
		c.VolumeMounts = []v1.VolumeMount{{Name: "v", ReadOnly: r.bool(), RecursiveReadOnly: pick(r, nil, &rro)}}
	}
	return c
}

func (r *fuzzReader) state() v1.ContainerState {
	switch r.n(4) {
	case 1:
		return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: pick(r, "", "CrashLoopBackOff")}}
	case 2:
		return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(at(r.n(10)))}}
	case 3:
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: int32(r.int()), ContainerID: pick(r, "", cid("i1"))}}
	}
	return v1.ContainerState{}
}

func (r *fuzzReader) previous() []v1.ContainerStatus {
	var out []v1.ContainerStatus
	for range r.n(4) {
		st := v1.ContainerStatus{
			Name: pick(r, fuzzNames...), State: r.state(), LastTerminationState: r.state(),
			RestartCount: int32(r.int()), ContainerID: pick(r, "", cid("i1"), cid("i2")),
		}
		if r.bool() {
			st.Started = ptrTo(r.bool())
		}
		out = append(out, st)
	}
	return out
}

func (r *fuzzReader) pod() *v1.Pod {
	spec := v1.PodSpec{
		RestartPolicy: pick(r, "", v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever, "Bogus"),
		HostNetwork:   r.bool(),
	}
	for range r.n(4) {
		spec.InitContainers = append(spec.InitContainers, r.container())
	}
	for range r.n(4) {
		spec.Containers = append(spec.Containers, r.container())
	}
	if r.bool() {
		spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: pick(r, fuzzNames...)}}}
	}
	if r.bool() {
		spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "gate"}}
	}
	prev := v1.PodStatus{
		Phase:                 pick(r, "", v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed, v1.PodUnknown),
		Reason:                pick(r, "", "Evicted"),
		ContainerStatuses:     r.previous(),
		InitContainerStatuses: r.previous(),
	}
	for range r.n(3) {
		prev.Conditions = append(prev.Conditions, v1.PodCondition{
			Type:   pick[v1.PodConditionType](r, v1.PodInitialized, v1.PodReady, v1.DisruptionTarget, "gate"),
			Status: pick(r, v1.ConditionTrue, v1.ConditionFalse, ""),
		})
	}
	if r.bool() {
		prev.HostIPs = []v1.HostIP{{IP: pick(r, "10.0.0.1", "fd00::1", "bogus")}, {IP: pick(r, "fd00::1", "10.0.0.2", "")}}
	}
	pod := mkPod(spec, prev)
	if r.bool() {
		pod = deleted(pod)
	}
	return pod
}

func (r *fuzzReader) runtime() *pkgcontainer.PodStatus {
	if r.n(8) == 0 {
		return nil
	}
	s := &pkgcontainer.PodStatus{ID: podUID}
	for i := range r.n(9) {
		if r.n(10) == 0 {
			s.ContainerStatuses = append(s.ContainerStatuses, nil)
			continue
		}
		in := &pkgcontainer.Status{
			ID:           pkgcontainer.ContainerID{Type: pick(r, "", runtimeType), ID: fmt.Sprintf("i%d", i)},
			Name:         pick(r, fuzzNames...),
			State:        pick(r, pkgcontainer.ContainerStateCreated, pkgcontainer.ContainerStateRunning, pkgcontainer.ContainerStateExited, pkgcontainer.ContainerStateUnknown, "bogus"),
			CreatedAt:    pick(r, time.Time{}, at(r.n(5))), // zero and tied times
			StartedAt:    at(r.n(5)),
			ExitCode:     r.int(),
			RestartCount: r.int(),
			Reason:       pick(r, "", "Error", "RestartingAllContainers"),
			Image:        pick(r, "", "img"),
		}
		if r.bool() {
			in.User = &pkgcontainer.ContainerUser{Linux: pick(r, nil, &pkgcontainer.LinuxContainerUser{SupplementalGroups: []int64{1}})}
		}
		s.ContainerStatuses = append(s.ContainerStatuses, in)
	}
	for _, in := range s.ContainerStatuses {
		if r.bool() {
			s.ActiveContainerStatuses = append(s.ActiveContainerStatuses, in)
		}
	}
	for range r.n(4) {
		if r.n(5) == 0 {
			s.SandboxStatuses = append(s.SandboxStatuses, nil)
			continue
		}
		sb := &runtimeapi.PodSandboxStatus{
			State:     pick(r, runtimeapi.PodSandboxState_SANDBOX_READY, runtimeapi.PodSandboxState_SANDBOX_NOTREADY, 7),
			CreatedAt: int64(r.n(5)),
			Network:   pick(r, nil, &runtimeapi.PodSandboxNetworkStatus{}, &runtimeapi.PodSandboxNetworkStatus{Ip: "10.0.0.3"}),
			Metadata:  pick(r, nil, &runtimeapi.PodSandboxMetadata{}),
		}
		if r.bool() {
			sb.Linux = &runtimeapi.LinuxPodSandboxStatus{Namespaces: pick(r, nil, &runtimeapi.Namespace{Options: pick(r, nil, &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode(r.n(4))})})}
		}
		s.SandboxStatuses = append(s.SandboxStatuses, sb)
	}
	for range r.n(4) {
		s.IPs = append(s.IPs, pick(r, "10.0.0.5", "fd00::5", "", "x", "010.000.000.001"))
	}
	return s
}

func (r *fuzzReader) reasons() *kri.ReasonCache {
	switch r.n(4) {
	case 0:
		return nil
	case 1:
		return &kri.ReasonCache{}
	}
	rc := kri.NewReasonCacheWithSize(1 + r.n(3))
	for range r.n(5) {
		res := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, pick(r, fuzzNames...))
		res.Fail(errors.New(pick(r, "CrashLoopBackOff", "ErrImagePull", "")), pick(r, "", "msg"))
		rc.Update(pick(r, podUID, "other"), pkgcontainer.PodSyncResult{SyncResults: []*pkgcontainer.SyncResult{res}})
	}
	return rc
}

// addresses are the node's addresses, valid or not, for WithNodeAddresses.
func (r *fuzzReader) addresses() []v1.NodeAddress {
	var out []v1.NodeAddress
	for range r.n(4) {
		out = append(out, v1.NodeAddress{
			Type:    pick(r, v1.NodeInternalIP, v1.NodeExternalIP, v1.NodeHostName),
			Address: pick(r, "192.168.0.5", "fd00::5", "", "not-an-ip", "10.0.0.1"),
		})
	}
	return out
}

// FuzzGenerate feeds Generate and GenerateTerminal random pods, previous
// statuses, runtime statuses and reason caches, and checks what holds for
// every input: no panic, a phase always set (and a terminal previous phase
// kept), every spec container named exactly once in its list (init
// containers in spec order, the others by name) and no other name, no memory shared with the inputs, the inputs
// unchanged. Some inputs go through a Generator with the node's addresses,
// and every result through StampTimes, which must keep all of this true.
func FuzzGenerate(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte("a runtime with a few instances of a and b and some reasons for them"))
	f.Add([]byte{255, 3, 3, 1, 0, 1, 1, 3, 1, 2, 0, 1, 1, 1, 8, 1, 2, 3, 2, 1, 2, 4, 3, 2, 1, 1, 1, 3, 1, 1, 2, 2, 2, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{b: data}
		terminal := r.bool()
		var pod *v1.Pod
		if r.n(16) != 0 {
			pod = r.pod()
		}
		status := r.runtime()
		reasons := r.reasons()

		var podBefore *v1.Pod
		if pod != nil {
			podBefore = pod.DeepCopy()
		}
		gen := podstatus.Generate
		if terminal {
			gen = podstatus.GenerateTerminal
		}
		withNode := r.bool()
		if withNode {
			g := podstatus.NewGenerator(podstatus.WithNodeAddresses(r.addresses()))
			gen = g.Generate
			if terminal {
				gen = g.GenerateTerminal
			}
		}
		got := gen(pod, status, reasons)
		if pod != nil && r.bool() {
			podstatus.StampTimes(&pod.Status, &got, time.Unix(int64(r.int()), 0))
			if got.StartTime == nil {
				t.Fatalf("StampTimes left StartTime nil")
			}
		}

		switch got.Phase {
		case v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed:
		default:
			t.Fatalf("phase %q, want Pending, Running, Succeeded or Failed", got.Phase)
		}
		if pod == nil {
			if !apiequality.Semantic.DeepEqual(got, v1.PodStatus{Phase: v1.PodPending}) {
				t.Fatalf("nil pod: got %+v, want only Phase Pending", got)
			}
			return
		}
		if p := pod.Status.Phase; (p == v1.PodSucceeded || p == v1.PodFailed) && got.Phase != p {
			t.Fatalf("previous phase %s is terminal, got phase %s", p, got.Phase)
		}
		checkNames(t, "ContainerStatuses", pod.Spec.Containers, got.ContainerStatuses, true)
		checkNames(t, "InitContainerStatuses", pod.Spec.InitContainers, got.InitContainerStatuses, false)
		var ecs []v1.Container
		for _, ec := range pod.Spec.EphemeralContainers {
			ecs = append(ecs, v1.Container{Name: ec.Name})
		}
		checkNames(t, "EphemeralContainerStatuses", ecs, got.EphemeralContainerStatuses, true)

		in := memory(pod)
		for p, path := range memory(status) {
			in[p] = "runtime" + path
		}
		for p, path := range memory(&got) {
			if inPath, ok := in[p]; ok {
				t.Fatalf("the returned status%s shares memory with input %s", path, inPath)
			}
		}
		if !apiequality.Semantic.DeepEqual(podBefore, pod) {
			t.Fatalf("Generate modified the pod")
		}
	})
}

// checkNames fails unless statuses name each container of specs exactly
// once, and nothing else: sorted by name when byName (app and ephemeral
// containers, as the kubelet sorts them), else in spec order.
func checkNames(t *testing.T, field string, specs []v1.Container, statuses []v1.ContainerStatus, byName bool) {
	t.Helper()
	var want []string
	for _, c := range specs {
		if !slices.Contains(want, c.Name) {
			want = append(want, c.Name)
		}
	}
	order := "spec order"
	if byName {
		slices.Sort(want)
		order = "name order"
	}
	var got []string
	for _, s := range statuses {
		got = append(got, s.Name)
	}
	if !slices.Equal(want, got) {
		t.Fatalf("%s name %q, want each spec container once in %s: %q", field, got, order, want)
	}
}
