// Package apiserver is the build module of the end-to-end run against a
// real API server ('make e2e', hack/e2e/run.sh): its go.mod names
// kube-apiserver (k8s.io/kubernetes/cmd/kube-apiserver, with the k8s.io
// replace block) and etcd (go.etcd.io/etcd/server/v3, at the version
// k8s.io/kubernetes requires) as tools, so that hack/e2e/apiserver-build.sh
// builds both from their Go modules with 'go build tool', and the Go build
// cache makes a second build cheap. Nothing else is downloaded: no release
// archive, no image.
//
// Its command e2ectl (./e2ectl) writes the certificates, keys, token file
// and kubeconfig the API server and its clients need and waits until etcd
// and the API server are ready; its test TestSmokeAPIServer checks, against
// the API server at $KRI_E2E_KUBECONFIG, the behaviour a backend-cluster
// provider depends on and client-go's fake clientset lacks: watches, the
// status subresource, resource-version conflicts and graceful deletion.
package apiserver
