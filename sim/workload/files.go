package workload

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// Files is a container's file table at one moment: the content of the file
// at an absolute path, and whether it exists. A nil Files has no files.
type Files func(path string) (data string, exists bool)

// FilesAt returns the files of a container whose command is b after it has
// run for d: those its own writes left (FileAt). An exec probe run at that
// moment reads them (OfProbe).
func (b Behaviour) FilesAt(d time.Duration) Files {
	return func(path string) (string, bool) { return b.FileAt(path, d) }
}

// isRead reports whether the statement f is one of the reads of the
// vocabulary: cat P, test -e P, test -f P, [ -e P ] or [ -f P ], P an
// absolute path.
func isRead(name string, f []string) bool {
	switch {
	case name == "cat" && len(f) == 2:
		return plainPath(f[1])
	case name == "test" && len(f) == 3:
		return (f[1] == "-e" || f[1] == "-f") && plainPath(f[2])
	case name == "[" && len(f) == 4:
		return (f[1] == "-e" || f[1] == "-f") && plainPath(f[2]) && f[3] == "]"
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// read returns the file at path as a command that has run the statements of
// b sees it: what its own writes left, if it wrote or removed the file,
// else the container's file from p.files.
func (p parser) read(b Behaviour, path string) (string, bool) {
	for _, w := range b.Writes {
		if w.Path == path {
			return b.FileAt(path, b.RunFor)
		}
	}
	if p.files == nil {
		return "", false
	}
	return p.files(path)
}

// OfProbe returns the behaviour of the exec action of probe p run in
// container c at a moment its files are files (nil: none): as OfHandler,
// the kubelet runs Exec.Command as it is, in the container's environment;
// cat P and test -e P read files. ok is false when p has no exec action
// (an HTTP, TCP or gRPC probe, which the vocabulary does not describe).
//
// A simulator evaluates the probe at the moment it runs, d after the
// container started, with the container's files at that moment, for
// example OfProbe(c, p, OfEnv(c).FilesAt(d)), and asks the result for
// Succeeds.
func OfProbe(c *v1.Container, p *v1.Probe, files Files) (b Behaviour, ok bool) {
	if p == nil || p.Exec == nil {
		return Behaviour{}, false
	}
	_, _, env := Expand(c)
	return ParseExec(p.Exec.Command, env, files), true
}

// ParseExec interprets the command line of an exec into a running
// container (a probe's, a hook's, a CRI ExecSync's) as ParseEnv does, with
// the container's environment env and its files at that moment: cat P and
// test -e P read them. OfProbe is ParseExec of a probe's command.
func ParseExec(argv []string, env map[string]string, files Files) Behaviour {
	return parser{env: env, files: files}.argv(argv)
}

// Succeeds reports whether an exec probe whose command behaves as b
// succeeds when it may run for timeout: it starts, exits on its own in less
// than timeout, and exits 0. The kubelet counts a probe that outlives its
// timeoutSeconds as failed, and so a command outside the vocabulary
// (Unknown: it runs until killed).
func (b Behaviour) Succeeds(timeout time.Duration) bool {
	return !b.FailsToStart() && !b.RunsUntilKilled && b.RunFor < timeout && b.ExitCode == 0
}

// ProbeTimeout is the timeout of probe p: its TimeoutSeconds, or one
// second (the API default) when unset.
func ProbeTimeout(p *v1.Probe) time.Duration {
	if p == nil || p.TimeoutSeconds <= 0 {
		return time.Second
	}
	return time.Duration(p.TimeoutSeconds) * time.Second
}
