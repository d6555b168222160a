package hostprocess

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// startContainer starts c as a new instance in sandbox sb of ps. The
// caller holds ps's operation lock. An error is a start failure (the
// executable cannot be found or run, the log file cannot be created, ...),
// or wraps ErrStopped.
func (h *host) startContainer(ps *podState, sb *sandbox, c *v1.Container, sidecar bool) error {
	h.mu.Lock()
	cs := ps.containers[c.Name]
	if cs == nil {
		cs = &containerState{}
		ps.containers[c.Name] = cs
	}
	restartCount := cs.starts
	h.mu.Unlock()
	// Host processes need no image, but the vocabulary's missing images
	// fail to pull, as they do on a real runtime.
	if workload.ImageMissing(c.Image) {
		if c.ImagePullPolicy == v1.PullNever {
			// The kubelet's image manager: the image is not present and
			// must not be pulled.
			return fmt.Errorf("%w: container image %q is not present with pull policy of Never", workload.ErrImageNeverPull, c.Image)
		}
		return fmt.Errorf("%w: failed to pull image %q: registry %s does not resolve", workload.ErrImagePull, c.Image, workload.MissingImageDomain)
	}

	env, values := containerEnv(h.path, c.Env)
	argv := expandCommand(commandLine(c), values)

	cdir := filepath.Join(ps.dir, c.Name)
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		return err
	}
	dir := c.WorkingDir
	if dir == "" {
		dir = cdir
	}
	path, err := lookPath(argv[0], envValue(env, "PATH"))
	if err != nil {
		return err
	}
	logPath := filepath.Join(cdir, strconv.Itoa(restartCount)+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	// The child gets its own copy of the descriptor; ours is not needed
	// once Start has returned.
	defer logFile.Close()

	cmd := &exec.Cmd{
		Path:   path,
		Args:   argv,
		Env:    env,
		Dir:    dir,
		Stdout: logFile, // an *os.File: no copying goroutine, Wait
		Stderr: logFile, // returns as soon as the process is reaped
		SysProcAttr: &syscall.SysProcAttr{
			// Its own process group, so that a signal reaches the
			// container's children too.
			Setpgid: true,
			// A backstop should this process die without Stop: the
			// kernel kills the container's main process with it.
			Pdeathsig: syscall.SIGKILL,
		},
	}

	h.mu.Lock()
	// Starting under mu means Stop either sees the new process or has
	// marked the provider stopped before it could start.
	if h.stopped {
		h.mu.Unlock()
		os.Remove(logPath)
		return ErrStopped
	}
	createdAt := time.Now()
	termination := newTerminationSource(c)
	if err := cmd.Start(); err != nil {
		h.mu.Unlock()
		os.Remove(logPath)
		return err
	}
	inst := &instance{
		id:           newID(),
		name:         c.Name,
		podUID:       ps.uid,
		seq:          h.nextSeqLocked(),
		sandboxID:    sb.id,
		image:        c.Image,
		hash:         pkgcontainer.HashContainer(c),
		restartCount: restartCount,
		sidecar:      sidecar,
		pid:          cmd.Process.Pid,
		logPath:      logPath,
		termination:  termination,
		preStop:      hookSpec{handler: preStopHandler(c), env: env, dir: dir, container: c.DeepCopy()},
		createdAt:    createdAt,
		startedAt:    time.Now(),
		done:         make(chan struct{}),
		probes:       probesOf(c),
	}
	cs.starts++
	cs.startErr = nil
	cs.instances = append([]*instance{inst}, cs.instances...)
	var dropped []*instance
	if len(cs.instances) > 2 {
		// Keep the current and the previous instance, like the
		// kubelet's container GC keeps the last dead container.
		dropped = cs.instances[2:]
		cs.instances = cs.instances[:2:2]
	}
	h.live[inst] = struct{}{}
	h.reapers.Add(1)
	go h.reap(inst, cmd)
	if inst.probes != nil {
		h.startProbesLocked(inst, c, env, dir, ps.grace)
	}
	h.mu.Unlock()
	h.Notify(ps.uid) // a container started (kuscia's PLEG: ContainerStarted)

	for _, old := range dropped {
		// Dropped instances have exited (only the newest can run).
		os.Remove(old.logPath)
	}
	return nil
}

// reap waits for the process of inst, then records its exit. It is the
// only place a container's process is waited for.
func (h *host) reap(inst *instance, cmd *exec.Cmd) {
	defer h.reapers.Done()

	// Wait for the exit without reaping: while the exited process is a
	// zombie its PID, and so the process group ID, cannot be reused, and
	// the rest of the group (children the container left behind) can be
	// killed safely, as a container's processes die with its init process.
	waitErr := waitExited(inst.pid)
	finishedAt := time.Now()
	h.mu.Lock()
	if waitErr == nil {
		h.signalLocked(inst, sigKill)
	}
	inst.leaderExited = true
	delete(h.live, inst)
	h.mu.Unlock()

	_ = cmd.Wait() // an *exec.ExitError for a non-zero exit; the state says it all
	code := exitCode(cmd.ProcessState)
	message := inst.termination.message(code, inst.logPath)

	h.mu.Lock()
	inst.exited = true
	inst.exitCode = code
	inst.message = message
	if finishedAt.Before(inst.startedAt) {
		finishedAt = inst.startedAt
	}
	inst.finishedAt = finishedAt
	h.mu.Unlock()
	// A container exited (kuscia's PLEG: ContainerDied), reported once it
	// is recorded, so that the status the agent reads has it, and before
	// done is closed, so that whoever waits for the exit (KillPod, the
	// kill of a failed postStart hook) returns after the report.
	h.Notify(inst.podUID)
	close(inst.done)
}

// signalLocked sends sig to the process group of inst unless its process
// has exited (after which the group ID may belong to someone else).
// host.mu must be held.
func (h *host) signalLocked(inst *instance, sig syscall.Signal) {
	if inst.leaderExited {
		return
	}
	if err := syscall.Kill(-inst.pid, sig); err == syscall.ESRCH {
		// The process moved to another group (setpgid): it still has
		// to stop. Its PID is ours until the reaper has reaped it.
		_ = syscall.Kill(inst.pid, sig)
	}
}

// waitExited blocks until the process pid has exited, leaving it
// unreaped (waitid with WNOWAIT, as the os package does internally).
func waitExited(pid int) error {
	const pPID = 1 // P_PID
	var siginfo [16]uint64
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&siginfo)), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return errno
		}
		return nil
	}
}

// exitCode is the container exit code of a finished process: its exit
// status, or 128+n for a death by signal n, as a shell reports it.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return 128
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// containerEnv returns the environment of a container and the values of
// its own variables: PATH, then the container's variables (which may
// override PATH), with $(VAR) references to earlier variables expanded as
// the kubelet does. The provider's own environment is not inherited.
func containerEnv(path string, vars []v1.EnvVar) ([]string, map[string]string) {
	env := []string{"PATH=" + path}
	values := make(map[string]string, len(vars))
	for _, e := range vars {
		value := expansion.Expand(e.Value, expansion.MappingFuncFor(values))
		values[e.Name] = value
		env = append(env, e.Name+"="+value)
	}
	return env, values
}

// expandCommand expands $(VAR) references in the command line with the
// container's variables, as the kubelet does ($$ escapes a $).
func expandCommand(argv []string, values map[string]string) []string {
	mapping := expansion.MappingFuncFor(values)
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = expansion.Expand(a, mapping)
	}
	return out
}

// envValue returns the value of the last assignment of name in env.
func envValue(env []string, name string) string {
	value := ""
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			value = v
		}
	}
	return value
}

// lookPath resolves file like a shell does, but in the container's PATH
// rather than the provider's: a name with a slash is used as it is (and
// fails at start if missing), any other name is searched in path.
func lookPath(file, path string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // never resolve against the provider's working directory
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}

// newID returns a random 64-hex-digit ID, the shape of a container ID.
func newID() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}
