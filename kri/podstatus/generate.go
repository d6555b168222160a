package podstatus

import (
	"net"

	v1 "k8s.io/api/core/v1"
	v1qos "k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	utilnet "k8s.io/utils/net"

	"github.com/kri-kit/testkit/internal/k8scompat"
	"github.com/kri-kit/testkit/kri"
)

// Generate returns the v1.PodStatus a node agent reports for pod, from the
// runtime status GetPodStatus returned and the ReasonCache SyncPod reported
// to; pod.Status is the previous status. It computes what the kubelet's
// generateAPIPodStatus computes for a pod it is running (podIsTerminal
// false); the package documentation says how.
//
// Generate never panics and never modifies its inputs; the returned status
// shares no memory with them. A nil status counts as a pod the runtime has
// nothing for (no sandbox, no container), as before the first SyncPod. A nil
// reasons counts as no recorded failures. A nil pod has no spec and no
// previous status: the result is a status with only Phase set, to Pending.
// Generate knows of the node only what pod.Status says; a Generator made
// with options (NewGenerator) knows more.
func Generate(pod *v1.Pod, status *pkgcontainer.PodStatus, reasons *kri.ReasonCache) v1.PodStatus {
	return generate(pod, status, reasons, false, nil)
}

// GenerateTerminal is Generate for a pod the node agent has stopped for
// good: deleted, evicted or otherwise terminating, once KillPod has
// returned (the kubelet's podIsTerminal, with which SyncTerminatingPod and
// SyncTerminatedPod generate the status). A pod whose containers have all
// stopped is then Succeeded when every app container exited 0 and Failed
// otherwise, whatever its restart policy; Generate would report a pod whose
// restart policy restarts them as Running. A pod without sandboxes is not
// ready to start containers.
func GenerateTerminal(pod *v1.Pod, status *pkgcontainer.PodStatus, reasons *kri.ReasonCache) v1.PodStatus {
	return generate(pod, status, reasons, true, nil)
}

// generate is Generate (GenerateTerminal when terminal) with the options
// of g, nil for none.
func generate(pod *v1.Pod, status *pkgcontainer.PodStatus, reasons *kri.ReasonCache, terminal bool, g *Generator) v1.PodStatus {
	if pod == nil {
		return v1.PodStatus{Phase: v1.PodPending}
	}
	var o options
	if g != nil {
		o = g.opts
	}
	v := newRuntimeView(status, reasons)
	v.kuscia = o.kuscia
	old := &pod.Status
	var s v1.PodStatus

	hostIPs := o.nodeIPs
	if len(hostIPs) == 0 {
		hostIPs = previousHostIPs(old)
	}
	s.PodIPs = podIPs(v.ips, preferIPv6(hostIPs))
	if pod.Spec.HostNetwork && len(hostIPs) > 0 {
		// Host-network pods have the node's addresses.
		if len(s.PodIPs) == 0 {
			s.PodIPs = []v1.PodIP{{IP: hostIPs[0]}}
		}
		if len(hostIPs) == 2 && len(s.PodIPs) == 1 && ipv6(s.PodIPs[0].IP) != ipv6(hostIPs[1]) {
			s.PodIPs = append(s.PodIPs, v1.PodIP{IP: hostIPs[1]})
		}
	}
	if len(s.PodIPs) > 0 {
		s.PodIP = s.PodIPs[0].IP
	}
	s.QOSClass = v1qos.GetPodQOS(pod)

	s.ContainerStatuses = convertList(pod, &v, pod.Spec.Containers, old.ContainerStatuses, appList)
	s.InitContainerStatuses = convertList(pod, &v, pod.Spec.InitContainers, old.InitContainerStatuses, initList)
	if n := len(pod.Spec.EphemeralContainers); n > 0 {
		ecs := make([]v1.Container, n)
		for i := range pod.Spec.EphemeralContainers {
			ecs[i] = v1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		}
		s.EphemeralContainerStatuses = convertList(pod, &v, ecs, old.EphemeralContainerStatuses, ephemeralList)
	}

	computed := phase(pod, s.ContainerStatuses, s.InitContainerStatuses, terminal, v.podHasInitialized(&pod.Spec))
	if o.kuscia {
		computed = kusciaPhase(&pod.Spec, s.ContainerStatuses, s.InitContainerStatuses)
	}
	s.Phase, s.Reason, s.Message = phaseAndReason(old, computed)

	if o.probeFieldsUnset {
		unsetProbeFields(&v, s.ContainerStatuses)
		unsetProbeFields(&v, s.InitContainerStatuses)
	} else {
		setStartedAndReady(&pod.Spec, s.ContainerStatuses, s.InitContainerStatuses)
	}
	s.Conditions = conditions(pod, old, &s, &v, terminal)

	// Fields the node agent's status manager keeps across updates, or that
	// others own.
	s.ObservedGeneration = max(pod.Generation, old.ObservedGeneration)
	if old.StartTime != nil && !old.StartTime.IsZero() {
		s.StartTime = old.StartTime.DeepCopy()
	}
	if len(o.nodeIPs) > 0 {
		// The node's IPs, as the kubelet sets them from its node object.
		s.HostIP = o.nodeIPs[0]
		s.HostIPs = make([]v1.HostIP, len(o.nodeIPs))
		for i, ip := range o.nodeIPs {
			s.HostIPs[i] = v1.HostIP{IP: ip}
		}
	} else {
		s.HostIP = old.HostIP
		if old.HostIPs != nil {
			s.HostIPs = append([]v1.HostIP{}, old.HostIPs...)
		}
	}
	// The resource claim statuses, those the release compiled in has.
	k8scompat.CopyClaimStatuses(&s, old)
	return s
}

// previousHostIPs returns the node addresses of the previous status.
func previousHostIPs(old *v1.PodStatus) []string {
	var ips []string
	for _, h := range old.HostIPs {
		if h.IP != "" {
			ips = append(ips, h.IP)
		}
	}
	if len(ips) == 0 && old.HostIP != "" {
		ips = append(ips, old.HostIP)
	}
	return ips
}

// preferIPv6 reports whether the node's primary address is IPv6, which
// makes IPv6 the pod's primary IP family (kubelet's sortPodIPs, which reads
// the node's IPs; Generate knows them from the previous HostIPs).
func preferIPv6(hostIPs []string) bool {
	return len(hostIPs) > 0 && ipv6(hostIPs[0])
}

func ipv6(s string) bool {
	return utilnet.IsIPv6(utilnet.ParseIPSloppy(s))
}

// podIPs picks the pod's addresses from the sandbox IPs the runtime
// reported, as the kubelet's sortPodIPs does: the first valid address of the
// primary family, then the first of the other family, each in canonical
// form. Invalid addresses are dropped.
func podIPs(raw []string, v6First bool) []v1.PodIP {
	primary, secondary := utilnet.IsIPv4, utilnet.IsIPv6
	if v6First {
		primary, secondary = secondary, primary
	}
	var out []v1.PodIP
	for _, family := range []func(net.IP) bool{primary, secondary} {
		for _, s := range raw {
			if ip := utilnet.ParseIPSloppy(s); family(ip) {
				out = append(out, v1.PodIP{IP: ip.String()})
				break
			}
		}
	}
	return out
}
