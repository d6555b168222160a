package fake

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// FailPings makes the next count calls of Ping (with a live context) return
// err, or ErrNodeUnhealthy when err is nil; later pings succeed again. It
// replaces any earlier ping script; a count ≤ 0 is the same as Heal.
func (n *NodeProvider) FailPings(count int, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if count <= 0 {
		n.pingScript = nodePingScript{}
		return
	}
	n.pingScript = nodePingScript{remaining: count, err: err}
}

// FailPingsUntilHealed makes every Ping (with a live context) return err, or
// ErrNodeUnhealthy when err is nil, until Heal is called. It replaces any
// earlier ping script.
func (n *NodeProvider) FailPingsUntilHealed(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pingScript = nodePingScript{forever: true, err: err}
}

// Heal ends scripted ping failures: Ping succeeds again. It does not touch
// the node's conditions (see MarkReady).
func (n *NodeProvider) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pingScript = nodePingScript{}
}

// SetReady sets the Ready condition to True or False with reason and
// message. An empty reason means "KubeletReady" (with the kubelet's message
// "kubelet is posting ready status" when message is empty too) for ready, and
// "KubeletNotReady" otherwise. LastTransitionTime moves to the clock's Now
// only when the status flips. A change is delivered to the status-update
// callback; setting what is already there is a no-op.
func (n *NodeProvider) SetReady(ready bool, reason, message string) {
	status := v1.ConditionFalse
	if ready {
		status = v1.ConditionTrue
		if reason == "" && message == "" {
			message = nodeReadyMessage
		}
		if reason == "" {
			reason = nodeReadyReason
		}
	} else if reason == "" {
		reason = nodeNotReadyReason
	}
	n.setCondition(v1.NodeReady, status, reason, message)
}

// MarkNotReady sets the Ready condition to False with reason and message;
// see SetReady.
func (n *NodeProvider) MarkNotReady(reason, message string) { n.SetReady(false, reason, message) }

// MarkReady sets the Ready condition back to True with the kubelet's
// reason and message; see SetReady.
func (n *NodeProvider) MarkReady() { n.SetReady(true, "", "") }

// SetCondition sets the condition of type condType (adding it to the
// conditions the fake manages if it is new), e.g. MemoryPressure True. The
// status must be True, False or Unknown and condType non-empty, else it
// returns an error and changes nothing. LastTransitionTime moves to the
// clock's Now only when the status changes. A change is delivered to the
// status-update callback.
func (n *NodeProvider) SetCondition(condType v1.NodeConditionType, status v1.ConditionStatus, reason, message string) error {
	if condType == "" {
		return errors.New("fake: SetCondition: empty condition type")
	}
	switch status {
	case v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown:
	default:
		return fmt.Errorf("fake: SetCondition: %s: status %q is not True, False or Unknown", condType, status)
	}
	n.setCondition(condType, status, reason, message)
	return nil
}

func (n *NodeProvider) setCondition(condType v1.NodeConditionType, status v1.ConditionStatus, reason, message string) {
	now := n.now()
	n.mu.Lock()
	defer n.mu.Unlock()
	i := 0
	for i < len(n.conditions) && n.conditions[i].Type != condType {
		i++
	}
	if i == len(n.conditions) {
		n.conditions = append(n.conditions, nodeCondition{Type: condType, Since: now})
	}
	c := &n.conditions[i]
	if c.Status == status && c.Reason == reason && c.Message == message {
		return
	}
	if c.Status != status {
		c.Since = now
	}
	c.Status, c.Reason, c.Message = status, reason, message
	n.notifyLocked(now)
}

// SetCapacity changes the capacity of the given resources (others keep
// theirs) and sets their allocatable to the same amount, like a node that
// gained or lost hardware; use SetAllocatable afterwards to reserve part of
// it. An entry with an empty name or a negative quantity makes it return an
// error and change nothing. A change is delivered to the status-update
// callback.
func (n *NodeProvider) SetCapacity(capacity v1.ResourceList) error {
	for name, q := range capacity {
		if err := nodeCheckQuantity(name, q); err != nil {
			return fmt.Errorf("fake: SetCapacity: %w", err)
		}
	}
	now := n.now()
	n.mu.Lock()
	defer n.mu.Unlock()
	newCapacity, newAllocatable := n.capacity.DeepCopy(), n.allocatable.DeepCopy()
	for name, q := range capacity {
		newCapacity[name] = q.DeepCopy()
		newAllocatable[name] = q.DeepCopy()
	}
	n.setResourcesLocked(newCapacity, newAllocatable, now)
	return nil
}

// SetAllocatable changes the allocatable amount of the given resources.
// Every entry must name a resource the node has capacity for and lie
// between zero and that capacity; otherwise it returns an error and changes
// nothing. A change is delivered to the status-update callback.
func (n *NodeProvider) SetAllocatable(allocatable v1.ResourceList) error {
	now := n.now()
	n.mu.Lock()
	defer n.mu.Unlock()
	newAllocatable := n.allocatable.DeepCopy()
	for name, q := range allocatable {
		if err := nodeCheckQuantity(name, q); err != nil {
			return fmt.Errorf("fake: SetAllocatable: %w", err)
		}
		c, ok := n.capacity[name]
		if !ok {
			return fmt.Errorf("fake: SetAllocatable: %s has no capacity", name)
		}
		if q.Cmp(c) > 0 {
			return fmt.Errorf("fake: SetAllocatable: allocatable %s %s exceeds capacity %s", name, q.String(), c.String())
		}
		newAllocatable[name] = q.DeepCopy()
	}
	n.setResourcesLocked(n.capacity, newAllocatable, now)
	return nil
}

func (n *NodeProvider) setResourcesLocked(capacity, allocatable v1.ResourceList, now time.Time) {
	if equality.Semantic.DeepEqual(capacity, n.capacity) && equality.Semantic.DeepEqual(allocatable, n.allocatable) {
		return
	}
	n.capacity, n.allocatable = capacity, allocatable
	n.notifyLocked(now)
}

// SetAddresses replaces the node's addresses with addrs, reported exactly as
// given (see WithNodeAddresses). An address with an empty Type or Address
// makes it return an error and change nothing. A change is delivered to the
// status-update callback.
func (n *NodeProvider) SetAddresses(addrs ...v1.NodeAddress) error {
	if err := nodeCheckAddresses(addrs); err != nil {
		return fmt.Errorf("fake: SetAddresses: %w", err)
	}
	now := n.now()
	n.mu.Lock()
	defer n.mu.Unlock()
	before := n.addressesLocked()
	n.addresses, n.addressesSet = nodeCopyAddresses(addrs), true
	if !equality.Semantic.DeepEqual(before, n.addressesLocked()) {
		n.notifyLocked(now)
	}
	return nil
}

// notifyLocked queues a snapshot of the node for the status-update callback
// and makes sure a delivery goroutine runs. n.mu must be held.
func (n *NodeProvider) notifyLocked(now time.Time) {
	if n.closed || n.callback == nil || !n.configured {
		return
	}
	n.queue = append(n.queue, nodeUpdate{cb: n.callback, node: n.nodeLocked(now)})
	if !n.delivering {
		n.delivering = true
		n.deliveries.Go(n.deliver)
	}
}

// deliver hands queued snapshots to their callbacks, oldest first, and exits
// when the queue is empty or the provider is closed.
func (n *NodeProvider) deliver() {
	for {
		n.mu.Lock()
		if n.closed || len(n.queue) == 0 {
			n.queue = nil
			n.delivering = false
			n.mu.Unlock()
			return
		}
		u := n.queue[0]
		n.queue[0] = nodeUpdate{}
		n.queue = n.queue[1:]
		n.mu.Unlock()
		u.cb(u.node)
	}
}
