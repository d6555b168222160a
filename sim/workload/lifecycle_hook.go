package workload

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Hook is what one run of a container's lifecycle hook does, as a node
// agent's hook runner runs it (k8s.io/kubernetes/pkg/kubelet/lifecycle/
// handlers.go, HandlerRunner.Run): it takes Takes (or, Forever, as long as
// the container runs), fails when Failed, and writes Writes into the
// container's files, each Write's At counted from the hook's start.
// RunHook makes one from a container's handler; a simulator that imposes a
// hook of its own (a script) makes one directly.
type Hook struct {
	// Action names the handler for messages and events: "exec",
	// "httpGet :8080/ready", "sleep", or a name the maker chose.
	Action  string
	Takes   time.Duration
	Forever bool
	Failed  bool
	// ExitCode is the exit code of an exec command that ran (0 for other
	// handlers); Detail says how a failed hook failed.
	ExitCode int
	Detail   string
	Writes   []Write
}

// RunHook returns what handler h of container c does when the kubelet runs
// it at at in instance in, the container's current run:
//
//   - an exec action is a command of the vocabulary (OfHandler), run in the
//     container's environment: it takes the time of its sleeps and fails
//     with a non-zero exit code, or when its executable is missing; one
//     outside the vocabulary succeeds at once; one that runs until killed
//     runs Forever;
//   - an HTTP GET action is answered by the server in's command runs
//     (HTTPHookAt, Instance.Serve, which logs the request as that server
//     does): it succeeds at once when something listens on its port,
//     whatever the status, and fails otherwise;
//   - a sleep action takes its seconds;
//   - any other action (tcpSocket) fails at once: the hook runner runs no
//     other.
func RunHook(c *v1.Container, h *v1.LifecycleHandler, in *Instance, at time.Time) Hook {
	switch {
	case h == nil:
		return Hook{Failed: true, Detail: "no handler"}
	case h.Exec != nil:
		b, _ := OfHandler(c, h)
		switch {
		case b.FailsToStart():
			return Hook{Action: "exec", Failed: true, Detail: fmt.Sprintf("exec %q: executable %s not found", h.Exec.Command, b.MissingExecutable)}
		case b.Unknown:
			return Hook{Action: "exec"} // outside the vocabulary: succeeds at once
		case b.RunsUntilKilled:
			return Hook{Action: "exec", Forever: true, Writes: b.Writes}
		}
		run := Hook{Action: "exec", Takes: b.RunFor, ExitCode: b.ExitCode, Writes: b.Writes}
		if b.ExitCode != 0 {
			run.Failed, run.Detail = true, fmt.Sprintf("exec %q exited with code %d", h.Exec.Command, b.ExitCode)
		}
		return run
	case h.HTTPGet != nil:
		g, listens, _, err := HTTPHookAt(c, h, in.Behaviour(), at.Sub(in.StartsAt()))
		action := fmt.Sprintf("httpGet :%d%s", g.Port, g.Path)
		switch {
		case err != nil:
			return Hook{Action: "httpGet", Failed: true, Detail: fmt.Sprintf("httpGet: %v", err)}
		case !listens:
			return Hook{Action: action, Failed: true, Detail: fmt.Sprintf("httpGet :%d%s: nothing listens on port %d", g.Port, g.Path, g.Port)}
		}
		in.Serve(g, at)
		return Hook{Action: action}
	case h.Sleep != nil:
		return Hook{Action: "sleep", Takes: time.Duration(max(h.Sleep.Seconds, 0)) * time.Second}
	}
	return Hook{Action: "tcpSocket", Failed: true, Detail: "the handler has no exec, httpGet or sleep action"}
}

// PostStartFailure is the message of the start error (ErrPostStartHook) of
// container name whose postStart hook h failed.
func (h Hook) PostStartFailure(name string) string {
	return fmt.Sprintf("postStart hook of container %q failed: %s", name, h.Detail)
}

// RecordHook writes into the instance's files what hook h, run from start,
// wrote until end (RecordWrite): a hook cut short by the end of its grace
// period writes only what it wrote by then.
func (in *Instance) RecordHook(h Hook, start, end time.Time) {
	for _, w := range h.Writes {
		if at := start.Add(w.At); !at.After(end) {
			in.RecordWrite(at, w)
		}
	}
}

// ProberAddr is the address a simulated kubelet's HTTP probes and hooks come
// from, as a server's request log shows it (Instance.Serve).
const ProberAddr = "127.0.0.1:40000"

// Serve has the server the instance's command runs answer the GET g sent
// at at (HTTPGet.At against the instance's files then), and logs the
// request in the instance's output as that server does (Server.RequestLog
// from ProberAddr; Log). It returns the status code, and whether the
// connection was accepted.
func (in *Instance) Serve(g HTTPGet, at time.Time) (code int, connected bool) {
	b, d := in.Behaviour(), at.Sub(in.StartsAt())
	code, connected = g.At(b, d, in.FilesAt(at))
	if s, ok := b.ServerAt(g.Port, d); ok && connected {
		in.Log(at, s.RequestLog(ProberAddr, g.Path, code))
	}
	return code, connected
}

// PreStop runs the container's preStop hook when its running instance is
// killed at at with grace before SIGKILL, as the kubelet's killContainer
// does (kuberuntime_container.go, executePreStopHook), and returns when
// SIGTERM comes instead and what is left of grace then. hook returns what
// the hook does (RunHook, or a simulator's own), false when the container
// has none; it is called only when the hook is to run now. The hook takes
// its time but at most grace (all of it when it runs Forever); its writes
// until then go to the instance's files. A grace of 0 runs no hook. A hook
// runs once per instance: a later kill sends SIGTERM once it has ended,
// with grace less what the wait took. ran reports whether the hook ran in
// this call.
func (in *Instance) PreStop(at time.Time, grace time.Duration, hook func() (Hook, bool)) (sigterm time.Time, left time.Duration, ran bool) {
	switch {
	case grace <= 0:
		return at, grace, false
	case in.preStopRan:
		if in.preStopEnd.After(at) {
			return in.preStopEnd, max(grace-in.preStopEnd.Sub(at), 0), false
		}
		return at, grace, false
	}
	h, ok := hook()
	if !ok {
		return at, grace, false
	}
	d := h.Takes
	if h.Forever {
		d = grace
	}
	d = min(d, grace)
	in.preStopRan, in.preStopEnd = true, at.Add(d)
	in.RecordHook(h, at, in.preStopEnd)
	return in.preStopEnd, grace - d, true
}

// GracePeriod returns the grace period of a kill of pod, in the order of
// the kubelet's runtime (kuberuntime_container.go,
// setTerminationGracePeriod): override, else the pod's
// DeletionGracePeriodSeconds, else its TerminationGracePeriodSeconds, else
// the API's default of 30 seconds (v1.DefaultTerminationGracePeriodSeconds,
// what the API server sets). Negative seconds count as 0. A nil pod has
// neither. The kubelet's floor of kri.RuntimeMinimumGracePeriodSeconds comes
// after the preStop hook: Pod.MinimumGracePeriod.
func GracePeriod(pod *v1.Pod, override *int64) time.Duration {
	secs := func(s int64) time.Duration { return time.Duration(max(s, 0)) * time.Second }
	switch {
	case override != nil:
		return secs(*override)
	case pod != nil && pod.DeletionGracePeriodSeconds != nil:
		return secs(*pod.DeletionGracePeriodSeconds)
	case pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil:
		return secs(*pod.Spec.TerminationGracePeriodSeconds)
	}
	return secs(v1.DefaultTerminationGracePeriodSeconds)
}
