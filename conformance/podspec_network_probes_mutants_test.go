package conformance_test

import (
	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/fake"
)

// podspecNetworkProbesMutants are the mutants of the pod-spec capability
// "network-probes" (podspec_network_probes.go): the fake, which answers HTTP and TCP probes and hooks from
// the server its containers run, with one violation each, made by handing
// it the pod without what the violation leaves out.
func podspecNetworkProbesMutants() []*mutant {
	return []*mutant{
		{
			name:      "network-probes-ignored",
			violation: "HTTP GET and TCP socket probes are not run: a container with one is ready and never restarted by it",
			want:      []string{"KRI-POD-087", "KRI-POD-088", "KRI-POD-089"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: rewritePod(func(c *v1.Container) {
					for _, p := range []**v1.Probe{&c.StartupProbe, &c.LivenessProbe, &c.ReadinessProbe} {
						if *p != nil && ((*p).HTTPGet != nil || (*p).TCPSocket != nil) {
							*p = nil
						}
					}
				})}
			},
		},
		{
			name:      "http-probe-any-answer",
			violation: "an HTTP probe succeeds on any answer, a 404 too (the port is only connected to)",
			want:      []string{"KRI-POD-087", "KRI-POD-088"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: rewritePod(func(c *v1.Container) {
					for _, p := range []*v1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
						if p != nil && p.HTTPGet != nil {
							p.TCPSocket, p.HTTPGet = &v1.TCPSocketAction{Port: p.HTTPGet.Port}, nil
						}
					}
				})}
			},
		},
		{
			name:      "tcp-probes-ignored",
			violation: "TCP socket probes are not run (HTTP probes are)",
			want:      []string{"KRI-POD-089"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: rewritePod(func(c *v1.Container) {
					if p := c.LivenessProbe; p != nil && p.TCPSocket != nil {
						c.LivenessProbe = nil
					}
				})}
			},
		},
		{
			name:      "http-prestop-ignored",
			violation: "KillPod sends no HTTP GET preStop hook (exec hooks run)",
			want:      []string{"KRI-POD-090"},
			pod: func(*fake.PodProvider) fake.Interceptors {
				return fake.Interceptors{SyncPod: rewritePod(func(c *v1.Container) {
					if l := c.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.HTTPGet != nil {
						l.PreStop = nil
					}
				})}
			},
		},
	}
}

// networkProbesAlsoFailed are the network probe specs that mutants of the
// other specs fail too, by mutant: each breaks what they rely on (a SyncPod
// that returns, stable container IDs, restarts, their exit codes, restart
// counts and last terminations, a grace period for the preStop hook, a
// KillPod that stops the pod and returns, the log's tail as the message).
var networkProbesAlsoFailed = map[string][]string{
	"syncpod-blocks-forever":            {"KRI-POD-087", "KRI-POD-088", "KRI-POD-089", "KRI-POD-090"},
	"container-ids-unstable":            {"KRI-POD-087", "KRI-POD-089"},
	"exit-codes-lost":                   {"KRI-POD-088", "KRI-POD-089"},
	"replaced-instances-lose-exit-code": {"KRI-POD-088", "KRI-POD-089"},
	"last-termination-state-dropped":    {"KRI-POD-088", "KRI-POD-089"},
	"restart-policy-ignored":            {"KRI-POD-088", "KRI-POD-089"},
	"restart-count-stuck-at-zero":       {"KRI-POD-088", "KRI-POD-089"},
	"host-liveness-ignored":             {"KRI-POD-088", "KRI-POD-089"},
	"host-ready-sticks":                 {"KRI-POD-087"},
	"kill-leaves-container-running":     {"KRI-POD-090"},
	"grace-period-ignored":              {"KRI-POD-090"},
	"kill-without-sigterm":              {"KRI-POD-090"},
	"host-termination-message-dropped":  {"KRI-POD-090"},
	"host-no-log-fallback":              {"KRI-POD-090"},
	"host-prestop-ignored":              {"KRI-POD-090"},
	"host-prestop-after-sigterm":        {"KRI-POD-090"},
}
