// Package sim is the root of the kit's simulation module,
// github.com/kri-kit/testkit/sim: the simulations that both the KRI side
// (the fake provider, crisim, the example backends) and the virtual-kubelet
// side (vk/simprovider) import. The module does not require
// k8s.io/kubernetes (the kubelet) or virtual-kubelet, only the API types
// (k8s.io/api, k8s.io/apimachinery) and small libraries, so a VK
// provider's module can build on it without the kubelet's replace block.
// Where a simulation follows the kubelet it does so with the kit's own
// code; the kit's root module checks that code against the kubelet's
// (internal/kubeletequiv).
//
// Its package is workload (github.com/kri-kit/testkit/sim/workload): the
// container command vocabulary and the pod simulation. This package
// declares nothing.
package sim
