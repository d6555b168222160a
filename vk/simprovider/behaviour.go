package simprovider

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

// behaviour is what a container's command makes it do (see the package
// doc's vocabulary).
type behaviour struct {
	missing   string                   // the executable that is missing: every start fails
	exits     bool                     // it exits by itself ...
	runFor    time.Duration            // ... after running this long ...
	exitCode  int32                    // ... with this code
	term      termAction               // what SIGTERM (DeletePod) does
	files     map[string]string        // echo -n MSG > PATH: what it wrote where
	writtenAt map[string]time.Duration // ... and when, after its start
	removedAt map[string]time.Duration // rm -f PATH: when, after its start
	env       map[string]string        // its environment, for sh's $NAME
	log       []string                 // echo LINE: the lines it printed, in order
	// preStop is what its preStop exec hook does (nil: it has none): its
	// files are written when DeletePod stops the container, its sleeps
	// delay SIGTERM.
	preStop *behaviour
	// postStartFails: its postStart exec hook fails (exits other than 0,
	// or its executable is missing) after postStartTakes.
	postStartFails bool
	postStartTakes time.Duration
}

// hookTakes is how long a hook of behaviour h runs: its sleeps.
func (h *behaviour) hookTakes() time.Duration {
	if h == nil || !h.exits {
		return 0
	}
	return h.runFor
}

// terminationMessage is the message of a run of container c, whose command
// behaves as b, that ended with code: workload's TerminationMessage (the
// kubelet's getTerminationMessage and its limits) of what b wrote to c's
// terminationMessagePath (the API's default, /dev/termination-log, when c
// has none) and of the lines it printed.
func (b behaviour) terminationMessage(c corev1.Container, code int32) string {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	var wb workload.Behaviour
	if msg, ok := b.files[c.TerminationMessagePath]; ok {
		wb.Writes = append(wb.Writes, workload.Write{Path: c.TerminationMessagePath, Data: msg})
	}
	for _, line := range b.log {
		wb.Writes = append(wb.Writes, workload.Write{Path: workload.Stdout, Data: line + "\n", Append: true})
	}
	return wb.TerminationMessage(&c, 0, int(code))
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
	// echo -n MSG > PATH (one word, to a file) and echo LINE (to the log).
	writeRE = regexp.MustCompile(`^echo -n (\S+) > (\S+)$`)
	echoRE  = regexp.MustCompile(`^echo (.*)$`)
	rmRE    = regexp.MustCompile(`^rm -f (\S+)$`)
)

// parseContainer reads what c does: its Command followed by its Args,
// their $(VAR) references expanded with its env as the kubelet expands them
// (VK hands the provider the env resolved, $(VAR) references in values
// expanded, node/pod.go createOrUpdatePod, but not the command), and the
// $NAME references of its echo statements with its env as sh expands them.
func parseContainer(c corev1.Container) behaviour {
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	expand := func(in []string) []string {
		var out []string
		for _, a := range in {
			out = append(out, workload.ExpandVars(a, env))
		}
		return out
	}
	b := parse(expand(append(append([]string(nil), c.Command...), c.Args...)), env)
	if c.Lifecycle == nil {
		return b
	}
	// A postStart exec hook runs in the container as soon as it has
	// started (kuberuntime_container.go startContainer): what it writes is
	// there from its sleeps on.
	if h := c.Lifecycle.PostStart; h != nil && h.Exec != nil {
		hb := parse(expand(h.Exec.Command), env)
		if hb.missing != "" || (hb.exits && hb.exitCode != 0) {
			b.postStartFails, b.postStartTakes = true, hb.runFor
		}
		for path, msg := range hb.files {
			if b.files == nil {
				b.files, b.writtenAt = map[string]string{}, map[string]time.Duration{}
			}
			b.files[path], b.writtenAt[path] = msg, hb.writtenAt[path]
		}
	}
	if h := c.Lifecycle.PreStop; h != nil && h.Exec != nil {
		hb := parse(expand(h.Exec.Command), env)
		b.preStop = &hb
	}
	return b
}

// preStopped is b once its preStop hook has run: with the files the hook
// wrote.
func (b behaviour) preStopped() behaviour {
	if b.preStop == nil || len(b.preStop.files) == 0 {
		return b
	}
	files := map[string]string{}
	for path, msg := range b.files {
		files[path] = msg
	}
	for path, msg := range b.preStop.files {
		files[path] = msg
	}
	b.files = files
	return b
}

// shellVarRE is a $NAME reference of sh.
var shellVarRE = regexp.MustCompile(`\$[A-Za-z_][A-Za-z0-9_]*`)

// parse reads argv (a container's Command followed by its Args, expanded)
// with env, the container's environment.
func parse(argv []string, env map[string]string) behaviour {
	b := behaviour{env: env}
	if len(argv) == 0 {
		return b
	}
	if strings.HasPrefix(argv[0], workload.MissingExecutableDir) {
		b.missing = argv[0]
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
		b.exits = false // the sleeps before it do not end the script
		return true
	case sleepRE.MatchString(st):
		s, _ := strconv.ParseFloat(sleepRE.FindStringSubmatch(st)[1], 64)
		*elapsed += time.Duration(s * float64(time.Second))
		b.exits, b.runFor, b.exitCode = true, *elapsed, 0
		return false
	case writeRE.MatchString(st):
		m := writeRE.FindStringSubmatch(st)
		if b.files == nil {
			b.files, b.writtenAt = map[string]string{}, map[string]time.Duration{}
		}
		b.files[m[2]], b.writtenAt[m[2]] = b.expandShell(m[1]), *elapsed
		return false
	case rmRE.MatchString(st):
		if b.removedAt == nil {
			b.removedAt = map[string]time.Duration{}
		}
		b.removedAt[rmRE.FindStringSubmatch(st)[1]] = *elapsed
		return false
	case echoRE.MatchString(st):
		b.log = append(b.log, b.expandShell(echoRE.FindStringSubmatch(st)[1]))
		return false
	case exitRE.MatchString(st):
		n, _ := strconv.Atoi(exitRE.FindStringSubmatch(st)[1])
		b.exits, b.runFor, b.exitCode = true, *elapsed, int32(n&0xff)
		return true
	}
	return false
}

// expandShell expands the $NAME references of word with b's environment,
// as sh does (an unset variable is empty).
func (b *behaviour) expandShell(word string) string {
	return shellVarRE.ReplaceAllStringFunc(word, func(ref string) string { return b.env[ref[1:]] })
}

// readyAfter answers how long after its start a container of b that has
// the readiness probe probe is first Ready, and whether it ever is. An exec
// probe test -e PATH (or sh -c "test -e PATH") passes once the container
// has written PATH; the kubelet runs it initialDelaySeconds after the
// start, then every periodSeconds (default 10). Any other probe passes at
// its first run; no probe: Ready at once.
func (b behaviour) readyAfter(probe *corev1.Probe) (time.Duration, bool) {
	if probe == nil {
		return 0, true
	}
	period := time.Duration(probe.PeriodSeconds) * time.Second
	if period <= 0 {
		period = 10 * time.Second
	}
	first := time.Duration(probe.InitialDelaySeconds) * time.Second
	if probe.Exec == nil {
		return first, true
	}
	cmd := strings.Join(probe.Exec.Command, " ")
	cmd = strings.TrimPrefix(strings.TrimPrefix(cmd, "sh -c "), "/bin/sh -c ")
	path, ok := strings.CutPrefix(cmd, "test -e ")
	if !ok {
		return first, true
	}
	at, written := b.writtenAt[path]
	if !written {
		return 0, false
	}
	t := first
	for t < at {
		t += period
	}
	return t, true
}

// probeFile answers the PATH of an exec probe test -e PATH (or sh -c
// "test -e PATH"), and whether probe is one.
func probeFile(probe *corev1.Probe) (string, bool) {
	if probe == nil || probe.Exec == nil {
		return "", false
	}
	cmd := strings.Join(probe.Exec.Command, " ")
	cmd = strings.TrimPrefix(strings.TrimPrefix(cmd, "sh -c "), "/bin/sh -c ")
	return strings.CutPrefix(cmd, "test -e ")
}

// killedAfter answers how long after its start a container of b is
// killed for its liveness probe, and whether it ever is: an exec probe
// test -e PATH fails while PATH is not there (before the container wrote
// it, after it removed it); the kubelet runs it initialDelaySeconds after
// the start, then every periodSeconds (default 10), and kills the
// container after failureThreshold (default 3) failures in a row. Any
// other probe passes.
func (b behaviour) killedAfter(probe *corev1.Probe) (time.Duration, bool) {
	path, ok := probeFile(probe)
	if !ok {
		return 0, false
	}
	period := time.Duration(probe.PeriodSeconds) * time.Second
	if period <= 0 {
		period = 10 * time.Second
	}
	threshold := int(probe.FailureThreshold)
	if threshold <= 0 {
		threshold = 3
	}
	written, isWritten := b.writtenAt[path]
	removed, isRemoved := b.removedAt[path]
	failures := 0
	for t, n := time.Duration(probe.InitialDelaySeconds)*time.Second, 0; n < 10000; t, n = t+period, n+1 {
		there := isWritten && t >= written && !(isRemoved && t >= removed)
		if there {
			failures = 0
			if !isRemoved || removed < written {
				return 0, false // there from now on
			}
			continue
		}
		if failures++; failures >= threshold {
			return t, true
		}
	}
	return 0, false
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
