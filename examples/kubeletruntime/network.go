package kubeletruntime

import (
	"crypto/tls"
	"net/http"

	httpprobe "k8s.io/kubernetes/pkg/probe/http"
)

// HTTP and TCP probes and HTTP hooks. The kubelet's prober manager runs a
// pod's HTTP and TCP probes itself, against the PodIP of the status the
// agent built and RefreshPodStatus stored (pkg/kubelet/prober/prober.go
// runProbe); with no PodIP (a host-network pod whose runtime reports no
// address, as containerd does) it dials ":PORT", the node's own address.
// The runtime manager's hook runner sends an HTTP hook to its Host, or, when
// that is empty, to the first IP of the pod's runtime status, and fails the
// hook when there is none ("failed to find networking container",
// pkg/kubelet/lifecycle/handlers.go runHTTPHandler; kubernetes/kubernetes
// #134285): a host-network pod's HTTP hooks need a Host under containerd.
// crisim gives each sandbox an address of its own on the loopback network
// and serves its containers' files there, so both reach its containers.

// hookClient is the client of the HTTP lifecycle hooks, as the kubelet's
// insecureContainerLifecycleHTTPClient (pkg/kubelet/kubelet.go
// NewMainKubelet): no certificate check (there is nothing to verify a pod's
// certificate against) and no redirect to another host. Unlike the
// kubelet's it keeps no idle connection, so that nothing of a hook outlives
// it (the hook runner reads and closes each response's body). It is safe
// for concurrent use and shared by every provider.
var hookClient = &http.Client{
	Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		DisableKeepAlives: true,
	},
	CheckRedirect: httpprobe.RedirectChecker(false),
}
