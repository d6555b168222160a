package crisim

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kri-kit/testkit/internal/httpd"
	"github.com/kri-kit/testkit/sim/workload"
)

// Pod addresses and servers. The kubelet's prober sends HTTP and TCP probes
// to the pod's IP (pkg/kubelet/prober/prober.go runProbe: status.PodIP),
// and its hook runner sends an HTTP hook without a host to the first IP of
// the pod's runtime status (pkg/kubelet/lifecycle/handlers.go
// runHTTPHandler). So that they reach the simulated containers, every
// sandbox gets an address of its own in the loopback network 127.0.0.0/8,
// on which the servers of its containers listen for real; a host-network
// sandbox reports no address, as containerd reports none for it, and its
// containers listen on the node's 127.0.0.1, where the prober's request to
// the empty host (":PORT") arrives. Linux routes all of 127.0.0.0/8 to the
// loopback interface; where only 127.0.0.1 is configured (macOS), the
// servers of a sandbox with an address of its own cannot bind, and say so
// in their container's log.

// hostLoopback is the address the servers of a host-network sandbox listen
// on.
var hostLoopback = netip.MustParseAddr("127.0.0.1")

// loopbackPool hands out sandbox addresses in 127.0.1.0 to 127.255.255.254
// (127.0.0.0/24 is left to the node), one at a time, each until it is
// released: from a random place, so that the runtimes of two test
// processes are unlikely to hand out the same addresses, and with the low
// byte never 0 or 255. Not safe for concurrent use: the runtime's lock
// guards it.
type loopbackPool struct {
	next  uint32 // host part (the low 24 bits) of the next address to try
	inUse map[netip.Addr]bool
}

const (
	loopbackFirst = 1 << 8       // 127.0.1.0
	loopbackSize  = 1<<24 - 1<<8 // up to 127.255.255.255
)

func newLoopbackPool() *loopbackPool {
	return &loopbackPool{next: loopbackFirst + rand.Uint32N(loopbackSize), inUse: map[netip.Addr]bool{}}
}

// take returns an address not in use and marks it used.
func (p *loopbackPool) take() netip.Addr {
	for {
		host := p.next
		p.next++
		if p.next >= loopbackFirst+loopbackSize {
			p.next = loopbackFirst
		}
		if b := host & 0xff; b == 0 || b == 0xff {
			continue
		}
		a := netip.AddrFrom4([4]byte{127, byte(host >> 16), byte(host >> 8), byte(host)})
		if !p.inUse[a] {
			p.inUse[a] = true
			return a
		}
	}
}

// release makes a usable again.
func (p *loopbackPool) release(a netip.Addr) { delete(p.inUse, a) }

// sandboxNetwork is the network of a sandbox: the address its containers'
// servers listen on, and whether it is the node's (host network: the
// sandbox reports no IP).
type sandboxNetwork struct {
	addr netip.Addr
	host bool
}

// newSandboxNetwork gives a sandbox of config its network, and returns the
// network status it reports. The caller holds the lock.
func (r *RuntimeService) newSandboxNetwork(id string, config *runtimeapi.PodSandboxConfig) *runtimeapi.PodSandboxNetworkStatus {
	if config.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE {
		r.networks[id] = sandboxNetwork{addr: hostLoopback, host: true}
		return &runtimeapi.PodSandboxNetworkStatus{}
	}
	a := r.ips.take()
	r.networks[id] = sandboxNetwork{addr: a}
	return &runtimeapi.PodSandboxNetworkStatus{Ip: a.String()}
}

// dropSandboxNetwork releases the network of sandbox id. The caller holds
// the lock.
func (r *RuntimeService) dropSandboxNetwork(id string) {
	if n, ok := r.networks[id]; ok && !n.host {
		r.ips.release(n.addr)
	}
	delete(r.networks, id)
}

// server is one server of a container's command (httpd): scheduled to open
// at the container's start plus its At, open from then until the
// container's process ends, or until its command kills it (kill $!: its
// StopsAt).
type server struct {
	s workload.Server
	// opening is the timer that opens it (At > 0), nil once it has fired
	// or been stopped; closing the timer that closes it (Stops), likewise.
	opening, closing *time.Timer
	// killed is set once its command has killed it: it never opens again.
	killed bool
	// http serves it once open on ln; nil before, and when the port could
	// not be bound.
	http *http.Server
	ln   net.Listener
}

// closeServer closes sv's listener and connections. The listener is closed
// here too: http.Server.Close closes only the listeners Serve has begun
// with, and the goroutine that calls Serve may not have run yet (a loaded
// machine), while the kernel already completes connections to the open
// listener. The caller holds the lock.
func closeServer(sv *server) {
	if sv.http != nil {
		_ = sv.http.Close()
		_ = sv.ln.Close()
		sv.http, sv.ln = nil, nil
	}
}

// logLine is a line of a container's log that is not its command's output
// (what its servers log), at its time (Unix nanoseconds).
type logLine struct {
	at   int64
	text string
}

// startServers schedules the servers of the command of container id,
// started at startedAt: a server that starts with the command opens now,
// the others when the sleeps before them are over; a command that ends on
// its own gets a timer that applies its exit then, so that its ports close
// on time even when nobody looks at the container. After Close nothing is
// scheduled. The caller holds the lock.
func (r *RuntimeService) startServers(id string, p *process, startedAt time.Time) {
	if r.closed || len(p.b.Servers) == 0 {
		return
	}
	for _, s := range p.b.Servers {
		sv := &server{s: s}
		p.servers = append(p.servers, sv)
		if s.Stops {
			if s.StopsAt <= 0 {
				sv.killed = true // killed at once: never listens
				continue
			}
			sv.closing = r.afterFunc(time.Until(startedAt.Add(s.StopsAt)), func() {
				r.Lock()
				defer r.Unlock()
				if sv.closing == nil { // stopped meanwhile
					return
				}
				sv.closing = nil
				r.killServer(sv)
			})
		}
		if s.At <= 0 {
			r.openServer(id, p, sv)
			continue
		}
		sv.opening = r.afterFunc(time.Until(startedAt.Add(s.At)), func() {
			r.Lock()
			defer r.Unlock()
			if sv.opening == nil { // stopped meanwhile
				return
			}
			sv.opening = nil
			if c, ok := r.Containers[id]; ok && r.procs[id] == p && !r.closed && !sv.killed {
				r.settle(id, c, time.Now().UnixNano())
				if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
					r.openServer(id, p, sv)
				}
			}
		})
	}
	if !p.b.RunsUntilKilled {
		p.ending = r.afterFunc(time.Until(startedAt.Add(p.b.RunFor)), func() {
			r.Lock()
			defer r.Unlock()
			if p.ending == nil {
				return
			}
			p.ending = nil
			if c, ok := r.Containers[id]; ok && r.procs[id] == p {
				r.settle(id, c, time.Now().UnixNano())
			}
		})
	}
}

// afterFunc runs f after d in a goroutine of its own, which Close waits
// for. The caller holds the lock; f takes it itself.
func (r *RuntimeService) afterFunc(d time.Duration, f func()) *time.Timer {
	r.serving.Add(1)
	return time.AfterFunc(d, func() {
		defer r.serving.Done()
		f()
	})
}

// stopTimer stops t, a timer of afterFunc, if it has not fired.
func (r *RuntimeService) stopTimer(t *time.Timer) {
	if t != nil && t.Stop() {
		r.serving.Done()
	}
}

// openServer makes sv listen on its port at the container's address and
// serve the container's files as they are at each request, logging the
// requests to the container's log under -vv. A port that cannot be bound
// leaves a line in the container's log, as busybox httpd prints one, and
// nothing listening; the container runs on (the simulator does not tell a
// foreground httpd, which would exit 1, from one in the background). The
// caller holds the lock.
func (r *RuntimeService) openServer(id string, p *process, sv *server) {
	addr := net.JoinHostPort(p.network.addr.String(), strconv.Itoa(sv.s.Port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		p.logged = append(p.logged, logLine{at: time.Now().UnixNano(), text: fmt.Sprintf("httpd: bind %s: %v\n", addr, err)})
		return
	}
	sv.ln = l
	sv.http = &http.Server{
		Handler: httpd.Handler(sv.s, r.filesOf(id, p), logWriter{r: r, p: p}),
		// Each connection is one of the goroutines Close waits for:
		// StateNew comes in the serving goroutine, before it can
		// return, and a connection ends with StateClosed or
		// StateHijacked.
		ConnState: func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				r.serving.Add(1)
			case http.StateClosed, http.StateHijacked:
				r.serving.Done()
			}
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	r.serving.Add(1)
	go func(srv *http.Server) {
		defer r.serving.Done()
		_ = srv.Serve(l) // ends when stopServers closes it
	}(sv.http)
}

// killServer closes sv, which its command has killed (kill $!), and keeps
// it from opening: the container runs on with nothing listening on its
// port. The caller holds the lock.
func (r *RuntimeService) killServer(sv *server) {
	sv.killed = true
	r.stopTimer(sv.opening)
	sv.opening = nil
	closeServer(sv)
}

// stopServers closes the container's servers and stops its timers: its
// process has ended, or it is gone. It does not wait for the goroutines
// that served them (Close does). The caller holds the lock.
func (r *RuntimeService) stopServers(p *process) {
	if p == nil {
		return
	}
	for _, sv := range p.servers {
		r.stopTimer(sv.opening)
		r.stopTimer(sv.closing)
		sv.opening, sv.closing = nil, nil
		closeServer(sv)
	}
	r.stopTimer(p.ending)
	p.ending = nil
}

// filesOf returns the files of container id (run by p) as they are when it
// is called: those its command and ExecSync's commands wrote by then, or by
// its exit.
func (r *RuntimeService) filesOf(id string, p *process) workload.Files {
	return func(path string) (string, bool) {
		r.Lock()
		defer r.Unlock()
		c, ok := r.Containers[id]
		if !ok || r.procs[id] != p {
			return "", false
		}
		end := time.Now().UnixNano()
		if c.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			end = c.FinishedAt
		}
		f := p.files(c.StartedAt, end)[path]
		return f.data, f.exists
	}
}

// logWriter appends what a container's server logs to the container's log,
// at the time of the write. What comes after the container's exit is lost,
// as it would be.
type logWriter struct {
	r *RuntimeService
	p *process
}

func (w logWriter) Write(b []byte) (int, error) {
	w.r.Lock()
	defer w.r.Unlock()
	if !w.p.flushed {
		w.p.logged = append(w.p.logged, logLine{at: time.Now().UnixNano(), text: string(b)})
	}
	return len(b), nil
}

// stdout returns the container's log as it is when its process ended at
// finishedAt (Unix nanoseconds): what its command printed merged, in the
// order of their times, with what its servers logged.
func (p *process) stdout(startedAt, finishedAt int64) string {
	all := make([]logLine, 0, len(p.logged))
	for _, w := range p.b.Writes {
		if w.Path == workload.Stdout && startedAt+int64(w.At) <= finishedAt {
			all = append(all, logLine{at: startedAt + int64(w.At), text: w.Data})
		}
	}
	for _, l := range p.logged {
		if l.at <= finishedAt {
			all = append(all, l)
		}
	}
	slices.SortStableFunc(all, func(a, b logLine) int { return cmp.Compare(a.at, b.at) })
	var sb strings.Builder
	for _, l := range all {
		sb.WriteString(l.text)
	}
	return sb.String()
}

// Close closes the servers of every container, stops the timers that
// would open more, and returns once every goroutine that served them has
// ended. Afterwards containers still start, stop and exit, but no server
// opens. It returns nil; ctx is not used (nothing it waits for blocks).
// Whoever made the RuntimeService closes it: kubeletruntime's Provider.Stop
// closes the one it made itself.
func (r *RuntimeService) Close(context.Context) error {
	r.Lock()
	r.closed = true
	for _, p := range r.procs {
		r.stopServers(p)
	}
	r.Unlock()
	r.serving.Wait()
	return nil
}
