// Package e2e runs the conformance suite against the kubebackend provider
// with a real kube-apiserver as the backend cluster's API server
// (TestConformanceAPIServer): real watches, graceful deletion,
// resourceVersion conflicts and the status subresource, with the simulated
// kubelet of package kubebackend as the backend's only node. It needs the
// kubeconfig of a running API server in KRI_E2E_KUBECONFIG ('make e2e'
// starts kube-apiserver and etcd on loopback); without it the test is
// skipped, so 'make test' never runs it.
package e2e
