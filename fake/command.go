package fake

import (
	"path"
	"strconv"
	"strings"
	"time"
)

// missingExecutableDir is the directory whose executables the fake treats as
// missing: a container whose executable lies under it fails to start, as a
// missing binary does on a real host.
const missingExecutableDir = "/nonexistent/"

// behaviour is what a container's command makes it do once started.
type behaviour struct {
	// runsForever is true when the container runs until it is killed.
	runsForever bool
	// runFor is how long it runs before exiting on its own.
	runFor time.Duration
	// exitCode is the code it exits with on its own.
	exitCode int
	// ignoresSIGTERM is true when only SIGKILL ends it.
	ignoresSIGTERM bool
	// missingExecutable, when non-empty, names the executable that cannot be
	// found: the container fails to start.
	missingExecutable string
}

// behaviourOf interprets the command vocabulary documented in the package
// comment: the container's Command followed by its Args.
func behaviourOf(command, args []string) behaviour {
	argv := append(append([]string(nil), command...), args...)
	if len(argv) == 0 {
		return behaviour{runsForever: true}
	}
	if strings.HasPrefix(argv[0], missingExecutableDir) {
		return behaviour{missingExecutable: argv[0]}
	}
	switch path.Base(argv[0]) {
	case "sh", "bash", "ash", "dash":
		if len(argv) == 3 && argv[1] == "-c" {
			return scriptBehaviour(argv[2])
		}
		return behaviour{runsForever: true}
	default:
		b, ok := statementsBehaviour([][]string{argv})
		if !ok {
			return behaviour{runsForever: true}
		}
		return b
	}
}

// scriptBehaviour interprets the script of `sh -c`.
func scriptBehaviour(script string) behaviour {
	var stmts [][]string
	for _, line := range strings.FieldsFunc(script, func(r rune) bool { return r == ';' || r == '\n' }) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "exec" {
			f = f[1:]
			if len(f) == 0 {
				continue
			}
		}
		stmts = append(stmts, f)
	}
	b, ok := statementsBehaviour(stmts)
	if !ok {
		return behaviour{runsForever: true}
	}
	return b
}

// statementsBehaviour runs the statements of the vocabulary in order. It
// reports false when a statement is outside the vocabulary.
func statementsBehaviour(stmts [][]string) (behaviour, bool) {
	var b behaviour
	for _, f := range stmts {
		switch name := path.Base(f[0]); {
		case name == "sleep" && len(f) == 2:
			if f[1] == "infinity" || f[1] == "inf" {
				b.runsForever = true
				return b, true
			}
			secs, err := strconv.ParseFloat(f[1], 64)
			if err != nil || secs < 0 {
				return b, false
			}
			b.runFor += time.Duration(secs * float64(time.Second))
			b.exitCode = 0
		case name == "exit" && len(f) <= 2:
			if len(f) == 2 {
				code, err := strconv.Atoi(f[1])
				if err != nil {
					return b, false
				}
				b.exitCode = code & 0xff
			}
			return b, true
		case (name == "true" || name == ":") && len(f) == 1:
			b.exitCode = 0
		case name == "false" && len(f) == 1:
			b.exitCode = 1
		case name == "trap" && len(f) == 3 && (f[1] == "''" || f[1] == `""`) && (f[2] == "TERM" || f[2] == "SIGTERM" || f[2] == "15"):
			b.ignoresSIGTERM = true
		default:
			return b, false
		}
	}
	return b, true
}
