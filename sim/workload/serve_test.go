package workload_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kri-kit/testkit/sim/workload"
)

func TestParseServers(t *testing.T) {
	forever := workload.Behaviour{RunsUntilKilled: true, Unknown: true}
	web := workload.Server{Port: 8080, Dir: "/tmp"}
	tests := []struct {
		name string
		argv []string
		want workload.Behaviour
	}{
		{"httpd in the foreground serves until killed", []string{"httpd", "-f", "-p", "8080", "-h", "/tmp"},
			workload.Behaviour{RunsUntilKilled: true, Servers: []workload.Server{web}}},
		{"options in any order, -vv logs requests", []string{"/bin/httpd", "-h", "/www/", "-vv", "-f", "-p", "80"},
			workload.Behaviour{RunsUntilKilled: true, Servers: []workload.Server{{Port: 80, Dir: "/www", LogsRequests: true}}}},
		{"exec httpd under sh", []string{"sh", "-c", "echo ok > /tmp/healthz; exec httpd -f -p 8080 -h /tmp"},
			workload.Behaviour{RunsUntilKilled: true, Servers: []workload.Server{web},
				Writes: []workload.Write{{Path: "/tmp/healthz", Data: "ok\n"}}}},
		{"httpd in the background, then the script goes on", []string{"sh", "-c", "trap 'exit 143' TERM; echo ok > /tmp/healthz; sleep 1; httpd -f -p 8080 -h /tmp & sleep 10; rm -f /tmp/healthz; sleep infinity & wait"},
			workload.Behaviour{RunsUntilKilled: true, RunFor: 11 * time.Second, TrapsSIGTERM: true, SIGTERMExitCode: 143, TrapDeferred: true,
				Servers: []workload.Server{{At: time.Second, Port: 8080, Dir: "/tmp"}},
				Writes:  []workload.Write{{Path: "/tmp/healthz", Data: "ok\n"}, {At: 11 * time.Second, Path: "/tmp/healthz", Remove: true}}}},
		{"background httpd as a statement of its own", []string{"sh", "-c", "httpd -f -p 1 -h /tmp &\nsleep 2"},
			workload.Behaviour{RunFor: 2 * time.Second, Servers: []workload.Server{{Port: 1, Dir: "/tmp"}}}},
		{"two servers on two ports", []string{"sh", "-c", "httpd -f -p 81 -h /a & httpd -f -p 82 -h /b"},
			workload.Behaviour{RunsUntilKilled: true, Servers: []workload.Server{{Port: 81, Dir: "/a"}, {Port: 82, Dir: "/b"}}}},
		{"a foreground httpd defers the shell's trap", []string{"sh", "-c", "trap 'exit 1' TERM; httpd -f -p 80 -h /tmp"},
			workload.Behaviour{RunsUntilKilled: true, TrapsSIGTERM: true, SIGTERMExitCode: 1, TrapDeferred: true, Servers: []workload.Server{{Port: 80, Dir: "/tmp"}}}},
		{"without -f httpd daemonizes: outside the vocabulary", []string{"httpd", "-p", "8080", "-h", "/tmp"}, forever},
		{"without -p: outside the vocabulary", []string{"httpd", "-f", "-h", "/tmp"}, forever},
		{"without -h: outside the vocabulary", []string{"httpd", "-f", "-p", "80"}, forever},
		{"IP:PORT is outside the vocabulary", []string{"httpd", "-f", "-p", "127.0.0.1:80", "-h", "/tmp"}, forever},
		{"port 0 is outside the vocabulary", []string{"httpd", "-f", "-p", "0", "-h", "/tmp"}, forever},
		{"port 65536 is outside the vocabulary", []string{"httpd", "-f", "-p", "65536", "-h", "/tmp"}, forever},
		{"a port with a sign is outside the vocabulary", []string{"httpd", "-f", "-p", "+80", "-h", "/tmp"}, forever},
		{"a relative root is outside the vocabulary", []string{"httpd", "-f", "-p", "80", "-h", "www"}, forever},
		{"-p twice is outside the vocabulary", []string{"httpd", "-f", "-p", "80", "-p", "81", "-h", "/tmp"}, forever},
		{"-v alone is outside the vocabulary", []string{"httpd", "-f", "-v", "-p", "80", "-h", "/tmp"}, forever},
		{"a dangling -p is outside the vocabulary", []string{"httpd", "-f", "-h", "/tmp", "-p"}, forever},
		{"& outside sh is outside the vocabulary", []string{"httpd", "-f", "-p", "80", "-h", "/tmp", "&", "x"}, forever},
		{"a second server on the same port is outside the vocabulary", []string{"sh", "-c", "httpd -f -p 80 -h /a & httpd -f -p 80 -h /b"}, forever},
		{"kill $! stops the server started last in the background", []string{"sh", "-c", "trap 'exit 143' TERM; httpd -f -p 81 -h /a & sleep 1; httpd -f -p 82 -h /b & sleep 2.5; kill $!; sleep infinity & wait"},
			workload.Behaviour{RunsUntilKilled: true, RunFor: 3500 * time.Millisecond, TrapsSIGTERM: true, SIGTERMExitCode: 143, TrapDeferred: true,
				Servers: []workload.Server{{Port: 81, Dir: "/a"}, {At: time.Second, Port: 82, Dir: "/b", Stops: true, StopsAt: 3500 * time.Millisecond}}}},
		{"kill $! at once", []string{"sh", "-c", "httpd -f -p 81 -h /a & kill $!; sleep 3"},
			workload.Behaviour{RunFor: 3 * time.Second, Servers: []workload.Server{{Port: 81, Dir: "/a", Stops: true}}}},
		{"kill $! without a server in the background is outside the vocabulary", []string{"sh", "-c", "sleep 1; kill $!; sleep 3"}, forever},
		{"kill $! after a foreground httpd is outside the vocabulary", []string{"sh", "-c", "kill $!; httpd -f -p 81 -h /a"}, forever},
		{"kill $! after sleep & wait is outside the vocabulary ($! is the sleep)", []string{"sh", "-c", "httpd -f -p 81 -h /a & sleep 1 & wait; kill $!"}, forever},
		{"kill $! twice is outside the vocabulary", []string{"sh", "-c", "httpd -f -p 81 -h /a & sleep 1; kill $!; kill $!"}, forever},
		{"kill $! of a server that ignores SIGTERM is outside the vocabulary", []string{"sh", "-c", "trap '' TERM; httpd -f -p 81 -h /a & sleep 1; kill $!; sleep 3"}, forever},
		{"kill of anything but $! is outside the vocabulary", []string{"sh", "-c", "httpd -f -p 81 -h /a & sleep 1; kill %1; sleep 3"}, forever},
		{"kill $! alone is outside the vocabulary", []string{"kill", "$!"}, forever},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := workload.Parse(tt.argv, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.argv, diff)
			}
		})
	}
}

// served is the container of the package doc's example: it serves /tmp on
// 8080 from its start, /tmp/healthz from 0 to 10s, and exits at 30s when
// exits is set.
func served(exits bool) (*v1.Container, workload.Behaviour) {
	end := "sleep infinity & wait"
	if exits {
		end = "sleep 20; exit 0"
	}
	c := &v1.Container{Name: "web", Command: []string{"sh", "-c", "echo ok > /tmp/healthz; sleep 1; httpd -f -p 8080 -h /tmp & sleep 9; rm -f /tmp/healthz; " + end},
		Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
	return c, workload.OfEnv(c)
}

func TestListensAt(t *testing.T) {
	_, b := served(true)
	for _, tt := range []struct {
		port int
		at   time.Duration
		want bool
	}{
		{8080, 0, false},                // httpd starts after the sleep
		{8080, time.Second, true},       // at once then
		{8080, 29 * time.Second, true},  // after the file is gone too
		{8080, 30 * time.Second, false}, // the container has exited
		{8081, 5 * time.Second, false},  // another port
		{8080, time.Second - time.Nanosecond, false},
	} {
		if got := b.ListensAt(tt.port, tt.at); got != tt.want {
			t.Errorf("ListensAt(%d, %v) = %v, want %v (servers %+v, run for %v)", tt.port, tt.at, got, tt.want, b.Servers, b.RunFor)
		}
	}
	stops := workload.Parse([]string{"sh", "-c", "httpd -f -p 80 -h /tmp & sleep 2; kill $!; sleep infinity & wait"}, nil)
	for _, tt := range []struct {
		at   time.Duration
		want bool
	}{{0, true}, {2*time.Second - time.Nanosecond, true}, {2 * time.Second, false}, {1000 * time.Hour, false}} {
		if got := stops.ListensAt(80, tt.at); got != tt.want {
			t.Errorf("a server killed (kill $!) after 2s: ListensAt(80, %v) = %v, want %v (servers %+v)", tt.at, got, tt.want, stops.Servers)
		}
	}
	if s, ok := stops.ServerAt(80, 3*time.Second); ok {
		t.Errorf("ServerAt(80, 3s) = %+v of a server killed after 2s", s)
	}
	if forever := workload.Parse([]string{"httpd", "-f", "-p", "80", "-h", "/tmp"}, nil); !forever.ListensAt(80, 1000*time.Hour) {
		t.Error("a foreground httpd does not listen after 1000h; it runs until killed")
	}
}

func TestHTTPGetAt(t *testing.T) {
	c, b := served(false)
	get := func(path string) workload.HTTPGet {
		g, err := workload.HTTPGetOf(c, &v1.HTTPGetAction{Path: path, Port: intstr.FromString("http")})
		if err != nil {
			t.Fatalf("HTTPGetOf(%q): %v", path, err)
		}
		return g
	}
	for _, tt := range []struct {
		path      string
		at        time.Duration
		files     workload.Files
		code      int
		connected bool
	}{
		{"/healthz", 500 * time.Millisecond, nil, 0, false},
		{"/healthz", 2 * time.Second, nil, http.StatusOK, true},
		{"/healthz?probe=1", 2 * time.Second, nil, http.StatusOK, true},
		{"healthz", 2 * time.Second, nil, http.StatusOK, true}, // the kubelet adds the leading /
		{"/healthz", 10 * time.Second, nil, http.StatusNotFound, true},
		{"/other", 2 * time.Second, nil, http.StatusNotFound, true},
		{"/../tmp/healthz", 2 * time.Second, nil, http.StatusOK, true}, // cleaned, as a URL path is
		{"/", 2 * time.Second, nil, http.StatusNotFound, true},
		// A file table of the simulator's (an exec wrote /tmp/extra).
		{"/extra", 12 * time.Second, func(p string) (string, bool) { return "x", p == "/tmp/extra" }, http.StatusOK, true},
	} {
		code, connected := get(tt.path).At(b, tt.at, tt.files)
		if code != tt.code || connected != tt.connected {
			t.Errorf("GET %s at %v = %d, connected %v; want %d, %v", tt.path, tt.at, code, connected, tt.code, tt.connected)
		}
	}
	if g := get("/x"); g.Port != 8080 || g.HTTPS {
		t.Errorf("HTTPGetOf(port http) = %+v, want port 8080 over HTTP", g)
	}
	if _, err := workload.HTTPGetOf(c, &v1.HTTPGetAction{Port: intstr.FromString("nope")}); err == nil {
		t.Error("HTTPGetOf(an unknown port name) succeeded; want an error")
	}
	if _, err := workload.HTTPGetOf(c, nil); err == nil {
		t.Error("HTTPGetOf(nil) succeeded; want ErrNoHTTPGet")
	}
	tls := workload.HTTPGet{Port: 8080, Path: "/healthz", HTTPS: true}
	if code, connected := tls.At(b, 2*time.Second, nil); code != 0 || !connected {
		t.Errorf("HTTPS GET of a plain HTTP server = %d, connected %v; want no status, connected", code, connected)
	}
}

func TestNetProbeAt(t *testing.T) {
	c, b := served(false)
	httpProbe := &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}}
	tcpProbe := &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromString("http")}}}
	badPort := &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromString("none")}}}
	for _, tt := range []struct {
		name    string
		p       *v1.Probe
		at      time.Duration
		success bool
		ok      bool
		err     bool
	}{
		{"HTTP before httpd listens", httpProbe, 0, false, true, false},
		{"HTTP while the file exists", httpProbe, 5 * time.Second, true, true, false},
		{"HTTP once it is removed: 404", httpProbe, 10 * time.Second, false, true, false},
		{"TCP before httpd listens", tcpProbe, 0, false, true, false},
		{"TCP while httpd listens, named port", tcpProbe, 20 * time.Second, true, true, false},
		{"TCP of a port name the container lacks", badPort, 5 * time.Second, false, true, true},
		{"exec is not a network probe", &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}, 0, false, false, false},
		{"gRPC is outside the vocabulary", &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 8080}}}, 5 * time.Second, false, false, false},
		{"no probe", nil, 0, false, false, false},
	} {
		success, ok, err := workload.NetProbeAt(c, tt.p, b, tt.at, nil)
		if success != tt.success || ok != tt.ok || (err != nil) != tt.err {
			t.Errorf("%s: NetProbeAt at %v = %v, %v, %v; want %v, %v, error %v", tt.name, tt.at, success, ok, err, tt.success, tt.ok, tt.err)
		}
	}
}

func TestHTTPHookAt(t *testing.T) {
	c, b := served(false)
	hook := &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/kri-prestop", Port: intstr.FromInt32(8080)}}
	// The kubelet's hook runner takes any answer, 404 too, for success.
	if g, success, ok, err := workload.HTTPHookAt(c, hook, b, 2*time.Second); !success || !ok || err != nil || g.Path != "/kri-prestop" {
		t.Errorf("HTTPHookAt a listening server = %+v, %v, %v, %v; want success", g, success, ok, err)
	}
	if _, success, ok, _ := workload.HTTPHookAt(c, hook, b, 0); success || !ok {
		t.Errorf("HTTPHookAt before httpd listens = %v, %v; want a failure", success, ok)
	}
	if _, _, ok, _ := workload.HTTPHookAt(c, &v1.LifecycleHandler{Exec: &v1.ExecAction{}}, b, 0); ok {
		t.Error("HTTPHookAt of an exec hook = ok; want not an HTTP hook")
	}
	bad := &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromString("none")}}
	if _, success, ok, err := workload.HTTPHookAt(c, bad, b, 2*time.Second); success || !ok || err == nil {
		t.Errorf("HTTPHookAt with an unknown port name = %v, %v, %v; want a failure with an error", success, ok, err)
	}
}

func TestRequestLog(t *testing.T) {
	s := workload.Server{Port: 80, Dir: "/tmp", LogsRequests: true}
	if got, want := s.RequestLog("127.0.0.1:4242", "/kri-prestop?x=1", 404), "127.0.0.1:4242: url:/kri-prestop\n127.0.0.1:4242: response:404\n"; got != want {
		t.Errorf("RequestLog = %q, want %q (busybox httpd -vv)", got, want)
	}
	s.LogsRequests = false
	if got := s.RequestLog("127.0.0.1:4242", "/", 200); got != "" {
		t.Errorf("RequestLog without -vv = %q, want nothing", got)
	}
}
