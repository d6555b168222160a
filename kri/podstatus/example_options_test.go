package podstatus_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// A node agent knows its node's addresses (its NodeProvider reports them);
// given to a Generator, they become every pod's HostIPs and a host-network
// pod's PodIPs, as the kubelet sets them, even before pod.Status has any.
func ExampleWithNodeAddresses() {
	node := v1.NodeStatus{Addresses: []v1.NodeAddress{
		{Type: v1.NodeHostName, Address: "node-1"},
		{Type: v1.NodeInternalIP, Address: "192.168.0.5"},
		{Type: v1.NodeInternalIP, Address: "fd00::5"},
	}}
	gen := podstatus.NewGenerator(podstatus.WithNodeAddresses(node.Addresses))

	pod := examplePod()
	pod.Spec.HostNetwork = true
	status := &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}

	s := gen.Generate(pod, status, nil)
	fmt.Println("HostIPs:", s.HostIPs)
	fmt.Println("PodIPs:", s.PodIPs)
	// Without the node's addresses, only those already in pod.Status count.
	fmt.Println("without:", podstatus.Generate(pod, status, nil).PodIPs)
	// Output:
	// HostIPs: [{192.168.0.5} {fd00::5}]
	// PodIPs: [{192.168.0.5} {fd00::5}]
	// without: []
}

// kuscia's agent hands RefreshPodStatus a status without Started and Ready
// and leaves both to the provider (its CRIProvider's prober manager, its
// K8sProvider's backend cluster); UpdateReadiness then computes the Ready
// conditions from what the provider set.
func ExampleWithProbeFieldsUnset() {
	gen := podstatus.NewGenerator(podstatus.WithProbeFieldsUnset())
	pod := examplePod()
	status := &pkgcontainer.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace,
		ContainerStatuses: []*pkgcontainer.Status{{
			ID: pkgcontainer.ContainerID{Type: "containerd", ID: "c1"}, Name: pod.Spec.Containers[0].Name,
			State: pkgcontainer.ContainerStateRunning,
		}}}

	s := gen.Generate(pod, status, nil)
	cs := &s.ContainerStatuses[0]
	fmt.Println("handed to RefreshPodStatus: started set:", cs.Started != nil, "ready:", cs.Ready)
	// The provider's RefreshPodStatus: no probe, so started and ready.
	started := true
	cs.Started, cs.Ready = &started, true
	podstatus.UpdateReadiness(pod, &s)
	for _, c := range s.Conditions {
		if c.Type == v1.PodReady {
			fmt.Println("pod Ready:", c.Status)
		}
	}
	// Output:
	// handed to RefreshPodStatus: started set: false ready: false
	// pod Ready: True
}
