// Package e2e runs the KRI conformance suite against the kubelet's runtime
// manager (package kubeletruntime) over a real CRI runtime instead of the
// simulator: TestConformanceContainerd, which runs only when the
// KRI_E2E_CRI_ENDPOINT environment variable names the runtime's endpoint.
// 'make e2e' at the kit's root starts a private containerd (hack/e2e),
// builds and imports the images the suite's workloads use and runs it.
//
// The package has its own test binary because Ginkgo runs one suite per
// process; it has no other code. TestHostNetworkPod, the test of how the
// suite's pods are adjusted to the host network, runs in 'make test' too.
package e2e
