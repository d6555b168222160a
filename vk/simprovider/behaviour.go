package simprovider

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// behaviour is what a container's command makes it do (see the package
// doc's vocabulary).
type behaviour struct {
	cannotStart bool          // the executable is missing: every start fails
	exits       bool          // it exits by itself ...
	runFor      time.Duration // ... after running this long ...
	exitCode    int32         // ... with this code
	term        termAction    // what SIGTERM (DeletePod) does
}

// termAction is a container's answer to SIGTERM.
type termAction struct {
	ignore bool          // trap '' TERM: only the kill at the grace period's end stops it
	delay  time.Duration // trap 'sleep S; exit N' TERM: exits S after SIGTERM ...
	code   int32         // ... with N (0 without a trap)
}

var (
	trapRE  = regexp.MustCompile(`^trap '([^']*)' TERM$`)
	sleepRE = regexp.MustCompile(`^sleep ([0-9]+(?:\.[0-9]+)?)$`)
	exitRE  = regexp.MustCompile(`^exit ([0-9]+)$`)
)

// parse reads argv (a container's Command followed by its Args).
func parse(argv []string) behaviour {
	var b behaviour
	if len(argv) == 0 {
		return b
	}
	if strings.HasPrefix(argv[0], "/nonexistent/") {
		b.cannotStart = true
		return b
	}
	if len(argv) == 3 && (argv[0] == "sh" || argv[0] == "/bin/sh") && argv[1] == "-c" {
		parseScript(argv[2], &b)
		return b
	}
	parseStatement(strings.Join(argv, " "), &b, new(time.Duration))
	return b
}

// parseScript reads the statements of sh -c SCRIPT in order; the first
// exit or sleep infinity ends it.
func parseScript(script string, b *behaviour) {
	var elapsed time.Duration
	for _, st := range splitStatements(script) {
		if m := trapRE.FindStringSubmatch(st); m != nil {
			b.term = parseTrap(m[1])
			continue
		}
		if parseStatement(st, b, &elapsed) {
			return
		}
	}
}

// parseStatement applies one statement; it answers whether the statement
// ends the script.
func parseStatement(st string, b *behaviour, elapsed *time.Duration) bool {
	st = strings.TrimPrefix(strings.TrimSpace(st), "exec ")
	switch {
	case st == "sleep infinity" || st == "sleep infinity & wait" || st == "/pause":
		return true
	case sleepRE.MatchString(st):
		s, _ := strconv.ParseFloat(sleepRE.FindStringSubmatch(st)[1], 64)
		*elapsed += time.Duration(s * float64(time.Second))
		b.exits, b.runFor, b.exitCode = true, *elapsed, 0
		return false
	case exitRE.MatchString(st):
		n, _ := strconv.Atoi(exitRE.FindStringSubmatch(st)[1])
		b.exits, b.runFor, b.exitCode = true, *elapsed, int32(n&0xff)
		return true
	}
	return false
}

// parseTrap reads the action of trap 'ACTION' TERM.
func parseTrap(action string) termAction {
	if strings.TrimSpace(action) == "" {
		return termAction{ignore: true}
	}
	var t termAction
	for _, st := range strings.Split(action, ";") {
		st = strings.TrimSpace(st)
		if m := sleepRE.FindStringSubmatch(st); m != nil {
			s, _ := strconv.ParseFloat(m[1], 64)
			t.delay = time.Duration(s * float64(time.Second))
		}
		if m := exitRE.FindStringSubmatch(st); m != nil {
			n, _ := strconv.Atoi(m[1])
			t.code = int32(n & 0xff)
		}
	}
	return t
}

// splitStatements splits a script on ';' and newlines outside single
// quotes.
func splitStatements(script string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range script {
		switch {
		case r == '\'':
			quoted = !quoted
			cur.WriteRune(r)
		case (r == ';' || r == '\n') && !quoted:
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}
