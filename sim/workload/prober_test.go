package workload_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/sim/workload"
)

func execProbe(script string, delay, period, success, failure int32) *v1.Probe {
	return &v1.Probe{
		ProbeHandler:        v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", script}}},
		InitialDelaySeconds: delay, PeriodSeconds: period, SuccessThreshold: success, FailureThreshold: failure,
	}
}

// runProbes runs every probe due by until and returns what happened, one
// line per run that changed a result or was held off.
func runProbes(p *workload.Prober, until time.Time, stopping bool) []string {
	var out []string
	for {
		next, ok := p.Next()
		if !ok || next.After(until) {
			return out
		}
		r, _ := p.RunNext(stopping)
		switch {
		case !r.Ran:
			out = append(out, fmt.Sprintf("%v %s held off", r.At.Sub(t0), r.Kind))
		case r.Changed:
			out = append(out, fmt.Sprintf("%v %s %v kill=%v", r.At.Sub(t0), r.Kind, r.Succeeded, r.Kill))
		}
	}
}

// The probes run as the kubelet's workers do: initial delay, period,
// thresholds, startup gating; the results come from the container's files
// at each moment.
func TestProber(t *testing.T) {
	c := &v1.Container{
		Name:    "app",
		Command: []string{"sh", "-c", "sleep 3; echo ok > /tmp/ready; sleep 6; rm -f /tmp/ready; sleep infinity"},
		// Starts once the file is there, 3s after the start.
		StartupProbe:   execProbe("test -e /tmp/ready", 1, 1, 1, 30),
		ReadinessProbe: execProbe("cat /tmp/ready", 0, 2, 2, 1),
		LivenessProbe:  execProbe("true", 0, 1, 1, 1),
	}
	in := workload.NewInstance(workload.OfEnv(c), t0, workload.InstanceOptions{})
	p := workload.NewProber(c, t0, workload.ExecProbes(c, in.FilesAt, nil))
	var got []string
	for _, check := range []struct {
		at             float64
		started, ready bool
	}{
		{2.5, false, false}, // the file comes at 3s
		{4, true, false},    // one readiness success: below successThreshold 2
		{6, true, true},     // the second
		{10, true, false},   // the file was removed at 9s: failureThreshold 1
	} {
		got = append(got, runProbes(p, sec(check.at), false)...)
		if p.Started() != check.started || p.Ready() != check.ready {
			t.Errorf("at %vs: Started %v, Ready %v; want %v, %v", check.at, p.Started(), p.Ready(), check.started, check.ready)
		}
	}
	want := []string{
		"0s liveness held off", "0s readiness held off", "1s liveness held off", "2s liveness held off",
		"2s readiness held off", "3s startup true kill=false", "3s liveness true kill=false",
		"4s startup held off", "6s readiness true kill=false", "10s readiness false kill=false",
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("probe runs:\n got %s\nwant %s", strings.Join(got, "; "), strings.Join(want, "; "))
	}
}

// A liveness failure asks for the kill and stops the prober; a container
// being stopped runs its readiness probe only; the result of a probe the
// vocabulary does not describe comes from the caller's func.
func TestProberKillAndSeam(t *testing.T) {
	httpGet := &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz"}}, FailureThreshold: 2}
	c := &v1.Container{Name: "web", LivenessProbe: httpGet, ReadinessProbe: execProbe("true", 0, 1, 1, 1)}
	var asked []string
	listener := func(kind workload.ProbeKind, probe *v1.Probe, at time.Time) bool {
		asked = append(asked, fmt.Sprintf("%v %s %s", at.Sub(t0), kind, probe.HTTPGet.Path))
		return at.Before(sec(2)) // the server stops answering at 2s
	}
	p := workload.NewProber(c, t0, workload.ExecProbes(c, nil, listener))
	got := runProbes(p, sec(3), false)
	want := "0s liveness true kill=false; 0s readiness true kill=false; 3s liveness false kill=true"
	if strings.Join(got, "; ") != want {
		t.Errorf("probe runs: got %s, want %s", strings.Join(got, "; "), want)
	}
	if strings.Join(asked, "; ") != "0s liveness /healthz; 1s liveness /healthz; 2s liveness /healthz; 3s liveness /healthz" {
		t.Errorf("the HTTP probe's func was asked %v, want at 0s to 3s", asked)
	}
	if next, ok := p.Next(); ok {
		t.Errorf("after the kill the prober runs again at %v, want stopped", next.Sub(t0))
	}

	p = workload.NewProber(c, t0, workload.ExecProbes(c, nil, listener))
	asked = nil
	if got := runProbes(p, sec(1), true); strings.Join(got, "; ") != "0s liveness held off; 0s readiness true kill=false; 1s liveness held off" {
		t.Errorf("stopping container: probe runs %v, want only readiness", got)
	}
	if len(asked) != 0 {
		t.Errorf("stopping container: liveness ran %v", asked)
	}

	if p := workload.NewProber(&v1.Container{Name: "plain"}, t0, nil); p != nil || !p.Started() || !p.Ready() {
		t.Errorf("container without probes: prober %v (Started %v, Ready %v), want nil, started and ready", p, p.Started(), p.Ready())
	}
}
