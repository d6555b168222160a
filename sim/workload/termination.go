package workload

import (
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// The kubelet's limits on a termination message (the constants of the same
// names in k8s.io/kubernetes/pkg/kubelet/container, which this module does
// not import): the bytes read from the terminationMessagePath file, and the
// lines and bytes of the log fallback.
const (
	MaxContainerTerminationMessageLength    = 4 * 1024
	MaxContainerTerminationMessageLogLength = 2 * 1024
	MaxContainerTerminationMessageLogLines  = 80
)

// TerminationMessage returns the termination message the kubelet's runtime
// manager reports for an instance of container c that behaved as b, ran for
// ran and exited with exitCode (kuberuntime's getTerminationMessage and
// its log fallback): the last MaxContainerTerminationMessageLength bytes of
// the file at c's terminationMessagePath as the command left it; with
// terminationMessagePolicy FallbackToLogsOnError and a non-zero exit code,
// when that file is missing or empty (or c has no path), the tail of what
// the command printed, its last MaxContainerTerminationMessageLogLines lines
// and at most MaxContainerTerminationMessageLogLength bytes. A simulator
// calls it when an instance exits, whether on its own or killed.
func (b Behaviour) TerminationMessage(c *v1.Container, ran time.Duration, exitCode int) string {
	if c == nil {
		return ""
	}
	msg := ""
	if c.TerminationMessagePath != "" {
		msg, _ = b.FileAt(c.TerminationMessagePath, ran)
		msg = lastBytes(msg, MaxContainerTerminationMessageLength)
	}
	if msg != "" || c.TerminationMessagePolicy != v1.TerminationMessageFallbackToLogsOnError || exitCode == 0 {
		return msg
	}
	out, _ := b.FileAt(Stdout, ran)
	lines := strings.SplitAfter(out, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if n := MaxContainerTerminationMessageLogLines; len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lastBytes(strings.Join(lines, ""), MaxContainerTerminationMessageLogLength)
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
