package podstatus

import (
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	nodeutil "k8s.io/kubernetes/pkg/util/node"

	"github.com/kri-kit/testkit/kri"
)

// A Generator is Generate and GenerateTerminal with what they cannot learn
// from the pod, the runtime status and the reason cache, given as options
// to NewGenerator. Its methods have the signatures of the package's
// functions, so that one can stand for the other. The zero Generator, and a
// nil one, behave as the package's functions. A Generator does not change
// once made and is safe for concurrent use.
type Generator struct {
	opts options
}

type options struct {
	// nodeIPs are the node's IPs, primary first, at most one per family;
	// nil when unknown.
	nodeIPs []string
	// probeFieldsUnset leaves Started and Ready as the conversion gives
	// them (WithProbeFieldsUnset).
	probeFieldsUnset bool
	// kuscia converts and computes the phase as kuscia's agent does
	// (AsKusciaAgent).
	kuscia bool
}

// An Option configures a Generator. A nil Option is ignored.
type Option func(*options)

// NewGenerator returns a Generator with the given options applied in order.
func NewGenerator(opts ...Option) *Generator {
	g := &Generator{}
	for _, opt := range opts {
		if opt != nil {
			opt(&g.opts)
		}
	}
	return g
}

// Generate is the package's Generate with g's options.
func (g *Generator) Generate(pod *v1.Pod, status *pkgcontainer.PodStatus, reasons *kri.ReasonCache) v1.PodStatus {
	return generate(pod, status, reasons, false, g)
}

// GenerateTerminal is the package's GenerateTerminal with g's options.
func (g *Generator) GenerateTerminal(pod *v1.Pod, status *pkgcontainer.PodStatus, reasons *kri.ReasonCache) v1.PodStatus {
	return generate(pod, status, reasons, true, g)
}

// WithNodeAddresses gives the Generator the node's addresses, as the node
// agent's NodeProvider reports them in node.Status.Addresses. The node's IPs
// are taken from them as the kubelet takes them from its node object
// (GetNodeHostIPs in k8s.io/kubernetes/pkg/util/node): the first valid
// InternalIP, else ExternalIP, and the first address of the other family
// after it. With them the Generator does what generateAPIPodStatus does with
// the node's IPs:
//
//   - HostIP and HostIPs are the node's IPs, whatever pod.Status says;
//   - the pod's IPs are ordered with the node's primary family first;
//   - a host-network pod gets the node's primary IP as its PodIP when the
//     runtime reported none, and the node's IP of the other family as a
//     second PodIP when it has one of the primary family only.
//
// Without the option, or when addrs holds no valid InternalIP or ExternalIP
// (the kubelet then logs and leaves the host IPs out), the HostIPs already
// in pod.Status stand for the node's: a host-network pod gets node addresses
// only from there, and none while it has none.
//
// The addresses are read when WithNodeAddresses is called; changing addrs
// afterwards changes nothing.
func WithNodeAddresses(addrs []v1.NodeAddress) Option {
	ips, err := nodeutil.GetNodeHostIPs(&v1.Node{Status: v1.NodeStatus{Addresses: addrs}})
	if err != nil {
		return nil
	}
	nodeIPs := make([]string, len(ips))
	for i, ip := range ips {
		nodeIPs[i] = ip.String()
	}
	return func(o *options) { o.nodeIPs = nodeIPs }
}

// WithProbeFieldsUnset makes the Generator leave the Started and Ready of
// container statuses as the conversion of the runtime status gives them:
// Started unset and Ready false, except for a status carried over whole
// from pod.Status (a container the previous status showed terminated and
// the runtime no longer reports), which keeps its own. This is the status
// kuscia's agent hands RefreshPodStatus: its convertToAPIContainerStatuses
// (secretflow/kuscia pkg/agent/framework/pod.go) sets neither field, and its
// providers set both in RefreshPodStatus: the CRIProvider through the
// kubelet's prober manager (UpdatePodStatus, which trusts an incoming
// Started=true, so a status that already says Started would let a container
// with a startup probe count as started before the probe succeeded), the
// K8sProvider by copying the backend cluster's statuses. The Ready and
// ContainersReady conditions are then computed from the unset fields, so
// the caller calls UpdateReadiness after RefreshPodStatus, as kuscia's agent
// generates those conditions after it.
//
// Without the option the Generator sets them as the kubelet 1.37 does for
// containers without probes (see the package documentation).
func WithProbeFieldsUnset() Option {
	return func(o *options) { o.probeFieldsUnset = true }
}

// AsKusciaAgent makes the Generator compute the status as kuscia's agent
// does before it calls RefreshPodStatus (secretflow/kuscia
// pkg/agent/framework/pod.go generateAPIPodStatus, a port of an older
// kubelet's), where that differs from the kubelet 1.37:
//
//   - Started and Ready are left to the provider (WithProbeFieldsUnset);
//   - a container the runtime reports an instance of takes its RestartCount
//     and LastTerminationState from the runtime alone: the newest instance
//     and the one before it. The previous status counts only for a
//     container without instances, so a provider that reports one instance
//     per container, and reports a container that waits to be restarted as
//     Created, gets no last termination for it;
//   - the phase is kuscia's getPhase: init containers are counted without
//     the restartable-init (sidecar) rules (a running sidecar keeps the pod
//     Pending, a sidecar stopped with a non-zero code is a failed
//     initialisation), an init container without a status is still to
//     run, and container-level restart policies are not read;
//   - the conditions are Initialized, Ready, ContainersReady and
//     PodScheduled, in that order, without PodReadyToStartContainers, and
//     Initialized is kuscia's (pkg/agent/status/generate.go
//     GeneratePodInitializedCondition): true only while every init
//     container is Ready (or the pod succeeded), an app container that ran
//     counting for nothing. kuscia computes it after RefreshPodStatus, which
//     sets Ready: call Generator.UpdateConditions then.
//
// Kept as the kubelet 1.37 has them, with why: a container's own restart
// policy (container restart rules, alpha since 1.34) is read where the
// release compiled in reads it (ShouldContainerBeRestarted): kuscia's 1.33
// has none, and no pod of the conformance suite sets one. HostIP comes
// from WithNodeAddresses, as kuscia's agent takes it from its
// configuration; without it, from the previous status.
//
// The conformance suite's model of kuscia's agent uses it.
func AsKusciaAgent() Option {
	return func(o *options) { o.kuscia, o.probeFieldsUnset = true, true }
}
