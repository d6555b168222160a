package hostprocess

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/probe"
	httpprobe "k8s.io/kubernetes/pkg/probe/http"
	tcpprobe "k8s.io/kubernetes/pkg/probe/tcp"
)

// HTTP and TCP probes and HTTP hooks. The kubelet sends them from the node
// to the pod's IP (pkg/kubelet/prober/prober.go runProbe; for a hook,
// pkg/kubelet/lifecycle/handlers.go runHTTPHandler), or to the action's
// Host when it is set. A host process shares the host's network, as a
// host-network pod does, so the pod's address here is the loopback
// address: a port named in the pod spec is all a container needs. The
// requests are the kubelet's own: the HTTP GET of
// k8s.io/kubernetes/pkg/probe/http (NewRequestForHTTPGetAction, named
// ports resolved, the kubelet's headers; no redirect to another host
// followed) and the connection of pkg/probe/tcp.

// PodIP is the address the HTTP and TCP probes and HTTP hooks of a pod are
// sent to when their action names no host: every pod shares the host's
// network.
const PodIP = "127.0.0.1"

// The probers, stateless and safe for concurrent use, as the kubelet's
// prober builds them (followNonLocalRedirects false).
var (
	httpProber = httpprobe.New(false)
	tcpProber  = tcpprobe.New()
)

// runNetProbe runs the HTTP or TCP action of p for container c and reports
// whether it succeeded as the kubelet's prober counts it (a warning, such
// as a redirect to another host, is a success). ok is false for a probe of
// another kind.
func runNetProbe(c *v1.Container, p *v1.Probe, timeout time.Duration) (success, ok bool) {
	var (
		result probe.Result
		err    error
	)
	switch {
	case p.HTTPGet != nil:
		req, rerr := httpprobe.NewRequestForHTTPGetAction(p.HTTPGet, c, PodIP, "probe")
		if rerr != nil {
			return false, true
		}
		result, _, err = httpProber.Probe(req, timeout)
	case p.TCPSocket != nil:
		port, perr := probe.ResolveContainerPort(p.TCPSocket.Port, c)
		if perr != nil {
			return false, true
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = PodIP
		}
		result, _, err = tcpProber.Probe(host, port, timeout)
	default:
		return false, false
	}
	return err == nil && (result == probe.Success || result == probe.Warning), true
}

// hookClient sends HTTP hooks as the kubelet's does: no certificate check
// (there is nothing to verify a pod's certificate against) and no redirect
// to another host.
var hookClient = &http.Client{
	Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		// Each hook its own connection: nothing is left open between
		// hooks (and after a test).
		DisableKeepAlives: true,
	},
	CheckRedirect: httpprobe.RedirectChecker(false),
}

// runHTTPHook sends the GET of HTTP hook h of container c and returns nil
// once any response has come, whatever its status: the kubelet's hook
// runner counts only a request that got no response as a failure. An HTTPS
// GET answered in plain HTTP is sent again over HTTP, as the kubelet does.
// ctx bounds it.
func runHTTPHook(ctx context.Context, c *v1.Container, h *v1.HTTPGetAction) error {
	host := h.Host
	if host == "" {
		host = PodIP
	}
	req, err := httpprobe.NewRequestForHTTPGetAction(h, c, host, "lifecycle")
	if err != nil {
		return fmt.Errorf("HTTP hook %s: %w", h.Path, err)
	}
	req = req.WithContext(ctx)
	err = doDiscard(req)
	if err != nil && isHTTPResponseError(err) {
		plain := req.Clone(ctx)
		plain.URL.Scheme = "http"
		plain.Header.Del("Authorization")
		err = doDiscard(plain)
	}
	if err != nil {
		return fmt.Errorf("HTTP hook GET %s failed: %w", req.URL, err)
	}
	return nil
}

// doDiscard sends req and discards the response's body.
func doDiscard(req *http.Request) error {
	resp, err := hookClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<10))
	return nil
}

// isHTTPResponseError reports whether err is that of an HTTPS request
// answered in plain HTTP.
func isHTTPResponseError(err error) bool {
	var uerr *url.Error
	return errors.As(err, &uerr) && strings.Contains(uerr.Err.Error(), "server gave HTTP response to HTTPS client")
}
