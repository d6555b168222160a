package conformance_test

import (
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/kri/interceptor"
)

// podspecEnvMutants are the mutants of the pod-spec capability "env"
// (podspec_env.go): the hostprocess example with one contract violation each
// (selftest_hostprocess_test.go), and the specs it must fail.
func podspecEnvMutants() []*mutant {
	return []*mutant{
		{
			name:      "host-env-dropped",
			violation: "the container's env never reaches its process",
			want:      []string{"KRI-POD-059"},
			check:     expectFailureMessage("KRI-POD-059", "the environment did not reach the processes: container plain"),
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) { c.Env = nil })}
			},
		},
		{
			name:      "host-env-unexpanded",
			violation: "$(VAR) in env values, command and args is passed on as it is, not expanded",
			want:      []string{"KRI-POD-059"},
			check:     expectFailureMessage("KRI-POD-059", "its command line still held $(CODE)"),
			host: func() interceptor.PodFuncs {
				// Doubling every $ makes the provider's expansion give back
				// the text as it was: no reference is expanded.
				escape := func(ss []string) {
					for i := range ss {
						ss[i] = strings.ReplaceAll(ss[i], "$", "$$")
					}
				}
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					escape(c.Command)
					escape(c.Args)
					for i := range c.Env {
						c.Env[i].Value = strings.ReplaceAll(c.Env[i].Value, "$", "$$")
					}
				})}
			},
		},
		{
			name:      "host-env-dollar-kept",
			violation: "$$ is not turned into $ ($(VAR) is expanded, but a $$ stays $$)",
			want:      []string{"KRI-POD-059"},
			check:     expectFailureMessage("KRI-POD-059", "its command line still held $$"),
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					for i := range c.Args {
						c.Args[i] = strings.ReplaceAll(c.Args[i], "$$", "$$$$")
					}
					for i := range c.Command {
						c.Command[i] = strings.ReplaceAll(c.Command[i], "$$", "$$$$")
					}
				})}
			},
		},
	}
}
