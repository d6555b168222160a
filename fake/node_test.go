package fake_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/internal/k8scompat"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

var (
	nodeT0     = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	errNodeBad = errors.New("backend gone")
	nodeGPU    = v1.ResourceName("example.com/gpu")

	nodeSwapBytes = int64(1 << 30)
	nodeTrue      = true
)

// nodeQuantityCmp compares quantities by value, as the API server does.
var nodeQuantityCmp = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func nodeQ(s string) resource.Quantity { return resource.MustParse(s) }

// nodeVerifyNoLeaks is deferred first by every test: it fails the test if a
// goroutine started during the test is still running at its end. Goroutines
// that existed before (from other tests in the package) are ignored.
func nodeVerifyNoLeaks(t *testing.T) func() {
	opt := goleak.IgnoreCurrent()
	return func() { goleak.VerifyNone(t, opt) }
}

func nodeDefaultCapacity() v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU:              nodeQ("4"),
		v1.ResourceMemory:           nodeQ("8Gi"),
		v1.ResourcePods:             nodeQ("110"),
		v1.ResourceEphemeralStorage: nodeQ("100Gi"),
	}
}

func nodeWithResources(base v1.ResourceList, over v1.ResourceList) v1.ResourceList {
	out := base.DeepCopy()
	for k, v := range over {
		out[k] = v
	}
	return out
}

func nodeDefaultInfo() v1.NodeSystemInfo {
	return v1.NodeSystemInfo{
		KernelVersion:           "fake",
		OSImage:                 "fake",
		ContainerRuntimeVersion: "fake://1.0.0",
		KubeletVersion:          "v1.37.2",
		OperatingSystem:         "linux",
		Architecture:            "amd64",
	}
}

// nodeExpected is the node the fake should report: heartbeat at now, every
// condition last transitioned at since.
func nodeExpected(name string, capacity, allocatable v1.ResourceList, info v1.NodeSystemInfo, addrs []v1.NodeAddress, now, since time.Time) *v1.Node {
	cond := func(t v1.NodeConditionType, s v1.ConditionStatus, reason, msg string) v1.NodeCondition {
		return v1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg,
			LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(since)}
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name,
			"kubernetes.io/os":       info.OperatingSystem,
			"kubernetes.io/arch":     info.Architecture,
		}},
		Status: v1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			NodeInfo:    info,
			Addresses:   addrs,
			Conditions: []v1.NodeCondition{
				cond(v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond(v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				cond(v1.NodeReady, v1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
		},
	}
}

func nodeDefaultAddresses(name string) []v1.NodeAddress {
	return []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.1"}, {Type: v1.NodeHostName, Address: name}}
}

// nodeCheckContract checks what kri.NodeProvider promises about any node.
func nodeCheckContract(t *testing.T, node *v1.Node, name string) {
	t.Helper()
	if node == nil {
		t.Fatal("nil node")
	}
	if node.Name != name {
		t.Errorf("node name = %q, want %q", node.Name, name)
	}
	for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods, v1.ResourceEphemeralStorage} {
		if _, ok := node.Status.Capacity[r]; !ok {
			t.Errorf("capacity lacks %s", r)
		}
		if _, ok := node.Status.Allocatable[r]; !ok {
			t.Errorf("allocatable lacks %s", r)
		}
	}
	for r, a := range node.Status.Allocatable {
		c, ok := node.Status.Capacity[r]
		if !ok || a.Cmp(c) > 0 {
			t.Errorf("allocatable %s %s above capacity %s (present %v)", r, a.String(), c.String(), ok)
		}
	}
	if nodeCond(node.Status.Conditions, v1.NodeReady) == nil {
		t.Error("no Ready condition")
	}
}

func nodeCond(conds []v1.NodeCondition, t v1.NodeConditionType) *v1.NodeCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// nodeReturnsWithin fails the test if f does not return within a few seconds,
// e.g. because it waits for a blocked callback.
func nodeReturnsWithin(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not return", what)
	}
}

func nodeReceive(t *testing.T, ch <-chan *v1.Node) *v1.Node {
	t.Helper()
	select {
	case n := <-ch:
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("no node delivered to the status-update callback")
		return nil
	}
}

func TestNodeProviderConfigureNode(t *testing.T) {
	defer nodeVerifyNoLeaks(t)()
	cases := []struct {
		name    string
		opts    []fake.NodeOption
		want    func(now time.Time) *v1.Node
		nodeArg string
	}{{
		name:    "defaults",
		nodeArg: "node-a",
		want: func(now time.Time) *v1.Node {
			return nodeExpected("node-a", nodeDefaultCapacity(), nodeDefaultCapacity(), nodeDefaultInfo(), nodeDefaultAddresses("node-a"), now, now)
		},
	}, {
		name:    "capacity option keeps other defaults and allocatable follows",
		nodeArg: "node-b",
		opts:    []fake.NodeOption{fake.WithNodeCapacity(v1.ResourceList{v1.ResourceCPU: nodeQ("2"), nodeGPU: nodeQ("1")})},
		want: func(now time.Time) *v1.Node {
			c := nodeWithResources(nodeDefaultCapacity(), v1.ResourceList{v1.ResourceCPU: nodeQ("2"), nodeGPU: nodeQ("1")})
			return nodeExpected("node-b", c, c, nodeDefaultInfo(), nodeDefaultAddresses("node-b"), now, now)
		},
	}, {
		name:    "allocatable below capacity",
		nodeArg: "node-c",
		opts: []fake.NodeOption{
			fake.WithNodeAllocatable(v1.ResourceList{v1.ResourceCPU: nodeQ("7500m"), v1.ResourceMemory: nodeQ("7Gi")}),
			fake.WithNodeCapacity(v1.ResourceList{v1.ResourceCPU: nodeQ("8")}),
		},
		want: func(now time.Time) *v1.Node {
			c := nodeWithResources(nodeDefaultCapacity(), v1.ResourceList{v1.ResourceCPU: nodeQ("8")})
			a := nodeWithResources(c, v1.ResourceList{v1.ResourceCPU: nodeQ("7500m"), v1.ResourceMemory: nodeQ("7Gi")})
			return nodeExpected("node-c", c, a, nodeDefaultInfo(), nodeDefaultAddresses("node-c"), now, now)
		},
	}, {
		name:    "node info",
		nodeArg: "win",
		opts:    []fake.NodeOption{fake.WithNodeInfo(v1.NodeSystemInfo{KubeletVersion: "v1.30.1", OperatingSystem: "windows", Architecture: "arm64", MachineID: "m-1"})},
		want: func(now time.Time) *v1.Node {
			info := nodeDefaultInfo()
			info.KubeletVersion, info.OperatingSystem, info.Architecture, info.MachineID = "v1.30.1", "windows", "arm64", "m-1"
			return nodeExpected("win", nodeDefaultCapacity(), nodeDefaultCapacity(), info, nodeDefaultAddresses("win"), now, now)
		},
	}, {
		name:    "node info with swap and user namespace",
		nodeArg: "swap",
		opts:    []fake.NodeOption{fake.WithNodeInfo(nodeInfoWithUserNamespace(v1.NodeSystemInfo{Swap: &v1.NodeSwapStatus{Capacity: &nodeSwapBytes}}, &nodeTrue))},
		want: func(now time.Time) *v1.Node {
			info := nodeDefaultInfo()
			swap, userns := int64(1<<30), true
			info.Swap = &v1.NodeSwapStatus{Capacity: &swap}
			info = nodeInfoWithUserNamespace(info, &userns)
			return nodeExpected("swap", nodeDefaultCapacity(), nodeDefaultCapacity(), info, nodeDefaultAddresses("swap"), now, now)
		},
	}, {
		name:    "no addresses at all",
		nodeArg: "bare",
		opts:    []fake.NodeOption{fake.WithNodeAddresses()},
		want: func(now time.Time) *v1.Node {
			return nodeExpected("bare", nodeDefaultCapacity(), nodeDefaultCapacity(), nodeDefaultInfo(), nil, now, now)
		},
	}, {
		name:    "addresses replace the default",
		nodeArg: "node-d",
		opts: []fake.NodeOption{fake.WithNodeAddresses(
			v1.NodeAddress{Type: v1.NodeInternalIP, Address: "192.0.2.7"},
			v1.NodeAddress{Type: v1.NodeExternalIP, Address: "203.0.113.7"})},
		want: func(now time.Time) *v1.Node {
			addrs := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "192.0.2.7"}, {Type: v1.NodeExternalIP, Address: "203.0.113.7"}}
			return nodeExpected("node-d", nodeDefaultCapacity(), nodeDefaultCapacity(), nodeDefaultInfo(), addrs, now, now)
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(nodeT0)
			p := fake.NewNodeProvider(append([]fake.NodeOption{fake.WithNodeClock(clk)}, tc.opts...)...)
			defer p.Close()
			if err := p.Err(); err != nil {
				t.Fatalf("Err() = %v, want nil", err)
			}
			clk.Step(time.Minute) // heartbeat is "now", transitions are "since construction"
			node := p.ConfigureNode(context.Background(), tc.nodeArg)
			nodeCheckContract(t, node, tc.nodeArg)
			want := tc.want(clk.Now())
			for i := range want.Status.Conditions {
				want.Status.Conditions[i].LastTransitionTime = metav1.NewTime(nodeT0)
			}
			if diff := cmp.Diff(want, node, nodeQuantityCmp); diff != "" {
				t.Errorf("ConfigureNode(%q) mismatch (-want +got):\n%s", tc.nodeArg, diff)
			}
		})
	}
}

func TestNodeProviderConfigureNodeReturnsNewCopies(t *testing.T) {
	defer nodeVerifyNoLeaks(t)()
	clk := clocktesting.NewFakeClock(nodeT0)
	capacity := v1.ResourceList{v1.ResourceCPU: nodeQ("2")}
	addrs := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "192.0.2.1"}}
	swap, userns := int64(1<<20), false
	info := nodeInfoWithUserNamespace(v1.NodeSystemInfo{Swap: &v1.NodeSwapStatus{Capacity: &swap}}, &userns)
	p := fake.NewNodeProvider(fake.WithNodeClock(clk), fake.WithNodeCapacity(capacity), fake.WithNodeAddresses(addrs...), fake.WithNodeInfo(info))
	defer p.Close()
	// Inputs handed to options are not kept.
	capacity[v1.ResourceCPU] = nodeQ("64")
	addrs[0].Address = "198.51.100.1"
	swap, userns = 7, true
	info.Swap.Capacity = nil
	if n := p.ConfigureNode(context.Background(), "a"); *n.Status.NodeInfo.Swap.Capacity != 1<<20 || inUserNamespace(&n.Status.NodeInfo) ||
		n.Status.Addresses[0].Address != "192.0.2.1" {
		t.Errorf("option inputs were kept: %+v", n.Status)
	}

	first := p.ConfigureNode(context.Background(), "a")
	pristine := first.DeepCopy()
	second := p.ConfigureNode(context.Background(), "a")
	if first == second {
		t.Fatal("ConfigureNode returned the same pointer twice")
	}
	// Returned nodes are not kept: scribbling over one changes nothing.
	second.Labels["x"] = "y"
	second.Status.Capacity[v1.ResourceCPU] = nodeQ("100")
	second.Status.Addresses[0].Address = "0.0.0.0"
	second.Status.Conditions[0].Status = v1.ConditionUnknown
	*second.Status.NodeInfo.Swap.Capacity = 1
	third := p.ConfigureNode(context.Background(), "a")
	if diff := cmp.Diff(pristine, third, nodeQuantityCmp); diff != "" {
		t.Errorf("node changed after mutating returned copies / option inputs (-want +got):\n%s", diff)
	}
	// A later call with another name renames the node (and its hostname).
	other := p.ConfigureNode(context.Background(), "b")
	nodeCheckContract(t, other, "b")
	if other.Labels["kubernetes.io/hostname"] != "b" {
		t.Errorf("hostname label = %q, want b", other.Labels["kubernetes.io/hostname"])
	}
}

func TestNewNodeProviderInvalidOptions(t *testing.T) {
	defer nodeVerifyNoLeaks(t)()
	cases := []struct {
		name      string
		opts      []fake.NodeOption
		wantErr   []string // substrings of Err(); none means Err() == nil
		check     func(t *testing.T, node *v1.Node)
		realClock bool
	}{{
		name:    "allocatable above capacity is clamped",
		opts:    []fake.NodeOption{fake.WithNodeCapacity(v1.ResourceList{v1.ResourceCPU: nodeQ("2")}), fake.WithNodeAllocatable(v1.ResourceList{v1.ResourceCPU: nodeQ("3"), v1.ResourceMemory: nodeQ("1Gi")})},
		wantErr: []string{"WithNodeAllocatable", "cpu", "exceeds capacity", "clamped"},
		check: func(t *testing.T, node *v1.Node) {
			if a := node.Status.Allocatable[v1.ResourceCPU]; a.Cmp(nodeQ("2")) != 0 {
				t.Errorf("allocatable cpu = %s, want clamped to 2", a.String())
			}
			if a := node.Status.Allocatable[v1.ResourceMemory]; a.Cmp(nodeQ("1Gi")) != 0 {
				t.Errorf("valid allocatable memory = %s, want 1Gi", a.String())
			}
		},
	}, {
		name:    "allocatable without capacity is dropped",
		opts:    []fake.NodeOption{fake.WithNodeAllocatable(v1.ResourceList{nodeGPU: nodeQ("1")})},
		wantErr: []string{"WithNodeAllocatable", string(nodeGPU), "no capacity"},
		check: func(t *testing.T, node *v1.Node) {
			if _, ok := node.Status.Allocatable[nodeGPU]; ok {
				t.Errorf("allocatable has %s without capacity", nodeGPU)
			}
		},
	}, {
		name:    "negative capacity keeps the default",
		opts:    []fake.NodeOption{fake.WithNodeCapacity(v1.ResourceList{v1.ResourceMemory: nodeQ("-1Gi"), v1.ResourceCPU: nodeQ("6")})},
		wantErr: []string{"WithNodeCapacity", "negative", "memory"},
		check: func(t *testing.T, node *v1.Node) {
			if c := node.Status.Capacity[v1.ResourceMemory]; c.Cmp(nodeQ("8Gi")) != 0 {
				t.Errorf("capacity memory = %s, want default 8Gi", c.String())
			}
			if c := node.Status.Capacity[v1.ResourceCPU]; c.Cmp(nodeQ("6")) != 0 {
				t.Errorf("valid capacity cpu = %s, want 6", c.String())
			}
		},
	}, {
		name:    "negative allocatable is dropped",
		opts:    []fake.NodeOption{fake.WithNodeAllocatable(v1.ResourceList{v1.ResourcePods: nodeQ("-3")})},
		wantErr: []string{"WithNodeAllocatable", "negative", "pods"},
		check: func(t *testing.T, node *v1.Node) {
			if a := node.Status.Allocatable[v1.ResourcePods]; a.Cmp(nodeQ("110")) != 0 {
				t.Errorf("allocatable pods = %s, want 110", a.String())
			}
		},
	}, {
		name:    "empty resource name",
		opts:    []fake.NodeOption{fake.WithNodeCapacity(v1.ResourceList{"": nodeQ("1")})},
		wantErr: []string{"WithNodeCapacity", "empty resource name"},
		check: func(t *testing.T, node *v1.Node) {
			if _, ok := node.Status.Capacity[""]; ok {
				t.Error("capacity has an empty resource name")
			}
		},
	}, {
		name:    "address without type keeps the default addresses",
		opts:    []fake.NodeOption{fake.WithNodeAddresses(v1.NodeAddress{Address: "192.0.2.9"})},
		wantErr: []string{"WithNodeAddresses", "192.0.2.9"},
		check: func(t *testing.T, node *v1.Node) {
			if diff := cmp.Diff(nodeDefaultAddresses("n"), node.Status.Addresses); diff != "" {
				t.Errorf("addresses (-want +got):\n%s", diff)
			}
		},
	}, {
		name:      "nil clock keeps the real clock",
		opts:      []fake.NodeOption{fake.WithNodeClock(nil)},
		wantErr:   []string{"WithNodeClock", "nil clock"},
		realClock: true,
		check: func(t *testing.T, node *v1.Node) {
			hb := nodeCond(node.Status.Conditions, v1.NodeReady).LastHeartbeatTime
			if time.Since(hb.Time) > time.Minute || time.Since(hb.Time) < 0 {
				t.Errorf("heartbeat %v is not from the real clock", hb)
			}
		},
	}, {
		name:    "several errors are all reported",
		opts:    []fake.NodeOption{fake.WithNodeClock(nil), fake.WithNodeAllocatable(v1.ResourceList{nodeGPU: nodeQ("1")})},
		wantErr: []string{"WithNodeClock", string(nodeGPU)},
	}, {
		name: "nil option is ignored",
		opts: []fake.NodeOption{nil},
	}, {
		name: "valid options",
		opts: []fake.NodeOption{fake.WithNodeCapacity(v1.ResourceList{v1.ResourceCPU: nodeQ("1")}), fake.WithNodeAllocatable(v1.ResourceList{v1.ResourceCPU: nodeQ("1")})},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if !tc.realClock {
				opts = append([]fake.NodeOption{fake.WithNodeClock(clocktesting.NewFakeClock(nodeT0))}, opts...)
			}
			p := fake.NewNodeProvider(opts...)
			defer p.Close()
			err := p.Err()
			if len(tc.wantErr) == 0 && err != nil {
				t.Errorf("Err() = %v, want nil", err)
			}
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Err() = nil, want an error mentioning %q", tc.wantErr)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("Err() = %q, want it to mention %q", err, s)
					}
				}
			}
			node := p.ConfigureNode(context.Background(), "n")
			nodeCheckContract(t, node, "n")
			if tc.check != nil {
				tc.check(t, node)
			}
		})
	}
}

func TestNodeProviderPing(t *testing.T) {
	defer nodeVerifyNoLeaks(t)()
	type step struct {
		script func(p *fake.NodeProvider) // applied before the ping, if set
		ctx    string                     // "" live, "canceled", "expired"
		want   error
	}
	ping := func(want error) step { return step{want: want} }
	cases := []struct {
		name  string
		steps []step
	}{
		{"healthy by default, repeatedly", []step{ping(nil), ping(nil), ping(nil)}},
		{"fail the next two", []step{
			{script: func(p *fake.NodeProvider) { p.FailPings(2, errNodeBad) }, want: errNodeBad},
			ping(errNodeBad), ping(nil), ping(nil)}},
		{"nil error means ErrNodeUnhealthy", []step{
			{script: func(p *fake.NodeProvider) { p.FailPings(1, nil) }, want: fake.ErrNodeUnhealthy},
			ping(nil)}},
		{"until healed", []step{
			{script: func(p *fake.NodeProvider) { p.FailPingsUntilHealed(errNodeBad) }, want: errNodeBad},
			ping(errNodeBad), ping(errNodeBad), ping(errNodeBad),
			{script: func(p *fake.NodeProvider) { p.Heal() }, want: nil},
			ping(nil)}},
		{"until healed with nil error", []step{
			{script: func(p *fake.NodeProvider) { p.FailPingsUntilHealed(nil) }, want: fake.ErrNodeUnhealthy},
			ping(fake.ErrNodeUnhealthy)}},
		{"a new script replaces the old one", []step{
			{script: func(p *fake.NodeProvider) { p.FailPingsUntilHealed(errNodeBad) }, want: errNodeBad},
			{script: func(p *fake.NodeProvider) { p.FailPings(1, fake.ErrNodeUnhealthy) }, want: fake.ErrNodeUnhealthy},
			ping(nil)}},
		{"zero count heals", []step{
			{script: func(p *fake.NodeProvider) { p.FailPingsUntilHealed(errNodeBad); p.FailPings(0, errNodeBad) }, want: nil}}},
		{"done context first, without using up a failure", []step{
			{script: func(p *fake.NodeProvider) { p.FailPings(1, errNodeBad) }, ctx: "canceled", want: context.Canceled},
			{ctx: "expired", want: context.DeadlineExceeded},
			ping(errNodeBad), ping(nil),
			{ctx: "canceled", want: context.Canceled}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := fake.NewNodeProvider(fake.WithNodeClock(clocktesting.NewFakeClock(nodeT0)))
			defer p.Close()
			for i, s := range tc.steps {
				if s.script != nil {
					s.script(p)
				}
				ctx := context.Background()
				switch s.ctx {
				case "canceled":
					c, cancel := context.WithCancel(ctx)
					cancel()
					ctx = c
				case "expired":
					c, cancel := context.WithDeadline(ctx, time.Unix(0, 0))
					defer cancel()
					ctx = c
				}
				if got := p.Ping(ctx); got != s.want {
					t.Errorf("step %d: Ping() = %v, want %v", i, got, s.want)
				}
			}
			if got := p.Calls().Ping; got != len(tc.steps) {
				t.Errorf("Calls().Ping = %d, want %d", got, len(tc.steps))
			}
		})
	}
}

func TestNodeProviderRefreshNodeStatus(t *testing.T) {
	defer nodeVerifyNoLeaks(t)()
	type env struct {
		p   *fake.NodeProvider
		clk *clocktesting.FakeClock
	}
	configured := func(e env) *v1.NodeStatus {
		return &e.p.ConfigureNode(context.Background(), "node-a").Status
	}
	cases := []struct {
		name        string
		status      func(e env) *v1.NodeStatus // the status handed in
		act         func(t *testing.T, e env)  // between building it and refreshing
		ctx         func() context.Context
		wantChanged bool
		check       func(t *testing.T, e env, before, after *v1.NodeStatus)
	}{{
		name:   "configured status, clock not moved: nothing to do",
		status: configured,
	}, {
		name:   "clock moved less than the heartbeat interval: nothing to do",
		status: configured,
		act:    func(t *testing.T, e env) { e.clk.Step(fake.DefaultNodeHeartbeatInterval - time.Second) },
	}, {
		name:        "clock moved: every heartbeat renewed, nothing else",
		status:      configured,
		act:         func(t *testing.T, e env) { e.clk.Step(10 * time.Second) },
		wantChanged: true,
		check: func(t *testing.T, e env, before, after *v1.NodeStatus) {
			want := before.DeepCopy()
			for i := range want.Conditions {
				want.Conditions[i].LastHeartbeatTime = metav1.NewTime(nodeT0.Add(10 * time.Second))
			}
			if diff := cmp.Diff(want, after, nodeQuantityCmp); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		},
	}, {
		name:   "MarkNotReady: status, reason, message and transition time",
		status: configured,
		act: func(t *testing.T, e env) {
			e.clk.Step(5 * time.Second)
			e.p.MarkNotReady("NetworkDown", "cni plugin gone")
			e.clk.Step(2 * time.Second)
		},
		wantChanged: true,
		check: func(t *testing.T, e env, before, after *v1.NodeStatus) {
			// Only the changed condition gets a new heartbeat: the others
			// are younger than the heartbeat interval.
			want := before.DeepCopy()
			r := nodeCond(want.Conditions, v1.NodeReady)
			r.LastHeartbeatTime = metav1.NewTime(nodeT0.Add(7 * time.Second))
			r.Status, r.Reason, r.Message = v1.ConditionFalse, "NetworkDown", "cni plugin gone"
			r.LastTransitionTime = metav1.NewTime(nodeT0.Add(5 * time.Second))
			if diff := cmp.Diff(want, after, nodeQuantityCmp); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		},
	}, {
		name:        "new reason without a status flip keeps the transition time",
		status:      configured,
		act:         func(t *testing.T, e env) { e.clk.Step(time.Second); e.p.SetReady(true, "Custom", "still fine") },
		wantChanged: true,
		check: func(t *testing.T, e env, before, after *v1.NodeStatus) {
			r := nodeCond(after.Conditions, v1.NodeReady)
			if r.Status != v1.ConditionTrue || r.Reason != "Custom" || r.Message != "still fine" {
				t.Errorf("Ready = %+v, want True/Custom/still fine", r)
			}
			if !r.LastTransitionTime.Equal(&nodeCond(before.Conditions, v1.NodeReady).LastTransitionTime) {
				t.Errorf("transition time moved to %v", r.LastTransitionTime)
			}
		},
	}, {
		name:   "SetCondition on a pressure condition",
		status: configured,
		act: func(t *testing.T, e env) {
			if err := e.p.SetCondition(v1.NodeMemoryPressure, v1.ConditionTrue, "Low", "1Mi left"); err != nil {
				t.Fatal(err)
			}
		},
		wantChanged: true,
		check: func(t *testing.T, e env, before, after *v1.NodeStatus) {
			c := nodeCond(after.Conditions, v1.NodeMemoryPressure)
			if c.Status != v1.ConditionTrue || c.Reason != "Low" || c.Message != "1Mi left" {
				t.Errorf("MemoryPressure = %+v", c)
			}
		},
	}, {
		name:   "SetCapacity",
		status: configured,
		act: func(t *testing.T, e env) {
			if err := e.p.SetCapacity(v1.ResourceList{v1.ResourceCPU: nodeQ("16")}); err != nil {
				t.Fatal(err)
			}
		},
		wantChanged: true,
		check: func(t *testing.T, e env, before, after *v1.NodeStatus) {
			want := nodeWithResources(nodeDefaultCapacity(), v1.ResourceList{v1.ResourceCPU: nodeQ("16")})
			if diff := cmp.Diff(want, after.Capacity, nodeQuantityCmp); diff != "" {
				t.Errorf("capacity (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, after.Allocatable, nodeQuantityCmp); diff != "" {
				t.Errorf("allocatable (-want +got):\n%s", diff)
			}
		},
	}, {
		name:        "empty status is filled in",
		status:      func(e env) *v1.NodeStatus { e.p.ConfigureNode(context.Background(), "node-a"); return &v1.NodeStatus{} },
		wantChanged: true,
		check: func(t *testing.T, e env, before, after *v1.NodeStatus) {
			want := nodeExpected("node-a", nodeDefaultCapacity(), nodeDefaultCapacity(), nodeDefaultInfo(), nodeDefaultAddresses("node-a"), nodeT0, nodeT0).Status
			if diff := cmp.Diff(&want, after, nodeQuantityCmp); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		},
	}, {
		name: "drifted info and addresses are restored, foreign fields kept",
		status: func(e env) *v1.NodeStatus {
			st := configured(e)
			st.NodeInfo.KubeletVersion = "v0.0.1"
			st.Addresses = nil
			st.Conditions = append(st.Conditions, v1.NodeCondition{Type: "NetworkUnavailable", Status: v1.ConditionTrue})
			st.DaemonEndpoints.KubeletEndpoint.Port = 10250
			return st
		},
		wantChanged: true,
		check: func(t *testing.T, e env, before, after *v1.NodeStatus) {
			want := nodeExpected("node-a", nodeDefaultCapacity(), nodeDefaultCapacity(), nodeDefaultInfo(), nodeDefaultAddresses("node-a"), nodeT0, nodeT0).Status
			want.Conditions = append(want.Conditions, v1.NodeCondition{Type: "NetworkUnavailable", Status: v1.ConditionTrue})
			want.DaemonEndpoints.KubeletEndpoint.Port = 10250
			if diff := cmp.Diff(&want, after, nodeQuantityCmp); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		},
	}, {
		name: "a missing condition is added",
		status: func(e env) *v1.NodeStatus {
			st := configured(e)
			st.Conditions = st.Conditions[:3] // drop Ready
			return st
		},
		wantChanged: true,
		check: func(t *testing.T, e env, before, after *v1.NodeStatus) {
			if r := nodeCond(after.Conditions, v1.NodeReady); r == nil || r.Status != v1.ConditionTrue {
				t.Errorf("Ready = %+v, want True", r)
			}
		},
	}, {
		name: "equal quantities in another format count as unchanged",
		status: func(e env) *v1.NodeStatus {
			st := configured(e)
			st.Capacity[v1.ResourceCPU] = nodeQ("4000m")
			st.Allocatable[v1.ResourceMemory] = nodeQ("8192Mi")
			st.Allocatable[v1.ResourceCPU] = nodeQ("4000m")
			return st
		},
	}, {
		name:   "done context: stale status left alone",
		status: configured,
		act:    func(t *testing.T, e env) { e.clk.Step(time.Hour); e.p.MarkNotReady("", "") },
		ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := env{clk: clocktesting.NewFakeClock(nodeT0)}
			e.p = fake.NewNodeProvider(fake.WithNodeClock(e.clk))
			defer e.p.Close()
			st := tc.status(e)
			if tc.act != nil {
				tc.act(t, e)
			}
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			before := st.DeepCopy()
			changed := e.p.RefreshNodeStatus(ctx, st)
			if changed != tc.wantChanged {
				t.Errorf("RefreshNodeStatus() = %v, want %v", changed, tc.wantChanged)
			}
			if !changed && !reflect.DeepEqual(before, st) {
				t.Errorf("returned false but changed the status:\n%s", cmp.Diff(before, st, nodeQuantityCmp))
			}
			if changed && reflect.DeepEqual(before, st) {
				t.Error("returned true but changed nothing")
			}
			if tc.check != nil {
				tc.check(t, e, before, st)
			}
			// Nothing changed since: a second call is a no-op.
			again := st.DeepCopy()
			if e.p.RefreshNodeStatus(context.Background(), st) && tc.ctx == nil {
				t.Error("second RefreshNodeStatus with no change = true, want false")
			}
			if tc.ctx == nil && !reflect.DeepEqual(again, st) {
				t.Errorf("second call changed the status:\n%s", cmp.Diff(again, st, nodeQuantityCmp))
			}
		})
	}

	t.Run("nil status", func(t *testing.T) {
		p := fake.NewNodeProvider()
		defer p.Close()
		if p.RefreshNodeStatus(context.Background(), nil) {
			t.Error("RefreshNodeStatus(nil) = true")
		}
	})
	t.Run("refreshed status is not kept by the fake", func(t *testing.T) {
		p := fake.NewNodeProvider(fake.WithNodeClock(clocktesting.NewFakeClock(nodeT0)))
		defer p.Close()
		st := &v1.NodeStatus{}
		p.RefreshNodeStatus(context.Background(), st)
		st.Capacity[v1.ResourceCPU] = nodeQ("99")
		st.Addresses[0].Address = "0.0.0.0"
		st.NodeInfo.KubeletVersion = "x"
		node := p.ConfigureNode(context.Background(), "n")
		if c := node.Status.Capacity[v1.ResourceCPU]; c.Cmp(nodeQ("4")) != 0 || node.Status.Addresses[0].Address != "10.0.0.1" || node.Status.NodeInfo.KubeletVersion != "v1.37.2" {
			t.Errorf("fake state changed through a refreshed status: %+v", node.Status)
		}
	})
}

func TestNodeProviderResourceAndConditionScripting(t *testing.T) {
	defer nodeVerifyNoLeaks(t)()
	cases := []struct {
		name            string
		do              func(p *fake.NodeProvider) error
		wantErr         string // "" for success
		wantCapacity    v1.ResourceList
		wantAllocatable v1.ResourceList
		wantAddresses   []v1.NodeAddress
	}{{
		name: "SetCapacity changes capacity and allocatable of named resources",
		do: func(p *fake.NodeProvider) error {
			return p.SetCapacity(v1.ResourceList{v1.ResourceMemory: nodeQ("4Gi"), nodeGPU: nodeQ("2")})
		},
		wantCapacity:    nodeWithResources(nodeDefaultCapacity(), v1.ResourceList{v1.ResourceMemory: nodeQ("4Gi"), nodeGPU: nodeQ("2")}),
		wantAllocatable: nodeWithResources(nodeDefaultCapacity(), v1.ResourceList{v1.ResourceMemory: nodeQ("4Gi"), nodeGPU: nodeQ("2")}),
	}, {
		name: "SetCapacity with a negative quantity changes nothing",
		do: func(p *fake.NodeProvider) error {
			return p.SetCapacity(v1.ResourceList{v1.ResourceCPU: nodeQ("8"), v1.ResourceMemory: nodeQ("-1")})
		},
		wantErr: "negative",
	}, {
		name: "SetAllocatable below capacity",
		do: func(p *fake.NodeProvider) error {
			return p.SetAllocatable(v1.ResourceList{v1.ResourceCPU: nodeQ("3500m")})
		},
		wantCapacity:    nodeDefaultCapacity(),
		wantAllocatable: nodeWithResources(nodeDefaultCapacity(), v1.ResourceList{v1.ResourceCPU: nodeQ("3500m")}),
	}, {
		name:            "SetAllocatable equal to capacity",
		do:              func(p *fake.NodeProvider) error { return p.SetAllocatable(v1.ResourceList{v1.ResourceCPU: nodeQ("4")}) },
		wantCapacity:    nodeDefaultCapacity(),
		wantAllocatable: nodeDefaultCapacity(),
	}, {
		name: "SetAllocatable above capacity changes nothing",
		do: func(p *fake.NodeProvider) error {
			return p.SetAllocatable(v1.ResourceList{v1.ResourcePods: nodeQ("100"), v1.ResourceCPU: nodeQ("5")})
		},
		wantErr: "exceeds capacity",
	}, {
		name:    "SetAllocatable of an unknown resource changes nothing",
		do:      func(p *fake.NodeProvider) error { return p.SetAllocatable(v1.ResourceList{nodeGPU: nodeQ("1")}) },
		wantErr: "no capacity",
	}, {
		name: "SetAllocatable negative changes nothing",
		do: func(p *fake.NodeProvider) error {
			return p.SetAllocatable(v1.ResourceList{v1.ResourceCPU: nodeQ("-1")})
		},
		wantErr: "negative",
	}, {
		name: "SetAddresses",
		do: func(p *fake.NodeProvider) error {
			return p.SetAddresses(v1.NodeAddress{Type: v1.NodeExternalIP, Address: "203.0.113.1"})
		},
		wantAddresses: []v1.NodeAddress{{Type: v1.NodeExternalIP, Address: "203.0.113.1"}},
	}, {
		name:    "SetAddresses with an empty address changes nothing",
		do:      func(p *fake.NodeProvider) error { return p.SetAddresses(v1.NodeAddress{Type: v1.NodeExternalIP}) },
		wantErr: "SetAddresses",
	}, {
		name:    "SetCondition with a bad status",
		do:      func(p *fake.NodeProvider) error { return p.SetCondition(v1.NodeReady, "Maybe", "", "") },
		wantErr: "Maybe",
	}, {
		name:    "SetCondition without a type",
		do:      func(p *fake.NodeProvider) error { return p.SetCondition("", v1.ConditionTrue, "", "") },
		wantErr: "empty condition type",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := fake.NewNodeProvider(fake.WithNodeClock(clocktesting.NewFakeClock(nodeT0)))
			defer p.Close()
			before := p.ConfigureNode(context.Background(), "n")
			err := tc.do(p)
			after := p.ConfigureNode(context.Background(), "n")
			nodeCheckContract(t, after, "n")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one mentioning %q", err, tc.wantErr)
				}
				if diff := cmp.Diff(before, after, nodeQuantityCmp); diff != "" {
					t.Errorf("a rejected call changed the node (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("error = %v", err)
			}
			if tc.wantCapacity != nil {
				if diff := cmp.Diff(tc.wantCapacity, after.Status.Capacity, nodeQuantityCmp); diff != "" {
					t.Errorf("capacity (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.wantAllocatable, after.Status.Allocatable, nodeQuantityCmp); diff != "" {
					t.Errorf("allocatable (-want +got):\n%s", diff)
				}
			}
			if tc.wantAddresses != nil {
				if diff := cmp.Diff(tc.wantAddresses, after.Status.Addresses); diff != "" {
					t.Errorf("addresses (-want +got):\n%s", diff)
				}
			}
		})
	}

	t.Run("SetReady defaults and transition times", func(t *testing.T) {
		clk := clocktesting.NewFakeClock(nodeT0)
		p := fake.NewNodeProvider(fake.WithNodeClock(clk))
		defer p.Close()
		ready := func() v1.NodeCondition {
			return *nodeCond(p.ConfigureNode(context.Background(), "n").Status.Conditions, v1.NodeReady)
		}
		steps := []struct {
			do                       func()
			status                   v1.ConditionStatus
			reason, message          string
			transitionAfterT0Seconds int
		}{
			{func() { p.MarkNotReady("", "") }, v1.ConditionFalse, "KubeletNotReady", "", 1},
			{func() { p.MarkNotReady("Disk", "full") }, v1.ConditionFalse, "Disk", "full", 1},
			{func() { p.SetReady(true, "", "") }, v1.ConditionTrue, "KubeletReady", "kubelet is posting ready status", 4},
			{func() { p.SetReady(true, "", "custom") }, v1.ConditionTrue, "KubeletReady", "custom", 4},
			{func() { p.SetReady(false, "R", "m") }, v1.ConditionFalse, "R", "m", 7},
			{func() { p.MarkReady() }, v1.ConditionTrue, "KubeletReady", "kubelet is posting ready status", 8},
		}
		for i, s := range steps {
			clk.Step(time.Second)
			if i == 2 || i == 4 {
				clk.Step(time.Second)
			}
			s.do()
			c := ready()
			if c.Status != s.status || c.Reason != s.reason || c.Message != s.message {
				t.Errorf("step %d: Ready = %s/%q/%q, want %s/%q/%q", i, c.Status, c.Reason, c.Message, s.status, s.reason, s.message)
			}
			if want := nodeT0.Add(time.Duration(s.transitionAfterT0Seconds) * time.Second); !c.LastTransitionTime.Time.Equal(want) {
				t.Errorf("step %d: LastTransitionTime = %v, want %v", i, c.LastTransitionTime.Time, want)
			}
		}
	})
	t.Run("SetCondition adds a new condition type", func(t *testing.T) {
		p := fake.NewNodeProvider(fake.WithNodeClock(clocktesting.NewFakeClock(nodeT0)))
		defer p.Close()
		if err := p.SetCondition("NetworkUnavailable", v1.ConditionUnknown, "Probe", "no answer"); err != nil {
			t.Fatal(err)
		}
		c := nodeCond(p.ConfigureNode(context.Background(), "n").Status.Conditions, "NetworkUnavailable")
		if c == nil || c.Status != v1.ConditionUnknown || c.Reason != "Probe" || c.Message != "no answer" {
			t.Errorf("NetworkUnavailable = %+v", c)
		}
	})
}

func TestNodeProviderStatusUpdateCallback(t *testing.T) {
	defer nodeVerifyNoLeaks(t)()

	t.Run("neither registration nor scripting calls the callback synchronously", func(t *testing.T) {
		defer nodeVerifyNoLeaks(t)()
		p := fake.NewNodeProvider(fake.WithNodeClock(clocktesting.NewFakeClock(nodeT0)))
		defer p.Close()
		p.ConfigureNode(context.Background(), "node-a")
		var held sync.Mutex // a synchronous call of cb would deadlock on it
		var calls atomic.Int32
		got := make(chan *v1.Node, 1)
		cb := func(n *v1.Node) {
			held.Lock()
			defer held.Unlock()
			calls.Add(1)
			got <- n
		}
		held.Lock()
		nodeReturnsWithin(t, "SetStatusUpdateCallback", func() { p.SetStatusUpdateCallback(context.Background(), cb) })
		nodeReturnsWithin(t, "MarkNotReady", func() { p.MarkNotReady("Test", "") })
		if calls.Load() != 0 {
			t.Fatal("callback ran while the caller held the lock")
		}
		held.Unlock()
		if n := nodeReceive(t, got); nodeCond(n.Status.Conditions, v1.NodeReady).Status != v1.ConditionFalse {
			t.Errorf("delivered Ready = %v, want False", nodeCond(n.Status.Conditions, v1.NodeReady))
		}
	})

	t.Run("changes are delivered in order, as deep copies, without blocking the caller", func(t *testing.T) {
		defer nodeVerifyNoLeaks(t)()
		clk := clocktesting.NewFakeClock(nodeT0)
		p := fake.NewNodeProvider(fake.WithNodeClock(clk))
		defer p.Close()
		p.ConfigureNode(context.Background(), "node-a")
		gate := make(chan struct{})
		got := make(chan *v1.Node, 10)
		p.SetStatusUpdateCallback(context.Background(), func(n *v1.Node) {
			<-gate // a slow callback
			got <- n
		})
		nodeReturnsWithin(t, "scripting with a blocked callback", func() {
			p.MarkNotReady("A", "first")
			clk.Step(time.Second)
			if err := p.SetCapacity(v1.ResourceList{v1.ResourceCPU: nodeQ("2")}); err != nil {
				t.Error(err)
			}
			clk.Step(time.Second)
			if err := p.SetCondition(v1.NodeDiskPressure, v1.ConditionTrue, "Full", ""); err != nil {
				t.Error(err)
			}
			if err := p.SetAllocatable(v1.ResourceList{v1.ResourceCPU: nodeQ("1")}); err != nil {
				t.Error(err)
			}
			if err := p.SetAddresses(v1.NodeAddress{Type: v1.NodeInternalIP, Address: "192.0.2.3"}); err != nil {
				t.Error(err)
			}
			p.MarkReady()
			// Other methods work while the callback is stuck too.
			_ = p.Ping(context.Background())
			p.RefreshNodeStatus(context.Background(), &v1.NodeStatus{})
			p.ConfigureNode(context.Background(), "node-a")
		})
		close(gate)
		var nodes []*v1.Node
		for range 6 {
			nodes = append(nodes, nodeReceive(t, got))
		}
		type summary struct {
			Ready, Disk        v1.ConditionStatus
			Reason             string
			CPU, AllocCPU, Adr string
			Heartbeat          time.Time
		}
		sum := func(n *v1.Node) summary {
			c, a := n.Status.Capacity[v1.ResourceCPU], n.Status.Allocatable[v1.ResourceCPU]
			r := nodeCond(n.Status.Conditions, v1.NodeReady)
			return summary{r.Status, nodeCond(n.Status.Conditions, v1.NodeDiskPressure).Status, r.Reason,
				c.String(), a.String(), n.Status.Addresses[0].Address, nodeCond(n.Status.Conditions, v1.NodeReady).LastHeartbeatTime.UTC()}
		}
		t1, t2 := nodeT0.Add(time.Second), nodeT0.Add(2*time.Second)
		want := []summary{
			{"False", "False", "A", "4", "4", "10.0.0.1", nodeT0},
			{"False", "False", "A", "2", "2", "10.0.0.1", t1},
			{"False", "True", "A", "2", "2", "10.0.0.1", t2},
			{"False", "True", "A", "2", "1", "10.0.0.1", t2},
			{"False", "True", "A", "2", "1", "192.0.2.3", t2},
			{"True", "True", "KubeletReady", "2", "1", "192.0.2.3", t2},
		}
		var gotSum []summary
		for _, n := range nodes {
			nodeCheckContract(t, n, "node-a")
			gotSum = append(gotSum, sum(n))
		}
		if diff := cmp.Diff(want, gotSum); diff != "" {
			t.Errorf("deliveries (-want +got):\n%s", diff)
		}
		// Each delivery is the callee's own copy.
		for i := range nodes {
			for j := i + 1; j < len(nodes); j++ {
				if nodes[i] == nodes[j] || &nodes[i].Status.Conditions[0] == &nodes[j].Status.Conditions[0] {
					t.Fatalf("deliveries %d and %d share memory", i, j)
				}
			}
		}
		nodes[5].Status.Conditions[3].Status = v1.ConditionUnknown
		nodes[5].Status.Capacity[v1.ResourceCPU] = nodeQ("1000")
		nodes[5].Labels["x"] = "y"
		if sum(nodes[4]).Ready != "False" || sum(nodes[4]).CPU != "2" {
			t.Error("mutating one delivery changed another")
		}
		fresh := p.ConfigureNode(context.Background(), "node-a")
		if r := nodeCond(fresh.Status.Conditions, v1.NodeReady); r.Status != v1.ConditionTrue || fresh.Labels["x"] != "" {
			t.Error("mutating a delivery changed the fake")
		}
		if c := fresh.Status.Capacity[v1.ResourceCPU]; c.Cmp(nodeQ("2")) != 0 {
			t.Errorf("fake capacity cpu = %s after mutating a delivery, want 2", c.String())
		}
	})

	// An ordered list of changes and registrations; each case says which
	// callback receives which change (by Ready reason) in the end.
	type delivery struct {
		CB     string
		Reason string
	}
	cases := []struct {
		name string
		run  func(p *fake.NodeProvider, register func(ctx context.Context, name string))
		want []delivery
	}{{
		name: "no-op changes deliver nothing",
		run: func(p *fake.NodeProvider, register func(context.Context, string)) {
			p.ConfigureNode(context.Background(), "node-a")
			register(context.Background(), "cb1")
			p.MarkReady()
			_ = p.SetCapacity(v1.ResourceList{v1.ResourceCPU: nodeQ("4000m")})
			_ = p.SetAllocatable(v1.ResourceList{v1.ResourceMemory: nodeQ("8Gi")})
			_ = p.SetAddresses(nodeDefaultAddresses("node-a")...)
			_ = p.SetCondition(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available")
			p.MarkNotReady("Only", "")
			p.MarkNotReady("Only", "")
		},
		want: []delivery{{"cb1", "Only"}},
	}, {
		name: "nothing is delivered before ConfigureNode names the node",
		run: func(p *fake.NodeProvider, register func(context.Context, string)) {
			register(context.Background(), "cb1")
			p.MarkNotReady("Early", "")
			p.ConfigureNode(context.Background(), "node-a")
			p.MarkNotReady("Late", "")
		},
		want: []delivery{{"cb1", "Late"}},
	}, {
		name: "nothing is delivered without a callback",
		run: func(p *fake.NodeProvider, register func(context.Context, string)) {
			p.ConfigureNode(context.Background(), "node-a")
			p.MarkNotReady("Unseen", "")
			register(context.Background(), "cb1")
			p.MarkNotReady("Seen", "")
		},
		want: []delivery{{"cb1", "Seen"}},
	}, {
		name: "a later registration replaces the callback",
		run: func(p *fake.NodeProvider, register func(context.Context, string)) {
			p.ConfigureNode(context.Background(), "node-a")
			register(context.Background(), "cb1")
			p.MarkNotReady("One", "")
			register(context.Background(), "cb2")
			p.MarkNotReady("Two", "")
		},
		want: []delivery{{"cb1", "One"}, {"cb2", "Two"}},
	}, {
		name: "a nil callback unregisters",
		run: func(p *fake.NodeProvider, register func(context.Context, string)) {
			p.ConfigureNode(context.Background(), "node-a")
			register(context.Background(), "cb1")
			p.MarkNotReady("One", "")
			p.SetStatusUpdateCallback(context.Background(), nil)
			p.MarkNotReady("Two", "")
			register(context.Background(), "cb2")
			p.MarkNotReady("Three", "")
		},
		want: []delivery{{"cb1", "One"}, {"cb2", "Three"}},
	}, {
		name: "a registration with a done context is abandoned",
		run: func(p *fake.NodeProvider, register func(context.Context, string)) {
			p.ConfigureNode(context.Background(), "node-a")
			register(context.Background(), "cb1")
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			register(ctx, "cb2")
			p.MarkNotReady("One", "")
		},
		want: []delivery{{"cb1", "One"}},
	}, {
		name: "the registration outlives its context",
		run: func(p *fake.NodeProvider, register func(context.Context, string)) {
			p.ConfigureNode(context.Background(), "node-a")
			ctx, cancel := context.WithCancel(context.Background())
			register(ctx, "cb1")
			cancel()
			p.MarkNotReady("One", "")
		},
		want: []delivery{{"cb1", "One"}},
	}, {
		name: "deliveries carry the latest configured name",
		run: func(p *fake.NodeProvider, register func(context.Context, string)) {
			p.ConfigureNode(context.Background(), "old")
			register(context.Background(), "cb1")
			p.ConfigureNode(context.Background(), "node-a")
			p.MarkNotReady("One", "")
		},
		want: []delivery{{"cb1", "One"}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer nodeVerifyNoLeaks(t)()
			p := fake.NewNodeProvider(fake.WithNodeClock(clocktesting.NewFakeClock(nodeT0)))
			var mu sync.Mutex
			var got []delivery
			register := func(ctx context.Context, name string) {
				p.SetStatusUpdateCallback(ctx, func(n *v1.Node) {
					if n.Name != "node-a" {
						t.Errorf("%s got node %q, want node-a", name, n.Name)
					}
					mu.Lock()
					defer mu.Unlock()
					got = append(got, delivery{name, nodeCond(n.Status.Conditions, v1.NodeReady).Reason})
				})
			}
			tc.run(p, register)
			// Wait for the last expected delivery, then stop the provider:
			// nothing else may have arrived.
			deadline := time.Now().Add(5 * time.Second)
			for {
				mu.Lock()
				n := len(got)
				mu.Unlock()
				if n >= len(tc.want) || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Millisecond)
			}
			p.Close()
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("deliveries (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("Close waits for the callback in progress and drops the rest", func(t *testing.T) {
		defer nodeVerifyNoLeaks(t)()
		p := fake.NewNodeProvider(fake.WithNodeClock(clocktesting.NewFakeClock(nodeT0)))
		p.ConfigureNode(context.Background(), "node-a")
		entered := make(chan struct{}, 10)
		gate := make(chan struct{})
		var calls atomic.Int32
		p.SetStatusUpdateCallback(context.Background(), func(*v1.Node) {
			calls.Add(1)
			entered <- struct{}{}
			<-gate
		})
		p.MarkNotReady("One", "")
		p.MarkNotReady("Two", "")
		p.MarkNotReady("Three", "")
		<-entered
		closed := make(chan struct{})
		go func() { defer close(closed); p.Close() }()
		select {
		case <-closed:
			t.Fatal("Close returned while the callback was still running")
		case <-time.After(50 * time.Millisecond):
		}
		close(gate)
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not return after the callback did")
		}
		p.MarkNotReady("Four", "") // after Close: never delivered
		p.Close()                  // idempotent
		if n := calls.Load(); n != 1 {
			t.Errorf("callback called %d times, want 1", n)
		}
	})

	t.Run("without Close no goroutine outlives the deliveries", func(t *testing.T) {
		defer nodeVerifyNoLeaks(t)()
		p := fake.NewNodeProvider(fake.WithNodeClock(clocktesting.NewFakeClock(nodeT0)))
		p.ConfigureNode(context.Background(), "node-a")
		got := make(chan *v1.Node, 1)
		p.SetStatusUpdateCallback(context.Background(), func(n *v1.Node) { got <- n })
		p.MarkNotReady("One", "")
		nodeReceive(t, got)
	})
}

func TestNodeProviderInterceptors(t *testing.T) {
	defer nodeVerifyNoLeaks(t)()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		// install picks the way to install the interceptors.
		viaOption bool
		hooks     func(seen *[]string) interceptor.NodeFuncs
		run       func(t *testing.T, p *fake.NodeProvider)
		wantSeen  []string
		wantCalls fake.NodeCalls
	}{{
		name: "Ping hook replaces the fake's answer and leaves the script alone",
		hooks: func(seen *[]string) interceptor.NodeFuncs {
			return interceptor.NodeFuncs{Ping: func(ctx context.Context, next kri.NodeProvider) error {
				*seen = append(*seen, "ping")
				return errNodeBad
			}}
		},
		run: func(t *testing.T, p *fake.NodeProvider) {
			p.FailPings(1, fake.ErrNodeUnhealthy)
			if err := p.Ping(context.Background()); err != errNodeBad {
				t.Errorf("Ping() = %v, want %v", err, errNodeBad)
			}
			p.SetInterceptors(interceptor.NodeFuncs{})
			if err := p.Ping(context.Background()); err != fake.ErrNodeUnhealthy {
				t.Errorf("Ping() after removing the hook = %v, want the scripted failure", err)
			}
		},
		wantSeen:  []string{"ping"},
		wantCalls: fake.NodeCalls{Ping: 2},
	}, {
		name:      "Ping hook wraps next, sees done contexts, and next does not re-enter the hook",
		viaOption: true,
		hooks: func(seen *[]string) interceptor.NodeFuncs {
			return interceptor.NodeFuncs{Ping: func(ctx context.Context, next kri.NodeProvider) error {
				*seen = append(*seen, "ping")
				if err := next.Ping(ctx); err != nil {
					return fmt.Errorf("wrapped: %w", err)
				}
				return nil
			}}
		},
		run: func(t *testing.T, p *fake.NodeProvider) {
			p.FailPings(1, errNodeBad)
			if err := p.Ping(context.Background()); !errors.Is(err, errNodeBad) || !strings.HasPrefix(err.Error(), "wrapped: ") {
				t.Errorf("Ping() = %v, want wrapped %v", err, errNodeBad)
			}
			if err := p.Ping(canceled); !errors.Is(err, context.Canceled) {
				t.Errorf("Ping(canceled) = %v, want wrapped context.Canceled", err)
			}
			if err := p.Ping(context.Background()); err != nil {
				t.Errorf("Ping() = %v, want nil", err)
			}
		},
		wantSeen:  []string{"ping", "ping", "ping"},
		wantCalls: fake.NodeCalls{Ping: 3},
	}, {
		name: "ConfigureNode hook decorates next's node",
		hooks: func(seen *[]string) interceptor.NodeFuncs {
			return interceptor.NodeFuncs{ConfigureNode: func(ctx context.Context, next kri.NodeProvider, name string) *v1.Node {
				*seen = append(*seen, "configure "+name)
				n := next.ConfigureNode(ctx, name)
				n.Labels["role"] = "edge"
				return n
			}}
		},
		run: func(t *testing.T, p *fake.NodeProvider) {
			n := p.ConfigureNode(context.Background(), "edge-1")
			nodeCheckContract(t, n, "edge-1")
			if n.Labels["role"] != "edge" {
				t.Errorf("labels = %v, want role=edge", n.Labels)
			}
		},
		wantSeen:  []string{"configure edge-1"},
		wantCalls: fake.NodeCalls{ConfigureNode: 1},
	}, {
		name: "RefreshNodeStatus hook can freeze the status",
		hooks: func(seen *[]string) interceptor.NodeFuncs {
			return interceptor.NodeFuncs{RefreshNodeStatus: func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
				*seen = append(*seen, "refresh")
				return false
			}}
		},
		run: func(t *testing.T, p *fake.NodeProvider) {
			st := &v1.NodeStatus{}
			if p.RefreshNodeStatus(context.Background(), st) || !reflect.DeepEqual(st, &v1.NodeStatus{}) {
				t.Errorf("hooked refresh changed the status: %+v", st)
			}
			p.SetInterceptors(interceptor.NodeFuncs{})
			if !p.RefreshNodeStatus(context.Background(), st) {
				t.Error("unhooked refresh of an empty status = false")
			}
		},
		wantSeen:  []string{"refresh"},
		wantCalls: fake.NodeCalls{RefreshNodeStatus: 2},
	}, {
		name: "RefreshNodeStatus hook wraps next",
		hooks: func(seen *[]string) interceptor.NodeFuncs {
			return interceptor.NodeFuncs{RefreshNodeStatus: func(ctx context.Context, next kri.NodeProvider, st *v1.NodeStatus) bool {
				*seen = append(*seen, "refresh")
				changed := next.RefreshNodeStatus(ctx, st)
				st.Phase = v1.NodeRunning
				return changed
			}}
		},
		run: func(t *testing.T, p *fake.NodeProvider) {
			st := &v1.NodeStatus{}
			if !p.RefreshNodeStatus(context.Background(), st) || st.Phase != v1.NodeRunning || nodeCond(st.Conditions, v1.NodeReady) == nil {
				t.Errorf("hooked refresh = %+v, want the fake's status plus phase Running", st)
			}
		},
		wantSeen:  []string{"refresh"},
		wantCalls: fake.NodeCalls{RefreshNodeStatus: 1},
	}, {
		name: "SetStatusUpdateCallback hook wraps the callback",
		hooks: func(seen *[]string) interceptor.NodeFuncs {
			return interceptor.NodeFuncs{SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
				*seen = append(*seen, "register")
				next.SetStatusUpdateCallback(ctx, func(n *v1.Node) {
					n.Annotations = map[string]string{"via": "hook"}
					cb(n)
				})
			}}
		},
		run: func(t *testing.T, p *fake.NodeProvider) {
			p.ConfigureNode(context.Background(), "n")
			got := make(chan *v1.Node, 1)
			p.SetStatusUpdateCallback(context.Background(), func(n *v1.Node) { got <- n })
			p.MarkNotReady("X", "")
			if n := nodeReceive(t, got); n.Annotations["via"] != "hook" {
				t.Errorf("delivered annotations = %v, want via=hook", n.Annotations)
			}
		},
		wantSeen:  []string{"register"},
		wantCalls: fake.NodeCalls{ConfigureNode: 1, SetStatusUpdateCallback: 1},
	}, {
		name: "SetStatusUpdateCallback hook can swallow the registration",
		hooks: func(seen *[]string) interceptor.NodeFuncs {
			return interceptor.NodeFuncs{SetStatusUpdateCallback: func(ctx context.Context, next kri.NodeProvider, cb func(*v1.Node)) {
				*seen = append(*seen, "register")
			}}
		},
		run: func(t *testing.T, p *fake.NodeProvider) {
			p.ConfigureNode(context.Background(), "n")
			var calls atomic.Int32
			p.SetStatusUpdateCallback(context.Background(), func(*v1.Node) { calls.Add(1) })
			p.MarkNotReady("X", "")
			p.Close() // waits for any delivery
			if calls.Load() != 0 {
				t.Error("a swallowed registration received a delivery")
			}
		},
		wantSeen:  []string{"register"},
		wantCalls: fake.NodeCalls{ConfigureNode: 1, SetStatusUpdateCallback: 1},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer nodeVerifyNoLeaks(t)()
			var seen []string // hooks run on the test goroutine here
			hooks := tc.hooks(&seen)
			var p *fake.NodeProvider
			if tc.viaOption {
				p = fake.NewNodeProvider(fake.WithNodeClock(clocktesting.NewFakeClock(nodeT0)), fake.WithNodeInterceptors(hooks))
			} else {
				p = fake.NewNodeProvider(fake.WithNodeClock(clocktesting.NewFakeClock(nodeT0)))
				p.SetInterceptors(hooks)
			}
			defer p.Close()
			tc.run(t, p)
			if diff := cmp.Diff(tc.wantSeen, seen); diff != "" {
				t.Errorf("hook calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCalls, p.Calls()); diff != "" {
				t.Errorf("Calls() (-want +got):\n%s", diff)
			}
			p.ResetCalls()
			if p.Calls() != (fake.NodeCalls{}) {
				t.Errorf("Calls() after ResetCalls = %+v", p.Calls())
			}
		})
	}
}

func TestNodeProviderIsDeterministic(t *testing.T) {
	defer nodeVerifyNoLeaks(t)()
	run := func() *v1.Node {
		clk := clocktesting.NewFakeClock(nodeT0)
		p := fake.NewNodeProvider(fake.WithNodeClock(clk))
		defer p.Close()
		clk.Step(3 * time.Second)
		p.MarkNotReady("R", "m")
		clk.Step(time.Second)
		st := &p.ConfigureNode(context.Background(), "n").Status
		clk.Step(time.Second)
		p.RefreshNodeStatus(context.Background(), st)
		return &v1.Node{Status: *st}
	}
	a, b := run(), run()
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two identical runs differ:\n%s", cmp.Diff(a, b, nodeQuantityCmp))
	}
}

func TestNodeProviderConcurrentUse(t *testing.T) {
	defer nodeVerifyNoLeaks(t)()
	clk := clocktesting.NewFakeClock(nodeT0)
	p := fake.NewNodeProvider(fake.WithNodeClock(clk))
	defer p.Close()
	p.ConfigureNode(context.Background(), "node-a")
	var delivered atomic.Int32
	first := make(chan struct{})
	p.SetStatusUpdateCallback(context.Background(), func(n *v1.Node) {
		if delivered.Add(1) == 1 {
			close(first)
		}
		if n.Name != "node-a" {
			t.Errorf("delivered node %q", n.Name)
		}
		n.Status.Capacity[v1.ResourceCPU] = nodeQ("0") // the callee owns it
	})
	const workers, rounds = 8, 100
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			st := &v1.NodeStatus{}
			for i := range rounds {
				switch (w + i) % 8 {
				case 0:
					p.MarkNotReady("Busy", fmt.Sprint(i))
				case 1:
					p.MarkReady()
				case 2:
					_ = p.SetCapacity(v1.ResourceList{v1.ResourceCPU: *resource.NewQuantity(int64(1+i%4), resource.DecimalSI)})
				case 3:
					p.FailPings(1, errNodeBad)
					_ = p.Ping(context.Background())
				case 4:
					p.RefreshNodeStatus(context.Background(), st)
					clk.Step(time.Millisecond)
				case 5:
					nodeCheckContract(t, p.ConfigureNode(context.Background(), "node-a"), "node-a")
				case 6:
					p.SetInterceptors(interceptor.NodeFuncs{Ping: func(ctx context.Context, next kri.NodeProvider) error { return next.Ping(ctx) }})
					_ = p.Calls()
				case 7:
					_ = p.SetAllocatable(v1.ResourceList{v1.ResourceMemory: nodeQ("1Gi")})
				}
			}
		})
	}
	wg.Wait()
	// Deliveries come from the provider's goroutine, after the change that
	// queued them: wait for the first (Close would drop it). The bound only
	// ends a run in which none ever comes.
	select {
	case <-first:
	case <-time.After(time.Minute):
		t.Error("no status update was delivered within a minute of the last change")
	}
}

func TestNodeProviderNilContext(t *testing.T) {
	defer nodeVerifyNoLeaks(t)()
	var ctx context.Context // a caller bug; the fake treats it as a live context
	p := fake.NewNodeProvider(fake.WithNodeClock(clocktesting.NewFakeClock(nodeT0)))
	defer p.Close()
	if err := p.Ping(ctx); err != nil {
		t.Errorf("Ping(nil) = %v", err)
	}
	p.ConfigureNode(ctx, "n")
	if !p.RefreshNodeStatus(ctx, &v1.NodeStatus{}) {
		t.Error("RefreshNodeStatus(nil ctx, empty) = false")
	}
	got := make(chan *v1.Node, 1)
	p.SetStatusUpdateCallback(ctx, func(n *v1.Node) { got <- n })
	p.MarkNotReady("R", "")
	nodeReceive(t, got)
}

func TestNodeProviderHeartbeatInterval(t *testing.T) {
	defer nodeVerifyNoLeaks(t)()
	clk := clocktesting.NewFakeClock(nodeT0)
	p := fake.NewNodeProvider(fake.WithNodeClock(clk), fake.WithNodeHeartbeatInterval(0))
	defer p.Close()
	st := p.ConfigureNode(context.Background(), "node-a").Status
	clk.Step(time.Millisecond)
	if !p.RefreshNodeStatus(context.Background(), &st) {
		t.Error("interval 0: a moved clock must renew the heartbeats")
	}
	if p.RefreshNodeStatus(context.Background(), &st) {
		t.Error("interval 0: a second call with the clock standing still changed the status")
	}
	bad := fake.NewNodeProvider(fake.WithNodeHeartbeatInterval(-time.Second))
	defer bad.Close()
	if err := bad.Err(); err == nil || !strings.Contains(err.Error(), "WithNodeHeartbeatInterval") {
		t.Errorf("Err() = %v, want it to name WithNodeHeartbeatInterval", err)
	}
}

// nodeInfoWithUserNamespace returns info with RunningInUserNamespace set to
// v, on the releases that have the field (Kubernetes 1.37 and later).
func nodeInfoWithUserNamespace(info v1.NodeSystemInfo, v *bool) v1.NodeSystemInfo {
	k8scompat.SetRunningInUserNamespace(&info, v)
	return info
}

// inUserNamespace reports info's RunningInUserNamespace, false where the
// release has no such field.
func inUserNamespace(info *v1.NodeSystemInfo) bool {
	v, ok := k8scompat.RunningInUserNamespace(info)
	return ok && v != nil && *v
}
