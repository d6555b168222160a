package fake

import (
	"fmt"
	"time"

	"github.com/kri-kit/testkit/sim/workload"
)

// Always, as a count, makes a scripted fault apply to every call from now on.
const Always = -1

// Method names a method of kri.PodProvider, for scripted faults and the call
// log.
type Method string

// The methods of kri.PodProvider.
const (
	MethodSyncPod          Method = "SyncPod"
	MethodKillPod          Method = "KillPod"
	MethodDeletePod        Method = "DeletePod"
	MethodCleanupPods      Method = "CleanupPods"
	MethodRefreshPodStatus Method = "RefreshPodStatus"
	MethodGetPodStatus     Method = "GetPodStatus"
	MethodGetPods          Method = "GetPods"
	MethodStart            Method = "Start"
	MethodStop             Method = "Stop"
)

// faultable lists the methods that return an error and so can be scripted
// to fail.
var faultable = map[Method]bool{
	MethodSyncPod: true, MethodKillPod: true, MethodDeletePod: true, MethodCleanupPods: true,
	MethodGetPodStatus: true, MethodGetPods: true,
}

// methodFault makes calls of method (for one pod, or any pod when key is
// empty) fail with err.
type methodFault struct {
	method    Method
	key       string
	remaining int // Always: no end
	err       error
}

// containerScript is the scripted behaviour of one container.
type containerScript struct {
	startFaults []startFault // consumed front to back
	exitRuns    []exitRun    // consumed front to back, one per run
	exit        *scriptedExit
	latency     time.Duration
	ignoreTERM  bool
	postStart   *scriptedHook
	preStop     *scriptedHook
	probes      map[ProbeKind]bool // scripted probe results (FailProbe, PassProbe)
}

type startFault struct {
	remaining int
	err       error
	message   string
}

type scriptedExit struct {
	after time.Duration
	code  int
}

// exitRun scripts how the next runs of a container end (ExitRuns).
type exitRun struct {
	remaining int
	after     time.Duration
	code      int
}

type containerKey struct {
	pod, name string
}

// scriptBook holds every script; it is guarded by the provider's lock.
type scriptBook struct {
	methods    []*methodFault
	containers map[containerKey]*containerScript
}

func (b *scriptBook) container(k containerKey) *containerScript {
	if b.containers == nil {
		b.containers = map[containerKey]*containerScript{}
	}
	s := b.containers[k]
	if s == nil {
		s = &containerScript{}
		b.containers[k] = s
	}
	return s
}

// takeMethodFault consumes one matching fault for the pod namespace/name
// (none for methods about no pod), pod-specific ones first.
func (b *scriptBook) takeMethodFault(m Method, namespace, name string) error {
	var match *methodFault
	for _, f := range b.methods {
		if f.method != m || f.remaining == 0 || (f.key != "" && !keyIs(f.key, namespace, name)) {
			continue
		}
		if match == nil || (match.key == "" && f.key != "") {
			match = f
		}
	}
	if match == nil {
		return nil
	}
	if match.remaining > 0 {
		match.remaining--
	}
	return fmt.Errorf("fake: scripted %s failure: %w", m, match.err)
}

// takeStartFault consumes one scripted start failure of a container.
func (s *containerScript) takeStartFault() (startFault, bool) {
	if s == nil {
		return startFault{}, false
	}
	for len(s.startFaults) > 0 {
		f := s.startFaults[0]
		if f.remaining == 0 {
			s.startFaults = s.startFaults[1:]
			continue
		}
		if f.remaining > 0 {
			s.startFaults[0].remaining--
		}
		return f, true
	}
	return startFault{}, false
}

// takeExitRun consumes the scripted end of one run of a container.
func (s *containerScript) takeExitRun() (exitRun, bool) {
	if s == nil {
		return exitRun{}, false
	}
	for len(s.exitRuns) > 0 {
		r := &s.exitRuns[0]
		if r.remaining == 0 {
			s.exitRuns = s.exitRuns[1:]
			continue
		}
		r.remaining--
		return *r, true
	}
	return exitRun{}, false
}

// ContainerScript scripts one container of one pod. Its methods return the
// script so that calls chain; they take effect at once, also for a pod that
// is already running: start faults, exits and latency from the container's
// next start, IgnoreSIGTERM at the next KillPod.
type ContainerScript struct {
	p   *PodProvider
	key containerKey
}

// PodScript scripts one pod, named "namespace/name".
type PodScript struct {
	p   *PodProvider
	key string
}

// Pod returns the script of the pod with the given key ("namespace/name",
// or just the name for a pod without namespace). The pod need not exist yet.
func (p *PodProvider) Pod(key string) *PodScript {
	return &PodScript{p: p, key: key}
}

// Container returns the script of container name of the pod with the given
// key. It is short for p.Pod(key).Container(name).
func (p *PodProvider) Container(key, name string) *ContainerScript {
	return &ContainerScript{p: p, key: containerKey{pod: key, name: name}}
}

// Container returns the script of the pod's container name.
func (s *PodScript) Container(name string) *ContainerScript {
	return s.p.Container(s.key, name)
}

// Fail makes the next times calls of method for this pod return an error
// wrapping err (Always, or any negative count: every call; a nil err means
// "injected <method> error"). It applies to SyncPod, KillPod, DeletePod and
// GetPodStatus. A failing call changes nothing. Scripting another method
// (GetPods and CleanupPods concern no pod: use PodProvider.Fail), or a count
// of 0, is an error and scripts nothing.
func (s *PodScript) Fail(method Method, times int, err error) error {
	if method == MethodGetPods || method == MethodCleanupPods {
		return fmt.Errorf("fake: cannot script %s to fail for pod %q: it is not called for one pod; use PodProvider.Fail", method, s.key)
	}
	return s.p.addMethodFault(method, s.key, times, err)
}

// Fail makes the next times calls of method, for any pod, return an error
// wrapping err (Always, or any negative count: every call; a nil err means
// "injected <method> error"). Faults scripted for a pod are used before
// these. Scripting a method that returns no error, or a count of 0, is an
// error and scripts nothing.
func (p *PodProvider) Fail(method Method, times int, err error) error {
	return p.addMethodFault(method, "", times, err)
}

func (p *PodProvider) addMethodFault(method Method, key string, times int, err error) error {
	if !faultable[method] {
		return fmt.Errorf("fake: cannot script %q to fail: only SyncPod, KillPod, DeletePod, CleanupPods, GetPodStatus and GetPods return errors", method)
	}
	if times == 0 {
		return fmt.Errorf("fake: cannot script %s to fail 0 times: give a count of at least 1, or Always", method)
	}
	if err == nil {
		err = fmt.Errorf("injected %s error", method)
	}
	if times < 0 {
		times = Always
	}
	p.mu.Lock()
	defer p.unlock()
	p.scripts.methods = append(p.scripts.methods, &methodFault{method: method, key: key, remaining: times, err: err})
	return nil
}

// FailStarts makes the next times start attempts of the container fail
// (Always: every attempt) with err — typically pkgcontainer.ErrRunContainer
// or an image-pull-like error — and message, as a runtime reports a
// container it could not start. The failure is recorded in the ReasonCache
// handed to SyncPod. A nil err means pkgcontainer.ErrRunContainer.
func (s *ContainerScript) FailStarts(times int, err error, message string) *ContainerScript {
	if times == 0 {
		return s
	}
	if times < 0 {
		times = Always
	}
	if err == nil {
		err = errRunContainer
	}
	s.p.mu.Lock()
	defer s.p.unlock()
	cs := s.p.scripts.container(s.key)
	cs.startFaults = append(cs.startFaults, startFault{remaining: times, err: err, message: message})
	return s
}

// ExitAfter makes every run of the container exit with code after running
// for d, whatever its command says.
func (s *ContainerScript) ExitAfter(d time.Duration, code int) *ContainerScript {
	s.p.mu.Lock()
	defer s.p.unlock()
	s.p.scripts.container(s.key).exit = &scriptedExit{after: max(d, 0), code: code & 0xff}
	return s
}

// ExitRuns makes each of the next times runs (instances) of the container
// exit with code after running for d, whatever its command or ExitAfter
// says; later runs behave as before. Calls queue up, so that
//
//	fp.Container("default/web", "app").ExitRuns(2, time.Second, 1).ExitRuns(1, time.Second, 0)
//
// makes the container fail twice, then succeed once, then run as its
// command says. A count below 1 scripts nothing; code keeps its low byte,
// as a shell does. A start that fails creates no run and consumes nothing.
func (s *ContainerScript) ExitRuns(times int, d time.Duration, code int) *ContainerScript {
	if times < 1 {
		return s
	}
	s.p.mu.Lock()
	defer s.p.unlock()
	cs := s.p.scripts.container(s.key)
	cs.exitRuns = append(cs.exitRuns, exitRun{remaining: times, after: max(d, 0), code: code & 0xff})
	return s
}

// StartLatency makes the container stay created for d after each start
// before it runs; SyncPod does not wait for it.
func (s *ContainerScript) StartLatency(d time.Duration) *ContainerScript {
	s.p.mu.Lock()
	defer s.p.unlock()
	s.p.scripts.container(s.key).latency = max(d, 0)
	return s
}

// IgnoreSIGTERM makes the container ignore SIGTERM: KillPod ends it only
// when the grace period is over, with exit code 137. Unlike the other
// scripts it applies to a container that is already running, too.
func (s *ContainerScript) IgnoreSIGTERM() *ContainerScript {
	s.p.mu.Lock()
	defer s.p.unlock()
	s.p.scripts.container(s.key).ignoreTERM = true
	// The runs of the container that are live now ignore it too; the
	// next ones are started so (syncpod.go).
	if ps := s.p.pods[s.p.byKey[s.key.pod]]; ps != nil {
		for _, in := range [2]*instance{ps.current(s.key.name), ps.previous(s.key.name)} {
			if in != nil && in.active() {
				in.IgnoreSIGTERM()
			}
		}
	}
	return s
}

// Reset drops every script of the container.
func (s *ContainerScript) Reset() {
	s.p.mu.Lock()
	defer s.p.unlock()
	delete(s.p.scripts.containers, s.key)
}

// PostStartHook makes the container's postStart hook, from its next start
// on, run for d and exit with code, whatever its spec says (a container
// whose spec has no postStart hook gets one): the containers SyncPod starts
// after it run once it has ended, and a code other than 0 fails it, so that
// the container is killed when it ends and its start is reported to the
// ReasonCache as workload.ErrPostStartHook (PostStartHookError). code keeps
// its low byte, as a shell does.
func (s *ContainerScript) PostStartHook(d time.Duration, code int) *ContainerScript {
	s.p.mu.Lock()
	defer s.p.unlock()
	s.p.scripts.container(s.key).postStart = &scriptedHook{d: max(d, 0), code: code & 0xff}
	return s
}

// PreStopHook makes the container's preStop hook run for d, whatever its
// spec says (a container whose spec has none gets one), from the next
// KillPod on: SIGTERM comes once it has ended, or once the grace period is
// over if that comes first, and the container gets what is left of the
// grace period.
func (s *ContainerScript) PreStopHook(d time.Duration) *ContainerScript {
	s.p.mu.Lock()
	defer s.p.unlock()
	s.p.scripts.container(s.key).preStop = &scriptedHook{d: max(d, 0)}
	return s
}

// ProbeKind names one of a container's probes, for scripts
// (ContainerScript.FailProbe) and events.
type ProbeKind string

// The probes of a container (those of package workload).
const (
	StartupProbe   = ProbeKind(workload.StartupProbe)
	LivenessProbe  = ProbeKind(workload.LivenessProbe)
	ReadinessProbe = ProbeKind(workload.ReadinessProbe)
)

// probeKinds are the kinds in the order the fake runs probes due at the
// same moment (workload.ProbeKinds).
var probeKinds = []ProbeKind{StartupProbe, LivenessProbe, ReadinessProbe}

// FailProbe makes the container's probe of kind fail from now on, whatever
// its command says, until PassProbe or ResetProbe: "readiness of container
// web fails from now on". Probes due before now keep the results they had.
// A container without such a probe is not affected.
func (s *ContainerScript) FailProbe(kind ProbeKind) *ContainerScript {
	return s.setProbe(kind, false, true)
}

// PassProbe makes the container's probe of kind succeed from now on,
// whatever its command says, until FailProbe or ResetProbe.
func (s *ContainerScript) PassProbe(kind ProbeKind) *ContainerScript {
	return s.setProbe(kind, true, true)
}

// ResetProbe makes the container's probe of kind follow its command again
// from now on.
func (s *ContainerScript) ResetProbe(kind ProbeKind) *ContainerScript {
	return s.setProbe(kind, false, false)
}

func (s *ContainerScript) setProbe(kind ProbeKind, ok, set bool) *ContainerScript {
	s.p.mu.Lock()
	defer s.p.unlock()
	// The probes due so far run with the script as it was.
	if ps := s.p.pods[s.p.byKey[s.key.pod]]; ps != nil {
		s.p.advancePod(ps, s.p.clock.Now())
	}
	cs := s.p.scripts.container(s.key)
	if !set {
		delete(cs.probes, kind)
		return s
	}
	if cs.probes == nil {
		cs.probes = map[ProbeKind]bool{}
	}
	cs.probes[kind] = ok
	return s
}

// parseProbeKind reads a probe kind's name.
func parseProbeKind(s string) (ProbeKind, error) {
	kind, err := workload.ParseProbeKind(s)
	return ProbeKind(kind), err
}

// scriptedHook is a hook a ContainerScript imposes.
type scriptedHook struct {
	d    time.Duration
	code int
}

// hook returns what the scripted hook does.
func (sh *scriptedHook) hook() workload.Hook {
	h := workload.Hook{Action: "scripted", Takes: sh.d, ExitCode: sh.code}
	if sh.code != 0 {
		h.Failed, h.Detail = true, fmt.Sprintf("scripted hook exited with code %d", sh.code)
	}
	return h
}
