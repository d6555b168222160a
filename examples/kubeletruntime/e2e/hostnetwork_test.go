package e2e_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// hostNetworkPod puts the pod on the node's network and gives every HTTP
// hook without a host, of init and app containers, the node's 127.0.0.1;
// a hook with a host, exec hooks and probes are left as they are.
func TestHostNetworkPod(t *testing.T) {
	get := func(host string) *v1.LifecycleHandler {
		return &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/hook", Port: intstr.FromInt32(8080), Host: host}}
	}
	exec := &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}}
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "sidecar", Lifecycle: &v1.Lifecycle{PreStop: get("")}}},
		Containers: []v1.Container{
			{Name: "web", Lifecycle: &v1.Lifecycle{PostStart: get(""), PreStop: get("10.0.0.1")}, ReadinessProbe: probe},
			{Name: "exec", Lifecycle: &v1.Lifecycle{PreStop: exec}},
			{Name: "plain"},
		},
	}}
	want := pod.DeepCopy()
	want.Spec.HostNetwork = true
	want.Spec.InitContainers[0].Lifecycle.PreStop.HTTPGet.Host = "127.0.0.1"
	want.Spec.Containers[0].Lifecycle.PostStart.HTTPGet.Host = "127.0.0.1"
	hostNetworkPod(pod)
	if diff := cmp.Diff(want, pod); diff != "" {
		t.Errorf("hostNetworkPod (-want +got):\n%s", diff)
	}
}
