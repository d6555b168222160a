// Package kubeletequiv holds no code: its tests check that the kit's own
// implementations of what the kubelet does, in the kubelet-free module
// github.com/kri-kit/testkit/sim, give the kubelet's results. They run the
// kubelet's functions (k8s.io/kubernetes, which this module requires) and
// the kit's on the same inputs and demand identical output: the $(VAR)
// expansion of env values, commands and args, the resolution of a probe's
// or hook's port, the kubelet's error reasons and termination-message
// limits, the crash-loop back-off (workload.BackOffState against
// client-go's flowcontrol.Backoff as the kubelet's doBackOff drives it) and
// the image-pull back-off (the same, as the image manager's pullImage
// drives it), and workload's back-off figures against the constants in the
// kubelet's source. make test-release runs the back-off tests against every
// Kubernetes release the kit is tested with; the others follow the release
// this module requires (v1.37 no longer reads a probe port "443" that names
// no port as the number 443, which sim/workload's ContainerPort still does).
package kubeletequiv
