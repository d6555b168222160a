package httpd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kri-kit/testkit/internal/httpd"
	"github.com/kri-kit/testkit/internal/httpd/httpdtest"
	"github.com/kri-kit/testkit/sim/workload"
)

// busyboxEnv, when set (make e2e sets it, having installed Debian's
// busybox-static), makes a missing busybox fail TestServersInAShell instead
// of leaving its busybox half out.
const busyboxEnv = "KRI_E2E_BUSYBOX"

func TestMain(m *testing.M) {
	httpd.RunIfInvoked()
	os.Exit(m.Run())
}

// TestServersInAShell runs a script of the vocabulary's httpd statements
// under a real sh, with busybox's httpd and with the kit's stand-in
// (internal/httpd, what the hostprocess tests put on PATH), and checks that
// the server goes through the states the vocabulary gives, in order: not
// listening during the first sleep, then serving the file (200, and a TCP
// connection accepted), then 404 once the script has removed it; and that
// -vv logs requests as Server.RequestLog says.
func TestServersInAShell(t *testing.T) {
	t.Run("stand-in", func(t *testing.T) {
		dir := t.TempDir()
		if err := httpd.Install(dir); err != nil {
			t.Fatal(err)
		}
		checkServerInAShell(t, dir)
	})
	t.Run("busybox", func(t *testing.T) {
		bb, err := exec.LookPath("busybox")
		if err != nil {
			if os.Getenv(busyboxEnv) != "" {
				t.Fatalf("%s is set but busybox is not on PATH: %v", busyboxEnv, err)
			}
			t.Skipf("busybox is not installed (make e2e installs Debian's busybox-static and sets %s): the stand-in alone was checked", busyboxEnv)
		}
		dir := t.TempDir()
		if err := os.Symlink(bb, filepath.Join(dir, "httpd")); err != nil {
			t.Fatal(err)
		}
		checkServerInAShell(t, dir)
	})
}

// syncBuffer is a bytes.Buffer safe for the writes of a process's output
// copier and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// checkServerInAShell runs the script with bin (holding httpd) first on
// PATH. The script serves the file for 1.5s; a server that a loaded
// machine starts so late that the test never sees it serve the file gets a
// second try with 15s.
func checkServerInAShell(t *testing.T, bin string) {
	windows := []time.Duration{1500 * time.Millisecond, 15 * time.Second}
	for i, serveFor := range windows {
		missed := tryServerInAShell(t, bin, serveFor)
		switch {
		case missed == "":
			return
		case i == len(windows)-1:
			t.Fatal(missed)
		}
		t.Logf("%s; trying again with %v, in case a loaded machine made this try miss", missed, windows[i+1])
	}
}

// tryServerInAShell is one try of checkServerInAShell: it fails the test
// on what no load explains and returns, when the server was first seen
// answering 404 (the file removed before the test saw it served), what it
// saw.
func tryServerInAShell(t *testing.T, bin string, serveFor time.Duration) (missed string) {
	root := t.TempDir()
	port := httpdtest.Port(t)
	const start = 300 * time.Millisecond
	script := fmt.Sprintf("trap 'exit 143' TERM; echo ok > %s/healthz; sleep %v; httpd -f -vv -p %d -h %s & sleep %v; rm -f %s/healthz; sleep infinity & wait",
		root, start.Seconds(), port, root, serveFor.Seconds(), root)
	b := workload.Parse([]string{"sh", "-c", script}, nil)
	if b.Unknown || len(b.Servers) != 1 {
		t.Fatalf("the test's script is outside the vocabulary: %+v", b)
	}
	get := workload.HTTPGet{Port: port, Path: "/healthz"}
	// The vocabulary's states, in order.
	type state struct {
		code      int
		connected bool
	}
	var want []state
	for _, at := range []time.Duration{0, start, start + serveFor} {
		code, connected := get.At(b, at, nil)
		want = append(want, state{code, connected})
	}
	if fmt.Sprint(want) != fmt.Sprint([]state{{0, false}, {200, true}, {404, true}}) {
		t.Fatalf("the vocabulary gives the states %v; the test expects not listening, 200, 404", want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Everything the group has left dies with the test.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()

	client := &http.Client{Timeout: 5 * time.Second}
	observe := func() state {
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", port))
		if err != nil {
			return state{}
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return state{resp.StatusCode, true}
	}
	// Before the first sleep is over nothing may listen: a lower bound,
	// which load cannot upset.
	if s := observe(); s.connected && time.Since(began) < start {
		t.Fatalf("the server answered %d %v after the script started, before its sleep %v was over", s.code, time.Since(began), start)
	}
	for i, w := range want[1:] {
		deadline := time.Now().Add(30 * time.Second)
		var s state
		for s = observe(); s != w && time.Now().Before(deadline); s = observe() {
			if i == 0 && s.connected {
				if s.code == http.StatusNotFound {
					return fmt.Sprintf("the server's first answer, %v after the script started, was 404: the file it serves for %v was removed already", time.Since(began), serveFor)
				}
				t.Fatalf("the server answered %d before it served the file; want %d (vocabulary states %v)", s.code, w.code, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if s != w {
			t.Fatalf("the server never reached state %v (the vocabulary's states %v); last %v; log:\n%s", w, want, s, log.String())
		}
		if w.connected {
			conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				t.Fatalf("a TCP connection to port %d failed while it serves: %v", port, err)
			}
			conn.Close()
		}
	}
	// -vv: each request's two lines, as RequestLog writes them.
	line := regexp.MustCompile(`(?m)^(\S+): url:/healthz\n(\S+): response:404$`)
	if m := line.FindStringSubmatch(log.String()); m == nil || m[1] != m[2] ||
		!strings.Contains(log.String(), b.Servers[0].RequestLog(m[1], "/healthz", 404)) {
		t.Errorf("httpd -vv logged:\n%s\nwant the lines of Server.RequestLog for a 404 of /healthz", log.String())
	}
	return ""
}

// TestServerStopsInAShell runs the vocabulary's kill $! under a real sh
// (the system's sh, and busybox's when there is one) with the kit's httpd
// stand-in and with busybox's httpd: the server listens, then, once the
// script has killed it, nothing listens on its port while the script runs
// on, as Behaviour.ListensAt says.
func TestServerStopsInAShell(t *testing.T) {
	bb, bbErr := exec.LookPath("busybox")
	needBusybox := func(t *testing.T) {
		if bbErr != nil {
			if os.Getenv(busyboxEnv) != "" {
				t.Fatalf("%s is set but busybox is not on PATH: %v", busyboxEnv, bbErr)
			}
			t.Skipf("busybox is not installed (make e2e installs Debian's busybox-static and sets %s)", busyboxEnv)
		}
	}
	for _, shell := range []string{"sh", "busybox sh"} {
		for _, server := range []string{"stand-in", "busybox"} {
			t.Run(shell+"/"+server, func(t *testing.T) {
				sh := []string{"sh"}
				if shell != "sh" {
					needBusybox(t)
					sh = []string{bb, "sh"}
				}
				dir := t.TempDir()
				if server == "busybox" {
					needBusybox(t)
					if err := os.Symlink(bb, filepath.Join(dir, "httpd")); err != nil {
						t.Fatal(err)
					}
				} else if err := httpd.Install(dir); err != nil {
					t.Fatal(err)
				}
				checkServerStopsInAShell(t, sh, dir)
			})
		}
	}
}

// checkServerStopsInAShell runs a script that kills its server under sh
// with bin (holding httpd) first on PATH.
func checkServerStopsInAShell(t *testing.T, sh []string, bin string) {
	root := t.TempDir()
	port := httpdtest.Port(t)
	// Long enough for httpd, a real process, to listen before the kill on
	// a loaded machine (busybox's took over 1.5s at load 40).
	const serveFor = 5 * time.Second
	script := fmt.Sprintf("trap 'exit 143' TERM; httpd -f -p %d -h %s & sleep %v; kill $!; sleep infinity & wait", port, root, serveFor.Seconds())
	b := workload.Parse([]string{"sh", "-c", script}, nil)
	if b.Unknown || len(b.Servers) != 1 || !b.RunsUntilKilled {
		t.Fatalf("the test's script is outside the vocabulary: %+v", b)
	}
	if !b.ListensAt(port, 0) || b.ListensAt(port, serveFor) {
		t.Fatalf("the vocabulary has the server listen at 0: %v, at %v: %v; the test expects listening, then not", b.ListensAt(port, 0), serveFor, b.ListensAt(port, serveFor))
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, sh[0], append(sh[1:], "-c", script)...)
	cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() { cancel(); <-exited }()

	// listens dials the port: connected, or refused; a dial that timed out
	// (a loaded machine) tells neither and is tried again, ten times.
	listens := func() bool {
		for range 10 {
			conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
			if err == nil {
				conn.Close()
				return true
			}
			if errors.Is(err, syscall.ECONNREFUSED) {
				return false
			}
			time.Sleep(20 * time.Millisecond)
		}
		return false
	}
	// Listening, then not: each seen within a generous deadline (a real
	// process on a loaded machine), the script running all along.
	for _, want := range []bool{true, false} {
		deadline := time.Now().Add(30 * time.Second)
		got := listens()
		for got != want && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			got = listens()
		}
		if got != want {
			t.Fatalf("the server's port never reached listening=%v (the vocabulary: listening until the script's kill $! after %v, then not); log:\n%s", want, serveFor, log.String())
		}
		select {
		case <-exited:
			t.Fatalf("the script exited (%v) while its server was to be listening=%v; log:\n%s", cmd.ProcessState, want, log.String())
		default:
		}
	}
	// Nothing listens again, and the script still runs.
	time.Sleep(200 * time.Millisecond)
	if listens() {
		t.Fatalf("the port listens again after the server was killed; log:\n%s", log.String())
	}
	select {
	case <-exited:
		t.Fatalf("the script exited (%v) after killing its server; the vocabulary has it run until killed; log:\n%s", cmd.ProcessState, log.String())
	default:
	}
}
