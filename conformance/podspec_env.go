package conformance

import (
	"fmt"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The environment spec (KRI-POD-059): env values and $(VAR) expansion as the
// kubelet makes them, seen by the container's shell.
var podspecEnvSpecs = []*specDef{
	{id: "KRI-POD-059", level: Must, kind: kindPod, groups: []string{"pod-spec", "env"}, caps: []Capability{CapEnvExpansion}, pod: podEnvExpansion,
		text: "env values reach the container's process, and $(VAR) in env values, command and args is expanded as the kubelet expands it, $$ standing for $"},
}

func podEnvExpansion(e *podEnv) {
	// Each container exits with a code only the right environment and
	// expansion give: a variable that does not reach the process makes
	// "exit $CODE" a bare exit (0), an unexpanded $(CODE) is a command
	// substitution in sh (127) and outside the vocabulary of a simulator
	// (runs until killed), an unescaped $$ is the shell's PID (exit fails
	// with 2).
	cases := []struct {
		c    v1.Container
		code int
		how  string
	}{
		{withEnv(e.shell("plain", "exit $CODE"), "CODE", "3"), 3, `env CODE=3, sh -c "exit $CODE"`},
		{withEnv(e.shell("command", "exit $(CODE)"), "CODE", "4"), 4, `env CODE=4, sh -c "exit $(CODE)" (expanded in the command)`},
		{withEnv(e.shell("composed", "exit $SUM"), "BASE", "5", "SUM", "$(BASE)"), 5, `env BASE=5 SUM=$(BASE), sh -c "exit $SUM" (expanded in an env value)`},
		{withEnv(e.shell("escaped", "exit $$CODE"), "CODE", "6"), 6, `env CODE=6, sh -c "exit $$CODE" ($$ stands for $)`},
	}
	// One container takes the script from args, as in the e2e test
	// "should allow substituting values in a container's args".
	args := withEnv(e.shell("args", ""), "CODE", "7")
	args.Command, args.Args = args.Command[:len(args.Command)-1], []string{"exit $(CODE)"}
	cases = append(cases, struct {
		c    v1.Container
		code int
		how  string
	}{args, 7, `env CODE=7, sh -c with args "exit $(CODE)" (expanded in the args)`})

	containers := make([]v1.Container, len(cases))
	for i, tc := range cases {
		containers[i] = tc.c
	}
	pod := e.newPod("env", v1.RestartPolicyNever, containers...)
	e.step("syncing a pod whose containers exit with codes taken from their environment, through $(VAR) expansion")
	st := e.syncUntil(pod, "every container exited", func(g gomega.Gomega, st *pkgcontainer.PodStatus) {
		for _, tc := range cases {
			g.Expect(exitedOf(st, tc.c.Name)).NotTo(gomega.BeEmpty(), "container %s (%s) has not exited: %s", tc.c.Name, tc.how, describeStatus(st))
		}
	})
	for _, tc := range cases {
		got := exitedOf(st, tc.c.Name)[0].ExitCode
		if got != tc.code {
			e.failf("container %s (%s) exited %d, want %d: %s", tc.c.Name, tc.how, got, tc.code, envHint(got))
		}
	}
}

// envHint says what an unexpected exit code of the env spec suggests.
func envHint(code int) string {
	switch code {
	case 0:
		return "the variable did not reach the process (exit with an empty argument is a bare exit), or $(CODE) was not expanded (sh took it for a command substitution, which gave nothing)"
	case 2:
		return "sh could not read the exit code: $$ was not turned into $ (sh expanded $$ to its PID)"
	case 127:
		return "$(CODE) was not expanded before sh ran it (sh took it for a command substitution)"
	}
	return fmt.Sprintf("exit code %d is none the environment gives", code)
}
