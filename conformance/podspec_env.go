package conformance

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/sim/workload"
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
	// substitution in sh that prints nothing (a bare exit again, 0; 127
	// where the shell exits with the substitution's status) and outside the
	// vocabulary of a simulator (runs until killed), an unescaped $$ is the
	// shell's PID (exit fails with 2).
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
	var wrong []string
	envLost := false
	for i, tc := range cases {
		got := exitedOf(st, tc.c.Name)[0].ExitCode
		if got == tc.code {
			continue
		}
		command, args, env := workload.Expand(&tc.c)
		saw := envSaw(got, slices.Concat(command, args))
		if i == 0 {
			envLost = true
		} else if envLost {
			saw = "(the environment did not reach the processes, so this code says nothing of the expansion)"
		}
		wrong = append(wrong, fmt.Sprintf("container %s (%s) exited %d, want %d: the kubelet would start it with the command line %q and the environment %s; %s",
			tc.c.Name, tc.how, got, tc.code, slices.Concat(command, args), describeEnv(env), saw))
	}
	if len(wrong) == 0 {
		return
	}
	lead := "the processes did not see the environment and command lines the kubelet gives"
	if envLost {
		lead = fmt.Sprintf("the environment did not reach the processes: container plain, whose script needs no expansion (CODE=3, sh -c \"exit $CODE\"), exited %d", exitedOf(st, cases[0].c.Name)[0].ExitCode)
	}
	e.failf("%s. A node agent publishes these exit codes as the containers' own:\n%s", lead, strings.Join(wrong, "\n"))
}

// envSaw says what a container of the env spec that exited with code saw,
// what its shell's exit must have read, given the command line the kubelet
// would start it with.
func envSaw(code int, commandLine []string) string {
	switch code {
	case 0:
		if !strings.Contains(strings.Join(commandLine, " "), "$") {
			return "its shell's exit read no number, where the kubelet's command line has it: its command line still held $(CODE), which sh ran as a command substitution that printed nothing"
		}
		return "its shell's exit read no number: the variable it reads was empty or unset in its environment"
	case 2:
		return "its shell's exit read something that is not a number: its command line still held $$ (sh turns $$ into its PID), or its variable held no number (an env value whose $(VAR) was not expanded)"
	case 127:
		return "its shell ran $(CODE) as a command that does not exist: its command line still held $(CODE), not expanded"
	}
	return fmt.Sprintf("exit code %d is none the environment gives", code)
}

// describeEnv renders env sorted by name, NAME=value separated by spaces.
func describeEnv(env map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		kv = append(kv, k+"="+env[k])
	}
	return strings.Join(kv, " ")
}
