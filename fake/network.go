package fake

import (
	"net/netip"
)

// The fake's pod network (WithPodIPs): containerd's default bridge range,
// 10.88.0.0/16, without the network, gateway and broadcast addresses.
var (
	firstPodIP = netip.MustParseAddr("10.88.0.2")
	lastPodIP  = netip.MustParseAddr("10.88.255.254")
)

// ipPool hands out pod IPs in order, starting over after the last. It is
// guarded by the provider's lock.
type ipPool struct{ next netip.Addr }

func newIPPool() *ipPool { return &ipPool{next: firstPodIP} }

func (pool *ipPool) take() string {
	ip := pool.next
	pool.next = ip.Next()
	if ip == lastPodIP {
		pool.next = firstPodIP
	}
	return ip.String()
}
