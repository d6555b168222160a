// Package httpd is a stand-in for busybox httpd that the kit's tests put on
// a container's PATH where busybox is not installed (make test needs only
// Go): it does what the workload vocabulary says httpd -f [-vv] -p PORT -h
// DIR does, on the real file system and network, so that a provider that
// runs real processes (examples/hostprocess) can be tested with HTTP and
// TCP probes. The vocabulary's own test runs the same scripts under it and
// under busybox, when there is one, to show that both agree with it.
//
// A test binary becomes the stand-in when it is started under the name
// httpd: its TestMain calls RunIfInvoked first, and Install links the name
// to the test binary in a directory that the test adds to PATH.
package httpd

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/kri-kit/testkit/sim/workload"
)

// Name is the executable name the stand-in answers to.
const Name = "httpd"

// RunIfInvoked runs the stand-in and exits when the process was started
// as Name (a link made by Install); it returns otherwise.
func RunIfInvoked() {
	if filepath.Base(os.Args[0]) != Name {
		return
	}
	if err := Main(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "httpd:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Install links dir/httpd to the running executable, so that a process
// whose PATH has dir runs the stand-in as httpd. dir must exist.
func Install(dir string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("installing the httpd stand-in: %w", err)
	}
	if err := os.Symlink(exe, filepath.Join(dir, Name)); err != nil {
		return fmt.Errorf("installing the httpd stand-in: %w", err)
	}
	return nil
}

// Main serves as httpd with args (without the program name) until the
// process is killed; log receives the -vv request log. It returns an error
// for arguments outside the vocabulary and for a port it cannot listen on
// (busybox httpd exits 1 then too).
func Main(args []string, log io.Writer) error {
	b := workload.Parse(append([]string{Name}, args...), nil)
	if b.Unknown || len(b.Servers) != 1 {
		return fmt.Errorf("arguments %q are outside the vocabulary (httpd -f [-vv] -p PORT -h DIR)", args)
	}
	s := b.Servers[0]
	l, err := net.Listen("tcp", fmt.Sprintf(":%d", s.Port))
	if err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	err = http.Serve(l, Handler(s, hostFiles, log))
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// FreePort returns a TCP port that nothing listens on now, on any address
// (the kernel's pick): a port for a test's server, which a parallel test
// does not pick at the same time.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, fmt.Errorf("picking a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// hostFiles reads the host's file system: a regular file's content.
func hostFiles(path string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return string(data), true
}

// Handler answers GET as the vocabulary's server s does, from the files
// that files returns at the moment of each request (Server.Get), and logs
// each request to log under -vv (Server.RequestLog). A simulator that
// serves a simulated container for real (a CRI simulator whose pods the
// kubelet's prober reaches) serves it with its own file table.
func Handler(s workload.Server, files workload.Files, log io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, body := s.Get(r.URL.RequestURI(), files)
		if line := s.RequestLog(r.RemoteAddr, r.URL.RequestURI(), code); line != "" && log != nil {
			_, _ = io.WriteString(log, line)
		}
		if code != http.StatusOK {
			http.Error(w, http.StatusText(code), code)
			return
		}
		_, _ = io.WriteString(w, body)
	})
}
