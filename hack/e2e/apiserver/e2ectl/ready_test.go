package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestEtcdProbe(t *testing.T) {
	health := `{"health":"false","reason":"RAFT NO LEADER"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(health))
	}))
	defer srv.Close()
	p := etcdProbe(srv.URL + "/")
	if ok, saw := p(t.Context()); ok || !strings.Contains(saw, "RAFT NO LEADER") {
		t.Errorf("etcd without a leader: got ready %v, saw %q; want not ready, quoting the answer", ok, saw)
	}
	health = `{"health":"true","reason":""}`
	if ok, saw := p(t.Context()); !ok {
		t.Errorf("healthy etcd: got not ready (saw %q), want ready", saw)
	}
	srv.Close()
	if ok, saw := p(t.Context()); ok || !strings.Contains(saw, "connection refused") {
		t.Errorf("etcd gone: got ready %v, saw %q; want not ready, naming the error", ok, saw)
	}
}

func TestWaitReady(t *testing.T) {
	n := 0
	ready := func(context.Context) (bool, string) { n++; return n == 3, "not yet" }
	if err := waitReady(t.Context(), ready, 0); err != nil || n != 3 {
		t.Errorf("a probe ready at its third call: got %v after %d calls, want nil after 3", err, n)
	}

	never := func(context.Context) (bool, string) { return false, "[-]etcd failed" }
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := waitReady(ctx, never, 0); err == nil || !strings.Contains(err.Error(), "not ready in time") || !strings.Contains(err.Error(), "[-]etcd failed") {
		t.Errorf("a probe never ready: got %v, want a timeout naming what it saw", err)
	}

	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := waitReady(t.Context(), never, cmd.Process.Pid)
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || time.Since(start) > 5*time.Second {
		t.Errorf("a process that has exited: got %v after %v, want at once an error saying it exited", err, time.Since(start))
	}
}

func TestExited(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if exited(pid) {
		t.Errorf("a running process: exited(%d) = true, want false", pid)
	}
	cmd.Process.Kill()
	// Not reaped yet: a zombie has exited.
	deadline := time.Now().Add(5 * time.Second)
	for !exited(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !exited(pid) {
		t.Errorf("a killed, unreaped process: exited(%d) = false, want true", pid)
	}
	cmd.Wait()
	if !exited(pid) {
		t.Errorf("a reaped process: exited(%d) = false, want true", pid)
	}
}

func TestFailingChecks(t *testing.T) {
	body := "[+]ping ok\n[-]etcd failed: reason withheld\n[+]log ok\n[-]poststarthook/rbac failed\nreadyz check failed\n"
	if got, want := failingChecks(body), "[-]etcd failed: reason withheld; [-]poststarthook/rbac failed; readyz check failed"; got != want {
		t.Errorf("failingChecks: got %q, want %q", got, want)
	}
	if got := failingChecks(" forbidden \n"); got != "forbidden" {
		t.Errorf("failingChecks of a body without checks: got %q, want it trimmed", got)
	}
}

func TestReadyCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"health":"true"}`))
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	if err := run([]string{"ready", "-etcd", srv.URL, "-timeout", "10s"}, &out, &errb); err != nil || !strings.HasPrefix(out.String(), "ready after ") {
		t.Errorf("ready -etcd of a healthy etcd: got %v, printed %q; want nil and \"ready after …\"", err, out.String())
	}
}
