package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// pollInterval is how often ready probes.
const pollInterval = 100 * time.Millisecond

func runReady(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ready", flag.ContinueOnError)
	fs.SetOutput(stderr)
	etcd := fs.String("etcd", "", "etcd's client URL, http://127.0.0.1:PORT: wait until its /health reports healthy")
	kubeconfig := fs.String("kubeconfig", "", "a kubeconfig of the API server: wait until its /readyz answers ok")
	pid := fs.Int("pid", 0, "stop waiting, and fail, when this process has exited (0: do not watch one)")
	timeout := fs.Duration("timeout", time.Minute, "how long to wait")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("ready: unexpected arguments %q", fs.Args())
	}
	var p probe
	switch {
	case (*etcd == "") == (*kubeconfig == ""):
		return errors.New("ready: want exactly one of -etcd and -kubeconfig")
	case *etcd != "":
		p = etcdProbe(*etcd)
	default:
		var err error
		if p, err = apiserverProbe(*kubeconfig); err != nil {
			return err
		}
	}
	if *timeout <= 0 {
		return fmt.Errorf("ready: -timeout %v is not positive", *timeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	start := time.Now()
	if err := waitReady(ctx, p, *pid); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ready after %.1f s\n", time.Since(start).Seconds())
	return nil
}

// A probe asks once whether a server is ready; when it is not, it says
// what it saw.
type probe func(ctx context.Context) (ready bool, saw string)

// waitReady probes until p reports ready, ctx ends or the process pid (when
// not 0) has exited, and names what the last probe saw when it gives up.
func waitReady(ctx context.Context, p probe, pid int) error {
	var saw string
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		var ok bool
		ok, saw = p(ctx)
		if ok {
			return true, nil
		}
		if pid > 0 && exited(pid) {
			return false, fmt.Errorf("process %d exited before it was ready; last probe saw: %s", pid, saw)
		}
		return false, nil
	})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("not ready in time (%v); last probe saw: %s", context.Cause(ctx), saw)
	}
	return err
}

// etcdProbe asks etcd's /health: ready when it answers 200 with
// {"health":"true"}.
func etcdProbe(base string) probe {
	client := &http.Client{Timeout: 2 * time.Second}
	url := strings.TrimSuffix(base, "/") + "/health"
	return func(ctx context.Context) (bool, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err.Error()
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		var h struct {
			Health string `json:"health"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &h) != nil || h.Health != "true" {
			return false, fmt.Sprintf("GET %s: %s %s", url, resp.Status, strings.TrimSpace(string(body)))
		}
		return true, ""
	}
}

// apiserverProbe asks the API server's /readyz with the kubeconfig's
// credentials: ready when it answers 200 "ok". Otherwise it reports the
// verbose listing, which names the checks that fail.
func apiserverProbe(kubeconfig string) (probe, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("ready: loading the kubeconfig: %w", err)
	}
	cfg.Timeout = 2 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("ready: %w", err)
	}
	client := cs.Discovery().RESTClient()
	return func(ctx context.Context) (bool, string) {
		body, err := client.Get().AbsPath("/readyz").Param("verbose", "true").DoRaw(ctx)
		if err != nil {
			if len(body) > 0 {
				return false, fmt.Sprintf("GET /readyz: %v: %s", err, failingChecks(string(body)))
			}
			return false, fmt.Sprintf("GET /readyz: %v", err)
		}
		return true, ""
	}, nil
}

// failingChecks keeps, of /readyz?verbose's listing, the checks that fail
// and the last line.
func failingChecks(body string) string {
	var keep []string
	for line := range strings.Lines(body) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[-]") || strings.HasPrefix(line, "readyz check failed") {
			keep = append(keep, line)
		}
	}
	if len(keep) == 0 {
		return strings.TrimSpace(body)
	}
	return strings.Join(keep, "; ")
}

// exited reports whether the process pid is gone or a zombie (exited, not
// yet reaped by its parent).
func exited(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
