package hostprocess

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kri-kit/testkit/kri"
)

const (
	// DefaultMaxPods is the pods capacity a NodeProvider reports when
	// NodeOptions.MaxPods is 0, the kubelet's default.
	DefaultMaxPods = 110

	// heartbeatInterval is how old the Ready condition's heartbeat may grow
	// before RefreshNodeStatus renews it (and reports a change).
	heartbeatInterval = time.Minute

	readyReason  = "HostProcessReady"
	readyMessage = "hostprocess provider is ready"
)

// memInfoPath is where the total memory is read from; a variable for tests.
var memInfoPath = "/proc/meminfo"

// NodeOptions configure a NodeProvider.
type NodeOptions struct {
	// MaxPods is the pods capacity the node reports; 0 means
	// DefaultMaxPods.
	MaxPods int
}

// NodeProvider describes this machine as a node: the CPU count
// (runtime.NumCPU), the memory (MemTotal of /proc/meminfo), the hostname and
// the first non-loopback IP address. Allocatable equals capacity: a host
// process provider reserves nothing. It implements kri.NodeProvider and is
// safe for concurrent use.
type NodeProvider struct {
	maxPods  int
	nodeInfo v1.NodeSystemInfo // what does not change while the process runs

	mu   sync.Mutex
	name string // as configured by ConfigureNode
	cb   func(*v1.Node)
}

var _ kri.NodeProvider = (*NodeProvider)(nil)

// NewNodeProvider returns a NodeProvider for this machine. It fails when
// the machine's memory cannot be read or opts are invalid.
func NewNodeProvider(opts NodeOptions) (*NodeProvider, error) {
	if opts.MaxPods < 0 {
		return nil, fmt.Errorf("hostprocess: NodeOptions.MaxPods %d is negative", opts.MaxPods)
	}
	if opts.MaxPods == 0 {
		opts.MaxPods = DefaultMaxPods
	}
	if _, err := memTotal(); err != nil {
		return nil, fmt.Errorf("hostprocess: %w", err)
	}
	return &NodeProvider{
		maxPods: opts.MaxPods,
		nodeInfo: v1.NodeSystemInfo{
			MachineID:               readTrimmed("/etc/machine-id"),
			BootID:                  readTrimmed("/proc/sys/kernel/random/boot_id"),
			KernelVersion:           readTrimmed("/proc/sys/kernel/osrelease"),
			OSImage:                 osImage(),
			ContainerRuntimeVersion: RuntimeName + "://" + runtime.Version(),
			OperatingSystem:         runtime.GOOS,
			Architecture:            runtime.GOARCH,
		},
	}, nil
}

// Ping reports the machine healthy: it returns ctx's error once ctx is
// done, nil otherwise. There is no remote backend to ask.
func (n *NodeProvider) Ping(ctx context.Context) error {
	return ctx.Err()
}

// ConfigureNode returns the node named name, with the labels
// kubernetes.io/hostname, kubernetes.io/os and kubernetes.io/arch, and the
// status RefreshNodeStatus fills (capacity, allocatable, addresses, node
// info, a Ready condition).
func (n *NodeProvider) ConfigureNode(ctx context.Context, name string) *v1.Node {
	n.mu.Lock()
	n.name = name
	n.mu.Unlock()
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				v1.LabelHostname:   name,
				v1.LabelOSStable:   runtime.GOOS,
				v1.LabelArchStable: runtime.GOARCH,
			},
		},
	}
	n.apply(&node.Status, time.Now())
	return node
}

// RefreshNodeStatus brings capacity, allocatable, addresses, node info and
// the Ready condition of nodeStatus up to date, and renews the Ready
// condition's heartbeat once it is a minute old. It reports whether it
// changed anything; when it returns false nodeStatus is untouched. Fields
// it does not own (other conditions, other resources, ...) are kept.
func (n *NodeProvider) RefreshNodeStatus(ctx context.Context, nodeStatus *v1.NodeStatus) bool {
	if nodeStatus == nil || ctx.Err() != nil {
		return false
	}
	updated := nodeStatus.DeepCopy()
	n.apply(updated, time.Now())
	if equality.Semantic.DeepEqual(updated, nodeStatus) {
		return false
	}
	*nodeStatus = *updated
	return true
}

// SetStatusUpdateCallback stores cb. The provider notices no node change
// on its own (the machine's figures are read at each RefreshNodeStatus), so
// cb is never called; it is kept so that a provider author sees where such
// a push would go.
func (n *NodeProvider) SetStatusUpdateCallback(ctx context.Context, cb func(*v1.Node)) {
	n.mu.Lock()
	n.cb = cb
	n.mu.Unlock()
}

// apply writes the provider's view of the machine into status, leaving
// alone what already matches (so that applying twice changes nothing).
func (n *NodeProvider) apply(status *v1.NodeStatus, now time.Time) {
	resources := v1.ResourceList{
		v1.ResourceCPU:  *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
		v1.ResourcePods: *resource.NewQuantity(int64(n.maxPods), resource.DecimalSI),
	}
	if mem, err := memTotal(); err == nil {
		resources[v1.ResourceMemory] = *resource.NewQuantity(mem, resource.BinarySI)
	}
	for name, q := range resources {
		if status.Capacity == nil {
			status.Capacity = v1.ResourceList{}
		}
		if status.Allocatable == nil {
			status.Allocatable = v1.ResourceList{}
		}
		if old, ok := status.Capacity[name]; !ok || old.Cmp(q) != 0 {
			status.Capacity[name] = q
		}
		if old, ok := status.Allocatable[name]; !ok || old.Cmp(q) != 0 {
			status.Allocatable[name] = q.DeepCopy()
		}
	}

	if addrs := nodeAddresses(); !equality.Semantic.DeepEqual(addrs, status.Addresses) {
		status.Addresses = addrs
	}

	info := &status.NodeInfo
	info.MachineID = n.nodeInfo.MachineID
	info.BootID = n.nodeInfo.BootID
	info.KernelVersion = n.nodeInfo.KernelVersion
	info.OSImage = n.nodeInfo.OSImage
	info.ContainerRuntimeVersion = n.nodeInfo.ContainerRuntimeVersion
	info.OperatingSystem = n.nodeInfo.OperatingSystem
	info.Architecture = n.nodeInfo.Architecture

	var ready *v1.NodeCondition
	for i := range status.Conditions {
		if status.Conditions[i].Type == v1.NodeReady {
			ready = &status.Conditions[i]
			break
		}
	}
	stamp := metav1.NewTime(now)
	if ready == nil {
		status.Conditions = append(status.Conditions, v1.NodeCondition{
			Type:               v1.NodeReady,
			Status:             v1.ConditionTrue,
			Reason:             readyReason,
			Message:            readyMessage,
			LastHeartbeatTime:  stamp,
			LastTransitionTime: stamp,
		})
		return
	}
	if ready.Status != v1.ConditionTrue || ready.Reason != readyReason || ready.Message != readyMessage {
		if ready.Status != v1.ConditionTrue {
			ready.LastTransitionTime = stamp
		}
		ready.Status, ready.Reason, ready.Message = v1.ConditionTrue, readyReason, readyMessage
		ready.LastHeartbeatTime = stamp
	}
	if now.Sub(ready.LastHeartbeatTime.Time) >= heartbeatInterval {
		ready.LastHeartbeatTime = stamp
	}
}

// memTotal returns MemTotal of /proc/meminfo in bytes.
func memTotal() (int64, error) {
	data, err := os.ReadFile(memInfoPath)
	if err != nil {
		return 0, fmt.Errorf("reading total memory: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// MemTotal:       16318412 kB
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || fields[0] != "MemTotal:" {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil || kb <= 0 || (len(fields) > 2 && fields[2] != "kB") {
			return 0, fmt.Errorf("unexpected MemTotal line %q in %s", sc.Text(), memInfoPath)
		}
		return kb * 1024, nil
	}
	return 0, errors.New("no MemTotal in " + memInfoPath)
}

// nodeAddresses returns the hostname and the first non-loopback global
// unicast address (IPv4 preferred).
func nodeAddresses() []v1.NodeAddress {
	var addrs []v1.NodeAddress
	if hostname, err := os.Hostname(); err == nil && hostname != "" {
		addrs = append(addrs, v1.NodeAddress{Type: v1.NodeHostName, Address: hostname})
	}
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		return addrs
	}
	var v6 string
	for _, a := range ifAddrs {
		ipnet, ok := a.(*net.IPNet)
		if !ok || !ipnet.IP.IsGlobalUnicast() {
			continue
		}
		if ipnet.IP.To4() != nil {
			return append(addrs, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ipnet.IP.String()})
		}
		if v6 == "" {
			v6 = ipnet.IP.String()
		}
	}
	if v6 != "" {
		addrs = append(addrs, v1.NodeAddress{Type: v1.NodeInternalIP, Address: v6})
	}
	return addrs
}

// osImage returns PRETTY_NAME of /etc/os-release, or "Linux".
func osImage() string {
	data, err := os.ReadFile("/etc/os-release")
	if err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				if s, err := strconv.Unquote(v); err == nil {
					return s
				}
				return strings.Trim(v, `"'`)
			}
		}
	}
	return "Linux"
}

// readTrimmed returns the trimmed content of a small file, or "".
func readTrimmed(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
