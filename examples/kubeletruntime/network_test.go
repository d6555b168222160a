package kubeletruntime_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/kuberuntime"

	"github.com/kri-kit/testkit/examples/kubeletruntime"
	"github.com/kri-kit/testkit/examples/kubeletruntime/crisim"
	"github.com/kri-kit/testkit/internal/httpd/httpdtest"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
)

// HTTP and TCP probes run by the kubelet's prober manager, and HTTP hooks by
// the runtime manager's hook runner, against the servers of crisim's
// containers at their pods' loopback addresses. The waits poll without an
// upper bound of their own: the test's deadline bounds them.

// simulator returns a crisim runtime of the test's own, closed after the
// provider over it has stopped (cleanups run last-in first-out), so that
// the test can exec in its containers.
func simulator(t *testing.T) *crisim.RuntimeService {
	t.Helper()
	rs := crisim.NewRuntimeService(crisim.Options{})
	t.Cleanup(func() { _ = rs.Close(t.Context()) })
	return rs
}

// agentSync is one round of a node agent's pod worker: SyncPod with the
// latest status, GetPodStatus, the API status built from it
// (podstatus.Generate) and refined by RefreshPodStatus, which keeps it for
// the probe workers. It returns both statuses.
func agentSync(t *testing.T, p *kubeletruntime.Provider, rc *kri.ReasonCache, pod *v1.Pod) (*pkgcontainer.PodStatus, v1.PodStatus) {
	t.Helper()
	st, err := p.GetPodStatus(t.Context(), pod)
	if err != nil {
		t.Fatalf("GetPodStatus: %v", err)
	}
	_ = p.SyncPod(t.Context(), pod, st, rc)
	if st, err = p.GetPodStatus(t.Context(), pod); err != nil {
		t.Fatalf("GetPodStatus: %v", err)
	}
	api := podstatus.Generate(pod, st, rc)
	p.RefreshPodStatus(pod, &api)
	pod.Status = api
	return st, api
}

// syncUntilAPI runs agentSync until cond holds of the API status, and
// returns the statuses then. It gives up, with the last status, shortly
// before the test binary's -timeout would end it without one.
func syncUntilAPI(t *testing.T, p *kubeletruntime.Provider, rc *kri.ReasonCache, pod *v1.Pod, what string, cond func(*pkgcontainer.PodStatus, v1.PodStatus) bool) (*pkgcontainer.PodStatus, v1.PodStatus) {
	t.Helper()
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-5*time.Second))
		defer cancel()
	}
	for {
		st, api := agentSync(t, p, rc, pod)
		if cond(st, api) {
			return st, api
		}
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting until %s; last status: %s, API status %+v", what, describe(st), api.ContainerStatuses)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func ready(api v1.PodStatus, name string) bool {
	for _, c := range api.ContainerStatuses {
		if c.Name == name {
			return c.Ready && c.State.Running != nil
		}
	}
	return false
}

// instances counts the instances of container name in st.
func instances(st *pkgcontainer.PodStatus, name string) int {
	n := 0
	for _, c := range st.ContainerStatuses {
		if c.Name == name {
			n++
		}
	}
	return n
}

// shell is a container running script with sh -c.
func shell(name, script string) v1.Container {
	return container(name, "sh", "-c", script)
}

// An HTTP readiness probe, run by the kubelet's prober against the pod's
// IP, makes the container Ready while its server answers 200 for the path
// and not Ready once it answers 404 (an exec removed the file).
func TestHTTPReadinessProbeFollowsTheServer(t *testing.T) {
	rs := simulator(t)
	p := newProvider(t, kubeletruntime.Options{RuntimeService: rs})
	rc := kri.NewReasonCache()
	port := httpdtest.Port(t)
	web := readyWeb(port)
	pod := newPod("ready", v1.RestartPolicyAlways, web)

	st, api := syncUntilAPI(t, p, rc, pod, "web is Ready (GET /ready answers 200)", func(_ *pkgcontainer.PodStatus, api v1.PodStatus) bool { return ready(api, "web") })
	if ip, err := netip.ParseAddr(api.PodIP); err != nil || !ip.IsLoopback() {
		t.Errorf("PodIP = %q, want the loopback address crisim gave the sandbox", api.PodIP)
	}
	id := runningID(st, "web")
	if _, _, err := rs.ExecSync(t.Context(), id, []string{"rm", "-f", "/www/ready"}, 0); err != nil {
		t.Fatalf("ExecSync rm -f /www/ready in web: %v", err)
	}
	st, _ = syncUntilAPI(t, p, rc, pod, "web is no longer Ready (GET /ready answers 404)", func(_ *pkgcontainer.PodStatus, api v1.PodStatus) bool { return !ready(api, "web") })
	if runningID(st, "web") != id {
		t.Errorf("web was restarted or stopped by a failing readiness probe: %s", describe(st))
	}
}

// TCP probes run by the kubelet's prober against the pod's IP: a readiness
// probe of the port the container listens on makes it Ready and a
// liveness probe of it keeps it running; a liveness probe of a port nothing
// listens on makes the runtime manager restart the container.
func TestTCPProbes(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{})
	rc := kri.NewReasonCache()
	open, closed := httpdtest.Port(t), httpdtest.Port(t)
	tcp := func(port int) *v1.Probe {
		return &v1.Probe{
			ProbeHandler:  v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}},
			PeriodSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1, TimeoutSeconds: 1,
		}
	}
	serving := shell("serving", fmt.Sprintf("httpd -f -p %d -h /tmp & sleep infinity & wait", open))
	serving.ReadinessProbe, serving.LivenessProbe = tcp(open), tcp(open)
	deaf := container("deaf", "sleep", "infinity")
	deaf.LivenessProbe = tcp(closed)
	pod := newPod("tcp", v1.RestartPolicyAlways, serving, deaf)

	st, _ := syncUntilAPI(t, p, rc, pod, "serving is Ready (its port accepts connections) and deaf, whose liveness probe port nothing listens on, has been restarted",
		func(st *pkgcontainer.PodStatus, api v1.PodStatus) bool {
			return ready(api, "serving") && instances(st, "deaf") >= 2 && runningID(st, "deaf") != ""
		})
	if n := instances(st, "serving"); n != 1 || runningID(st, "serving") == "" {
		t.Errorf("serving, whose liveness probe port it listens on, has %d instances (%s); want one, running", n, describe(st))
	}
}

// A postStart HTTP hook to the container's own server succeeds and one to
// a port nothing listens on fails (PostStartHookError, the container
// killed); a preStop HTTP hook reaches the server before SIGTERM, which
// logs it (httpd -vv) in the container's log.
func TestHTTPHooks(t *testing.T) {
	rs := simulator(t)
	p := newProvider(t, kubeletruntime.Options{RuntimeService: rs})
	rc := kri.NewReasonCache()
	port, closed := httpdtest.Port(t), httpdtest.Port(t)
	hooked := shell("hooked", fmt.Sprintf("trap 'exit 143' TERM; httpd -f -vv -p %d -h /tmp & sleep infinity & wait", port))
	hooked.Lifecycle = &v1.Lifecycle{
		PostStart: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/poststart", Port: intstr.FromInt32(int32(port))}},
		PreStop:   &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/prestop", Port: intstr.FromInt32(int32(port))}},
	}
	pod := newPod("hooks", v1.RestartPolicyAlways, hooked)
	st, _ := syncUntilAPI(t, p, rc, pod, "hooked is running", func(st *pkgcontainer.PodStatus, _ v1.PodStatus) bool { return runningID(st, "hooked") != "" })
	if n := instances(st, "hooked"); n != 1 {
		t.Errorf("hooked, whose postStart hook GETs its own server, has %d instances (%s), want 1", n, describe(st))
	}
	id := runningID(st, "hooked")
	if err := p.KillPod(t.Context(), pod, pkgcontainer.ConvertPodStatusToRunningPod(p.RuntimeName(), st), nil); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	resp, err := rs.ContainerStatus(t.Context(), id, false)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(resp.Status.LogPath)
	if err != nil {
		t.Fatalf("reading the log of the killed container: %v", err)
	}
	for _, want := range []string{": url:/poststart", ": url:/prestop"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log of hooked after KillPod:\n%s\nwant %q (its hooks' requests, logged by httpd -vv)", log, want)
		}
	}

	refused := container("refused", "sleep", "infinity")
	refused.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(closed))}}}
	bad := newPod("badhook", v1.RestartPolicyAlways, refused)
	err = p.SyncPod(t.Context(), bad, nil, rc)
	if item, ok := rc.Get(bad.UID, "refused"); err == nil || !ok || !errors.Is(item.Err, kuberuntime.ErrPostStartHook) {
		t.Errorf("SyncPod of a container whose postStart hook GETs port %d, where nothing listens: %v, reason %+v (%v); want PostStartHookError", closed, err, item, ok)
	}
}

// hostNetwork puts pod on the node's network, with the (empty) security
// context the API server defaults: the runtime manager asks for the node's
// namespaces only in a pod's security context
// (kuberuntime_sandbox.go generatePodSandboxLinuxConfig).
func hostNetwork(pod *v1.Pod) *v1.Pod {
	pod.Spec.HostNetwork = true
	if pod.Spec.SecurityContext == nil {
		pod.Spec.SecurityContext = &v1.PodSecurityContext{}
	}
	return pod
}

// A host-network pod, to which crisim gives no IP as containerd gives none:
// its HTTP probe reaches the container's server on the node (the prober,
// without a PodIP, sends it to ":PORT"); its HTTP hook without a host fails
// as in the kubelet ("failed to find networking container",
// kubernetes/kubernetes#134285), and succeeds with Host 127.0.0.1, the
// workaround package e2e applies.
func TestHostNetworkPod(t *testing.T) {
	p := newProvider(t, kubeletruntime.Options{})
	rc := kri.NewReasonCache()
	port := httpdtest.Port(t)
	hook := func(host string) *v1.Lifecycle {
		return &v1.Lifecycle{PostStart: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/", Host: host, Port: intstr.FromInt32(int32(port))}}}
	}
	web := shell("web", fmt.Sprintf("echo ok > /www/ready; httpd -f -p %d -h /www", port))
	web.ReadinessProbe = &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(int32(port))}},
		PeriodSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1, TimeoutSeconds: 1,
	}
	web.Lifecycle = hook("127.0.0.1")
	pod := hostNetwork(newPod("hostnet", v1.RestartPolicyAlways, web))
	_, api := syncUntilAPI(t, p, rc, pod, "web of the host-network pod is Ready (GET :PORT/ready answers 200)", func(_ *pkgcontainer.PodStatus, api v1.PodStatus) bool { return ready(api, "web") })
	if api.PodIP != "" {
		t.Errorf("PodIP of the host-network pod = %q, want none (crisim reports none, as containerd does; the agent knows no node address)", api.PodIP)
	}

	noHost := container("nohost", "sleep", "infinity")
	noHost.Lifecycle = hook("")
	bad := hostNetwork(newPod("hostnet-nohost", v1.RestartPolicyAlways, noHost))
	err := p.SyncPod(t.Context(), bad, nil, rc)
	if err == nil || !strings.Contains(err.Error(), "PostStartHookError") {
		t.Errorf("SyncPod of a host-network container whose postStart HTTP hook names no host = %v, want PostStartHookError (the kubelet finds no pod IP to send it to)", err)
	}
	if item, ok := rc.Get(bad.UID, "nohost"); !ok || !strings.Contains(item.Message, "failed to find networking container") {
		t.Errorf("reason of the failed hook = %+v (%v), want the kubelet's \"failed to find networking container\"", item, ok)
	}
}

// readyWeb is the container "web" that serves /www on port with httpd,
// /www/ready written, and whose HTTP readiness probe (period 1s, thresholds
// 1) GETs /ready through the named port "http".
func readyWeb(port int) v1.Container {
	web := shell("web", fmt.Sprintf("echo ok > /www/ready; httpd -f -p %d -h /www", port))
	web.Ports = []v1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}
	web.ReadinessProbe = &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}},
		PeriodSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1, TimeoutSeconds: 1,
	}
	return web
}
