package workload

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Server is a server that a container's command starts: busybox httpd in
// the foreground (-f), listening on Port of every address of the
// container's network and answering GET with the files under Dir (the
// document root, -h), 404 for a path with no file.
type Server struct {
	// At is when it starts listening, counted from the start of the
	// command.
	At time.Duration
	// Port is the TCP port it listens on (-p).
	Port int
	// Dir is the absolute path of its document root (-h).
	Dir string
	// LogsRequests is true for -vv: it logs the path and the response of
	// each request on its standard error, which the vocabulary counts as
	// Stdout (the container's log): RequestLog gives the lines.
	LogsRequests bool
	// Stops is true when the command kills the server (kill $! after
	// httpd ... &) at StopsAt, counted from the start of the command: from
	// then on nothing listens on Port, while the command runs on.
	Stops   bool
	StopsAt time.Duration
}

// listensAt reports whether s, a server of a command that still runs d
// after it started, listens then: from At until it stops.
func (s Server) listensAt(d time.Duration) bool {
	return s.At <= d && !(s.Stops && d >= s.StopsAt)
}

// httpd interprets the arguments of httpd: -f, -vv, -p PORT and -h DIR in
// any order, -f required (without it httpd leaves the container's process
// group, which the vocabulary does not model), and whether the statement
// ends with & (the shell goes on while it serves).
func httpd(args []string) (s Server, background, ok bool) {
	if n := len(args); n > 0 && args[n-1] == "&" {
		background, args = true, args[:n-1]
	}
	foreground := false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-f" && !foreground:
			foreground = true
		case a == "-vv" && !s.LogsRequests:
			s.LogsRequests = true
		case a == "-p" && i+1 < len(args) && s.Port == 0:
			i++
			port, err := strconv.Atoi(args[i])
			if err != nil || port < 1 || port > 65535 || args[i] != strconv.Itoa(port) {
				return Server{}, false, false
			}
			s.Port = port
		case a == "-h" && i+1 < len(args) && s.Dir == "":
			i++
			if !plainPath(args[i]) {
				return Server{}, false, false
			}
			s.Dir = path.Clean(args[i])
		default:
			return Server{}, false, false
		}
	}
	return s, background, foreground && s.Port != 0 && s.Dir != ""
}

// addServer adds s, started now, to b; false when a server of b already
// listens on its port (the second httpd's bind would fail).
func addServer(b *Behaviour, s Server) bool {
	for _, o := range b.Servers {
		if o.Port == s.Port {
			return false
		}
	}
	s.At = b.RunFor
	b.Servers = append(b.Servers, s)
	return true
}

// ServerAt returns the server of the command that listens on port d after
// the command started: one started by then and not stopped (kill $!),
// while the command still runs (its servers end with it: a container's
// processes die with its main process). ok is false when nothing listens
// there then.
func (b Behaviour) ServerAt(port int, d time.Duration) (s Server, ok bool) {
	if !b.RunsUntilKilled && d >= b.RunFor {
		return Server{}, false
	}
	for _, s := range b.Servers {
		if s.Port == port && s.listensAt(d) {
			return s, true
		}
	}
	return Server{}, false
}

// ListensAt reports whether something listens on TCP port d after the
// command started: whether a TCP probe of that port, or a connection of an
// HTTP probe or hook, then succeeds.
func (b Behaviour) ListensAt(port int, d time.Duration) bool {
	_, ok := b.ServerAt(port, d)
	return ok
}

// Get returns the answer to a GET of urlPath (a request's path, its query
// ignored as busybox httpd ignores it for files) with the container's
// files being files: 200 and the file's content when a file exists at Dir
// joined with the path, 404 otherwise (a path that leaves Dir included, and
// a directory, which the vocabulary does not know). nil files: none.
func (s Server) Get(urlPath string, files Files) (code int, body string) {
	p, _, _ := strings.Cut(urlPath, "?")
	if files == nil || !strings.HasPrefix(p, "/") {
		return http.StatusNotFound, ""
	}
	full := path.Join(s.Dir, p)
	if !strings.HasPrefix(full, s.Dir+"/") {
		return http.StatusNotFound, ""
	}
	if data, ok := files(full); ok {
		return http.StatusOK, data
	}
	return http.StatusNotFound, ""
}

// RequestLog returns what the server logs for a request of urlPath from
// client (host:port) answered with code: "" without -vv, else busybox
// httpd's two lines, "CLIENT: url:PATH" and "CLIENT: response:CODE" (the
// path without its query). A simulator appends them to the container's
// log when it serves a request.
func (s Server) RequestLog(client, urlPath string, code int) string {
	if !s.LogsRequests {
		return ""
	}
	p, _, _ := strings.Cut(urlPath, "?")
	return fmt.Sprintf("%s: url:%s\n%s: response:%d\n", client, p, client, code)
}

// ContainerPort resolves port, the port of a probe's or a hook's HTTP GET or
// TCP socket action, against container c as the kubelet's prober does
// (k8s.io/kubernetes/pkg/probe, ResolveContainerPort): a number is itself;
// a name is the ContainerPort of c's first port of that name, or, when c
// has none of that name, the name read as a decimal number (strconv.Atoi,
// whose error it returns when that fails too). The result must be in
// 1..65535: any other is returned with an error "invalid port number: N".
// A port of neither kind is -1 and an error. A nil c has no ports.
func ContainerPort(port intstr.IntOrString, c *v1.Container) (int, error) {
	var n int
	switch port.Type {
	case intstr.Int:
		n = int(port.IntVal)
	case intstr.String:
		found := false
		if c != nil {
			for _, p := range c.Ports {
				if p.Name == port.StrVal {
					n, found = int(p.ContainerPort), true
					break
				}
			}
		}
		if !found {
			var err error
			if n, err = strconv.Atoi(port.StrVal); err != nil {
				return n, err
			}
		}
	default:
		return -1, fmt.Errorf("intOrString had no kind: %+v", port)
	}
	if n < 1 || n > 65535 {
		return n, fmt.Errorf("invalid port number: %v", n)
	}
	return n, nil
}

// HTTPGet is a GET that the kubelet sends to a container for an HTTP probe
// or an HTTP lifecycle hook: its port resolved, its path, and whether it is
// sent over TLS.
type HTTPGet struct {
	Port  int
	Path  string
	HTTPS bool
}

// ErrNoHTTPGet is the error of HTTPGetOf for a handler that has no HTTP
// GET action.
var ErrNoHTTPGet = errors.New("no httpGet action")

// HTTPGetOf returns the GET of action a of container c, as the kubelet
// builds it (k8s.io/kubernetes/pkg/probe/http.NewRequestForHTTPGetAction):
// a named port is the container port of that name
// (ContainerPort), an empty path is /. Its host is not
// looked at: the request is taken to reach the container (the kubelet
// sends it to the pod's IP unless Host says otherwise).
func HTTPGetOf(c *v1.Container, a *v1.HTTPGetAction) (HTTPGet, error) {
	if a == nil {
		return HTTPGet{}, ErrNoHTTPGet
	}
	if c == nil {
		c = &v1.Container{}
	}
	port, err := ContainerPort(a.Port, c)
	if err != nil {
		return HTTPGet{}, fmt.Errorf("port %s of container %q: %w", a.Port.String(), c.Name, err)
	}
	p := a.Path
	if p == "" || !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	u, err := url.Parse(p)
	if err != nil {
		return HTTPGet{}, fmt.Errorf("path %q of container %q: %w", a.Path, c.Name, err)
	}
	return HTTPGet{Port: port, Path: u.Path, HTTPS: a.Scheme == v1.URISchemeHTTPS}, nil
}

// At returns the answer to g sent d after the command b started, with the
// container's files being files (nil: b.FilesAt(d), its own writes): the
// status code, and whether the connection was accepted at all. The
// vocabulary's server speaks plain HTTP: over TLS it answers nothing the
// kubelet's prober takes for a status (code 0, connected true).
func (g HTTPGet) At(b Behaviour, d time.Duration, files Files) (code int, connected bool) {
	s, ok := b.ServerAt(g.Port, d)
	if !ok {
		return 0, false
	}
	if g.HTTPS {
		return 0, true
	}
	if files == nil {
		files = b.FilesAt(d)
	}
	code, _ = s.Get(g.Path, files)
	return code, true
}

// ProbeSucceeds reports whether an HTTP probe whose GET got code succeeds
// as the kubelet's prober counts it (pkg/probe/http): a status from 200 to
// 399 (redirects are not part of the vocabulary).
func ProbeSucceeds(code int) bool {
	return code >= http.StatusOK && code < http.StatusBadRequest
}

// NetProbeAt returns the result of the HTTP or TCP probe p of container c,
// whose command behaves as b, run d after it started with the container's
// files being files (nil: b.FilesAt(d)), as the kubelet's prober counts
// it: an HTTP probe succeeds on a status from 200 to 399, a TCP probe when
// the connection is accepted. ok is false for a probe of another kind (exec,
// for which OfProbe, or gRPC, outside the vocabulary); err is the error of
// a port that does not resolve (the prober's Unknown result, a failure).
func NetProbeAt(c *v1.Container, p *v1.Probe, b Behaviour, d time.Duration, files Files) (success, ok bool, err error) {
	switch {
	case p == nil:
		return false, false, nil
	case p.HTTPGet != nil:
		g, err := HTTPGetOf(c, p.HTTPGet)
		if err != nil {
			return false, true, err
		}
		code, _ := g.At(b, d, files)
		return ProbeSucceeds(code), true, nil
	case p.TCPSocket != nil:
		if c == nil {
			c = &v1.Container{}
		}
		port, err := ContainerPort(p.TCPSocket.Port, c)
		if err != nil {
			return false, true, fmt.Errorf("port %s of container %q: %w", p.TCPSocket.Port.String(), c.Name, err)
		}
		return b.ListensAt(port, d), true, nil
	}
	return false, false, nil
}

// HTTPHookAt returns the result of the HTTP lifecycle hook h of container
// c, whose command behaves as b, run d after it started: as the kubelet's
// hook runner counts it (pkg/kubelet/lifecycle), the hook succeeds when
// its GET gets any response, whatever its status (an HTTPS hook answered
// in plain HTTP is sent again over HTTP), and fails when nothing listens.
// ok is false when h has no HTTP GET action.
func HTTPHookAt(c *v1.Container, h *v1.LifecycleHandler, b Behaviour, d time.Duration) (g HTTPGet, success, ok bool, err error) {
	if h == nil || h.HTTPGet == nil {
		return HTTPGet{}, false, false, nil
	}
	g, err = HTTPGetOf(c, h.HTTPGet)
	if err != nil {
		return HTTPGet{}, false, true, err
	}
	return g, b.ListensAt(g.Port, d), true, nil
}
