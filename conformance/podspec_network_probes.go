package conformance

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The network probe specs (KRI-POD-087 to 090, 105, 106): HTTP GET and TCP
// socket probes of the three kinds and an HTTP GET preStop hook, as the kubelet's prober and hook
// runner send them to the container's port, mirroring the node e2e tests
// of container_probe.go and lifecycle_hook.go. Their containers serve with
// busybox httpd (httpd -f -p PORT -h DIR, in the vocabulary of package
// workload) on Workloads.Port, the file they serve being a ProbeFilePath:
// a GET of it answers 200 while it exists and 404 once the container has
// removed it, a TCP probe connects while httpd listens. The probes have a
// period of one second, as the exec probe specs' do.
var podspecNetworkProbesSpecs = []*specDef{
	{id: "KRI-POD-087", level: Must, kind: kindPod, groups: []string{"pod-spec", "network-probes"}, caps: []Capability{CapNetworkProbes}, pod: podHTTPReadiness,
		text: "a container whose HTTP readiness probe gets 200 is Ready, and once the probe gets 404 failureThreshold times in a row it is not Ready again and keeps running"},
	{id: "KRI-POD-088", level: Must, kind: kindPod, groups: []string{"pod-spec", "network-probes"}, caps: []Capability{CapNetworkProbes}, pod: podHTTPLiveness,
		text: "a container whose HTTP liveness probe gets 404 failureThreshold times is killed and started again: a new instance, the killed one exited by a signal, the restart counted"},
	{id: "KRI-POD-089", level: Must, kind: kindPod, groups: []string{"pod-spec", "network-probes"}, caps: []Capability{CapNetworkProbes}, pod: podTCPLiveness,
		text: "a container whose TCP liveness probe connects is left running, and one whose probed port nothing listens on is killed and started again"},
	{id: "KRI-POD-090", level: Must, kind: kindPod, groups: []string{"pod-spec", "network-probes", "kill"}, caps: []Capability{CapNetworkProbes, CapTerminationMessage}, pod: podHTTPPreStopHook,
		text: "KillPod sends a container's HTTP GET preStop hook to its port before SIGTERM: the container's server logs the request before it exits"},
	{id: "KRI-POD-105", level: Must, kind: kindPod, groups: []string{"pod-spec", "network-probes"}, caps: []Capability{CapNetworkProbes}, pod: podNetworkStartupProbes,
		text: "a container whose HTTP GET (or TCP socket) startup probe cannot succeed until its server listens is not Started before then, and Started once the probe succeeds"},
	{id: "KRI-POD-106", level: Must, kind: kindPod, groups: []string{"pod-spec", "network-probes"}, caps: []Capability{CapNetworkProbes}, pod: podTCPLivenessKeepsProbing,
		text: "a TCP liveness probe keeps probing after it has connected: a container whose server stops listening while the container runs on is killed and started again"},
}

// httpTarget is the HTTP GET probe of the file at path, served by httpd on
// port from the file's directory.
func httpTarget(path string, port int) probeTarget {
	dir, file := splitServed(path)
	return probeTarget{
		serve: fmt.Sprintf("httpd -f -p %d -h %s & ", port, dir),
		probe: func(n int32) *v1.Probe {
			p := specProbe(v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/" + file, Port: intstr.FromInt32(int32(port))}}, n)
			// httpd, started in the background, listens a moment after
			// the container starts.
			p.InitialDelaySeconds = serverDelay
			return p
		},
		how: fmt.Sprintf("GETs /%s on port %d, served by httpd from %s", file, port, dir),
	}
}

// serverDelay is the initialDelaySeconds of the probes of a server: the
// moment httpd, started in the background, takes to listen (a real
// process) is no failure of the probe.
const serverDelay = 1

// splitServed returns the directory httpd serves path from, and the file
// name it is asked for.
func splitServed(p string) (dir, file string) { return path.Dir(p), path.Base(p) }

// tcpProbe is a TCP socket probe of port.
func tcpProbe(port int, failureThreshold int32) *v1.Probe {
	return specProbe(v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}}, failureThreshold)
}

func podHTTPReadiness(e *podEnv) {
	path := e.w().ProbeFilePath()
	readinessOnThenOff(e, path, httpTarget(path, e.w().Port()))
}

func podHTTPLiveness(e *podEnv) {
	path := e.w().ProbeFilePath()
	livenessRestart(e, path, httpTarget(path, e.w().Port()))
}

func podTCPLiveness(e *podEnv) {
	dir, _ := splitServed(e.w().ProbeFilePath())
	openPort, closedPort := e.w().Port(), e.w().Port()
	// Both first probed after delay, the one that listens only once its
	// httpd does: a TCP startup probe of its port holds its liveness probe
	// off until then (as the kubelet's prober does), so that an httpd
	// slow to start on a loaded machine is no kill; three failures in a
	// row kill it. The other is probed once it has been seen running.
	const delay = 2
	open := e.probed(fmt.Sprintf("httpd -f -p %d -h %s & ", openPort, dir))
	open.StartupProbe = tcpProbe(openPort, 120)
	open.LivenessProbe = tcpProbe(openPort, 3)
	open.LivenessProbe.InitialDelaySeconds = delay
	// Nothing may listen on closedPort while the spec runs: on a host
	// network another pod, or another run of the suite, could be handed
	// the same free port and serve on it, and the probe would pass. The
	// suite keeps it bound, not listening, where it can.
	if release := holdPort(closedPort); release != nil {
		defer release()
	}
	closed := e.probed("")
	closed.LivenessProbe = tcpProbe(closedPort, 1)
	closed.LivenessProbe.InitialDelaySeconds = delay
	openPod, closedPod := e.newPod("tcp-open", v1.RestartPolicyAlways, open), e.newPod("tcp-closed", v1.RestartPolicyAlways, closed)
	e.step(fmt.Sprintf("syncing a pod whose container listens (httpd) on the port %d its TCP liveness probe connects to, and one whose probed port %d nothing listens on", openPort, closedPort))
	listening := &probeRun{e: e, pod: openPod}
	first := listening.running()
	silent := &probeRun{e: e, pod: closedPod}
	silent.expectRestarted(silent.running(), delay*time.Second, "its TCP liveness probe found nothing listening")
	e.step("checking that the container that listens was left alone all along")
	listening.hold(delay*time.Second+periods(4), "container web keeps running, not restarted", func(g gomega.Gomega, sync bool) {
		st, cs := listening.round(!sync)
		run := runningOf(st, "web")
		g.Expect(run).NotTo(gomega.BeNil(), "container web (instance %s), which listens on %d, no longer runs %s after it started: %s", first.ID, openPort, sinceStart(first).Round(time.Millisecond), describeStatus(st))
		g.Expect(run.ID).To(gomega.Equal(first.ID), "container web, which listens on %d, was started again %s after its first start: %s", openPort, sinceStart(first).Round(time.Millisecond), describeStatus(st))
		g.Expect(cs.RestartCount).To(gomega.BeZero(), "RefreshPodStatus reports RestartCount %d for container web, which listens on %d", cs.RestartCount, openPort)
	})
}

func podHTTPPreStopHook(e *podEnv) {
	dir, _ := splitServed(e.w().ProbeFilePath())
	port := e.w().Port()
	const hookPath = "/prestop"
	c := e.withMessagePath(e.probed(fmt.Sprintf("httpd -f -vv -p %d -h %s & ", port, dir)))
	c.TerminationMessagePolicy = v1.TerminationMessageFallbackToLogsOnError
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: hookPath, Port: intstr.FromInt32(int32(port))}}}
	// Ready once httpd listens: the kill waits for it, so that a server
	// slow to start on a loaded machine does not miss the hook.
	c.ReadinessProbe = tcpProbe(port, 1)
	grace := 2*e.st.graceSecs + 2*minimumGraceSecs
	pod := e.preStopPod("prestop-http", grace, c)
	r := &probeRun{e: e, pod: pod}
	r.until(e.st.t.State+periods(3), fmt.Sprintf("pod %s: container web Ready (its httpd listens on %d)", podRef(pod), port), func(g gomega.Gomega) {
		_, cs := r.round(false)
		g.Expect(cs.Ready).To(gomega.BeTrue(), "container web is not Ready: its TCP readiness probe of port %d has not succeeded", port)
	})
	e.step(fmt.Sprintf("killing the pod (grace period %ds), whose container logs every request its httpd on port %d gets and exits 143 on SIGTERM, and has an HTTP GET preStop hook of %s", grace, port, hookPath))
	e.killUntilStopped(pod, agentGrace(pod))
	e.expectNothingRunning(pod, "after KillPod returned nil")
	// A provider may forget a killed pod (KRI-POD-005, 056): the message is
	// checked when the killed instance is still reported. It is the log's
	// tail (FallbackToLogsOnError, exit code 143).
	st := e.status(pod)
	for _, inst := range exitedOf(st, "web") {
		if !strings.Contains(inst.Message, "url:"+hookPath) {
			e.failf("the killed instance of web (exit code %d) has message %q, the tail of its log, in which its httpd did not log a request of %s: the preStop hook was not sent, or was sent after SIGTERM had stopped the server", inst.ExitCode, inst.Message, hookPath)
		}
	}
}

// startupThreshold is the failureThreshold of a startup probe whose server
// listens after listenAfter: failures for as long as the spec waits for
// it, so that a server slow to start on a loaded machine is not killed for
// it.
func (e *podEnv) startupThreshold(listenAfter time.Duration) int32 {
	return int32((e.st.t.State+listenAfter)/probePeriod) + 4
}

func podNetworkStartupProbes(e *podEnv) {
	path := e.w().ProbeFilePath()
	dir, file := splitServed(path)
	// The server listens listenAfter after the container starts (its file
	// is there from the start): the startup probe fails until then.
	const listenAfter = 2 * time.Second
	serve := func(port int) string {
		return fmt.Sprintf("echo ok > %s; sleep %s; httpd -f -p %d -h %s & ", path, seconds(listenAfter), port, dir)
	}
	httpPort := e.w().Port()
	httpC := e.probed(serve(httpPort))
	httpC.StartupProbe = specProbe(v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/" + file, Port: intstr.FromInt32(int32(httpPort))}}, e.startupThreshold(listenAfter))
	startedOnceListening(e, httpC, "http-startup", fmt.Sprintf("HTTP GET of /%s on port %d", file, httpPort), listenAfter)
	tcpPort := e.w().Port()
	tcpC := e.probed(serve(tcpPort))
	tcpC.StartupProbe = tcpProbe(tcpPort, e.startupThreshold(listenAfter))
	startedOnceListening(e, tcpC, "tcp-startup", fmt.Sprintf("TCP connection to port %d", tcpPort), listenAfter)
}

// startedOnceListening syncs a pod of container c, whose startup probe
// (an HTTP GET or TCP connection, what how says) can succeed only once its server listens, listenAfter
// after it starts, and checks that it is not Started before then (a
// period of margin), then Started, the same instance all along.
func startedOnceListening(e *podEnv, c v1.Container, name, how string, listenAfter time.Duration) {
	pod := e.newPod(name, v1.RestartPolicyAlways, c)
	e.step(fmt.Sprintf("syncing a pod whose container's startup probe (%s, failureThreshold %d) can succeed once its httpd listens, %s after the container starts", how, c.StartupProbe.FailureThreshold, listenAfter))
	r := &probeRun{e: e, pod: pod}
	first := r.running()
	early := 0
	r.until(e.st.t.State+listenAfter+periods(3), fmt.Sprintf("pod %s: container web Started", podRef(pod)), func(g gomega.Gomega) {
		st, cs := r.round(false)
		run := runningOf(st, "web")
		if run == nil || run.ID != first.ID {
			e.failf("container web (instance %s) was killed or restarted %s after it started, before or right after its startup probe (%s) could succeed: %s",
				first.ID, sinceStart(first).Round(time.Millisecond), how, describeStatus(st))
		}
		started := cs.Started != nil && *cs.Started
		// One period of margin: the server listens listenAfter after
		// the process started, which is at or after StartedAt.
		if ran := sinceStart(run); ran < listenAfter-probePeriod {
			early++
			if started {
				e.failf("RefreshPodStatus reports container web Started %s after it started, before its startup probe (%s) could succeed (nothing listens before %s): the probe was not run", ran.Round(time.Millisecond), how, listenAfter)
			}
		}
		g.Expect(started).To(gomega.BeTrue(), "container web is not Started %s after it started (its httpd listens after %s): its startup probe (%s) has not succeeded", sinceStart(run).Round(time.Millisecond), listenAfter, how)
	})
	if early == 0 {
		e.note(fmt.Sprintf("no round ran in the first %s of the container whose startup probe is the %s (a loaded machine): Started before the first success was not checked", listenAfter-probePeriod, how))
	}
}

func podTCPLivenessKeepsProbing(e *podEnv) {
	dir, _ := splitServed(e.w().ProbeFilePath())
	port := e.w().Port()
	// The server is killed stopAfter after the container starts, which
	// runs on. A TCP startup probe holds the liveness probe off until the
	// server listens; should it miss the server altogether (one slow to
	// start on a loaded machine, killed before it listened), its few
	// failures kill the container as well, within the wait.
	const stopAfter = 3 * time.Second
	c := e.probed(fmt.Sprintf("httpd -f -p %d -h %s & sleep %s; kill $!; ", port, dir, seconds(stopAfter)))
	c.StartupProbe = tcpProbe(port, int32(stopAfter/probePeriod)+2)
	c.LivenessProbe = tcpProbe(port, 1)
	pod := e.newPod("tcp-stops", v1.RestartPolicyAlways, c)
	e.step(fmt.Sprintf("syncing a pod whose container's httpd listens on port %d, probed by a TCP liveness probe, and is killed (kill $!) %s after the container starts, the container running on", port, stopAfter))
	r := &probeRun{e: e, pod: pod}
	r.expectRestarted(r.running(), stopAfter, "its TCP liveness probe found nothing listening once its httpd was killed")
}
