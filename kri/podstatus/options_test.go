package podstatus_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"

	"github.com/kri-kit/testkit/kri/podstatus"
)

func hostIPs(ips ...string) []v1.HostIP {
	out := make([]v1.HostIP, len(ips))
	for i, ip := range ips {
		out[i] = v1.HostIP{IP: ip}
	}
	return out
}

func podIPs(ips ...string) []v1.PodIP {
	out := make([]v1.PodIP, len(ips))
	for i, ip := range ips {
		out[i] = v1.PodIP{IP: ip}
	}
	return out
}

// TestWithNodeAddresses: the node's addresses give HostIP, HostIPs and a
// host-network pod's PodIPs as GetNodeHostIPs and generateAPIPodStatus
// give them (InternalIP before ExternalIP, one per family, other address
// types ignored); without them, or without a usable address among them,
// only the previous status's HostIPs count.
func TestWithNodeAddresses(t *testing.T) {
	internal := func(ip string) v1.NodeAddress { return v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip} }
	external := func(ip string) v1.NodeAddress { return v1.NodeAddress{Type: v1.NodeExternalIP, Address: ip} }
	hostname := v1.NodeAddress{Type: v1.NodeHostName, Address: "node-1"}
	tests := []struct {
		name        string
		prevHostIPs []string
		opts        []podstatus.Option
		hostIP      string
		hostIPs     []v1.HostIP
		podIPs      []v1.PodIP
	}{
		{name: "no option, no previous HostIPs: a host-network pod has no address"},
		{name: "no option: the previous HostIPs",
			prevHostIPs: []string{"192.168.0.9"}, hostIP: "192.168.0.9", hostIPs: hostIPs("192.168.0.9"), podIPs: podIPs("192.168.0.9")},
		{name: "dual-stack node",
			opts:   []podstatus.Option{podstatus.WithNodeAddresses([]v1.NodeAddress{hostname, internal("192.168.0.5"), internal("192.168.0.6"), external("2001:db8::5")})},
			hostIP: "192.168.0.5", hostIPs: hostIPs("192.168.0.5", "2001:db8::5"), podIPs: podIPs("192.168.0.5", "2001:db8::5")},
		{name: "InternalIP before ExternalIP, whatever their order",
			opts:   []podstatus.Option{podstatus.WithNodeAddresses([]v1.NodeAddress{external("203.0.113.1"), internal("fd00::5")})},
			hostIP: "fd00::5", hostIPs: hostIPs("fd00::5", "203.0.113.1"), podIPs: podIPs("fd00::5", "203.0.113.1")},
		{name: "the node's addresses win over the previous HostIPs",
			prevHostIPs: []string{"192.168.0.9"},
			opts:        []podstatus.Option{podstatus.WithNodeAddresses([]v1.NodeAddress{internal("192.168.0.5")})},
			hostIP:      "192.168.0.5", hostIPs: hostIPs("192.168.0.5"), podIPs: podIPs("192.168.0.5")},
		{name: "no usable address: the previous HostIPs",
			prevHostIPs: []string{"192.168.0.9"},
			opts:        []podstatus.Option{podstatus.WithNodeAddresses([]v1.NodeAddress{hostname, internal("not-an-ip")})},
			hostIP:      "192.168.0.9", hostIPs: hostIPs("192.168.0.9"), podIPs: podIPs("192.168.0.9")},
		{name: "nil addresses and a nil option are ignored",
			opts: []podstatus.Option{podstatus.WithNodeAddresses(nil), nil}},
	}
	for _, tc := range tests {
		for _, hostNetwork := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/hostNetwork=%v", tc.name, hostNetwork), func(t *testing.T) {
				prev := v1.PodStatus{}
				if len(tc.prevHostIPs) > 0 {
					prev.HostIP, prev.HostIPs = tc.prevHostIPs[0], hostIPs(tc.prevHostIPs...)
				}
				pod := mkPod(v1.PodSpec{Containers: containers("app"), HostNetwork: hostNetwork}, prev)
				for _, gen := range []func(*v1.Pod, *pkgcontainer.PodStatus, *kri.ReasonCache) v1.PodStatus{
					podstatus.NewGenerator(tc.opts...).Generate,
					podstatus.NewGenerator(tc.opts...).GenerateTerminal,
				} {
					got := gen(pod, runtimeStatus(), nil)
					wantPodIPs, wantPodIP := tc.podIPs, ""
					if !hostNetwork {
						wantPodIPs = nil
					}
					if len(wantPodIPs) > 0 {
						wantPodIP = wantPodIPs[0].IP
					}
					if d := cmp.Diff(v1.PodStatus{HostIP: tc.hostIP, HostIPs: tc.hostIPs, PodIP: wantPodIP, PodIPs: wantPodIPs},
						v1.PodStatus{HostIP: got.HostIP, HostIPs: got.HostIPs, PodIP: got.PodIP, PodIPs: got.PodIPs}); d != "" {
						t.Errorf("Generate of a pod (hostNetwork %v) with previous HostIPs %q: addresses (-want +got):\n%s", hostNetwork, tc.prevHostIPs, d)
					}
				}
			})
		}
	}
}

// TestWithNodeAddressesIsACopy: the option reads the addresses once; it may
// be shared by concurrent calls, and changing the slice later changes
// nothing.
func TestWithNodeAddressesIsACopy(t *testing.T) {
	addrs := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "192.168.0.5"}}
	g := podstatus.NewGenerator(podstatus.WithNodeAddresses(addrs))
	addrs[0].Address = "192.168.0.77"
	pod := mkPod(v1.PodSpec{Containers: containers("app"), HostNetwork: true}, v1.PodStatus{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := g.Generate(pod, runtimeStatus(), nil); got.HostIP != "192.168.0.5" || got.PodIP != "192.168.0.5" {
				t.Errorf("Generate with WithNodeAddresses(192.168.0.5), the slice changed afterwards: HostIP %q, PodIP %q; want 192.168.0.5 for both", got.HostIP, got.PodIP)
			}
		})
	}
	wg.Wait()
}

// TestZeroGenerator: a nil, zero or option-less Generator is the package's
// functions.
func TestZeroGenerator(t *testing.T) {
	pod, status := richInputs()
	rc := reasonCache(podUID, map[string][2]string{"was": crash})
	var nilGen *podstatus.Generator
	for name, g := range map[string]*podstatus.Generator{"nil": nilGen, "zero": {}, "NewGenerator()": podstatus.NewGenerator(), "NewGenerator(nil)": podstatus.NewGenerator(nil)} {
		if d := cmp.Diff(podstatus.Generate(pod, status, rc), g.Generate(pod, status, rc)); d != "" {
			t.Errorf("%s Generator's Generate differs from podstatus.Generate (-want +got):\n%s", name, d)
		}
		if d := cmp.Diff(podstatus.GenerateTerminal(pod, status, rc), g.GenerateTerminal(pod, status, rc)); d != "" {
			t.Errorf("%s Generator's GenerateTerminal differs from podstatus.GenerateTerminal (-want +got):\n%s", name, d)
		}
	}
}

// TestWithProbeFieldsUnset: with the option, the conversion's Started and
// Ready are handed on as kuscia's agent hands them to RefreshPodStatus
// (Started unset, Ready false; a status carried over whole keeps its own),
// and everything else is what Generate gives; UpdateReadiness afterwards
// follows the Ready the provider set.
func TestWithProbeFieldsUnset(t *testing.T) {
	pod, status := richInputs()
	rc := reasonCache(podUID, map[string][2]string{"was": crash})
	gen := podstatus.NewGenerator(podstatus.WithProbeFieldsUnset())
	got := gen.Generate(pod, status, rc)
	want := podstatus.Generate(pod, status, rc)
	for _, s := range append(append([]v1.ContainerStatus{}, got.ContainerStatuses...), got.InitContainerStatuses...) {
		if s.Name == "gone" {
			if s.Started == nil || *s.Started {
				t.Errorf("container %q carried over from the previous status: Started = %v, want the previous status's false", s.Name, s.Started)
			}
			continue
		}
		if s.Started != nil || s.Ready {
			t.Errorf("container %q: Started = %v, Ready = %v, want unset and false", s.Name, s.Started, s.Ready)
		}
	}
	// Apart from Started, Ready and the conditions built from Ready, the
	// same status.
	strip := func(s v1.PodStatus) v1.PodStatus {
		s = *s.DeepCopy()
		for i := range s.ContainerStatuses {
			s.ContainerStatuses[i].Started, s.ContainerStatuses[i].Ready = nil, false
		}
		for i := range s.InitContainerStatuses {
			s.InitContainerStatuses[i].Started, s.InitContainerStatuses[i].Ready = nil, false
		}
		s.Conditions = nil
		return s
	}
	if d := cmp.Diff(strip(want), strip(got)); d != "" {
		t.Errorf("WithProbeFieldsUnset changed more than Started and Ready (-Generate +Generator):\n%s", d)
	}
	// The provider sets Ready (as kuscia's CRIProvider's prober manager
	// does); UpdateReadiness then gives the conditions Generate gives.
	for i := range got.ContainerStatuses {
		got.ContainerStatuses[i].Ready = want.ContainerStatuses[i].Ready
	}
	podstatus.UpdateReadiness(pod, &got)
	for _, ct := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
		if g, w := conditionStatus(got.Conditions, ct), conditionStatus(want.Conditions, ct); g != w {
			t.Errorf("after RefreshPodStatus set Ready and UpdateReadiness: condition %s = %s, want %s as Generate computes it", ct, g, w)
		}
	}
}

func conditionStatus(cs []v1.PodCondition, t v1.PodConditionType) v1.ConditionStatus {
	for _, c := range cs {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}
