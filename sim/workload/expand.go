package workload

import (
	"strings"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
)

// Expand returns the command line and environment the kubelet gives the
// process of container c: each Env value with $(VAR) references to the
// variables before it expanded, then Command and Args with $(VAR)
// references to those variables expanded, $$ standing for $ and a
// reference to an undefined variable left as it is
// (kubecontainer.ExpandContainerCommandAndArgs and the kubelet's
// makeEnvironmentVariables; ExpandVars is the expansion). Variables with
// valueFrom are not resolved (there is no API server): they are empty. An
// empty Command or Args gives an empty, not nil, slice; only a nil one gives
// nil.
func Expand(c *v1.Container) (command, args []string, env map[string]string) {
	if c == nil {
		return nil, nil, map[string]string{}
	}
	env = make(map[string]string, len(c.Env))
	for _, e := range c.Env {
		env[e.Name] = ExpandVars(e.Value, env)
	}
	expand := func(in []string) []string {
		if in == nil {
			return nil
		}
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = ExpandVars(s, env)
		}
		return out
	}
	return expand(c.Command), expand(c.Args), env
}

// ExpandVars returns s with its $(NAME) references expanded as the kubelet
// expands a container's env values, command and args: $(NAME) becomes
// vars[NAME] when vars has NAME (even an empty NAME, $()), and is left as
// written when it does not; $$ is a $ (so $$(NAME) is the text $(NAME), not
// expanded); the NAME of $( runs to the first ')' after it, whatever it
// holds (a '$' or '(' included: $(a$(b) names "a$(b"); a $( with no ')'
// after it is kept as written and the text after it read on; any other $ is
// kept with the character after it, a byte that is not valid UTF-8 read as
// utf8.RuneError (written as U+FFFD, as the kubelet writes it); a $ at the
// end is kept. Values are inserted as they are, not expanded again. A nil
// vars has no NAME.
func ExpandVars(s string, vars map[string]string) string {
	if strings.IndexByte(s, '$') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		d := strings.IndexByte(s[i:], '$')
		if d < 0 || i+d == len(s)-1 {
			b.WriteString(s[i:]) // no $ left, or a $ at the very end
			break
		}
		b.WriteString(s[i : i+d])
		i += d + 1 // s[i] is the character after the $
		switch s[i] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+1:], ')')
			if end < 0 {
				b.WriteString("$(") // unterminated: kept, the rest read on
				i++
				break
			}
			name := s[i+1 : i+1+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i-1 : i+2+end]) // $(NAME) as written
			}
			i += end + 2
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			b.WriteByte('$')
			b.WriteRune(r)
			i += n
		}
	}
	return b.String()
}

// OfEnv returns the behaviour of container c as its process sees it: Expand,
// then ParseEnv with the expanded environment.
func OfEnv(c *v1.Container) Behaviour {
	if c == nil {
		return Behaviour{RunsUntilKilled: true}
	}
	command, args, env := Expand(c)
	return ParseEnv(command, args, env)
}

// OfHandler returns the behaviour of the exec action of a lifecycle hook (or
// of a probe), run in container c: the kubelet runs Exec.Command as it is,
// without $(VAR) expansion, in the container's environment (so $VAR under
// sh -c reads it). ok is false when h has no exec action (an HTTP, TCP or
// sleep handler, which the vocabulary does not describe).
func OfHandler(c *v1.Container, h *v1.LifecycleHandler) (b Behaviour, ok bool) {
	if h == nil || h.Exec == nil {
		return Behaviour{}, false
	}
	_, _, env := Expand(c)
	return ParseEnv(h.Exec.Command, nil, env), true
}
