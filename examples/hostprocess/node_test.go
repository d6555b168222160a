package hostprocess

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func newNodeProvider(t *testing.T) *NodeProvider {
	t.Helper()
	n, err := NewNodeProvider(NodeOptions{})
	if err != nil {
		t.Fatalf("NewNodeProvider: %v", err)
	}
	return n
}

func TestConfigureNode(t *testing.T) {
	n := newNodeProvider(t)
	node := n.ConfigureNode(context.Background(), "node-1")
	if node.Name != "node-1" || node.Labels[v1.LabelHostname] != "node-1" || node.Labels[v1.LabelOSStable] != runtime.GOOS {
		t.Errorf("node meta %+v", node.ObjectMeta)
	}
	mem, err := memTotal()
	if err != nil {
		t.Fatal(err)
	}
	want := map[v1.ResourceName]int64{
		v1.ResourceCPU:    int64(runtime.NumCPU()),
		v1.ResourceMemory: mem,
		v1.ResourcePods:   DefaultMaxPods,
	}
	for name, value := range want {
		c, ok := node.Status.Capacity[name]
		if !ok || c.Value() != value {
			t.Errorf("capacity %s = %v, want %d", name, c.String(), value)
		}
		a, ok := node.Status.Allocatable[name]
		if !ok || a.Cmp(c) > 0 {
			t.Errorf("allocatable %s = %v, above capacity %v", name, a.String(), c.String())
		}
	}
	hostname, _ := os.Hostname()
	found := false
	for _, a := range node.Status.Addresses {
		found = found || (a.Type == v1.NodeHostName && a.Address == hostname)
	}
	if !found {
		t.Errorf("addresses %+v lack hostname %q", node.Status.Addresses, hostname)
	}
	var ready *v1.NodeCondition
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == v1.NodeReady {
			ready = &node.Status.Conditions[i]
		}
	}
	if ready == nil || ready.Status != v1.ConditionTrue || ready.LastHeartbeatTime.IsZero() {
		t.Errorf("Ready condition %+v", ready)
	}
	if info := node.Status.NodeInfo; info.OperatingSystem != runtime.GOOS || info.Architecture != runtime.GOARCH || info.KernelVersion == "" {
		t.Errorf("node info %+v", info)
	}

	// The caller owns the node: another ConfigureNode is a new object.
	node.Status.Capacity[v1.ResourceCPU] = resource.MustParse("1000")
	if again := n.ConfigureNode(context.Background(), "node-1"); again.Status.Capacity.Cpu().Value() != int64(runtime.NumCPU()) {
		t.Error("ConfigureNode returned a shared object")
	}
}

func TestNodeMaxPods(t *testing.T) {
	n, err := NewNodeProvider(NodeOptions{MaxPods: 7})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.ConfigureNode(context.Background(), "n").Status.Capacity.Pods().Value(); got != 7 {
		t.Errorf("pods capacity %d, want 7", got)
	}
	if _, err := NewNodeProvider(NodeOptions{MaxPods: -1}); err == nil {
		t.Error("NewNodeProvider(MaxPods -1) succeeded")
	}
}

func TestRefreshNodeStatus(t *testing.T) {
	n := newNodeProvider(t)
	ctx := context.Background()
	node := n.ConfigureNode(ctx, "node-1")

	// Nothing changed since ConfigureNode: false, untouched.
	before := node.Status.DeepCopy()
	if n.RefreshNodeStatus(ctx, &node.Status) {
		t.Errorf("RefreshNodeStatus reported a change on a fresh status: %s", cmp.Diff(before, &node.Status))
	}
	if diff := cmp.Diff(before, &node.Status); diff != "" {
		t.Errorf("false but changed: %s", diff)
	}

	// An empty status is filled in, and a second call changes nothing.
	var status v1.NodeStatus
	if !n.RefreshNodeStatus(ctx, &status) {
		t.Fatal("RefreshNodeStatus(empty) = false")
	}
	if status.Capacity.Cpu().Value() != int64(runtime.NumCPU()) || len(status.Conditions) != 1 {
		t.Errorf("filled status %+v", status)
	}
	snapshot := status.DeepCopy()
	if n.RefreshNodeStatus(ctx, &status) {
		t.Errorf("second RefreshNodeStatus = true: %s", cmp.Diff(snapshot, &status))
	}

	// A Ready condition turned false (by someone) is put right, with a new
	// transition time; other conditions are kept.
	status.Conditions[0].Status = v1.ConditionFalse
	status.Conditions = append(status.Conditions, v1.NodeCondition{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse})
	old := metav1.NewTime(time.Now().Add(-time.Hour))
	status.Conditions[0].LastTransitionTime = old
	if !n.RefreshNodeStatus(ctx, &status) {
		t.Fatal("RefreshNodeStatus did not fix the Ready condition")
	}
	if c := status.Conditions[0]; c.Status != v1.ConditionTrue || !c.LastTransitionTime.After(old.Time) || len(status.Conditions) != 2 {
		t.Errorf("conditions %+v", status.Conditions)
	}

	// A stale heartbeat is renewed.
	status.Conditions[0].LastHeartbeatTime = old
	if !n.RefreshNodeStatus(ctx, &status) || !status.Conditions[0].LastHeartbeatTime.After(old.Time) {
		t.Error("stale heartbeat not renewed")
	}

	// Capacity someone changed is put back; resources it does not own stay.
	status.Capacity[v1.ResourceCPU] = resource.MustParse("999")
	status.Capacity["example.com/gpu"] = resource.MustParse("1")
	if !n.RefreshNodeStatus(ctx, &status) || status.Capacity.Cpu().Value() != int64(runtime.NumCPU()) {
		t.Error("capacity not refreshed")
	}
	if _, ok := status.Capacity["example.com/gpu"]; !ok {
		t.Error("a resource the provider does not own was dropped")
	}

	// A done ctx or a nil status: false.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	empty := v1.NodeStatus{}
	if n.RefreshNodeStatus(cancelled, &empty) || !cmp.Equal(empty, v1.NodeStatus{}) {
		t.Error("RefreshNodeStatus with a done ctx changed the status")
	}
	if n.RefreshNodeStatus(ctx, nil) {
		t.Error("RefreshNodeStatus(nil) = true")
	}
}

func TestPing(t *testing.T) {
	n := newNodeProvider(t)
	for range 3 {
		if err := n.Ping(context.Background()); err != nil {
			t.Fatalf("Ping = %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := n.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Ping(cancelled) = %v, want context.Canceled", err)
	}
}

func TestSetStatusUpdateCallback(t *testing.T) {
	n := newNodeProvider(t)
	n.ConfigureNode(context.Background(), "node-1")
	var calls atomic.Int32
	done := make(chan struct{})
	go func() {
		n.SetStatusUpdateCallback(context.Background(), func(*v1.Node) { calls.Add(1); select {} })
		n.SetStatusUpdateCallback(context.Background(), func(*v1.Node) { calls.Add(1) })
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("SetStatusUpdateCallback blocked")
	}
	var status v1.NodeStatus
	n.RefreshNodeStatus(context.Background(), &status)
	time.Sleep(20 * time.Millisecond)
	if calls.Load() != 0 {
		t.Errorf("callback called %d times", calls.Load())
	}
}

func TestMemTotal(t *testing.T) {
	dir := t.TempDir()
	write := func(content string) {
		memInfoPath = filepath.Join(dir, "meminfo")
		if err := os.WriteFile(memInfoPath, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	orig := memInfoPath
	t.Cleanup(func() { memInfoPath = orig })

	write("MemFree:  10 kB\nMemTotal:       16318412 kB\n")
	if got, err := memTotal(); err != nil || got != 16318412*1024 {
		t.Errorf("memTotal = %d, %v", got, err)
	}
	for _, bad := range []string{"MemFree: 10 kB\n", "MemTotal: lots kB\n", "MemTotal: 10 MB\n", ""} {
		write(bad)
		if _, err := memTotal(); err == nil {
			t.Errorf("memTotal(%q) succeeded", bad)
		}
		if _, err := NewNodeProvider(NodeOptions{}); err == nil {
			t.Errorf("NewNodeProvider with meminfo %q succeeded", bad)
		}
	}
	memInfoPath = filepath.Join(dir, "missing")
	if _, err := NewNodeProvider(NodeOptions{}); err == nil {
		t.Error("NewNodeProvider without meminfo succeeded")
	}
}
