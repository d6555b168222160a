package crisim

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"

	"github.com/kri-kit/testkit/sim/workload"
)

// execPoll is how often a running ExecSync looks at its container, to end
// when the container has exited.
const execPoll = 5 * time.Millisecond

// execWrite is a write of a command ExecSync ran, at its time (Unix
// nanoseconds).
type execWrite struct {
	at int64
	w  workload.Write
}

// file is the content of a file of a container, and whether it exists.
type file struct {
	data   string
	exists bool
}

// files returns the files the container's command and the commands
// ExecSync ran in it wrote between startedAt and finishedAt (Unix
// nanoseconds), by container path, applying their writes in the order they
// happened. Standard output is left out.
func (p *process) files(startedAt, finishedAt int64) map[string]file {
	all := make([]execWrite, 0, len(p.b.Writes)+len(p.execWrites))
	for _, w := range p.b.Writes {
		if at := startedAt + int64(w.At); at <= finishedAt {
			all = append(all, execWrite{at: at, w: w})
		}
	}
	for _, w := range p.execWrites {
		if w.at <= finishedAt {
			all = append(all, w)
		}
	}
	slices.SortStableFunc(all, func(a, b execWrite) int { return cmp.Compare(a.at, b.at) })
	out := map[string]file{}
	for _, e := range all {
		w := e.w
		if w.Path == workload.Stdout {
			continue
		}
		f := out[w.Path]
		switch {
		case w.Remove:
			f = file{}
		case w.Append:
			f = file{data: f.data + w.Data, exists: true}
		default:
			f = file{data: w.Data, exists: true}
		}
		out[w.Path] = f
	}
	return out
}

// ExecSync runs cmd in a running container, as the kubelet runs an exec
// lifecycle hook (and an exec probe) through the CRI: cmd is read with the
// vocabulary of package workload in the container's environment and with
// its files as they are when the call starts (workload.ParseExec: cat P and
// test -e P read what the container and earlier execs wrote), takes the
// time its sleeps add up to (the call blocks meanwhile) and writes to the
// container's files as it goes (what it writes to a mounted path reaches the
// host when the container exits, as the container's own writes do); what it
// prints is the returned stdout. A command that exits non-zero returns a
// utilexec.CodeExitError with its code, as the CRI client reports it. A
// command that outlives timeout (0: none), the container or ctx is cut
// short: the call returns a DeadlineExceeded error, an error saying the
// container exited, or ctx's gRPC error, keeping only the writes made until
// then. A command outside the vocabulary runs until one of these ends it.
// A container that is not running (or not known) is refused with
// FailedPrecondition (NotFound), as containerd refuses it.
func (r *RuntimeService) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (stdout []byte, stderr []byte, err error) {
	if err := ctxErr(ctx); err != nil {
		return nil, nil, err
	}
	if len(cmd) == 0 {
		return nil, nil, status.Error(codes.InvalidArgument, "ExecSync: empty command")
	}
	r.Lock()
	if err := r.record("ExecSync"); err != nil {
		r.Unlock()
		return nil, nil, err
	}
	c, ok := r.Containers[containerID]
	if !ok {
		r.Unlock()
		return nil, nil, notFound("container", containerID)
	}
	start := time.Now()
	r.settle(containerID, c, start.UnixNano())
	if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		r.Unlock()
		return nil, nil, status.Errorf(codes.FailedPrecondition, "container %q is in %s state, not running", containerID, c.State)
	}
	p := r.procs[containerID]
	var (
		env   map[string]string
		files map[string]file
	)
	if p != nil {
		env = p.env
		files = p.files(c.StartedAt, start.UnixNano())
	}
	r.Unlock()

	// cat P and test -e P read the container's files as they are now:
	// those its command and earlier execs wrote.
	b := workload.ParseExec(cmd, env, func(path string) (string, bool) {
		f := files[path]
		return f.data, f.exists
	})
	if b.FailsToStart() {
		return nil, nil, status.Errorf(codes.Unknown, "failed to exec in container: exec: %q: stat %s: no such file or directory", b.MissingExecutable, b.MissingExecutable)
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	var done <-chan time.Time
	if !b.RunsUntilKilled {
		t := time.NewTimer(b.RunFor)
		defer t.Stop()
		done = t.C
	}
	tick := time.NewTicker(execPoll)
	defer tick.Stop()
	var cut error
wait:
	for {
		select {
		case <-done:
			break wait
		case <-deadline:
			cut = status.Errorf(codes.DeadlineExceeded, "command %q timed out after %s", strings.Join(cmd, " "), timeout)
			break wait
		case <-ctx.Done():
			cut = status.FromContextError(ctx.Err()).Err()
			break wait
		case <-tick.C:
			r.Lock()
			c, ok := r.Containers[containerID]
			if ok {
				r.settle(containerID, c, time.Now().UnixNano())
			}
			gone := !ok || c.State != runtimeapi.ContainerState_CONTAINER_RUNNING
			r.Unlock()
			if gone {
				cut = status.Errorf(codes.Unknown, "command %q ended: container %q exited", strings.Join(cmd, " "), containerID)
				break wait
			}
		}
	}
	ran := time.Since(start)
	if cut == nil {
		ran = b.RunFor
	}
	r.Lock()
	if p != nil && !p.flushed {
		for _, w := range b.Writes {
			if w.Path != workload.Stdout && w.At <= ran {
				p.execWrites = append(p.execWrites, execWrite{at: start.Add(w.At).UnixNano(), w: w})
			}
		}
	}
	r.Unlock()
	out, _ := b.FileAt(workload.Stdout, ran)
	if cut != nil {
		return []byte(out), nil, cut
	}
	if b.ExitCode != 0 {
		return []byte(out), nil, utilexec.CodeExitError{
			Err:  fmt.Errorf("command '%s' exited with %d: %s", strings.Join(cmd, " "), b.ExitCode, ""),
			Code: b.ExitCode,
		}
	}
	return []byte(out), nil, nil
}
