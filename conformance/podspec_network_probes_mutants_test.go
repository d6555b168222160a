package conformance_test

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri/interceptor"
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
			want:      []string{"KRI-POD-087", "KRI-POD-088", "KRI-POD-089", "KRI-POD-105", "KRI-POD-106"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
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
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
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
			violation: "TCP socket liveness probes are not run (HTTP probes are)",
			want:      []string{"KRI-POD-089", "KRI-POD-106"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					if p := c.LivenessProbe; p != nil && p.TCPSocket != nil {
						c.LivenessProbe = nil
					}
				})}
			},
		},
		networkStartupMutant("http-startup-probe-ignored", "an HTTP GET startup probe is not run: the container is Started at once",
			[]string{"KRI-POD-105"}, isHTTP, func(c *v1.Container) { c.StartupProbe = nil }),
		networkStartupMutant("tcp-startup-probe-ignored", "a TCP socket startup probe is not run: the container is Started at once",
			[]string{"KRI-POD-105"}, isTCP, func(c *v1.Container) { c.StartupProbe = nil }),
		// A probe never run leaves the container not Started and holds
		// its liveness probe off: modelled by a first probe too late for
		// any spec.
		networkStartupMutant("http-startup-probe-never-run", "an HTTP GET startup probe never runs: the container is never Started",
			[]string{"KRI-POD-105"}, isHTTP, func(c *v1.Container) { c.StartupProbe.InitialDelaySeconds = neverSeconds }),
		networkStartupMutant("tcp-startup-probe-never-run", "a TCP socket startup probe never runs: the container is never Started, its liveness probe held off",
			[]string{"KRI-POD-105", "KRI-POD-106"}, isTCP, func(c *v1.Container) { c.StartupProbe.InitialDelaySeconds = neverSeconds }),
		{
			// A prober that stops once it has connected sees the port
			// open for ever after: modelled by the fake not seeing the
			// container's server stop.
			name:      "tcp-liveness-stops-after-success",
			violation: "a TCP socket liveness probe stops after its first successful connect: a server that stops listening later is never noticed",
			want:      []string{"KRI-POD-106"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(serverNeverStops)}
			},
		},
		// The same two on real processes (hostprocess, whose probes
		// connect to a real httpd that a real sh kills).
		{
			name:      "host-network-startup-probes-never-run",
			violation: "HTTP GET and TCP socket startup probes never run: the container is never Started, its liveness probe held off",
			want:      []string{"KRI-POD-105", "KRI-POD-106"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					if isHTTP(c.StartupProbe) || isTCP(c.StartupProbe) {
						c.StartupProbe.InitialDelaySeconds = neverSeconds
					}
				})}
			},
		},
		{
			name:      "host-tcp-liveness-stops-after-success",
			violation: "a TCP socket liveness probe stops after its first successful connect: a server that stops listening later is never noticed",
			want:      []string{"KRI-POD-106"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(serverNeverStops)}
			},
		},
		{
			name:      "http-prestop-ignored",
			violation: "KillPod sends no HTTP GET preStop hook (exec hooks run)",
			want:      []string{"KRI-POD-090"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					if l := c.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.HTTPGet != nil {
						l.PreStop = nil
					}
				})}
			},
		},
	}
}

// serverNeverStops drops kill $! from the command of a container with a
// TCP liveness probe: its server listens for as long as it runs, as a
// prober that stopped after its first successful connect sees it.
func serverNeverStops(c *v1.Container) {
	if !isTCP(c.LivenessProbe) {
		return
	}
	for _, argv := range []*[]string{&c.Command, &c.Args} {
		*argv = slices.Clone(*argv)
		for i, a := range *argv {
			(*argv)[i] = strings.ReplaceAll(a, "kill $!", ":")
		}
	}
}

// neverSeconds is an initialDelaySeconds no spec waits out (a day).
const neverSeconds = 24 * 60 * 60

func isHTTP(p *v1.Probe) bool { return p != nil && p.HTTPGet != nil }
func isTCP(p *v1.Probe) bool  { return p != nil && p.TCPSocket != nil }

// networkStartupMutant is a mutant that applies edit to every container
// whose startup probe is of the kind kind says.
func networkStartupMutant(name, violation string, want []string, kind func(*v1.Probe) bool, edit func(*v1.Container)) *mutant {
	return &mutant{name: name, violation: violation, want: want,
		pod: func(*fake.PodProvider) interceptor.PodFuncs {
			return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
				if kind(c.StartupProbe) {
					edit(c)
				}
			})}
		},
	}
}
