package workload

import (
	"errors"
	"github.com/distribution/reference"
	"math"
	"path"
	"slices"
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

// ErrRunContainer is the error of a start that fails in the runtime (a
// missing executable: StartFailure), and ErrCrashLoopBackOff the reason
// a container waits in a back-off after an exit (Waiting.Err). Their texts
// are those of the kubelet's errors of the same names
// (k8s.io/kubernetes/pkg/kubelet/container, which this module does not
// import), the Waiting reasons "RunContainerError" and "CrashLoopBackOff";
// and errors.Is(err, target) holds for either of them and a target of the
// same text, so a caller that checks one of the kit's errors against the
// kubelet's (errors.Is(err, pkgcontainer.ErrCrashLoopBackOff)) finds it.
var (
	ErrRunContainer     error = reasonError("RunContainerError")
	ErrCrashLoopBackOff error = reasonError("CrashLoopBackOff")
)

// reasonError is an error that the kubelet knows by its text, a container's
// Waiting reason: it is any error of that text (Is).
type reasonError string

func (e reasonError) Error() string { return string(e) }

// Is reports whether target is an error of e's text: e itself, or the
// kubelet's error of that reason.
func (e reasonError) Is(target error) bool {
	return target != nil && target.Error() == string(e)
}

// ErrImagePull is the error a simulated runtime reports to the ReasonCache
// when it cannot pull an image. Its text is that of the kubelet's
// images.ErrImagePull (k8s.io/kubernetes/pkg/kubelet/images, not imported
// here for the size of its dependencies), so the API status reads the same
// Waiting reason, "ErrImagePull".
var ErrImagePull = errors.New("ErrImagePull")

// ErrImageNeverPull is the error a simulated runtime reports to the
// ReasonCache when a container's imagePullPolicy is Never and its image is
// not present (every image in MissingImageDomain): the text of the
// kubelet's images.ErrImageNeverPull, the Waiting reason
// "ErrImageNeverPull".
var ErrImageNeverPull = errors.New("ErrImageNeverPull")

// ImageMissing reports whether image names an image in MissingImageDomain,
// which no pull finds.
func ImageMissing(image string) bool {
	if !strings.HasPrefix(image, MissingImageDomain) {
		// A reference's domain is its first component as written: an
		// image that does not start with it is in another domain (this
		// saves the parse, a regular expression, on every start).
		return false
	}
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

// The exit code and reason a CRI runtime reports for a container it created
// but could not start (a missing executable, say; Pod.StartFailed), as
// containerd reports them (internal/cri/server/container_start.go:
// errorStartExitCode and errorStartReason).
const (
	ExitCodeStartError = 128
	ReasonStartError   = "StartError"
)

// maxRun is the longest run a Behaviour can describe.
const maxRun = time.Duration(math.MaxInt64)

// Stdout is the Path of a Write to the process's standard output.
const Stdout = ""

// Write is one effect of a command on a file, or on its standard output,
// at a moment of its run.
type Write struct {
	// At is when it happens, counted from the start of the command.
	At time.Duration
	// Path is the absolute path of the file in the container's file
	// system, or Stdout.
	Path string
	// Data is what is written.
	Data string
	// Append is true for >> (and always for Stdout); false truncates the
	// file first (>).
	Append bool
	// Remove is true for rm -f Path: the file is gone afterwards.
	Remove bool
}

// Behaviour is what a container's command makes it do once started.
type Behaviour struct {
	// RunsUntilKilled is true when the container never exits on its own.
	RunsUntilKilled bool
	// RunFor is how long the container runs before it exits on its own
	// (when RunsUntilKilled is false).
	RunFor time.Duration
	// ExitCode is the code it exits with on its own.
	ExitCode int
	// IgnoresSIGTERM is true when only SIGKILL ends it (trap '' TERM).
	IgnoresSIGTERM bool
	// TrapsSIGTERM is true when the command installs a handler that ends
	// it on SIGTERM with SIGTERMExitCode (trap 'exit N' TERM).
	TrapsSIGTERM    bool
	SIGTERMExitCode int
	// SIGTERMDelay is how long the handler runs before it exits, for a
	// handler that sleeps first (trap 'sleep N; exit M' TERM): a container
	// whose shutdown takes a while.
	SIGTERMDelay time.Duration
	// TrapDeferred is true when the handler is installed before a
	// foreground sleep: a shell runs a trap only once the foreground
	// command has ended, so SIGTERM sent to the shell alone (PID 1 of a
	// container) waits for the sleep. A script that waits with the wait
	// builtin (sleep N & wait) runs its trap at once.
	TrapDeferred bool
	// Unknown is true when the command is absent or outside the
	// vocabulary: what it does is not known, so it is taken to run until
	// killed and to exit on SIGTERM, as servers that handle SIGTERM do.
	Unknown bool
	// MissingExecutable, when non-empty, names the executable that cannot
	// be found: the container fails to start.
	MissingExecutable string
	// Writes are its effects on files and on its standard output, in the
	// order they happen (At never decreases).
	Writes []Write
	// Servers are the servers it starts (httpd), in the order they start
	// (At never decreases), each on a port of its own.
	Servers []Server
}

// FailsToStart reports whether the container cannot be started.
func (b Behaviour) FailsToStart() bool { return b.MissingExecutable != "" }

// FileAt returns the content of the file at path (a container path, or
// Stdout for everything printed) after the command has run for d, and
// whether it exists. Only the command's own writes are known: a file it
// never wrote does not exist for it. A simulator keeps its own table of a
// container's files by replaying Writes (for example so that an exec probe
// of part 2 of the vocabulary can test for a file the container writes and
// later removes).
func (b Behaviour) FileAt(path string, d time.Duration) (string, bool) {
	var sb strings.Builder
	exists := false
	for _, w := range b.Writes {
		if w.At > d {
			break
		}
		if w.Path != path {
			continue
		}
		switch {
		case w.Remove:
			sb.Reset()
			exists = false
		case w.Append:
			sb.WriteString(w.Data)
			exists = true
		default:
			sb.Reset()
			sb.WriteString(w.Data)
			exists = true
		}
	}
	return sb.String(), exists
}

// OnSIGTERM says what SIGTERM does to the command: whether it ignores it
// (only SIGKILL ends it), and otherwise the code it exits with at once. pid1
// says whether the command runs as PID 1 of a container, where a process
// without a handler ignores SIGTERM (see "What PID 1 does"); false means a
// host process, as the vocabulary describes by default:
//
//	                                      host process   PID 1
//	trap '' TERM; ...                     ignores        ignores
//	trap 'exit N' TERM; sleep X & wait    exits N        exits N
//	trap 'exit N' TERM; sleep X           exits N        ignores (the trap waits for the sleep)
//	sleep X, sh -c "sleep X; exit N", ... exits 143      ignores
//	anything else (Unknown)               exits 143      exits 143
func (b Behaviour) OnSIGTERM(pid1 bool) (ignores bool, exitCode int) {
	switch {
	case b.IgnoresSIGTERM:
		return true, 0
	case b.TrapsSIGTERM && !(pid1 && b.TrapDeferred):
		return false, b.SIGTERMExitCode
	case pid1 && !b.Unknown:
		return true, 0
	}
	return false, ExitCodeSIGTERM
}

// Of returns the behaviour of container c: Parse of its Command and Args.
func Of(c *v1.Container) Behaviour {
	if c == nil {
		return unknown
	}
	return Parse(c.Command, c.Args)
}

// Parse interprets argv = command followed by args with the vocabulary of
// the package documentation, without an environment: a statement that
// reads a variable ($VAR) is outside the vocabulary. It never fails: a
// command outside the vocabulary runs until killed.
func Parse(command, args []string) Behaviour {
	return ParseEnv(command, args, nil)
}

// ParseEnv is Parse with the environment the process sees: $VAR and ${VAR}
// in exit read it (an unset variable is empty, as in sh). env nil means no
// environment is known, as for Parse.
func ParseEnv(command, args []string, env map[string]string) Behaviour {
	argv := make([]string, 0, len(command)+len(args))
	argv = append(append(argv, command...), args...)
	return parser{env: env}.argv(argv)
}

// argv interprets a whole command line.
func (p parser) argv(argv []string) Behaviour {
	if len(argv) == 0 {
		return unknown
	}
	if strings.HasPrefix(argv[0], MissingExecutableDir) {
		return Behaviour{MissingExecutable: argv[0]}
	}
	switch path.Base(argv[0]) {
	case "sh", "bash", "ash", "dash":
		if len(argv) == 3 && argv[1] == "-c" {
			return p.script(argv[2])
		}
		return unknown
	default:
		return p.statements([][]string{argv})
	}
}

// parser carries the environment of one Parse.
type parser struct {
	env map[string]string
	// files are the container's files the command reads (cat, test),
	// beside its own writes; nil: none.
	files Files
}

// script interprets the script of sh -c.
func (p parser) script(s string) Behaviour {
	var stmts [][]string
	for _, line := range splitStatements(s) {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "exec" {
			f = f[1:]
		}
		// httpd ... & NEXT: the server in the background, then NEXT.
		if len(f) > 0 && path.Base(f[0]) == "httpd" {
			if i := slices.Index(f, "&"); i >= 0 && i < len(f)-1 {
				stmts, f = append(stmts, f[:i+1]), f[i+1:]
			}
		}
		if len(f) > 0 {
			stmts = append(stmts, f)
		}
	}
	return p.statements(stmts)
}

// unknown is the behaviour of a command outside the vocabulary.
var unknown = Behaviour{RunsUntilKilled: true, Unknown: true}

// statements runs the statements in order; one outside the vocabulary makes
// the whole command run until killed.
func (p parser) statements(stmts [][]string) Behaviour {
	var b Behaviour
	// bg is the index in b.Servers of the server started last in the
	// background, the process $! names; -1 when there is none, or when a
	// later background job, or a kill, has taken its place. bgIgnores is
	// true when it was started with SIGTERM ignored (trap '' TERM), which
	// a child inherits.
	bg, bgIgnores := -1, false
	for _, f := range stmts {
		switch name := path.Base(f[0]); {
		case name == "sleep" && (len(f) == 2 || len(f) == 4 && f[2] == "&" && f[3] == "wait"):
			// sleep X, or sleep X & wait: the shell waits in its wait
			// builtin, which a trapped signal interrupts.
			if len(f) == 2 && b.TrapsSIGTERM {
				b.TrapDeferred = true
			}
			if len(f) == 4 {
				bg = -1 // $! is the background sleep now
			}
			if f[1] == "infinity" || f[1] == "inf" {
				b.RunsUntilKilled = true
				return b
			}
			secs, err := strconv.ParseFloat(f[1], 64)
			if err != nil || !(secs >= 0) { // rejects NaN too
				return unknown
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
				arg, ok := p.word(f[1])
				if !ok {
					return unknown
				}
				if arg != "" { // exit $UNSET is a bare exit, as in sh
					code, err := strconv.Atoi(arg)
					if err != nil {
						return unknown
					}
					b.ExitCode = code & 0xff
				}
			}
			return b
		case (name == "true" || name == ":") && len(f) == 1:
			b.ExitCode = 0
		case name == "false" && len(f) == 1:
			b.ExitCode = 1
		case name == "trap" && len(f) == 3 && (f[1] == "''" || f[1] == `""`) && isTERM(f[2]):
			b.IgnoresSIGTERM, b.TrapsSIGTERM, b.SIGTERMExitCode, b.TrapDeferred = true, false, 0, false
		case name == "trap" && len(f) >= 4 && isTERM(f[len(f)-1]):
			delay, code, ok := termHandler(f[1 : len(f)-1])
			if !ok {
				return unknown
			}
			b.IgnoresSIGTERM, b.TrapsSIGTERM, b.SIGTERMExitCode, b.TrapDeferred = false, true, code, false
			b.SIGTERMDelay = delay
		case name == "echo":
			w, ok := p.echo(f[1:])
			if !ok {
				return unknown
			}
			w.At = b.RunFor
			b.Writes = append(b.Writes, w)
			b.ExitCode = 0
		case isRead(name, f):
			data, exists := p.read(b, f[len(f)-1-boolInt(name == "[")])
			b.ExitCode = 1
			if exists {
				b.ExitCode = 0
				if name == "cat" && data != "" {
					b.Writes = append(b.Writes, Write{At: b.RunFor, Path: Stdout, Data: data, Append: true})
				}
			}
		case name == "httpd":
			s, background, ok := httpd(f[1:])
			if !ok || !addServer(&b, s) {
				return unknown
			}
			if background {
				bg, bgIgnores = len(b.Servers)-1, b.IgnoresSIGTERM
				continue
			}
			// In the foreground it serves until killed; like a foreground
			// sleep, it defers a trap of the shell.
			b.RunsUntilKilled, b.TrapDeferred = true, b.TrapsSIGTERM
			return b
		case name == "kill" && len(f) == 2 && f[1] == "$!":
			// kill $!: SIGTERM to the server started last in the
			// background, which exits (it is not PID 1); another target
			// ($! of a sleep, or of a server already killed), or a
			// server that ignores SIGTERM as its shell did when it
			// started it, is outside the vocabulary.
			if bg < 0 || bgIgnores {
				return unknown
			}
			b.Servers[bg].Stops, b.Servers[bg].StopsAt = true, b.RunFor
			bg = -1
			b.ExitCode = 0
		case name == "rm" && len(f) == 3 && f[1] == "-f" && plainPath(f[2]):
			b.Writes = append(b.Writes, Write{At: b.RunFor, Path: f[2], Remove: true})
			b.ExitCode = 0
		default:
			return unknown
		}
	}
	return b
}

func isTERM(s string) bool { return s == "TERM" || s == "SIGTERM" || s == "15" }

// splitStatements splits a script into statements at ';' and newlines
// outside quotes, so that the handler of trap 'sleep N; exit M' TERM stays
// one word list.
func splitStatements(s string) []string {
	var out []string
	var quote rune
	start := 0
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == ';' || r == '\n':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// termHandler reads the handler of a trap on TERM, given as the words
// between trap and TERM: 'exit N' or 'sleep N; exit M', quoted with ' or
// ". It returns how long the handler sleeps and the code it exits with
// (& 0xff).
func termHandler(words []string) (time.Duration, int, bool) {
	h := strings.Join(words, " ")
	if len(h) < 2 || (h[0] != '\'' && h[0] != '"') || h[len(h)-1] != h[0] || strings.ContainsRune(h[1:len(h)-1], rune(h[0])) {
		return 0, 0, false
	}
	stmts := strings.Split(h[1:len(h)-1], ";")
	var delay time.Duration
	if len(stmts) == 2 {
		f := strings.Fields(stmts[0])
		if len(f) != 2 || f[0] != "sleep" {
			return 0, 0, false
		}
		secs, err := strconv.ParseFloat(f[1], 64)
		if err != nil || !(secs >= 0) || secs >= maxRun.Seconds() {
			return 0, 0, false
		}
		delay, stmts = time.Duration(secs*float64(time.Second)), stmts[1:]
	}
	f := strings.Fields(stmts[0])
	if len(stmts) != 1 || len(f) != 2 || f[0] != "exit" {
		return 0, 0, false
	}
	code, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, 0, false
	}
	return delay, code & 0xff, true
}

// word returns the value of an argument of exit: a literal, or $VAR /
// ${VAR} read from the environment (only when one is known).
func (p parser) word(s string) (string, bool) {
	name, ok := strings.CutPrefix(s, "$")
	if !ok {
		return s, !strings.ContainsAny(s, shellSpecial)
	}
	if braced, ok := strings.CutPrefix(name, "{"); ok {
		name, ok = strings.CutSuffix(braced, "}")
		if !ok {
			return "", false
		}
	}
	if p.env == nil || !validName(name) {
		return "", false
	}
	return p.env[name], true
}

// expandWord returns the value of a word of echo: a literal, or, with an
// environment known, one whose $VAR and ${VAR} references sh replaces with
// their values (unset: empty). A word with another character sh would
// interpret, or a value that sh would split into fields or glob (blanks,
// *, ?, [), is outside the vocabulary.
func (p parser) expandWord(s string) (string, bool) {
	if !strings.Contains(s, "$") || p.env == nil {
		return s, !strings.ContainsAny(s, shellSpecial)
	}
	var out strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			i = len(s)
		}
		if strings.ContainsAny(s[:i], shellSpecial) {
			return "", false
		}
		out.WriteString(s[:i])
		if s = s[i:]; s == "" {
			break
		}
		var name string
		if rest, ok := strings.CutPrefix(s[1:], "{"); ok {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return "", false
			}
			name, s = rest[:end], rest[end+1:]
		} else {
			end := 1
			for end < len(s) && validName(s[1:end+1]) {
				end++
			}
			name, s = s[1:end], s[end:]
		}
		v := p.env[name]
		if !validName(name) || strings.ContainsAny(v, " \t\n*?[") {
			return "", false
		}
		out.WriteString(v)
	}
	return out.String(), true
}

// shellSpecial are the characters whose meaning to sh the vocabulary does
// not model: a word holding one is outside it.
const shellSpecial = "'\"\\$`*?[]|&<>(){}#~=%!"

// validName reports whether s is a shell variable name.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !('a' <= r && r <= 'z') && !('A' <= r && r <= 'Z') && (i == 0 || !('0' <= r && r <= '9')) {
			return false
		}
	}
	return true
}

// plainPath reports whether s is an absolute path without characters sh
// would interpret.
func plainPath(s string) bool {
	return strings.HasPrefix(s, "/") && !strings.ContainsAny(s, shellSpecial)
}

// echo interprets the arguments of echo: [-n] WORD... [> PATH | >> PATH].
// With an environment known (ParseEnv), a word may hold $VAR and ${VAR}
// references (expandWord).
func (p parser) echo(args []string) (Write, bool) {
	w := Write{Path: Stdout, Append: true}
	newline := "\n"
	if len(args) > 0 && args[0] == "-n" {
		newline, args = "", args[1:]
	}
	for i, a := range args {
		op, rest := "", ""
		switch {
		case strings.HasPrefix(a, ">>"):
			op, rest = ">>", a[2:]
		case strings.HasPrefix(a, ">"):
			op, rest = ">", a[1:]
		default:
			continue
		}
		target := args[i+1:]
		if rest != "" {
			target = append([]string{rest}, target...)
		}
		if len(target) != 1 || !plainPath(target[0]) {
			return Write{}, false
		}
		w.Path, w.Append, args = target[0], op == ">>", args[:i]
		break
	}
	words := make([]string, len(args))
	for i, a := range args {
		word, ok := p.expandWord(a)
		if !ok {
			return Write{}, false
		}
		words[i] = word
	}
	w.Data = strings.Join(words, " ") + newline
	return w, true
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
