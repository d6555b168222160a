package fake

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/kri-kit/testkit/internal/k8scompat"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

var _ kri.NodeProvider = (*NodeProvider)(nil)

// ErrNodeUnhealthy is what a scripted ping failure returns when the script
// was given no error of its own (FailPings or FailPingsUntilHealed with a nil
// error).
var ErrNodeUnhealthy = errors.New("fake: node backend unhealthy (scripted ping failure)")

// Defaults of a NodeProvider built without options.
const (
	// DefaultNodeKubeletVersion is the NodeInfo.KubeletVersion reported by default.
	DefaultNodeKubeletVersion = "v1.37.2"
	// DefaultNodeInternalIP is the InternalIP address reported by default.
	DefaultNodeInternalIP = "10.0.0.1"
)

// nodeDefaultCapacity is the capacity of a NodeProvider built without
// WithNodeCapacity; allocatable defaults to the same values.
func nodeDefaultCapacity() v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse("4"),
		v1.ResourceMemory:           resource.MustParse("8Gi"),
		v1.ResourcePods:             resource.MustParse("110"),
		v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
}

func nodeDefaultInfo() v1.NodeSystemInfo {
	return v1.NodeSystemInfo{
		KernelVersion:           "fake",
		OSImage:                 "fake",
		ContainerRuntimeVersion: "fake://1.0.0",
		KubeletVersion:          DefaultNodeKubeletVersion,
		OperatingSystem:         "linux",
		Architecture:            "amd64",
	}
}

// Reasons and messages of the conditions the fake reports, as the kubelet
// words them.
const (
	nodeReadyReason    = "KubeletReady"
	nodeReadyMessage   = "kubelet is posting ready status"
	nodeNotReadyReason = "KubeletNotReady"
)

func nodeDefaultConditions(since time.Time) []nodeCondition {
	return []nodeCondition{
		{v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available", since},
		{v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure", since},
		{v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available", since},
		{v1.NodeReady, v1.ConditionTrue, nodeReadyReason, nodeReadyMessage, since},
	}
}

// NodeInterceptors is interceptor.NodeFuncs (package kri/interceptor)
// under its former name, kept for one release so that code written for it
// still builds (CHANGELOG.md).
//
// Deprecated: use interceptor.NodeFuncs, which has the same fields. This
// alias stays through v0.1.x and goes no earlier than v0.2.0.
type NodeInterceptors = interceptor.NodeFuncs

// NodeOption configures NewNodeProvider. An option given an invalid value
// never panics: the problem is reported by (*NodeProvider).Err and the
// provider keeps a valid configuration (see each option for which).
type NodeOption func(*nodeConfig)

type nodeConfig struct {
	clock        clock.WithDelayedExecution
	heartbeat    time.Duration
	interceptors interceptor.NodeFuncs
	capacity     v1.ResourceList
	allocatable  v1.ResourceList // explicitly set entries only
	info         v1.NodeSystemInfo
	addresses    []v1.NodeAddress
	addressesSet bool
	errs         []error
}

func (c *nodeConfig) fail(option string, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("fake: %s: %s", option, fmt.Sprintf(format, args...)))
}

// WithNodeClock sets the clock the provider reads heartbeat and transition
// times from (default clock.RealClock{}). Tests pass
// clocktesting.NewFakeClock. A nil clock is an error (see Err); the real
// clock is kept.
func WithNodeClock(c clock.WithDelayedExecution) NodeOption {
	return func(cfg *nodeConfig) {
		if c == nil {
			cfg.fail("WithNodeClock", "nil clock; keeping clock.RealClock{}")
			return
		}
		cfg.clock = c
	}
}

// DefaultNodeHeartbeatInterval is how old a condition's LastHeartbeatTime
// must be before RefreshNodeStatus renews it on its own, the kubelet's
// default node status update frequency.
const DefaultNodeHeartbeatInterval = 10 * time.Second

// WithNodeHeartbeatInterval sets how old a heartbeat must be before
// RefreshNodeStatus renews it when nothing else changed (default
// DefaultNodeHeartbeatInterval; 0 renews on every call the clock moved). A
// negative interval is an error (see Err); the default is kept.
func WithNodeHeartbeatInterval(d time.Duration) NodeOption {
	return func(cfg *nodeConfig) {
		if d < 0 {
			cfg.fail("WithNodeHeartbeatInterval", "negative interval %v; keeping %v", d, DefaultNodeHeartbeatInterval)
			return
		}
		cfg.heartbeat = d
	}
}

// WithNodeInterceptors installs interceptors from the start; see
// (*NodeProvider).SetInterceptors.
func WithNodeInterceptors(i interceptor.NodeFuncs) NodeOption {
	return func(cfg *nodeConfig) { cfg.interceptors = i }
}

// WithNodeCapacity sets the capacity of the given resources, keeping the
// defaults (cpu 4, memory 8Gi, pods 110, ephemeral-storage 100Gi) for the
// others. Allocatable follows capacity for every resource that
// WithNodeAllocatable does not set. An entry with an empty name or a negative
// quantity is an error (see Err) and is not applied.
func WithNodeCapacity(capacity v1.ResourceList) NodeOption {
	return func(cfg *nodeConfig) {
		for name, q := range capacity {
			if err := nodeCheckQuantity(name, q); err != nil {
				cfg.fail("WithNodeCapacity", "%v; not applied", err)
				continue
			}
			cfg.capacity[name] = q.DeepCopy()
		}
	}
}

// WithNodeAllocatable sets the allocatable amount of the given resources
// (the rest stay equal to their capacity). Allocatable must not exceed
// capacity: a larger value is an error (see Err) and is clamped to the
// capacity, so the node the provider reports always satisfies
// allocatable ≤ capacity. An entry for a resource without capacity, with an
// empty name or with a negative quantity is an error and is not applied.
func WithNodeAllocatable(allocatable v1.ResourceList) NodeOption {
	return func(cfg *nodeConfig) {
		for name, q := range allocatable {
			if err := nodeCheckQuantity(name, q); err != nil {
				cfg.fail("WithNodeAllocatable", "%v; not applied", err)
				continue
			}
			cfg.allocatable[name] = q.DeepCopy()
		}
	}
}

// WithNodeInfo sets the node's system info. Every non-empty field of info
// replaces the default (KubeletVersion DefaultNodeKubeletVersion,
// OperatingSystem "linux", Architecture "amd64", OSImage and KernelVersion
// "fake", ContainerRuntimeVersion "fake://1.0.0"); empty fields keep it.
func WithNodeInfo(info v1.NodeSystemInfo) NodeOption {
	return func(cfg *nodeConfig) {
		nodeMergeInfo(&cfg.info, info)
	}
}

// WithNodeAddresses replaces the node's addresses. The default is an
// InternalIP (DefaultNodeInternalIP) and a Hostname equal to the name given
// to ConfigureNode; with this option the list is reported exactly as given
// (no Hostname is added). An address with an empty Type or Address is an
// error (see Err) and the whole list is not applied.
func WithNodeAddresses(addrs ...v1.NodeAddress) NodeOption {
	return func(cfg *nodeConfig) {
		if err := nodeCheckAddresses(addrs); err != nil {
			cfg.fail("WithNodeAddresses", "%v; not applied", err)
			return
		}
		cfg.addresses = nodeCopyAddresses(addrs)
		cfg.addressesSet = true
	}
}

// NodeCalls counts the calls made to a NodeProvider's kri.NodeProvider
// methods, whether the fake or an interceptor answered them. Calls an
// interceptor makes to next are not counted again.
type NodeCalls struct {
	Ping                    int
	ConfigureNode           int
	RefreshNodeStatus       int
	SetStatusUpdateCallback int
}

// NodeProvider is an in-memory kri.NodeProvider: it describes one node with
// configurable resources, system info and addresses, a healthy backend and a
// Ready condition, and lets a test script what a real node would do on its
// own: pings failing, the node turning NotReady, capacity changing. Scripted
// status changes reach the callback registered with SetStatusUpdateCallback
// asynchronously.
//
// All methods are safe for concurrent use; every object returned or
// delivered is a deep copy owned by the receiver, and nothing handed in is
// kept. Call Close when done (t.Cleanup(node.Close)) so that no delivery
// goroutine outlives the test.
//
// Times: ConfigureNode, RefreshNodeStatus and deliveries stamp
// LastHeartbeatTime with the clock's Now; a condition's LastTransitionTime is
// the clock time at which the fake's condition last changed status (the
// time of NewNodeProvider for the initial conditions).
type NodeProvider struct {
	clock     clock.WithDelayedExecution
	heartbeat time.Duration
	err       error
	next      nodeNext

	mu sync.Mutex
	// intercepted is next wrapped with the interceptors
	// (WithNodeInterceptors, SetInterceptors).
	intercepted  kri.NodeProvider
	calls        NodeCalls
	name         string // name given to the last ConfigureNode
	configured   bool
	capacity     v1.ResourceList
	allocatable  v1.ResourceList
	info         v1.NodeSystemInfo
	addresses    []v1.NodeAddress
	addressesSet bool // addresses replaces the default InternalIP + Hostname
	conditions   []nodeCondition
	pingScript   nodePingScript

	// Status-update delivery: changes are queued as node snapshots and
	// handed to callback, in order, by at most one goroutine, which runs
	// only while the queue is non-empty.
	callback   func(*v1.Node)
	queue      []nodeUpdate
	delivering bool
	closed     bool
	deliveries sync.WaitGroup
}

// nodeUpdate is a queued delivery: a node snapshot and the callback that was
// registered when the change happened.
type nodeUpdate struct {
	cb   func(*v1.Node)
	node *v1.Node
}

type nodeCondition struct {
	Type    v1.NodeConditionType
	Status  v1.ConditionStatus
	Reason  string
	Message string
	Since   time.Time // clock time of the last status change
}

type nodePingScript struct {
	remaining int  // failures left; ignored when forever
	forever   bool // fail until Heal
	err       error
}

// NewNodeProvider returns a healthy, Ready node provider. Without options it
// uses the real clock and reports capacity = allocatable = cpu 4, memory
// 8Gi, pods 110, ephemeral-storage 100Gi, the NodeInfo described at
// WithNodeInfo and the addresses described at WithNodeAddresses. Invalid
// options never make it panic; they are reported by Err.
func NewNodeProvider(opts ...NodeOption) *NodeProvider {
	cfg := nodeConfig{
		clock:       clock.RealClock{},
		heartbeat:   DefaultNodeHeartbeatInterval,
		capacity:    nodeDefaultCapacity(),
		allocatable: v1.ResourceList{},
		info:        nodeDefaultInfo(),
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	allocatable := cfg.capacity.DeepCopy()
	for name, q := range cfg.allocatable {
		c, ok := cfg.capacity[name]
		switch {
		case !ok:
			cfg.fail("WithNodeAllocatable", "%s has no capacity; not applied", name)
		case q.Cmp(c) > 0:
			cfg.fail("WithNodeAllocatable", "allocatable %s %s exceeds capacity %s; clamped to %s", name, q.String(), c.String(), c.String())
		default:
			allocatable[name] = q.DeepCopy()
		}
	}
	n := &NodeProvider{
		clock:        cfg.clock,
		heartbeat:    cfg.heartbeat,
		err:          errors.Join(cfg.errs...),
		capacity:     cfg.capacity,
		allocatable:  allocatable,
		info:         cfg.info,
		addresses:    cfg.addresses,
		addressesSet: cfg.addressesSet,
	}
	n.next = nodeNext{n}
	n.intercepted = interceptor.NewNodeProvider(n.next, cfg.interceptors)
	n.conditions = nodeDefaultConditions(n.now())
	return n
}

// Err reports the options NewNodeProvider rejected or corrected, joined, or
// nil when every option was valid. The provider works either way, with the
// configuration each option's doc comment describes.
func (n *NodeProvider) Err() error { return n.err }

// SetInterceptors replaces the interceptors; it may be called at any time,
// also while other calls are in flight (those finish with the interceptors
// they started with). The zero interceptor.NodeFuncs removes them all. Each
// function that is set is called instead of the fake's method, with next
// the fake without interceptors (scripted failures included).
func (n *NodeProvider) SetInterceptors(i interceptor.NodeFuncs) {
	w := interceptor.NewNodeProvider(n.next, i)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.intercepted = w
}

// Calls returns how often each kri.NodeProvider method has been called since
// the provider was built or ResetCalls.
func (n *NodeProvider) Calls() NodeCalls {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls
}

// ResetCalls sets every counter Calls reports back to zero.
func (n *NodeProvider) ResetCalls() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls = NodeCalls{}
}

// Ping implements kri.NodeProvider. A done ctx makes it return ctx.Err()
// before anything else (without using up a scripted failure); otherwise it
// returns the next scripted failure (FailPings, FailPingsUntilHealed) or nil.
func (n *NodeProvider) Ping(ctx context.Context) error {
	n.mu.Lock()
	n.calls.Ping++
	w := n.intercepted
	n.mu.Unlock()
	return w.Ping(ctx)
}

// ConfigureNode implements kri.NodeProvider: it returns a new node named
// name, with the labels kubernetes.io/hostname, kubernetes.io/os and
// kubernetes.io/arch, the configured capacity, allocatable, NodeInfo and
// addresses, and the conditions MemoryPressure, DiskPressure and PIDPressure
// (False) and Ready (True unless scripted otherwise). The provider remembers
// name: nodes delivered to the status-update callback carry the name of the
// last ConfigureNode call. ctx is not consulted: the call cannot fail.
func (n *NodeProvider) ConfigureNode(ctx context.Context, name string) *v1.Node {
	n.mu.Lock()
	n.calls.ConfigureNode++
	w := n.intercepted
	n.mu.Unlock()
	return w.ConfigureNode(ctx, name)
}

// RefreshNodeStatus implements kri.NodeProvider. It brings nodeStatus in
// line with the fake's node: Capacity, Allocatable, NodeInfo and Addresses
// are replaced when they differ (quantities compare by value, so "1000m"
// equals "1"); every condition the fake manages is added when missing, and
// otherwise gets the fake's Status (with LastTransitionTime set to the time
// of the fake's last status change when the status differs), Reason and
// Message; its LastHeartbeatTime is set to the clock's Now when the
// condition changed or its heartbeat is at least the heartbeat interval old
// (WithNodeHeartbeatInterval). Conditions of other types and all other
// fields are left alone.
//
// It returns true exactly when it changed a field; when it returns false,
// nodeStatus is untouched. So a second call with no scripted change in
// between returns false unless a heartbeat interval has passed. A done ctx or a nil nodeStatus returns
// false at once.
func (n *NodeProvider) RefreshNodeStatus(ctx context.Context, nodeStatus *v1.NodeStatus) bool {
	n.mu.Lock()
	n.calls.RefreshNodeStatus++
	w := n.intercepted
	n.mu.Unlock()
	return w.RefreshNodeStatus(ctx, nodeStatus)
}

// SetStatusUpdateCallback implements kri.NodeProvider: it registers cb,
// replacing any earlier callback, and returns at once without calling cb. A
// nil cb unregisters; a ctx that is already done abandons the call (the
// earlier callback stays registered), and cancelling ctx later does not
// unregister cb.
//
// Every scripted change (SetReady, MarkNotReady, MarkReady, SetCondition,
// SetCapacity, SetAllocatable, SetAddresses) that changes the node queues a
// snapshot of the whole node, as ConfigureNode would return it at that
// moment, for the callback registered at the moment of the change. Snapshots
// are delivered in the order of the changes, one at a time, from a goroutine
// of the provider; a slow callback delays later deliveries but never the
// caller of the scripting method. So which callback sees a change is
// deterministic: a change made before a re-registration still goes to the
// old callback, possibly after SetStatusUpdateCallback has returned. Changes
// made before ConfigureNode (while the node has no name yet) or while no
// callback is registered are not delivered; RefreshNodeStatus and
// ConfigureNode report them.
func (n *NodeProvider) SetStatusUpdateCallback(ctx context.Context, cb func(*v1.Node)) {
	n.mu.Lock()
	n.calls.SetStatusUpdateCallback++
	w := n.intercepted
	n.mu.Unlock()
	w.SetStatusUpdateCallback(ctx, cb)
}

// Close stops status-update deliveries for good: undelivered updates are
// dropped, and Close returns once a callback in progress has returned, so
// that afterwards the provider runs no goroutine and never calls a callback
// again. The provider's other methods keep working. Close is idempotent; it
// must not be called from the callback itself.
func (n *NodeProvider) Close() {
	n.mu.Lock()
	n.closed = true
	n.queue = nil
	n.mu.Unlock()
	n.deliveries.Wait()
}

// nodeNext is the fake without interceptors, handed to hooks as next.
type nodeNext struct{ p *NodeProvider }

var _ kri.NodeProvider = nodeNext{}

func (x nodeNext) Ping(ctx context.Context) error { return x.p.ping(ctx) }

func (x nodeNext) ConfigureNode(ctx context.Context, name string) *v1.Node {
	return x.p.configureNode(ctx, name)
}

func (x nodeNext) RefreshNodeStatus(ctx context.Context, nodeStatus *v1.NodeStatus) bool {
	return x.p.refreshNodeStatus(ctx, nodeStatus)
}

func (x nodeNext) SetStatusUpdateCallback(ctx context.Context, cb func(*v1.Node)) {
	x.p.setStatusUpdateCallback(ctx, cb)
}

func (n *NodeProvider) ping(ctx context.Context) error {
	if err := nodeCtxErr(ctx); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	s := &n.pingScript
	if !s.forever && s.remaining <= 0 {
		return nil
	}
	err := s.err
	if !s.forever {
		s.remaining--
		if s.remaining == 0 {
			s.err = nil
		}
	}
	if err == nil {
		err = ErrNodeUnhealthy
	}
	return err
}

func (n *NodeProvider) configureNode(_ context.Context, name string) *v1.Node {
	now := n.now()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.name = name
	n.configured = true
	return n.nodeLocked(now)
}

func (n *NodeProvider) refreshNodeStatus(ctx context.Context, st *v1.NodeStatus) bool {
	if st == nil || nodeCtxErr(ctx) != nil {
		return false
	}
	now := n.now()
	n.mu.Lock()
	want := n.statusLocked(now)
	conds := append([]nodeCondition(nil), n.conditions...)
	n.mu.Unlock()

	changed := false
	if !equality.Semantic.DeepEqual(st.Capacity, want.Capacity) {
		st.Capacity = want.Capacity
		changed = true
	}
	if !equality.Semantic.DeepEqual(st.Allocatable, want.Allocatable) {
		st.Allocatable = want.Allocatable
		changed = true
	}
	if !equality.Semantic.DeepEqual(st.NodeInfo, want.NodeInfo) {
		st.NodeInfo = want.NodeInfo
		changed = true
	}
	if !equality.Semantic.DeepEqual(st.Addresses, want.Addresses) {
		st.Addresses = want.Addresses
		changed = true
	}
	for _, c := range conds {
		i := nodeConditionIndex(st.Conditions, c.Type)
		if i < 0 {
			st.Conditions = append(st.Conditions, c.toAPI(now))
			changed = true
			continue
		}
		have := &st.Conditions[i]
		condChanged := false
		if have.Status != c.Status {
			have.Status = c.Status
			have.LastTransitionTime = metav1.NewTime(c.Since)
			condChanged = true
		}
		if have.Reason != c.Reason {
			have.Reason = c.Reason
			condChanged = true
		}
		if have.Message != c.Message {
			have.Message = c.Message
			condChanged = true
		}
		stale := now.Sub(have.LastHeartbeatTime.Time) >= n.heartbeat
		if (condChanged || stale) && !have.LastHeartbeatTime.Time.Equal(now) {
			have.LastHeartbeatTime = metav1.NewTime(now)
			condChanged = true
		}
		changed = changed || condChanged
	}
	return changed
}

func (n *NodeProvider) setStatusUpdateCallback(ctx context.Context, cb func(*v1.Node)) {
	if nodeCtxErr(ctx) != nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.callback = cb
}

// now reads the clock, without the monotonic reading so that times compare
// and deep-compare predictably.
func (n *NodeProvider) now() time.Time { return n.clock.Now().Round(0) }

// nodeLocked builds a new node from the fake's state. n.mu must be held.
func (n *NodeProvider) nodeLocked(now time.Time) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: n.name,
			Labels: map[string]string{
				v1.LabelHostname:   n.name,
				v1.LabelOSStable:   n.info.OperatingSystem,
				v1.LabelArchStable: n.info.Architecture,
			},
		},
		Status: n.statusLocked(now),
	}
}

// statusLocked builds a new status from the fake's state. n.mu must be held.
func (n *NodeProvider) statusLocked(now time.Time) v1.NodeStatus {
	st := v1.NodeStatus{
		Capacity:    n.capacity.DeepCopy(),
		Allocatable: n.allocatable.DeepCopy(),
		NodeInfo:    *n.info.DeepCopy(),
		Addresses:   n.addressesLocked(),
		Conditions:  make([]v1.NodeCondition, 0, len(n.conditions)),
	}
	for _, c := range n.conditions {
		st.Conditions = append(st.Conditions, c.toAPI(now))
	}
	return st
}

func (n *NodeProvider) addressesLocked() []v1.NodeAddress {
	if n.addressesSet {
		return nodeCopyAddresses(n.addresses)
	}
	addrs := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: DefaultNodeInternalIP}}
	if n.name != "" {
		addrs = append(addrs, v1.NodeAddress{Type: v1.NodeHostName, Address: n.name})
	}
	return addrs
}

func (c nodeCondition) toAPI(now time.Time) v1.NodeCondition {
	return v1.NodeCondition{
		Type:               c.Type,
		Status:             c.Status,
		Reason:             c.Reason,
		Message:            c.Message,
		LastHeartbeatTime:  metav1.NewTime(now),
		LastTransitionTime: metav1.NewTime(c.Since),
	}
}

func nodeConditionIndex(conds []v1.NodeCondition, t v1.NodeConditionType) int {
	for i := range conds {
		if conds[i].Type == t {
			return i
		}
	}
	return -1
}

func nodeCtxErr(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	return ctx.Err()
}

func nodeCheckQuantity(name v1.ResourceName, q resource.Quantity) error {
	if name == "" {
		return errors.New("empty resource name")
	}
	if q.Sign() < 0 {
		return fmt.Errorf("negative quantity %s for %s", q.String(), name)
	}
	return nil
}

func nodeCheckAddresses(addrs []v1.NodeAddress) error {
	for i, a := range addrs {
		if a.Type == "" || a.Address == "" {
			return fmt.Errorf("address %d (%q: %q) needs both a type and an address", i, a.Type, a.Address)
		}
	}
	return nil
}

func nodeCopyAddresses(addrs []v1.NodeAddress) []v1.NodeAddress {
	if addrs == nil {
		return nil
	}
	return append([]v1.NodeAddress{}, addrs...)
}

func nodeMergeInfo(dst *v1.NodeSystemInfo, src v1.NodeSystemInfo) {
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&dst.MachineID, src.MachineID},
		{&dst.SystemUUID, src.SystemUUID},
		{&dst.BootID, src.BootID},
		{&dst.KernelVersion, src.KernelVersion},
		{&dst.OSImage, src.OSImage},
		{&dst.ContainerRuntimeVersion, src.ContainerRuntimeVersion},
		{&dst.KubeletVersion, src.KubeletVersion},
		{&dst.KubeProxyVersion, src.KubeProxyVersion}, //nolint:staticcheck // still part of the API
		{&dst.OperatingSystem, src.OperatingSystem},
		{&dst.Architecture, src.Architecture},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	if src.Swap != nil {
		dst.Swap = src.Swap.DeepCopy()
	}
	k8scompat.CopyRunningInUserNamespace(dst, &src)
}
