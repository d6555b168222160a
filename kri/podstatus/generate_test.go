package podstatus_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// The cases of the kubelet's Test_generateAPIPodStatus
// (pkg/kubelet/kubelet_pods_test.go) that do not depend on resource
// allocation. The kubelet test has two previous statuses, the status
// manager's and the API server's; Generate has one, pod.Status, which holds
// here what the two together say. The kubelet test runs a fake prober that
// marks every container ready; Generate applies the prober's outcome for
// containers without probes, so containers that do not run are not ready and
// the Ready conditions follow. HostIP and HostIPs, which the kubelet takes
// from the node, are carried over from pod.Status.
func TestGenerateAPIPodStatusCases(t *testing.T) {
	const from = "Test_generateAPIPodStatus/"
	spec := v1.PodSpec{NodeName: "machine", Containers: containers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyAlways}
	sandboxReady := func(cs ...*pkgcontainer.Status) *pkgcontainer.PodStatus {
		return &pkgcontainer.PodStatus{
			SandboxStatuses: []*runtimeapi.PodSandboxStatus{{
				Network:  &runtimeapi.PodSandboxNetworkStatus{Ip: "10.0.0.10"},
				Metadata: &runtimeapi.PodSandboxMetadata{Attempt: 0},
				State:    runtimeapi.PodSandboxState_SANDBOX_READY,
			}},
			ContainerStatuses: cs,
		}
	}
	hostIPs := []v1.HostIP{{IP: "127.0.0.1"}, {IP: "::1"}}
	onNode := func(s v1.PodStatus) v1.PodStatus {
		s.HostIP, s.HostIPs = "127.0.0.1", hostIPs
		return s
	}
	running := func(names ...string) []v1.ContainerStatus {
		var out []v1.ContainerStatus
		for _, n := range names {
			out = append(out, v1.ContainerStatus{Name: n, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}})
		}
		return out
	}
	vanished := func(name string, restarts int32) v1.ContainerStatus {
		return withRC(withLast(waitingC(name, "ContainerCreating"), unknownS()), restarts)
	}
	succeeded := func(name string) v1.ContainerStatus {
		return v1.ContainerStatus{Name: name, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}}
	}
	normalizedNow := metav1.NewTime(at(50)).Rfc3339Copy()
	disruption := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, LastTransitionTime: normalizedNow}
	idRunning := func(name, id string, sec int64) *pkgcontainer.Status {
		return &pkgcontainer.Status{ID: pkgcontainer.ContainerID{ID: id}, Name: name, StartedAt: time.Unix(sec, 0).UTC(), State: pkgcontainer.ContainerStateRunning}
	}
	idRunningStatus := func(name, id string, sec int64) v1.ContainerStatus {
		return v1.ContainerStatus{
			Name: name, ContainerID: "://" + id,
			State:   v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(sec, 0).UTC())}},
			Started: ptrTo(true), Ready: true,
		}
	}
	completed := conds(noSandbox, initCompleted, crCompleted)

	runCases(t, []genCase{
		{
			from: from + "pod disruption condition is copied over and the phase is set to failed when deleted",
			pod: deleted(mkPod(spec, onNode(v1.PodStatus{
				ContainerStatuses: running("containerA", "containerB"),
				Conditions:        []v1.PodCondition{disruption},
			}))),
			status:   sandboxReady(),
			terminal: true,
			want: onNode(want(v1.PodFailed, append([]v1.PodCondition{disruption}, conds(sandboxOK, initOK, crFailed)...),
				list(vanished("containerA", 0), vanished("containerB", 0)))),
		},
		{
			from:   from + "current status ready, with previous statuses and deletion",
			pod:    deleted(mkPod(spec, onNode(v1.PodStatus{ContainerStatuses: running("containerA", "containerB")}))),
			status: sandboxReady(),
			want: onNode(want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerA containerB")),
				list(vanished("containerA", 0), vanished("containerB", 0)))),
		},
		{
			from:   from + "current status ready, with previous statuses and no deletion",
			pod:    mkPod(spec, onNode(v1.PodStatus{ContainerStatuses: running("containerA", "containerB")})),
			status: sandboxReady(),
			want: onNode(want(v1.PodRunning, conds(sandboxOK, initOK, crUnready("containerA containerB")),
				list(vanished("containerA", 1), vanished("containerB", 1)))),
		},
		{
			from:   from + "terminal phase cannot be changed (apiserver previous is succeeded)",
			pod:    mkPod(spec, onNode(v1.PodStatus{Phase: v1.PodSucceeded, ContainerStatuses: running("containerA", "containerB")})),
			status: &pkgcontainer.PodStatus{},
			want:   onNode(want(v1.PodSucceeded, completed, list(vanished("containerA", 1), vanished("containerB", 1)))),
		},
		{
			from: from + "terminal phase from previous status must remain terminal, restartAlways",
			pod: mkPod(spec, onNode(v1.PodStatus{
				Phase: v1.PodSucceeded, Reason: "Test", Message: "test",
				ContainerStatuses: running("containerA", "containerB"),
			})),
			status: &pkgcontainer.PodStatus{},
			want: func() v1.PodStatus {
				s := onNode(want(v1.PodSucceeded, completed, list(vanished("containerA", 1), vanished("containerB", 1))))
				s.Reason, s.Message = "Test", "test"
				return s
			}(),
		},
		{
			from: from + "terminal phase from previous status must remain terminal, restartNever",
			pod: mkPod(v1.PodSpec{NodeName: "machine", Containers: containers("containerA", "containerB"), RestartPolicy: v1.RestartPolicyNever},
				onNode(v1.PodStatus{
					Phase: v1.PodSucceeded, Reason: "Test", Message: "test",
					ContainerStatuses: list(succeeded("containerA"), succeeded("containerB")),
				})),
			status: &pkgcontainer.PodStatus{},
			want: func() v1.PodStatus {
				s := onNode(want(v1.PodSucceeded, completed, list(
					withStarted(succeeded("containerA"), false), withStarted(succeeded("containerB"), false))))
				s.Reason, s.Message = "Test", "test"
				return s
			}(),
		},
		{
			from: from + "running can revert to pending",
			pod: mkPod(spec, onNode(v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: list(
				v1.ContainerStatus{Name: "containerA", State: waitingS("", "")},
				v1.ContainerStatus{Name: "containerB", State: waitingS("", "")},
			)})),
			status: sandboxReady(),
			want: onNode(want(v1.PodPending, conds(sandboxOK, initOK, crUnready("containerA containerB")),
				list(waitingC("containerA", "ContainerCreating"), waitingC("containerB", "ContainerCreating")))),
		},
		{
			from: from + "reason and message are preserved when phase doesn't change",
			pod: mkPod(spec, onNode(v1.PodStatus{
				Phase: v1.PodPending, Reason: "Test", Message: "test",
				ContainerStatuses: list(v1.ContainerStatus{Name: "containerA", State: waitingS("", "")}, running("containerB")[0]),
			})),
			status: sandboxReady(idRunning("containerB", "foo", 1)),
			want: func() v1.PodStatus {
				s := onNode(want(v1.PodPending, conds(sandboxOK, initOK, crUnready("containerA")),
					list(waitingC("containerA", "ContainerCreating"), idRunningStatus("containerB", "foo", 1))))
				s.Reason, s.Message = "Test", "test"
				return s
			}(),
		},
		{
			from: from + "reason and message are cleared when phase changes",
			pod: mkPod(spec, onNode(v1.PodStatus{
				Phase: v1.PodPending, Reason: "Test", Message: "test",
				ContainerStatuses: running("containerA", "containerB"),
			})),
			status: sandboxReady(idRunning("containerA", "c1", 1), idRunning("containerB", "c2", 2)),
			want: onNode(want(v1.PodRunning, conds(sandboxOK, initOK, crOK),
				list(idRunningStatus("containerA", "c1", 1), idRunningStatus("containerB", "c2", 2)))),
		},
	})
}

// TestPodIPs: the cases of the kubelet's TestGenerateAPIPodStatusPodIPs,
// TestSortPodIPs and TestGenerateAPIPodStatusHostNetworkPodIPs. The node's
// IPs, which the kubelet knows, are the previous status's HostIPs here.
func TestPodIPs(t *testing.T) {
	tests := []struct {
		from        string
		nodeIPs     []string
		hostNetwork bool
		criPodIPs   []string
		want        []string
	}{
		{from: "TestGenerateAPIPodStatusPodIPs/Simple", criPodIPs: []string{"10.0.0.1"}, want: []string{"10.0.0.1"}},
		{from: "TestGenerateAPIPodStatusPodIPs/Dual-stack", criPodIPs: []string{"10.0.0.1", "fd01::1234"}, want: []string{"10.0.0.1", "fd01::1234"}},
		{from: "TestGenerateAPIPodStatusPodIPs/Dual-stack with explicit node IP", nodeIPs: []string{"192.168.1.1"}, criPodIPs: []string{"10.0.0.1", "fd01::1234"}, want: []string{"10.0.0.1", "fd01::1234"}},
		{from: "TestGenerateAPIPodStatusPodIPs/Dual-stack with CRI returning wrong family first", criPodIPs: []string{"fd01::1234", "10.0.0.1"}, want: []string{"10.0.0.1", "fd01::1234"}},
		{from: "TestGenerateAPIPodStatusPodIPs/Dual-stack with IPv6 node IP", nodeIPs: []string{"fd00::5678"}, criPodIPs: []string{"10.0.0.1", "fd01::1234"}, want: []string{"fd01::1234", "10.0.0.1"}},
		{from: "TestGenerateAPIPodStatusPodIPs/Dual-stack with IPv6 node IP, other CRI order", nodeIPs: []string{"fd00::5678"}, criPodIPs: []string{"fd01::1234", "10.0.0.1"}, want: []string{"fd01::1234", "10.0.0.1"}},
		{from: "TestGenerateAPIPodStatusPodIPs/No Pod IP matching Node IP", nodeIPs: []string{"fd00::5678"}, criPodIPs: []string{"10.0.0.1"}, want: []string{"10.0.0.1"}},
		{from: "TestGenerateAPIPodStatusPodIPs/No Pod IP matching (unspecified) Node IP", criPodIPs: []string{"fd01::1234"}, want: []string{"fd01::1234"}},
		{from: "TestGenerateAPIPodStatusPodIPs/Multiple IPv4 IPs", criPodIPs: []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}, want: []string{"10.0.0.1"}},
		{from: "TestGenerateAPIPodStatusPodIPs/Multiple Dual-Stack IPs", criPodIPs: []string{"10.0.0.1", "10.0.0.2", "fd01::1234", "10.0.0.3", "fd01::5678"}, want: []string{"10.0.0.1", "fd01::1234"}},
		{from: "TestSortPodIPs/Badly-formatted IPs from CRI", criPodIPs: []string{"010.000.000.001", "fd01:0:0:0:0:0:0:1234"}, want: []string{"10.0.0.1", "fd01::1234"}},
		{from: "TestGenerateAPIPodStatusHostNetworkPodIPs/Simple", hostNetwork: true, nodeIPs: []string{"10.0.0.1"}, want: []string{"10.0.0.1"}},
		{from: "TestGenerateAPIPodStatusHostNetworkPodIPs/Dual-stack addresses in dual-stack cluster", hostNetwork: true, nodeIPs: []string{"10.0.0.1", "fd01::1234"}, want: []string{"10.0.0.1", "fd01::1234"}},
		{from: "TestGenerateAPIPodStatusHostNetworkPodIPs/CRI PodIPs override NodeAddresses", hostNetwork: true, nodeIPs: []string{"10.0.0.1", "fd01::1234"}, criPodIPs: []string{"192.168.0.1"}, want: []string{"192.168.0.1", "fd01::1234"}},
		{from: "TestGenerateAPIPodStatusHostNetworkPodIPs/CRI dual-stack PodIPs override NodeAddresses prefer IPv4", hostNetwork: true, nodeIPs: []string{"10.0.0.1", "fd01::1234"}, criPodIPs: []string{"2001:db8::2", "192.168.0.1"}, want: []string{"192.168.0.1", "2001:db8::2"}},
		{from: "invalid addresses are dropped", criPodIPs: []string{"not-an-ip", "", "10.0.0.7"}, want: []string{"10.0.0.7"}},
	}
	// The node's IPs come from the previous HostIPs, or from the node's
	// addresses (WithNodeAddresses) with no previous HostIPs: both give the
	// kubelet's results.
	for _, tc := range tests {
		for _, viaOption := range []bool{false, true} {
			name := tc.from + "/previous HostIPs"
			if viaOption {
				name = tc.from + "/WithNodeAddresses"
			}
			t.Run(name, func(t *testing.T) {
				prev := v1.PodStatus{}
				var addrs []v1.NodeAddress
				for _, ip := range tc.nodeIPs {
					if viaOption {
						addrs = append(addrs, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip})
					} else {
						prev.HostIPs = append(prev.HostIPs, v1.HostIP{IP: ip})
					}
				}
				pod := mkPod(v1.PodSpec{Containers: containers("app"), HostNetwork: tc.hostNetwork}, prev)
				status := noRuntime()
				status.IPs = tc.criPodIPs
				var got v1.PodStatus
				if viaOption {
					got = podstatus.NewGenerator(podstatus.WithNodeAddresses(addrs)).Generate(pod, status, nil)
				} else {
					got = podstatus.Generate(pod, status, nil)
				}
				var gotIPs []string
				for _, ip := range got.PodIPs {
					gotIPs = append(gotIPs, ip.IP)
				}
				if d := cmp.Diff(tc.want, gotIPs); d != "" {
					t.Errorf("Generate with runtime IPs %q on node %q: PodIPs (-want +got):\n%s", tc.criPodIPs, tc.nodeIPs, d)
				}
				if len(got.PodIPs) > 0 && got.PodIP != got.PodIPs[0].IP {
					t.Errorf("Generate: PodIP = %q, want PodIPs[0] %q", got.PodIP, got.PodIPs[0].IP)
				}
			})
		}
	}
}
