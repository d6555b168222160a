package crisim_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/kubernetes/pkg/probe"
	httpprobe "k8s.io/kubernetes/pkg/probe/http"
	tcpprobe "k8s.io/kubernetes/pkg/probe/tcp"

	"github.com/kri-kit/testkit/examples/kubeletruntime/crisim"
	"github.com/kri-kit/testkit/internal/httpd/httpdtest"
)

// The servers of the containers listen for real, so these tests run on the
// wall clock, outside synctest bubbles (a goroutine waiting for a
// connection is not durably blocked), and wait for what happens later by
// polling (eventually) without an upper bound of their own.

// serving returns a runtime closed at the end of the test.
func serving(t *testing.T) *crisim.RuntimeService {
	t.Helper()
	r := crisim.NewRuntimeService(crisim.Options{})
	t.Cleanup(func() { _ = r.Close(t.Context()) })
	return r
}

// podNetwork runs a sandbox named name (on the node's network with
// hostNetwork) whose containers log under dir, and returns its ID, the IP
// its status reports and its config.
func podNetwork(t *testing.T, r *crisim.RuntimeService, name string, hostNetwork bool) (id, ip string, cfg *runtimeapi.PodSandboxConfig) {
	t.Helper()
	cfg = &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "ns", Uid: "uid-" + name},
		LogDirectory: t.TempDir(),
	}
	if hostNetwork {
		cfg.Linux = &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
		}}
	}
	id, err := r.RunPodSandbox(t.Context(), cfg, "")
	if err != nil {
		t.Fatalf("RunPodSandbox %s: %v", name, err)
	}
	resp, err := r.PodSandboxStatus(t.Context(), id, false)
	if err != nil {
		t.Fatalf("PodSandboxStatus %s: %v", name, err)
	}
	return id, resp.Status.GetNetwork().GetIp(), cfg
}

// startIn starts container name in sandbox sb running script with sh -c,
// logging to its CRI log, and returns its ID and the log's path.
func startIn(t *testing.T, r *crisim.RuntimeService, sb string, cfg *runtimeapi.PodSandboxConfig, name, script string) (id, logPath string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(cfg.LogDirectory, name), 0o755); err != nil {
		t.Fatal(err)
	}
	id, err := r.CreateContainer(t.Context(), sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: "busybox:1.36"},
		Command:  []string{"sh", "-c", script},
		LogPath:  name + "/0.log",
	}, cfg)
	if err != nil {
		t.Fatalf("CreateContainer %s: %v", name, err)
	}
	if err := r.StartContainer(t.Context(), id); err != nil {
		t.Fatalf("StartContainer %s %q: %v", name, script, err)
	}
	return id, filepath.Join(cfg.LogDirectory, name, "0.log")
}

// get sends GET url and returns the status and body; code 0 when the
// request got no response.
func get(t *testing.T, url string) (code int, body string, err error) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), err
}

// listens reports whether a TCP connection to addr is accepted.
func listens(addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// eventually polls cond until it holds; it gives up shortly before the
// test binary's -timeout would end the test without saying what it waited
// for.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-5*time.Second))
		defer cancel()
	}
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting until %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// A sandbox has an address of its own in the loopback network, on which a
// container running httpd serves its files: the file its command wrote
// answers 200, a missing one 404, and once an exec removed the file, 404;
// with -vv each request is in the container's CRI log after its exit; once
// it is stopped nothing listens.
func TestAContainerServesItsFilesAtTheSandboxIP(t *testing.T) {
	r := serving(t)
	port := httpdtest.Port(t)
	sb, ip, cfg := podNetwork(t, r, "web", false)
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is4() || a.As4()[0] != 127 || a == netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("the sandbox's IP is %q (%v), want an address of 127.0.0.0/8 other than the node's 127.0.0.1", ip, err)
	}
	id, logPath := startIn(t, r, sb, cfg, "web",
		fmt.Sprintf("echo ok > /www/healthz; httpd -f -vv -p %d -h /www", port))
	base := "http://" + net.JoinHostPort(ip, strconv.Itoa(port))

	if code, body, err := get(t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET /healthz of the running container: %d %q (%v), want 200 %q", code, body, err, "ok\n")
	}
	if code, _, err := get(t, base+"/missing"); code != http.StatusNotFound {
		t.Errorf("GET /missing: %d (%v), want 404", code, err)
	}
	if _, _, err := r.ExecSync(t.Context(), id, []string{"rm", "-f", "/www/healthz"}, 0); err != nil {
		t.Fatalf("ExecSync rm -f /www/healthz: %v", err)
	}
	if code, _, err := get(t, base+"/healthz"); code != http.StatusNotFound {
		t.Errorf("GET /healthz after an exec removed it: %d (%v), want 404", code, err)
	}
	if err := r.StopContainer(t.Context(), id, 0); err != nil {
		t.Fatal(err)
	}
	if listens(net.JoinHostPort(ip, strconv.Itoa(port))) {
		t.Errorf("port %d of %s accepts connections after StopContainer", port, ip)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{" stdout F ", ": url:/healthz", ": response:200", ": url:/missing", ": response:404"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("CRI log of the stopped container:\n%s\nwant %q in it (httpd -vv logs each request)", data, want)
		}
	}
}

// The kubelet's own probes (k8s.io/kubernetes/pkg/probe/http and tcp, as
// its prober runs them against the pod's IP) see the container's server:
// an HTTP probe succeeds while the file exists and fails with 404 once it is
// gone; a TCP probe succeeds while httpd listens and fails once the
// container has been stopped.
func TestTheKubeletsProbesReachTheContainer(t *testing.T) {
	r := serving(t)
	port := httpdtest.Port(t)
	sb, ip, cfg := podNetwork(t, r, "probed", false)
	id, _ := startIn(t, r, sb, cfg, "app",
		fmt.Sprintf("echo ok > /tmp/ready; httpd -f -p %d -h /tmp & sleep infinity & wait", port))
	container := &v1.Container{Name: "app", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}}
	httpProbe := func() (probe.Result, string) {
		t.Helper()
		req, err := httpprobe.NewRequestForHTTPGetAction(&v1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}, container, ip, "probe")
		if err != nil {
			t.Fatal(err)
		}
		res, out, err := httpprobe.New(false).Probe(req, time.Second)
		if err != nil {
			t.Fatalf("HTTP probe: %v", err)
		}
		return res, out
	}
	tcpProbe := func() probe.Result {
		t.Helper()
		res, _, err := tcpprobe.New().Probe(ip, port, time.Second)
		if err != nil {
			t.Fatalf("TCP probe: %v", err)
		}
		return res
	}
	if res, out := httpProbe(); res != probe.Success {
		t.Errorf("HTTP probe of /ready while the file exists: %s (%s), want success", res, out)
	}
	if res := tcpProbe(); res != probe.Success {
		t.Errorf("TCP probe of port %d while httpd listens: %s, want success", port, res)
	}
	if _, _, err := r.ExecSync(t.Context(), id, []string{"rm", "-f", "/tmp/ready"}, 0); err != nil {
		t.Fatal(err)
	}
	if res, out := httpProbe(); res != probe.Failure || !strings.Contains(out, "404") {
		t.Errorf("HTTP probe of /ready once the file is gone: %s (%s), want a failure with status 404", res, out)
	}
	if err := r.StopContainer(t.Context(), id, 30); err != nil {
		t.Fatal(err)
	}
	if res := tcpProbe(); res != probe.Failure {
		t.Errorf("TCP probe of port %d after StopContainer: %s, want failure", port, res)
	}
}

// A server opens when the sleeps before it are over and closes when the
// container exits on its own, with nobody looking at the container; a
// removed container's server closes too.
func TestServersOpenAndCloseWithTheirContainer(t *testing.T) {
	r := serving(t)
	sb, ip, cfg := podNetwork(t, r, "timed", false)
	addr := func(port int) string { return net.JoinHostPort(ip, strconv.Itoa(port)) }

	late := httpdtest.Port(t)
	startIn(t, r, sb, cfg, "late", fmt.Sprintf("sleep 3600; httpd -f -p %d -h /tmp", late))
	if listens(addr(late)) {
		t.Errorf("port %d accepts connections at once; its httpd starts after an hour", late)
	}
	soon := httpdtest.Port(t)
	startIn(t, r, sb, cfg, "soon", fmt.Sprintf("sleep 0.2; httpd -f -p %d -h /tmp", soon))
	eventually(t, fmt.Sprintf("port %d, whose httpd starts after 0.2s, accepts connections", soon), func() bool { return listens(addr(soon)) })

	brief := httpdtest.Port(t)
	startIn(t, r, sb, cfg, "brief", fmt.Sprintf("httpd -f -p %d -h /tmp & sleep 0.2; exit 0", brief))
	eventually(t, fmt.Sprintf("port %d closes after its container exited on its own", brief), func() bool { return !listens(addr(brief)) })

	killed := httpdtest.Port(t)
	kid, _ := startIn(t, r, sb, cfg, "killed", fmt.Sprintf("httpd -f -p %d -h /tmp & sleep 0.2; kill $!; sleep infinity & wait", killed))
	eventually(t, fmt.Sprintf("port %d closes once its container's command killed its httpd (kill $!)", killed), func() bool { return !listens(addr(killed)) })
	if st, err := r.ContainerStatus(t.Context(), kid, false); err != nil || st.GetStatus().GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("the container whose command killed its httpd is not running (it sleeps on): %v, %v", st.GetStatus().GetState(), err)
	}
	atOnce := httpdtest.Port(t)
	startIn(t, r, sb, cfg, "atonce", fmt.Sprintf("httpd -f -p %d -h /tmp & kill $!; sleep infinity & wait", atOnce))
	if listens(addr(atOnce)) {
		t.Errorf("port %d accepts connections; its command killed its httpd at once", atOnce)
	}

	removed := httpdtest.Port(t)
	id, _ := startIn(t, r, sb, cfg, "removed", fmt.Sprintf("httpd -f -p %d -h /tmp", removed))
	if !listens(addr(removed)) {
		t.Fatalf("port %d does not accept connections after StartContainer of httpd -f -p %d", removed, removed)
	}
	if err := r.RemoveContainer(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if listens(addr(removed)) {
		t.Errorf("port %d accepts connections after RemoveContainer of the running container", removed)
	}
}

// Each sandbox has its own address, so two pods serve on the same port;
// containers of a host-network sandbox, which reports no IP (as containerd
// reports none), listen on the node's 127.0.0.1, where a request to the
// empty host (":PORT", what the kubelet's prober sends when the pod has no
// IP) arrives, and a second server on the port of the first one cannot bind
// it: it says so in its log. RemovePodSandbox closes the servers of its
// containers.
func TestSandboxNetworks(t *testing.T) {
	r := serving(t)
	port := httpdtest.Port(t)
	sbA, ipA, cfgA := podNetwork(t, r, "a", false)
	sbB, ipB, cfgB := podNetwork(t, r, "b", false)
	if ipA == ipB {
		t.Fatalf("two sandboxes both have IP %s", ipA)
	}
	script := func(name string) string {
		return fmt.Sprintf("echo %s > /www/who; httpd -f -p %d -h /www", name, port)
	}
	startIn(t, r, sbA, cfgA, "a", script("a"))
	startIn(t, r, sbB, cfgB, "b", script("b"))
	for ip, want := range map[string]string{ipA: "a\n", ipB: "b\n"} {
		if code, body, err := get(t, fmt.Sprintf("http://%s/who", net.JoinHostPort(ip, strconv.Itoa(port)))); code != http.StatusOK || body != want {
			t.Errorf("GET /who on %s port %d: %d %q (%v), want 200 %q", ip, port, code, body, err, want)
		}
	}

	hostPort := httpdtest.Port(t)
	sbH, ipH, cfgH := podNetwork(t, r, "host", true)
	if ipH != "" {
		t.Errorf("the host-network sandbox reports IP %q, want none", ipH)
	}
	startIn(t, r, sbH, cfgH, "first", fmt.Sprintf("echo host > /www/who; httpd -f -p %d -h /www", hostPort))
	if code, body, err := get(t, fmt.Sprintf("http://:%d/who", hostPort)); code != http.StatusOK || body != "host\n" {
		t.Errorf("GET http://:%d/who of the host-network container: %d %q (%v), want 200 %q", hostPort, code, body, err, "host\n")
	}
	second, logPath := startIn(t, r, sbH, cfgH, "second", fmt.Sprintf("httpd -f -p %d -h /www", hostPort))
	if err := r.StopContainer(t.Context(), second, 0); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(logPath); err != nil || !strings.Contains(string(data), "httpd: bind") {
		t.Errorf("log of a second httpd on port %d of the host network: %q (%v), want its bind error", hostPort, data, err)
	}

	if err := r.RemovePodSandbox(t.Context(), sbA); err != nil {
		t.Fatal(err)
	}
	if listens(net.JoinHostPort(ipA, strconv.Itoa(port))) {
		t.Errorf("%s port %d accepts connections after RemovePodSandbox", ipA, port)
	}
}

// Close closes every server and stops the timers of those still to open:
// nothing listens afterwards, and a container started after it serves
// nothing. Close twice is fine.
func TestCloseEndsEveryServer(t *testing.T) {
	r := crisim.NewRuntimeService(crisim.Options{})
	sb, ip, cfg := podNetwork(t, r, "closed", false)
	open, later, after := httpdtest.Port(t), httpdtest.Port(t), httpdtest.Port(t)
	startIn(t, r, sb, cfg, "open", fmt.Sprintf("httpd -f -p %d -h /tmp", open))
	startIn(t, r, sb, cfg, "later", fmt.Sprintf("sleep 0.1; httpd -f -p %d -h /tmp", later))
	if err := r.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	startIn(t, r, sb, cfg, "after", fmt.Sprintf("httpd -f -p %d -h /tmp", after))
	time.Sleep(200 * time.Millisecond) // past the time the second would open
	for _, port := range []int{open, later, after} {
		if listens(net.JoinHostPort(ip, strconv.Itoa(port))) {
			t.Errorf("port %d accepts connections after Close", port)
		}
	}
	if err := r.Close(t.Context()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A request in flight when the container stops gets no answer or an answer,
// never a hang; Close waits for its goroutines (goleak checks in TestMain).
func TestStopWhileServing(t *testing.T) {
	r := serving(t)
	port := httpdtest.Port(t)
	sb, ip, cfg := podNetwork(t, r, "busy", false)
	id, _ := startIn(t, r, sb, cfg, "app", fmt.Sprintf("echo x > /tmp/x; httpd -f -vv -p %d -h /tmp", port))
	url := fmt.Sprintf("http://%s/x", net.JoinHostPort(ip, strconv.Itoa(port)))
	codes := make(chan int, 8)
	for range cap(codes) {
		go func() {
			code, _, _ := get(t, url)
			codes <- code
		}()
	}
	if err := r.StopContainer(t.Context(), id, 0); err != nil {
		t.Fatal(err)
	}
	for range cap(codes) {
		if code := <-codes; code != 0 && code != http.StatusOK {
			t.Errorf("GET %s while the container stopped: status %d, want 200 or no answer", url, code)
		}
	}
}
