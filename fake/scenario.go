package fake

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/sim/workload"
)

// Reasons of failed container starts that the kubelet's image manager and
// container runtime report, for scripting start failures
// (ContainerScript.FailStarts) and for naming them in scenario files. Their
// texts are the kubelet's, so a status shows the reason a real node would.
// The runtime's own reasons are the sentinels of
// k8s.io/kubernetes/pkg/kubelet/container, e.g. pkgcontainer.ErrRunContainer.
var (
	// ErrImagePull is workload.ErrImagePull, the error the fake also reports
	// for an image under workload.MissingImageDomain.
	ErrImagePull        = workload.ErrImagePull
	ErrImagePullBackOff = errors.New("ImagePullBackOff")
	ErrInvalidImageName = errors.New("InvalidImageName")
	// ErrImageNeverPull is workload.ErrImageNeverPull, the error of a
	// container with imagePullPolicy Never whose image is missing.
	ErrImageNeverPull        = workload.ErrImageNeverPull
	ErrImageInspect          = errors.New("ImageInspectError")
	ErrCreateContainerConfig = errors.New("CreateContainerConfigError")
	ErrCreateContainer       = errors.New("CreateContainerError")
	ErrPreStartHook          = errors.New("PreStartHookError")
	// ErrPostStartHook is workload.ErrPostStartHook, the error the fake
	// also reports for a container whose postStart hook failed.
	ErrPostStartHook = workload.ErrPostStartHook
)

// scenarioStartErrors maps the names a scenario's failStarts.error may use
// to the errors they stand for: each name is the error's text, the reason a
// kubelet shows.
var scenarioStartErrors = func() map[string]error {
	m := map[string]error{}
	for _, err := range []error{
		pkgcontainer.ErrRunContainer,
		pkgcontainer.ErrCreatePodSandbox,
		pkgcontainer.ErrConfigPodSandbox,
		pkgcontainer.ErrCrashLoopBackOff,
		ErrImagePull, ErrImagePullBackOff, ErrInvalidImageName, ErrImageNeverPull, ErrImageInspect,
		ErrCreateContainerConfig, ErrCreateContainer, ErrPreStartHook, ErrPostStartHook,
	} {
		m[err.Error()] = err
	}
	return m
}()

// maxScenarioSize bounds the size of a scenario file.
const maxScenarioSize = 4 << 20

// maxScenarioNodes bounds the YAML nodes ParseScenario visits, aliases
// expanded, so that a small file full of aliases cannot make it work for
// long.
const maxScenarioNodes = 100000

// Scenario is a parsed scenario file: pods and the scripted behaviour of
// their containers and of the provider's methods. Apply installs the scripts
// on a PodProvider; Pods hands out the pods to sync. A Scenario never
// changes once parsed and is safe for concurrent use.
type Scenario struct {
	// Name and Description are the file's name and description fields.
	Name        string
	Description string

	// CrashLoopBackOff is the file's crashLoopBackOff field: Apply turns
	// the provider's crash-loop back-off on (SetCrashLoopBackOff).
	CrashLoopBackOff bool
	// KubeletSemantics is the file's kubeletSemantics field: the scenario
	// is meant for a provider made WithKubeletSemantics (see Options and
	// NewPodProvider); Apply refuses a provider made without it.
	KubeletSemantics bool

	pods    []*v1.Pod
	scripts []scenarioScript
}

// scenarioScript is one validated entry of a scenario's scripts.
type scenarioScript struct {
	index int    // position in the file, for Apply's errors
	pod   string // "namespace/name"; empty for a provider-wide fault

	container     string // empty for a method fault
	failStarts    *startFault
	exitAfter     *scriptedExit
	exitRuns      []exitRun
	startLatency  *time.Duration
	ignoreSIGTERM bool
	postStartHook *scriptedHook
	preStopHook   *time.Duration
	probes        map[ProbeKind]bool // scenario_probe.go

	method    Method
	times     int
	methodErr error
}

// Pods returns deep copies of the scenario's pods, in file order, with the
// namespace defaulted to "default".
func (s *Scenario) Pods() []*v1.Pod {
	out := make([]*v1.Pod, len(s.pods))
	for i, pod := range s.pods {
		out[i] = pod.DeepCopy()
	}
	return out
}

// Pod returns a deep copy of the scenario's pod with the given key
// ("namespace/name", or just the name for namespace "default").
func (s *Scenario) Pod(key string) (*v1.Pod, bool) {
	if !strings.Contains(key, "/") {
		key = "default/" + key
	}
	for _, pod := range s.pods {
		if podKey(pod.Namespace, pod.Name) == key {
			return pod.DeepCopy(), true
		}
	}
	return nil, false
}

// Options returns the options the scenario asks for when a provider is
// made: WithKubeletSemantics for kubeletSemantics, WithCrashLoopBackOff for
// crashLoopBackOff.
func (s *Scenario) Options() []Option {
	var opts []Option
	if s.KubeletSemantics {
		opts = append(opts, WithKubeletSemantics())
	}
	if s.CrashLoopBackOff {
		opts = append(opts, WithCrashLoopBackOff())
	}
	return opts
}

// NewPodProvider makes a provider with the scenario's Options followed by
// opts, and applies the scenario to it.
func (s *Scenario) NewPodProvider(opts ...Option) (*PodProvider, error) {
	p := NewPodProvider(append(s.Options(), opts...)...)
	if err := s.Apply(p); err != nil {
		return nil, err
	}
	return p, nil
}

// Apply installs the scenario's scripts on p through its public scripting
// API (PodProvider.Container, PodProvider.Pod and PodProvider.Fail), in file
// order. It does not sync the pods: hand Pods to SyncPod for that. Applying a
// scenario twice installs its scripts twice, so counted faults add up.
func (s *Scenario) Apply(p *PodProvider) error {
	if p == nil {
		return fmt.Errorf("fake: scenario %q: Apply: provider is nil", s.Name)
	}
	if s.KubeletSemantics && !p.kubelet {
		return fmt.Errorf("fake: scenario %q: Apply: the scenario sets kubeletSemantics, but the provider was made without WithKubeletSemantics (make it with the scenario's Options, or its NewPodProvider)", s.Name)
	}
	if s.CrashLoopBackOff {
		p.SetCrashLoopBackOff(true)
	}
	for _, sc := range s.scripts {
		if sc.container != "" {
			cs := p.Container(sc.pod, sc.container)
			if f := sc.failStarts; f != nil {
				cs.FailStarts(f.remaining, f.err, f.message)
			}
			if e := sc.exitAfter; e != nil {
				cs.ExitAfter(e.after, e.code)
			}
			for _, r := range sc.exitRuns {
				cs.ExitRuns(r.remaining, r.after, r.code)
			}
			if sc.startLatency != nil {
				cs.StartLatency(*sc.startLatency)
			}
			if sc.ignoreSIGTERM {
				cs.IgnoreSIGTERM()
			}
			if h := sc.postStartHook; h != nil {
				cs.PostStartHook(h.d, h.code)
			}
			if sc.preStopHook != nil {
				cs.PreStopHook(*sc.preStopHook)
			}
			applyProbes(cs, sc.probes)
			continue
		}
		var err error
		if sc.pod == "" {
			err = p.Fail(sc.method, sc.times, sc.methodErr)
		} else {
			err = p.Pod(sc.pod).Fail(sc.method, sc.times, sc.methodErr)
		}
		if err != nil {
			return fmt.Errorf("fake: scenario %q: scripts[%d]: %w", s.Name, sc.index, err)
		}
	}
	return nil
}

// ScenarioError is the error LoadScenario and ParseScenario return for a
// scenario file that is not valid. Its text is "file:line: field: problem",
// e.g.
//
//	x.yaml:14: scripts[0].container.exitAfter.after: invalid duration "5x" (want a Go duration such as 500ms, 5s or 1m30s)
//
// Line is 0 when no line could be found, and the text is then
// "file: field: problem"; Field is empty for a problem of the whole file.
type ScenarioError struct {
	File  string // the name given to ParseScenario, the path given to LoadScenario
	Line  int    // 1-based
	Field string // e.g. pods[0].metadata.uid
	Msg   string
	Err   error // the underlying error, if any
}

func (e *ScenarioError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *ScenarioError) Unwrap() error { return e.Err }

// LoadScenario reads and parses the scenario file at path; see ParseScenario.
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fake: load scenario: %w", err)
	}
	return ParseScenario(path, data)
}

// ParseScenario parses a scenario; name is the file name its errors give.
//
// A scenario is one YAML document:
//
//	name: image-pull-recovery          # required
//	description: ...                   # optional
//	crashLoopBackOff: true             # optional: the provider backs off restarts (SetCrashLoopBackOff)
//	kubeletSemantics: true             # optional: the provider must be made WithKubeletSemantics (Options)
//	pods:                              # required, at least one
//	- apiVersion: v1                   # optional; if set, v1 and Pod
//	  kind: Pod
//	  metadata: {name: web, uid: web-uid}   # name and uid required; namespace defaults to "default"
//	  spec: {...}                      # a v1.PodSpec with at least one container
//	scripts:                           # optional, applied in order
//	- pod: default/web                 # namespace/name, or name for namespace default
//	  container:
//	    name: app                      # required: a container or init container of the pod
//	    failStarts: {times: 2, error: ErrImagePull, message: "..."}
//	    exitAfter: {after: 5s, code: 3}
//	    exitRuns:                      # the next runs, in order (ExitRuns)
//	    - {times: 2, after: 1s, code: 1}
//	    - {times: 1, after: 1s, code: 0}
//	    startLatency: 2s
//	    ignoreSIGTERM: true
//	    postStartHook: {after: 1s, code: 3}  # the postStart hook runs 1s, exits 3 (PostStartHook)
//	    preStopHook: 5s                # the preStop hook runs 5s (PreStopHook)
//	    probes: {readiness: fail}    # from the start: FailProbe/PassProbe (startup, liveness, readiness: pass or fail)
//	- pod: default/web                 # omit pod to script the method for every pod
//	  fail: {method: KillPod, times: 1, message: "..."}
//
// A script entry has either container (with at least one behaviour) or
// fail. Durations are Go durations (500ms, 5s, 1m30s), not negative. times
// is a count of at least 1, or -1 or "always" for every call (Always); it
// defaults to 1. failStarts.error names the reason of the failure and
// defaults to RunContainerError; the names are the texts of the kubelet's
// errors: RunContainerError, CreatePodSandboxError, ConfigPodSandboxError,
// CrashLoopBackOff (the pkgcontainer sentinels), ErrImagePull,
// ImagePullBackOff, InvalidImageName, ErrImageNeverPull, ImageInspectError,
// CreateContainerConfigError, CreateContainerError, PreStartHookError and
// PostStartHookError (this package's ErrImagePull ... ErrPostStartHook).
// exitAfter.code and exitRuns[].code are 0 to 255 and default to 0;
// exitRuns[].times is a count of at least 1 (default 1) and
// exitRuns[].after is required. fail.method is one of
// SyncPod, KillPod, DeletePod, GetPodStatus (per pod or for every pod) and
// CleanupPods, GetPods (for every pod only); fail.message is the text of the
// error the call fails with (absent: the fake's own "injected ... error").
//
// Values are read as sigs.k8s.io/yaml reads them, by YAML 1.1 rules (yes is
// true, 0x50 is 80, a number given for a string is that string, except
// beneath a field of an embedded struct such as a probe's httpGet). Anchors,
// aliases and merges (<<) may be used, but a merged field may not be set
// again. A file holds at most 4 MiB and, aliases expanded, 100,000 YAML
// nodes.
//
// Decoding is strict: an unknown field (field names are case-sensitive), a
// duplicate field, a value of the wrong type, a bad value or a script naming
// a pod or container the file does not hold is a *ScenarioError naming the
// file, the line and the field path. The file is parsed into a YAML node
// tree, which gives the lines and the duplicate fields, and decoded by
// sigs.k8s.io/yaml's conversion to JSON and sigs.k8s.io/json's strict,
// case-sensitive decoder, which finds the unknown fields and the values of
// the wrong type; the line of a field is found by walking the node tree
// along its path. For a problem whose field is absent from the file (a
// missing required field) the line is that of the nearest enclosing field
// that is present; for an error of the decoders that names no field, it is
// the line the error names, if any, and otherwise there is none
// ("file: problem"). Only the first problem is reported: first a problem of
// the YAML itself (syntax, keys, merges, aliases), then the first unknown
// field or bad value in file order, then the first rule above broken.
// ParseScenario never panics.
func ParseScenario(name string, data []byte) (*Scenario, error) {
	if name == "" {
		name = "scenario"
	}
	if len(data) > maxScenarioSize {
		return nil, &ScenarioError{File: name, Msg: fmt.Sprintf("file too large (%d bytes; the limit is %d)", len(data), maxScenarioSize)}
	}
	f, err := scnParseFile(name, data)
	if err != nil {
		return nil, err
	}
	var doc scenarioDoc
	if err := f.decode(data, &doc); err != nil {
		return nil, err
	}
	return f.scenario(&doc)
}
