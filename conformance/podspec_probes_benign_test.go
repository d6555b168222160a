package conformance_test

import (
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// The benign variants of the probe specs (KRI-POD-072..077, 101): the fake, whose
// probes run at exact moments, with the timing a kubelet's prober may have
// within what periodSeconds allows.

// podspecProbesBenign are the benign variants of the pod-spec capability
// "probes" (podspec_probes.go): the fake taking one freedom each, which the
// suite must pass.
func podspecProbesBenign() []*benign {
	return []*benign{
		{
			name:    "probe-first-run-a-period-late",
			freedom: "a probe's first run may come up to a period after initialDelaySeconds (the kubelet's prober worker waits a random part of the period before its first run)",
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{SyncPod: rewritePod(func(c *v1.Container) {
					for _, p := range []*v1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
						if p != nil {
							p.InitialDelaySeconds += max(p.PeriodSeconds, 1)
						}
					}
				})}
			},
		},
		{
			name:    "probe-results-a-period-late",
			freedom: "Ready and Started may reach RefreshPodStatus up to a period after the probe result changed (the result reaches the status with the next sync)",
			podLater: func(_ *fake.PodProvider, later *laterCalls) interceptor.PodFuncs {
				return interceptor.PodFuncs{RefreshPodStatus: lateResults(time.Second, later)}
			},
		},
	}
}

// lateResults returns a RefreshPodStatus interceptor that reports each
// container instance's Ready and Started as the provider reported them
// delay earlier: a change shows only once it is delay old, and the provider
// asks for a sync then (later).
func lateResults(delay time.Duration, later *laterCalls) func(kri.PodProvider, *v1.Pod, *v1.PodStatus) {
	type seen struct {
		shown, latest bool
		since         time.Time
	}
	var mu sync.Mutex
	ready, started := map[string]*seen{}, map[string]*seen{}
	changed := false
	late := func(m map[string]*seen, id string, now bool) bool {
		s := m[id]
		if s == nil {
			s = &seen{shown: now, latest: now, since: time.Now()}
			m[id] = s
		}
		if now != s.latest {
			s.latest, s.since = now, time.Now()
			changed = true
		}
		if s.shown != s.latest && time.Since(s.since) >= delay {
			s.shown = s.latest
		}
		return s.shown
	}
	return func(next kri.PodProvider, pod *v1.Pod, ps *v1.PodStatus) {
		next.RefreshPodStatus(pod, ps)
		if ps == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		changed = false
		for i := range ps.ContainerStatuses {
			cs := &ps.ContainerStatuses[i]
			if cs.ContainerID == "" || cs.State.Running == nil {
				continue
			}
			cs.Ready = late(ready, cs.ContainerID, cs.Ready)
			if cs.Started != nil {
				v := late(started, cs.ContainerID, *cs.Started)
				cs.Started = &v
			}
		}
		if changed && pod != nil {
			later.after(pod.UID, delay)
		}
	}
}

// hasProbes reports whether container name of pod has a probe: its Ready
// and Started are the provider's probe results, not a freedom.
func hasProbes(pod *v1.Pod, name string) bool {
	if pod == nil {
		return false
	}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if c.Name == name {
			return c.StartupProbe != nil || c.LivenessProbe != nil || c.ReadinessProbe != nil
		}
	}
	return false
}
