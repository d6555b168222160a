package workload

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

// Expand returns the command line and environment the kubelet gives the
// process of container c: each Env value with $(VAR) references to the
// variables before it expanded, then Command and Args with $(VAR)
// references to those variables expanded, $$ standing for $ and a
// reference to an undefined variable left as it is
// (kubecontainer.ExpandContainerCommandAndArgs and the kubelet's
// makeEnvironmentVariables, both on
// k8s.io/kubernetes/third_party/forked/golang/expansion). Variables with
// valueFrom are not resolved (there is no API server): they are empty.
func Expand(c *v1.Container) (command, args []string, env map[string]string) {
	if c == nil {
		return nil, nil, map[string]string{}
	}
	env = make(map[string]string, len(c.Env))
	for _, e := range c.Env {
		env[e.Name] = expansion.Expand(e.Value, expansion.MappingFuncFor(env))
	}
	mapping := expansion.MappingFuncFor(env)
	expand := func(in []string) []string {
		if in == nil {
			return nil
		}
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = expansion.Expand(s, mapping)
		}
		return out
	}
	return expand(c.Command), expand(c.Args), env
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
