package workload

import (
	"errors"
	"github.com/distribution/reference"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// MissingExecutableDir is the directory whose executables the vocabulary
// treats as missing: a container whose executable lies under it fails to
// start.
const MissingExecutableDir = "/nonexistent/"

// MissingImageDomain is the registry domain of the images the vocabulary
// treats as missing: pulling them always fails, so a container of such an
// image fails to start (ErrImagePull) until its image is changed. The
// .invalid top-level domain never resolves (RFC 6761), so a real runtime
// fails to pull these images too.
const MissingImageDomain = "kri.invalid"

// ErrImagePull is the error a simulated runtime reports to the ReasonCache
// when it cannot pull an image. Its text is that of the kubelet's
// images.ErrImagePull (k8s.io/kubernetes/pkg/kubelet/images, not imported
// here for the size of its dependencies), so the API status reads the same
// Waiting reason, "ErrImagePull".
var ErrImagePull = errors.New("ErrImagePull")

// ImageMissing reports whether image names an image in MissingImageDomain,
// which no pull finds.
func ImageMissing(image string) bool {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return strings.HasPrefix(image, MissingImageDomain+"/")
	}
	return reference.Domain(named) == MissingImageDomain
}

// Exit codes of a container ended by a signal (128 + the signal's number, as
// a shell and a CRI runtime report them).
const (
	ExitCodeSIGTERM = 128 + 15
	ExitCodeSIGKILL = 128 + 9
)

// maxRun is the longest run a Behaviour can describe.
const maxRun = time.Duration(math.MaxInt64)

// Behaviour is what a container's command makes it do once started.
type Behaviour struct {
	// RunsUntilKilled is true when the container never exits on its own.
	RunsUntilKilled bool
	// RunFor is how long the container runs before it exits on its own
	// (when RunsUntilKilled is false).
	RunFor time.Duration
	// ExitCode is the code it exits with on its own.
	ExitCode int
	// IgnoresSIGTERM is true when only SIGKILL ends it.
	IgnoresSIGTERM bool
	// MissingExecutable, when non-empty, names the executable that cannot
	// be found: the container fails to start.
	MissingExecutable string
}

// FailsToStart reports whether the container cannot be started.
func (b Behaviour) FailsToStart() bool { return b.MissingExecutable != "" }

// Of returns the behaviour of container c: Parse of its Command and Args.
func Of(c *v1.Container) Behaviour {
	if c == nil {
		return Behaviour{RunsUntilKilled: true}
	}
	return Parse(c.Command, c.Args)
}

// Parse interprets argv = command followed by args with the vocabulary of
// the package documentation. It never fails: a command outside the
// vocabulary runs until killed.
func Parse(command, args []string) Behaviour {
	argv := make([]string, 0, len(command)+len(args))
	argv = append(append(argv, command...), args...)
	if len(argv) == 0 {
		return Behaviour{RunsUntilKilled: true}
	}
	if strings.HasPrefix(argv[0], MissingExecutableDir) {
		return Behaviour{MissingExecutable: argv[0]}
	}
	switch path.Base(argv[0]) {
	case "sh", "bash", "ash", "dash":
		if len(argv) == 3 && argv[1] == "-c" {
			return script(argv[2])
		}
		return Behaviour{RunsUntilKilled: true}
	default:
		return statements([][]string{argv})
	}
}

// script interprets the script of sh -c.
func script(s string) Behaviour {
	var stmts [][]string
	for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '\n' }) {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "exec" {
			f = f[1:]
		}
		if len(f) > 0 {
			stmts = append(stmts, f)
		}
	}
	return statements(stmts)
}

// statements runs the statements in order; one outside the vocabulary makes
// the whole command run until killed.
func statements(stmts [][]string) Behaviour {
	var b Behaviour
	for _, f := range stmts {
		switch name := path.Base(f[0]); {
		case name == "sleep" && len(f) == 2:
			if f[1] == "infinity" || f[1] == "inf" {
				b.RunsUntilKilled = true
				return b
			}
			secs, err := strconv.ParseFloat(f[1], 64)
			if err != nil || !(secs >= 0) { // rejects NaN too
				return Behaviour{RunsUntilKilled: true}
			}
			if secs >= (maxRun - b.RunFor).Seconds() {
				// Longer than a time.Duration holds (292 years): as good as forever.
				b.RunsUntilKilled = true
				return b
			}
			b.RunFor += time.Duration(secs * float64(time.Second))
			b.ExitCode = 0
		case name == "exit" && len(f) <= 2:
			if len(f) == 2 {
				code, err := strconv.Atoi(f[1])
				if err != nil {
					return Behaviour{RunsUntilKilled: true}
				}
				b.ExitCode = code & 0xff
			}
			return b
		case (name == "true" || name == ":") && len(f) == 1:
			b.ExitCode = 0
		case name == "false" && len(f) == 1:
			b.ExitCode = 1
		case name == "trap" && len(f) == 3 && (f[1] == "''" || f[1] == `""`) && (f[2] == "TERM" || f[2] == "SIGTERM" || f[2] == "15"):
			b.IgnoresSIGTERM = true
		default:
			return Behaviour{RunsUntilKilled: true}
		}
	}
	return b
}

// ExitReason is the reason a CRI runtime reports for a container that exited
// with code on its own: "Completed" for 0, "Error" otherwise (containerd's
// and CRI-O's convention; OOM kills and the like carry more specific
// reasons that this vocabulary cannot produce).
func ExitReason(code int) string {
	if code == 0 {
		return "Completed"
	}
	return "Error"
}
