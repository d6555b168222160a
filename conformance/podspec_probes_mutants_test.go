package conformance_test

import (
	"context"
	"math"
	"sync"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// The mutants of the probe specs (KRI-POD-072..077, 101, 107): on the
// hostprocess example, which runs exec probes as host processes, and, for
// what needs virtual time or the fake's exact probes (a readiness result
// per instance, the liveness threshold, an exec probe's timeoutSeconds,
// which the fake's probes take from the pod it is handed), on the fake.

// readyEdit returns a RefreshPodStatus interceptor that calls edit on the
// status of every running app container that has a readiness probe, with
// what the provider said of that instance before (whether it ever reported
// it Ready).
func readyEdit(edit func(cs *v1.ContainerStatus, c *v1.Container, everReady bool)) func(kri.PodProvider, *v1.Pod, *v1.PodStatus) {
	var mu sync.Mutex
	everReady := map[string]bool{}
	return func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
		next.RefreshPodStatus(pod, ps)
		if pod == nil || ps == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for i := range ps.ContainerStatuses {
			cs := &ps.ContainerStatuses[i]
			var probed *v1.Container
			for j, c := range pod.Spec.Containers {
				if c.Name == cs.Name && c.ReadinessProbe != nil {
					probed = &pod.Spec.Containers[j]
				}
			}
			if probed == nil || cs.State.Running == nil || cs.ContainerID == "" {
				continue
			}
			ever := everReady[cs.ContainerID]
			everReady[cs.ContainerID] = ever || cs.Ready
			edit(cs, probed, ever)
		}
	}
}

// podspecProbesMutants are the mutants of the pod-spec capability "probes"
// (podspec_probes.go): the hostprocess example (selftest_hostprocess_test.go)
// or the fake with one contract violation each, and the specs it must fail.
func podspecProbesMutants() []*mutant {
	return []*mutant{
		{
			name:      "host-ready-before-probe",
			violation: "a started container with an exec readiness probe is Ready until the probe has succeeded once (the probe's initial result taken as success)",
			// A restarted instance too (KRI-POD-101), and a container
			// whose probe never succeeds, its command outlasting
			// timeoutSeconds at every run (KRI-POD-107): Ready from the
			// start, whatever the probes say.
			want: []string{"KRI-POD-072", "KRI-POD-101", "KRI-POD-107"},
			host: func() interceptor.PodFuncs {
				// Exec probes only: KRI-POD-090 waits for a TCP readiness
				// probe before it kills, and a kill before the server
				// listens would fail it by the machine's speed.
				return interceptor.PodFuncs{RefreshPodStatus: readyEdit(func(cs *v1.ContainerStatus, c *v1.Container, ever bool) {
					if !ever && cs.Started != nil && *cs.Started && c.ReadinessProbe.Exec != nil {
						cs.Ready = true
					}
				})}
			},
		},
		{
			name:      "host-ready-sticks",
			violation: "a container once Ready stays Ready while it runs: readiness failures are ignored",
			want: []string{
				"KRI-POD-073",
				// KRI-POD-087, the HTTP readiness probe: the same prober.
				"KRI-POD-087",
			},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{RefreshPodStatus: readyEdit(func(cs *v1.ContainerStatus, _ *v1.Container, ever bool) {
					cs.Ready = cs.Ready || ever
				})}
			},
		},
		{
			name:      "host-liveness-ignored",
			violation: "liveness probes are not run: a container whose probe fails is never restarted",
			want: []string{
				"KRI-POD-074",
				// The network liveness probe specs: the same prober.
				"KRI-POD-088", "KRI-POD-089", "KRI-POD-106",
			},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) { c.LivenessProbe = nil })}
			},
		},
		{
			name:      "host-initial-delay-ignored",
			violation: "initialDelaySeconds is ignored: probes run from the start",
			want:      []string{"KRI-POD-075"},
			// Outside its run (hostFocus: the probes group), but it was
			// seen to fail 089 when every host mutant ran every spec: the
			// tcp-closed pod's liveness probe (failureThreshold 1, 2s
			// delay) then fires at the instance's start, and hostprocess,
			// which has no back-off, restarts it at once (872 restarts in
			// the spec), so whether a poll sees it running between two
			// kills is the machine's timing.
			underLoad: map[string]string{"KRI-POD-089": "without its 2s delay the tcp-closed pod's liveness probe kills each instance as it starts, and hostprocess restarts it without back-off: a poll may never see it running"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					for _, p := range []*v1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
						if p != nil {
							p.InitialDelaySeconds = 0
						}
					}
				})}
			},
		},
		{
			name:      "host-startup-ignored",
			violation: "startup probes are not run: the container is Started at once and its liveness probe runs from the start",
			want: []string{
				"KRI-POD-076",
				// KRI-POD-105, the HTTP and TCP startup probes: the same prober.
				"KRI-POD-105",
				// KRI-POD-091, a sidecar held behind its startup probe.
				"KRI-POD-091",
			},
			underLoad: map[string]string{"KRI-POD-089": "its listening container's TCP startup probe holds off the liveness probe until httpd listens; without it, an httpd slow to start is killed"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) { c.StartupProbe = nil })}
			},
		},
		{
			name:      "ready-inherited-on-restart",
			violation: "a restarted container takes its previous instance's Ready at once (readiness results kept by container name, not by instance), until its own probe first succeeds",
			want:      []string{"KRI-POD-101"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{RefreshPodStatus: inheritReady()}
			},
		},
		{
			name:      "ready-never-after-restart",
			violation: "a restarted container with a readiness probe is never Ready again (the prober runs for the first instance only)",
			want:      []string{"KRI-POD-101"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{RefreshPodStatus: readyEdit(func(cs *v1.ContainerStatus, _ *v1.Container, _ bool) {
					cs.Ready = cs.Ready && cs.RestartCount == 0
				})}
			},
		},
		{
			name:      "liveness-threshold-plus-one",
			violation: "a container is killed after failureThreshold+1 liveness failures in a row, one period late",
			// On the fake, in virtual time: KRI-POD-088's HTTP liveness
			// probe shares the bound.
			want: []string{"KRI-POD-074", "KRI-POD-088"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					if c.LivenessProbe != nil {
						c.LivenessProbe.FailureThreshold = max(c.LivenessProbe.FailureThreshold, 1) + 1
					}
				})}
			},
		},
		{
			name:      "liveness-threshold-ignored",
			violation: "a container is killed at its first liveness failure, whatever failureThreshold says",
			want:      []string{"KRI-POD-074", "KRI-POD-088"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					if c.LivenessProbe != nil {
						c.LivenessProbe.FailureThreshold = 1
					}
				})}
			},
		},
		{
			name:      "exec-probe-timeout-ignored",
			violation: "timeoutSeconds is ignored for exec probes: a probe's command is waited for however long it runs and its exit code counted, so one that outlasts the timeout and then exits 0 succeeds",
			want:      []string{"KRI-POD-107"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					for _, p := range []*v1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
						if p != nil && p.Exec != nil {
							p.TimeoutSeconds = math.MaxInt32
						}
					}
				})}
			},
		},
		{
			name:      "host-liveness-outlives-kill",
			violation: "the liveness restart path outlives KillPod: a container with a liveness probe is started again after the pod was killed",
			want:      []string{"KRI-POD-077"},
			host: func() interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, running pkgcontainer.Pod, grace *int64) error {
					if err := next.KillPod(ctx, pod, running, grace); err != nil || pod == nil {
						return err
					}
					for _, c := range pod.Spec.Containers {
						if c.LivenessProbe != nil {
							// What the restart after a liveness failure
							// does: sync the pod again.
							return next.SyncPod(ctx, pod, nil, kri.NewReasonCache())
						}
					}
					return nil
				}}
			},
		},
	}
}

// inheritReady returns a RefreshPodStatus interceptor that reports a new
// running instance of a container Ready when the provider last reported its
// previous instance Ready, until the provider reports the new one Ready
// itself.
func inheritReady() func(kri.PodProvider, *v1.Pod, *v1.PodStatus) {
	type last struct {
		id                string
		ready, inheriting bool
	}
	var mu sync.Mutex
	seen := map[string]*last{}
	return func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
		next.RefreshPodStatus(pod, ps)
		if pod == nil || ps == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for i := range ps.ContainerStatuses {
			cs := &ps.ContainerStatuses[i]
			if cs.State.Running == nil || cs.ContainerID == "" {
				continue
			}
			key := string(pod.UID) + "/" + cs.Name
			l := seen[key]
			switch {
			case l == nil:
				seen[key] = &last{id: cs.ContainerID, ready: cs.Ready}
			case l.id != cs.ContainerID:
				l.id, l.inheriting = cs.ContainerID, l.ready && !cs.Ready
				cs.Ready = cs.Ready || l.inheriting
			case l.inheriting && !cs.Ready:
				cs.Ready = true
			default:
				l.inheriting, l.ready = false, cs.Ready
			}
		}
	}
}
