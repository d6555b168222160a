package hostprocess

import (
	"bytes"
	"io"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// terminationSource says where the termination message of an instance
// comes from: the container's terminationMessagePath, taken as a host path
// (a host process has no file system of its own), and its policy.
type terminationSource struct {
	path     string
	fallback bool // FallbackToLogsOnError
	// before is the modification time of the file at path when the
	// instance started (zero when there was none): a file not written
	// since belongs to an earlier instance, or to no one, and is ignored.
	before time.Time
}

// newTerminationSource notes where the message of an instance of c will
// come from. The API default /dev/termination-log is a per-container file
// only inside a container: on a host it names no file of this container,
// so it is not read.
func newTerminationSource(c *v1.Container) terminationSource {
	src := terminationSource{fallback: c.TerminationMessagePolicy == v1.TerminationMessageFallbackToLogsOnError}
	if c.TerminationMessagePath != "" && c.TerminationMessagePath != v1.TerminationMessagePathDefault {
		src.path = c.TerminationMessagePath
		if fi, err := os.Stat(src.path); err == nil {
			src.before = fi.ModTime()
		}
	}
	return src
}

// message returns the termination message of an instance that exited with
// exitCode and logged to logPath, as the kubelet's runtime manager reads it
// (getTerminationMessage, readLastStringFromContainerLogs): the file, at
// most pkgcontainer.MaxContainerTerminationMessageLength bytes, when the
// instance wrote it; otherwise, with FallbackToLogsOnError and a non-zero
// exit code, the tail of the log (at most
// MaxContainerTerminationMessageLogLines lines and
// MaxContainerTerminationMessageLogLength bytes).
func (src terminationSource) message(exitCode int, logPath string) string {
	if src.path != "" {
		if fi, err := os.Stat(src.path); err == nil && fi.Mode().IsRegular() && fi.ModTime().After(src.before) {
			if data, err := readTail(src.path, pkgcontainer.MaxContainerTerminationMessageLength); err == nil && len(data) > 0 {
				return string(data)
			}
		}
	}
	if !src.fallback || exitCode == 0 {
		return ""
	}
	data, err := readTail(logPath, pkgcontainer.MaxContainerTerminationMessageLogLength)
	if err != nil {
		return ""
	}
	if lines := bytes.SplitAfter(data, []byte("\n")); len(lines) > pkgcontainer.MaxContainerTerminationMessageLogLines {
		data = bytes.Join(lines[len(lines)-pkgcontainer.MaxContainerTerminationMessageLogLines:], nil)
	}
	return string(data)
}

// readTail returns the last max bytes of the file at path.
func readTail(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if off := fi.Size() - int64(max); off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, int64(max)))
}
