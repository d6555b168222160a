package hostprocess

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

// Lifecycle hooks, as the kubelet's runtime manager runs them
// (k8s.io/kubernetes/pkg/kubelet/kuberuntime/kuberuntime_container.go:
// startContainer step 4, killContainer and executePreStopHook;
// pkg/kubelet/lifecycle/handlers.go runs the handler).
//
// An exec hook is a host process like the container: Exec.Command as it is
// (the kubelet expands no $(VAR) in it), with the container's environment
// and working directory, in a process group of its own. It ends with the
// container: when the container's process exits, or when the hook's time
// is up, its group is killed, as an exec in a container dies with it. What
// it prints is kept (the tail of it) for the failure message. A sleep hook
// sleeps. An HTTP hook is a GET sent as the kubelet's hook runner sends it
// (netprobe.go). TCP hooks, which the kubelet does not run either (the API
// keeps the field for compatibility only), are rejected by SyncPod
// (validateHooks).

// minimumGracePeriod is the least time KillPod gives a container between
// SIGTERM and SIGKILL after its preStop hook, unless the grace period
// itself is shorter: the kubelet's runtime gives 2 seconds
// (kuberuntime_manager.go minimumGracePeriodInSeconds).
const minimumGracePeriod = 2 * time.Second

// hookOutputMax bounds what is kept of a hook's output for its failure
// message.
const hookOutputMax = 1024

// validateHooks rejects the hooks hostprocess cannot run: those with a TCP
// action (the kubelet's hook runner has none: it fails them as invalid)
// and those without any action.
func validateHooks(kind string, c *v1.Container) error {
	if c.Lifecycle == nil {
		return nil
	}
	for _, h := range []struct {
		name    string
		handler *v1.LifecycleHandler
	}{{"postStart", c.Lifecycle.PostStart}, {"preStop", c.Lifecycle.PreStop}} {
		switch {
		case h.handler == nil:
		case h.handler.Exec != nil:
			if len(h.handler.Exec.Command) == 0 || h.handler.Exec.Command[0] == "" {
				return fmt.Errorf("%s %q: %s exec hook has no command", kind, c.Name, h.name)
			}
		case h.handler.HTTPGet != nil:
		case h.handler.Sleep != nil:
			if h.handler.Sleep.Seconds < 0 {
				return fmt.Errorf("%s %q: %s sleep hook has negative seconds %d", kind, c.Name, h.name, h.handler.Sleep.Seconds)
			}
		default:
			return fmt.Errorf("%s %q: %s hook has no exec, httpGet or sleep action, the only ones the kubelet runs", kind, c.Name, h.name)
		}
	}
	return nil
}

// hookSpec is what an instance needs to run a hook later: the handler,
// the process's environment and working directory, and the container (the
// named ports of an HTTP hook).
type hookSpec struct {
	handler   *v1.LifecycleHandler
	env       []string
	dir       string
	container *v1.Container
}

// runHook runs h for inst and returns nil when it succeeded, or an error
// saying how it failed (its exit status and the tail of its output). It
// returns when the hook has ended; when ctx is done, the container has
// exited or the provider is stopped first, the hook's process group is
// killed and reaped first.
func (h *host) runHook(ctx context.Context, inst *instance, spec hookSpec) error {
	if spec.handler.Sleep != nil {
		t := time.NewTimer(time.Duration(spec.handler.Sleep.Seconds) * time.Second)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-inst.done:
			return errors.New("the container exited during the sleep hook")
		}
	}
	if get := spec.handler.HTTPGet; get != nil {
		// A GET to a container that exits, or to a stopped provider,
		// ends with them, as an exec hook does.
		ctx, cancel := h.boundTo(ctx, inst)
		defer cancel()
		return runHTTPHook(ctx, spec.container, get)
	}
	argv := spec.handler.Exec.Command
	path, err := lookPath(argv[0], envValue(spec.env, "PATH"))
	if err != nil {
		return err
	}
	var out tailBuffer
	cmd := &exec.Cmd{
		Path:   path,
		Args:   argv,
		Env:    spec.env,
		Dir:    spec.dir,
		Stdout: &out,
		Stderr: &out,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:   true,
			Pdeathsig: syscall.SIGKILL,
		},
	}
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return ErrStopped
	}
	err = cmd.Start()
	h.mu.Unlock()
	if err != nil {
		return err
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var ended string
	select {
	case err = <-waited:
	case <-ctx.Done():
		ended = ctx.Err().Error()
	case <-inst.done:
		ended = "the container exited"
	case <-h.stopCh:
		ended = ErrStopped.Error()
	}
	if ended != "" {
		// The group is ours until Wait has reaped its leader.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-waited
		return fmt.Errorf("hook %q ended: %s", strings.Join(argv, " "), ended)
	}
	// A hook's children die with it, as an exec's die with the container.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil {
		return fmt.Errorf("hook %q failed: %v, output: %q", strings.Join(argv, " "), err, out.String())
	}
	return nil
}

// tailBuffer keeps the last hookOutputMax bytes written to it. The exec
// package writes to it from one goroutine, and it is read after Wait.
type tailBuffer struct{ b bytes.Buffer }

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if n > hookOutputMax {
		p = p[n-hookOutputMax:]
	}
	if over := t.b.Len() + len(p) - hookOutputMax; over > 0 {
		t.b.Next(over)
	}
	t.b.Write(p)
	return n, nil
}

func (t *tailBuffer) String() string { return t.b.String() }

// preStopOf returns the preStop hook of inst for a kill of pod: the one of
// pod's spec for the container when pod names it (the kubelet's
// killContainer takes it from the pod it is handed), else the one the
// container had when it started (the kubelet restores it from the
// container's labels). ok is false when there is none.
func preStopOf(pod *v1.Pod, inst *instance) (hookSpec, bool) {
	spec := inst.preStop
	if pod != nil {
		for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for i := range list {
				if list[i].Name == inst.name {
					spec.handler = nil
					if l := list[i].Lifecycle; l != nil {
						spec.handler = l.PreStop
					}
				}
			}
		}
	}
	return spec, spec.handler != nil
}

// stopInstance stops inst as the kubelet's killContainer does: it runs the
// preStop hook (when grace > 0), for at most grace; then it sends SIGTERM
// and, once what is left of grace (at least the minimum, unless grace
// itself is shorter) is over, SIGKILL; it returns once the process has been
// reaped, or with ctx's error.
func (h *host) stopInstance(ctx context.Context, inst *instance, preStop hookSpec, hasPreStop bool, grace time.Duration) error {
	if hasPreStop && grace > 0 {
		start := time.Now()
		hookCtx, cancel := context.WithTimeout(ctx, grace)
		_ = h.runHook(hookCtx, inst, preStop) // a failed preStop hook does not stop the kill
		cancel()
		grace = max(grace-time.Since(start), min(grace, minimumGracePeriod))
	}
	if grace <= 0 {
		h.mu.Lock()
		h.signalLocked(inst, sigKill)
		h.mu.Unlock()
	} else {
		h.mu.Lock()
		h.signalLocked(inst, sigTerm)
		h.mu.Unlock()
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-inst.done:
			return nil
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		h.mu.Lock()
		h.signalLocked(inst, sigKill)
		h.mu.Unlock()
	}
	select {
	case <-inst.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// preStopHandler is the preStop hook of c, or nil.
func preStopHandler(c *v1.Container) *v1.LifecycleHandler {
	if c.Lifecycle == nil {
		return nil
	}
	return c.Lifecycle.PreStop
}

// postStart runs the postStart hook of c, whose current instance has just
// started, as the kubelet's startContainer does (step 4): synchronously,
// so that the next container starts after it. When the hook fails, the
// container is killed as killContainer kills it (its preStop hook, then
// the pod's grace period, at least the minimum) and the error wraps
// workload.ErrPostStartHook, the kubelet's ErrPostStartHook. The caller
// holds ps's operation lock.
func (h *host) postStart(ctx context.Context, ps *podState, pod *v1.Pod, c *v1.Container) error {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return nil
	}
	h.mu.Lock()
	inst := ps.containers[c.Name].current()
	h.mu.Unlock()
	hook := inst.preStop // the environment and directory of the process
	hook.handler = c.Lifecycle.PostStart
	err := h.runHook(ctx, inst, hook)
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrStopped) {
		return err
	}
	preStop, ok := preStopOf(pod, inst)
	grace := max(gracePeriod(pod, nil), minimumGracePeriod)
	if kerr := h.stopInstance(ctx, inst, preStop, ok, grace); kerr != nil {
		err = fmt.Errorf("%v; killing the container: %v", err, kerr)
	}
	return fmt.Errorf("%w: %v", workload.ErrPostStartHook, err)
}

// restartsAfterHook reports whether the container of cs, killed because
// its postStart hook failed, is to be started again: then its Waiting
// reason is PostStartHookError; otherwise it stays Terminated, as the
// kubelet reports it. host.mu must be held.
func restartsAfterHook(cs *containerState, policy v1.RestartPolicy, sidecar bool) bool {
	cur := cs.current()
	return sidecar || cur == nil || !cur.exited || shouldRestart(policy, cur.exitCode)
}
