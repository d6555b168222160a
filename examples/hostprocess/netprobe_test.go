package hostprocess

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/internal/httpd/httpdtest"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/sim/workload"
)

// server is a container that serves dir on port with httpd (the workload
// vocabulary's) and meanwhile runs then.
func server(name, dir string, port int, then string) v1.Container {
	return shell(name, fmt.Sprintf("trap 'exit 143' TERM; httpd -f -vv -p %d -h %s & %ssleep infinity & wait", port, dir, then))
}

// netProbe is a probe of period 1s, thresholds 1.
func netProbe(h v1.ProbeHandler) *v1.Probe {
	return &v1.Probe{ProbeHandler: h, PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1}
}

func httpGet(path string, port int) v1.ProbeHandler {
	return v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: path, Port: intstr.FromInt32(int32(port))}}
}

// readyOf returns the Ready and Started of the current instance of
// container name of pod, as RefreshPodStatus reports them.
func readyOf(t *testing.T, p *Provider, pod *v1.Pod, name string) (ready, started bool) {
	t.Helper()
	var api v1.PodStatus
	p.RefreshPodStatus(pod, &api)
	for _, cs := range append(api.InitContainerStatuses, api.ContainerStatuses...) {
		if cs.Name == name {
			return cs.Ready, cs.Started != nil && *cs.Started
		}
	}
	t.Fatalf("RefreshPodStatus reports no container %q: %+v", name, api)
	return false, false
}

// An HTTP readiness probe of a file the container serves makes it Ready,
// and not Ready (404) once the file is gone, without a restart; the
// kubelet's prober sends it to the pod's address, the loopback here.
func TestHTTPReadinessProbe(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	dir, port := t.TempDir(), httpdtest.Port(t)
	if err := os.WriteFile(filepath.Join(dir, "healthz"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := server("web", dir, port, "")
	c.ReadinessProbe = netProbe(httpGet("/healthz", port))
	pod := makePod("http-ready", v1.RestartPolicyAlways, c)
	rc := kri.NewReasonCache()
	waitRunning(t, p, pod, rc, "web")
	first := current(t, p, pod, "web").ID
	eventually(t, 10*time.Second, func() bool { r, _ := readyOf(t, p, pod, "web"); return r }, "container web never Ready while it serves /healthz")
	// The file goes once the container has been seen Ready, not after a
	// fixed time an httpd slow to start on a loaded machine could miss.
	if err := os.Remove(filepath.Join(dir, "healthz")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() bool { r, _ := readyOf(t, p, pod, "web"); return !r }, "container web still Ready after /healthz is gone")
	if s := current(t, p, pod, "web"); s.ID != first || s.State != pkgcontainer.ContainerStateRunning {
		t.Errorf("container web is %s %s; want instance %s still running (readiness restarts nothing)", s.ID, s.State, first)
	}
}

// A TCP liveness probe of a port nothing listens on kills the container;
// one of the port its httpd listens on leaves it running.
func TestTCPLivenessProbe(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	dir, port, closed := t.TempDir(), httpdtest.Port(t), httpdtest.Port(t)
	alive := server("alive", dir, port, "")
	alive.LivenessProbe = netProbe(v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromString("http")}})
	alive.Ports = []v1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}
	alive.LivenessProbe.InitialDelaySeconds = 1 // httpd binds after the shell starts
	dead := shell("dead", "trap 'exit 143' TERM; sleep infinity & wait")
	dead.LivenessProbe = netProbe(v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(int32(closed))}})
	pod := makePod("tcp-liveness", v1.RestartPolicyAlways, alive, dead)
	rc := kri.NewReasonCache()
	waitRunning(t, p, pod, rc, "alive", "dead")
	first := current(t, p, pod, "alive").ID
	eventually(t, 15*time.Second, func() bool {
		mustSync(t, p, pod, rc)
		return len(statusesOf(podStatus(t, p, pod), "dead")) == 2
	}, "container dead was not restarted after its TCP liveness probe failed")
	if s := current(t, p, pod, "alive"); s.ID != first || s.State != pkgcontainer.ContainerStateRunning {
		t.Errorf("container alive is %s %s; want %s still running: its TCP liveness probe of its httpd's port passes", s.ID, s.State, first)
	}
}

// KillPod sends the preStop httpGet hook before SIGTERM: the container's
// own httpd logs the request. A postStart httpGet hook to a port nothing
// listens on fails the start with PostStartHookError.
func TestHTTPHooks(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	dir, port := t.TempDir(), httpdtest.Port(t)
	c := server("web", dir, port, "")
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/kri-prestop", Port: intstr.FromInt32(int32(port))}}}
	pod := makePod("http-prestop", v1.RestartPolicyAlways, c)
	rc := kri.NewReasonCache()
	waitRunning(t, p, pod, rc, "web")
	eventually(t, 10*time.Second, func() bool {
		conn, err := net.Dial("tcp", net.JoinHostPort(PodIP, strconv.Itoa(port)))
		if err == nil {
			conn.Close()
		}
		return err == nil
	}, "httpd of container web never listened on %d", port)
	if err := p.KillPod(testCtx(t), pod, pkgcontainer.ConvertPodStatusToRunningPod(RuntimeName, podStatus(t, p, pod)), int64p(5)); err != nil {
		t.Fatal(err)
	}
	podDir, _ := p.PodDir(pod.UID)
	log, _ := os.ReadFile(filepath.Join(podDir, "web", "0.log"))
	if !strings.Contains(string(log), "url:/kri-prestop") {
		t.Errorf("the log of container web has no request of /kri-prestop after KillPod; its preStop httpGet hook was not sent before it stopped:\n%s", log)
	}

	bad := shell("bad", "trap 'exit 143' TERM; sleep infinity & wait")
	bad.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(httpdtest.Port(t)))}}}
	pod = makePod("http-poststart", v1.RestartPolicyNever, bad)
	if err := syncPod(t, p, pod, rc); !errors.Is(err, workload.ErrPostStartHook) {
		t.Errorf("SyncPod of a container whose postStart httpGet finds nothing listening = %v, want %v", err, workload.ErrPostStartHook)
	}
}

// The runner of HTTP hooks counts any response as success (a 404 too), a
// request that got none as a failure, and ends with its context.
func TestRunHTTPHook(t *testing.T) {
	t.Parallel()
	dir, port := t.TempDir(), httpdtest.Port(t)
	p := newProvider(t)
	pod := makePod("http-hook-runner", v1.RestartPolicyAlways, server("web", dir, port, ""))
	waitRunning(t, p, pod, kri.NewReasonCache(), "web")
	get := &v1.HTTPGetAction{Path: "/missing", Port: intstr.FromString("http")}
	c := &v1.Container{Ports: []v1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}}
	eventually(t, 10*time.Second, func() bool { return runHTTPHook(testCtx(t), c, get) == nil }, "a GET of a 404 path never counted as a successful hook")
	tls := *get
	tls.Scheme = v1.URISchemeHTTPS
	if err := runHTTPHook(testCtx(t), c, &tls); err != nil {
		t.Errorf("an HTTPS hook answered in plain HTTP failed (%v); the kubelet sends it again over HTTP", err)
	}
	if err := runHTTPHook(testCtx(t), c, &v1.HTTPGetAction{Port: intstr.FromInt32(int32(httpdtest.Port(t)))}); err == nil {
		t.Error("a hook whose port nothing listens on succeeded")
	}
	if err := runHTTPHook(testCtx(t), c, &v1.HTTPGetAction{Port: intstr.FromString("nope")}); err == nil {
		t.Error("a hook whose port name the container lacks succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := runHTTPHook(ctx, c, get); err == nil {
		t.Error("a hook sent with a cancelled context succeeded")
	}
}

// A sidecar with a startup probe holds the next init container (and so the
// app containers) until the probe succeeds, as the kubelet's
// computeInitContainerActions does.
func TestSidecarStartupProbeHoldsTheNextInitContainer(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	dir, port := t.TempDir(), httpdtest.Port(t)
	const readyAfter = 2 * time.Second
	side := asSidecar(server("side", dir, port, fmt.Sprintf("sleep %v; echo ok > %s/started; ", readyAfter.Seconds(), dir)))
	side.StartupProbe = netProbe(httpGet("/started", port))
	side.StartupProbe.FailureThreshold = 30 // it fails until the file is written
	pod := withInit(makePod("sidecar-startup", v1.RestartPolicyAlways, shell("app", "trap 'exit 143' TERM; sleep infinity & wait")),
		side, ctr("next", "true"))
	rc := kri.NewReasonCache()
	eventually(t, 15*time.Second, func() bool {
		mustSync(t, p, pod, rc)
		s := podStatus(t, p, pod).FindContainerStatusByName("app")
		return s != nil && s.State == pkgcontainer.ContainerStateRunning
	}, "app container never ran")
	st := podStatus(t, p, pod)
	sideStart, next := st.FindContainerStatusByName("side").StartedAt, st.FindContainerStatusByName("next")
	if next == nil || next.StartedAt.Sub(sideStart) < readyAfter {
		t.Fatalf("init container next started %v after sidecar side, whose startup probe cannot succeed before %v: %+v", next.StartedAt.Sub(sideStart), readyAfter, next)
	}
	if _, started := readyOf(t, p, pod, "side"); !started {
		t.Error("sidecar side is not Started after the containers it held have run")
	}
}
