package hostprocess

import (
	"context"
	"os/exec"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Probes: the exec probes of a container run as host processes, in the
// container's environment and working directory, as the kubelet's prober
// workers run them (k8s.io/kubernetes/pkg/kubelet/prober/worker.go): one
// worker per probe, the first run once initialDelaySeconds have passed since
// the start, then one every periodSeconds; a result flips after
// successThreshold successes or failureThreshold failures in a row; while a
// startup probe has not succeeded the liveness and readiness probes do not
// run. A liveness or startup failure kills the instance (SIGTERM, SIGKILL
// after the probe's terminationGracePeriodSeconds, else the pod's), so that
// the next SyncPod starts it again as its restart policy allows, as the
// runtime manager's computePodActions does after a liveness failure. HTTP
// and TCP probes are sent as the kubelet's prober sends them (netprobe.go).
// gRPC probes are not run: a container with one is never ready (readiness)
// or started (startup), and is not restarted (liveness).

// probeKind names a probe of a container.
type probeKind int

const (
	startupProbe probeKind = iota
	livenessProbe
	readinessProbe
)

func (k probeKind) String() string {
	return [...]string{"startup", "liveness", "readiness"}[k]
}

// probeResults are the prober's view of one instance. Guarded by host.mu.
type probeResults struct {
	hasStartup, hasReadiness bool
	started                  bool // the startup probe has succeeded
	ready                    bool // the readiness probe's current result
}

// probesOf returns the results of a new instance of c, nil when c has no
// probes.
func probesOf(c *v1.Container) *probeResults {
	if c.StartupProbe == nil && c.LivenessProbe == nil && c.ReadinessProbe == nil {
		return nil
	}
	return &probeResults{hasStartup: c.StartupProbe != nil, hasReadiness: c.ReadinessProbe != nil}
}

// startedLocked and readyLocked give the Started and Ready of a running
// instance. host.mu must be held.
func (inst *instance) startedLocked() bool {
	return inst.probes == nil || !inst.probes.hasStartup || inst.probes.started
}

func (inst *instance) readyLocked() bool {
	if inst.probes == nil {
		return true
	}
	if !inst.startedLocked() {
		return false
	}
	return !inst.probes.hasReadiness || inst.probes.ready
}

// startProbesLocked starts a worker for each probe of c on inst, run with
// env in dir; grace is the pod's termination grace period. h.mu must be held
// (as in startContainer): Stop waits for the workers.
func (h *host) startProbesLocked(inst *instance, c *v1.Container, env []string, dir string, grace time.Duration) {
	for kind, p := range []*v1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
		if p == nil {
			continue
		}
		h.reapers.Add(1)
		go h.probeWorker(inst, probeKind(kind), c.DeepCopy(), p.DeepCopy(), env, dir, grace)
	}
}

// probeWorker runs probe p of inst until the instance exits, the provider
// stops, or a liveness or startup failure has killed the instance.
func (h *host) probeWorker(inst *instance, kind probeKind, c *v1.Container, p *v1.Probe, env []string, dir string, grace time.Duration) {
	defer h.reapers.Done()
	period := time.Duration(max(p.PeriodSeconds, 1)) * time.Second
	successes, failures := int32(0), int32(0)
	timer := time.NewTimer(time.Until(inst.startedAt.Add(time.Duration(p.InitialDelaySeconds) * time.Second)))
	defer timer.Stop()
	for {
		select {
		case <-inst.done:
			return
		case <-h.stopCh:
			return
		case <-timer.C:
		}
		timer.Reset(period)
		h.mu.Lock()
		gated := kind != startupProbe && !inst.startedLocked()
		done := kind == startupProbe && inst.probes.started
		h.mu.Unlock()
		if done {
			return // the startup probe has done its work
		}
		if gated {
			continue
		}
		if h.runProbe(inst, c, p, env, dir) {
			successes, failures = successes+1, 0
		} else {
			successes, failures = 0, failures+1
		}
		success := successes >= max(p.SuccessThreshold, 1)
		failure := failures >= max(p.FailureThreshold, 1)
		h.mu.Lock()
		wasStarted, wasReady := inst.startedLocked(), inst.readyLocked()
		switch {
		case kind == readinessProbe && success:
			inst.probes.ready = true
		case kind == readinessProbe && failure:
			inst.probes.ready = false
		case kind == startupProbe && success:
			inst.probes.started = true
		}
		flipped := inst.startedLocked() != wasStarted || inst.readyLocked() != wasReady
		h.mu.Unlock()
		if flipped {
			// Started or Ready changed (kuscia's CRIProvider relays its
			// prober's readiness and startup updates).
			h.Notify(inst.podUID)
		}
		if failure && kind != readinessProbe {
			if p.TerminationGracePeriodSeconds != nil {
				grace = time.Duration(*p.TerminationGracePeriodSeconds) * time.Second
			}
			h.killInstance(inst, grace)
			return
		}
	}
}

// runProbe runs probe p of container c, whose instance is inst, and
// reports whether it succeeded: an exec probe in the environment of inst,
// exiting 0 within the probe's timeout; an HTTP or TCP probe as the
// kubelet's prober sends it (runNetProbe). A probe of another kind fails.
func (h *host) runProbe(inst *instance, c *v1.Container, p *v1.Probe, env []string, dir string) bool {
	timeout := time.Duration(max(p.TimeoutSeconds, 1)) * time.Second
	if success, ok := runNetProbe(c, p, timeout); ok {
		return success
	}
	if p.Exec == nil || len(p.Exec.Command) == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ctx, cancelBound := h.boundTo(ctx, inst)
	defer cancelBound()
	path, err := lookPath(p.Exec.Command[0], envValue(env, "PATH"))
	if err != nil {
		return false
	}
	cmd := exec.CommandContext(ctx, path, p.Exec.Command[1:]...)
	cmd.Args[0] = p.Exec.Command[0]
	cmd.Env, cmd.Dir = env, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	return cmd.Run() == nil
}

// boundTo returns a context that ends with ctx, when inst exits and when
// the provider stops: what is done for a container ends with it, as an
// exec in a container dies with the container. cancel releases it.
func (h *host) boundTo(ctx context.Context, inst *instance) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-inst.done:
		case <-h.stopCh:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}

// killInstance stops inst after a liveness or startup failure: SIGTERM to
// its process group, SIGKILL once grace is over (at once for grace <= 0).
func (h *host) killInstance(inst *instance, grace time.Duration) {
	sig := sigTerm
	if grace <= 0 {
		sig = sigKill
	}
	h.mu.Lock()
	h.signalLocked(inst, sig)
	h.mu.Unlock()
	if sig == sigKill {
		return
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-inst.done:
	case <-h.stopCh: // Stop kills everything itself
	case <-timer.C:
		h.mu.Lock()
		h.signalLocked(inst, sigKill)
		h.mu.Unlock()
	}
}
