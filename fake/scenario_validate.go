package fake

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// The rules of a scenario that its types do not state (step 4 of
// scenario_decode.go): required fields, unique pods and containers, known
// names, counts and durations, and scripts naming what the file holds.

func (f *scnFile) scenario(doc *scenarioDoc) (*Scenario, error) {
	s := &Scenario{Name: doc.Name, Description: doc.Description, CrashLoopBackOff: doc.CrashLoopBackOff, KubeletSemantics: doc.KubeletSemantics}
	if strings.TrimSpace(doc.Name) == "" {
		return nil, f.fail(scnPath{}.key("name"), nil, "required")
	}
	if len(doc.Pods) == 0 {
		return nil, f.fail(scnPath{}.key("pods"), nil, "required: at least one pod")
	}
	byKey := map[string]int{}
	byUID := map[string]int{}
	for i := range doc.Pods {
		pod := &doc.Pods[i]
		if err := f.pod(pod, scnPath{}.key("pods").idx(i), byKey, byUID, i); err != nil {
			return nil, err
		}
		s.pods = append(s.pods, pod.DeepCopy())
	}
	for i := range doc.Scripts {
		sc, err := f.script(&doc.Scripts[i], scnPath{}.key("scripts").idx(i), s)
		if err != nil {
			return nil, err
		}
		sc.index = i
		s.scripts = append(s.scripts, sc)
	}
	return s, nil
}

func (f *scnFile) pod(pod *v1.Pod, path scnPath, byKey, byUID map[string]int, i int) error {
	if pod.APIVersion != "" && pod.APIVersion != "v1" {
		return f.fail(path.key("apiVersion"), nil, "must be v1, not %q", pod.APIVersion)
	}
	if pod.Kind != "" && pod.Kind != "Pod" {
		return f.fail(path.key("kind"), nil, "must be Pod, not %q", pod.Kind)
	}
	meta := path.key("metadata")
	if pod.Name == "" {
		return f.fail(meta.key("name"), nil, "required")
	}
	if pod.UID == "" {
		return f.fail(meta.key("uid"), nil, "required")
	}
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	key := podKey(pod.Namespace, pod.Name)
	if first, dup := byKey[key]; dup {
		return f.fail(meta.key("name"), nil, "duplicate pod %q (pods[%d] has the same namespace and name)", key, first)
	}
	byKey[key] = i
	if first, dup := byUID[string(pod.UID)]; dup {
		return f.fail(meta.key("uid"), nil, "duplicate uid %q (pods[%d] has the same uid)", pod.UID, first)
	}
	byUID[string(pod.UID)] = i
	spec := path.key("spec")
	switch pod.Spec.RestartPolicy {
	case "", v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever:
	default:
		return f.fail(spec.key("restartPolicy"), nil, "unknown restart policy %q (want Always, OnFailure or Never)", pod.Spec.RestartPolicy)
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		return f.fail(spec.key("terminationGracePeriodSeconds"), nil, "must not be negative, not %d", *g)
	}
	if len(pod.Spec.Containers) == 0 {
		return f.fail(spec.key("containers"), nil, "required: at least one container")
	}
	seen := map[string]bool{}
	for _, list := range []struct {
		field      string
		containers []v1.Container
	}{{"initContainers", pod.Spec.InitContainers}, {"containers", pod.Spec.Containers}} {
		for j, c := range list.containers {
			name := spec.key(list.field).idx(j).key("name")
			if c.Name == "" {
				return f.fail(name, nil, "required")
			}
			if seen[c.Name] {
				return f.fail(name, nil, "duplicate container name %q", c.Name)
			}
			seen[c.Name] = true
		}
	}
	return nil
}

func (f *scnFile) script(d *scriptDoc, path scnPath, s *Scenario) (scenarioScript, error) {
	var sc scenarioScript
	var pod *v1.Pod
	if d.Pod != "" {
		ns, name, ok := strings.Cut(d.Pod, "/")
		if !ok {
			ns, name = "default", d.Pod
		}
		if ns == "" || name == "" || strings.Contains(name, "/") {
			return sc, f.fail(path.key("pod"), nil, "invalid pod %q (want namespace/name)", d.Pod)
		}
		sc.pod = podKey(ns, name)
		for _, p := range s.pods {
			if podKey(p.Namespace, p.Name) == sc.pod {
				pod = p
			}
		}
		if pod == nil {
			return sc, f.fail(path.key("pod"), nil, "no pod %q in pods", sc.pod)
		}
	}
	switch {
	case d.Container != nil && d.Fail != nil:
		return sc, f.fail(path.key("fail"), nil, "a script has either container or fail, not both")
	case d.Container != nil:
		if pod == nil {
			return sc, f.fail(path.key("pod"), nil, "required for a container script")
		}
		return sc, f.container(d.Container, path.key("container"), pod, &sc)
	case d.Fail != nil:
		return sc, f.methodFault(d.Fail, path.key("fail"), &sc)
	}
	return sc, f.fail(path, nil, "a script needs container or fail")
}

func (f *scnFile) container(d *containerDoc, path scnPath, pod *v1.Pod, sc *scenarioScript) error {
	if d.Name == "" {
		return f.fail(path.key("name"), nil, "required")
	}
	found := false
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		found = found || c.Name == d.Name
	}
	if !found {
		return f.fail(path.key("name"), nil, "pod %q has no container %q", podKey(pod.Namespace, pod.Name), d.Name)
	}
	sc.container = d.Name
	if d.FailStarts == nil && d.ExitAfter == nil && d.ExitRuns == nil && d.StartLatency == nil && d.IgnoreSIGTERM == nil &&
		d.PostStartHook == nil && d.PreStopHook == nil && d.Probes == nil {
		return f.fail(path, nil, "nothing scripted: want failStarts, exitAfter, exitRuns, startLatency, ignoreSIGTERM, postStartHook, preStopHook or probes")
	}
	if err := f.probes(d.Probes, path.key("probes"), sc); err != nil {
		return err
	}
	if fs := d.FailStarts; fs != nil {
		p := path.key("failStarts")
		times, err := f.count(fs.Times, p.key("times"))
		if err != nil {
			return err
		}
		reason := pkgcontainer.ErrRunContainer
		if fs.Error != "" {
			var ok bool
			if reason, ok = scenarioStartErrors[fs.Error]; !ok {
				names := slices.Sorted(maps.Keys(scenarioStartErrors))
				return f.fail(p.key("error"), nil, "unknown error %q (want one of %s)", fs.Error, strings.Join(names, ", "))
			}
		}
		sc.failStarts = &startFault{remaining: times, err: reason, message: fs.Message}
	}
	if e := d.ExitAfter; e != nil {
		p := path.key("exitAfter")
		if e.After == "" {
			return f.fail(p.key("after"), nil, "required")
		}
		after, err := f.duration(e.After, p.key("after"))
		if err != nil {
			return err
		}
		code := 0
		if e.Code != nil {
			code = *e.Code
		}
		if code < 0 || code > 255 {
			return f.fail(p.key("code"), nil, "exit code %d out of range 0 to 255", code)
		}
		sc.exitAfter = &scriptedExit{after: after, code: code}
	}
	for i, r := range d.ExitRuns {
		p := path.key("exitRuns").idx(i)
		times := 1
		if r.Times != nil {
			if r.Times.Type == intstr.String || r.Times.IntVal < 1 {
				return f.fail(p.key("times"), nil, "invalid count %s (want a number of at least 1: later runs follow the command)", r.Times.String())
			}
			times = int(r.Times.IntVal)
		}
		if r.After == "" {
			return f.fail(p.key("after"), nil, "required")
		}
		after, err := f.duration(r.After, p.key("after"))
		if err != nil {
			return err
		}
		code := 0
		if r.Code != nil {
			code = *r.Code
		}
		if code < 0 || code > 255 {
			return f.fail(p.key("code"), nil, "exit code %d out of range 0 to 255", code)
		}
		sc.exitRuns = append(sc.exitRuns, exitRun{remaining: times, after: after, code: code})
	}
	if d.ExitRuns != nil && len(d.ExitRuns) == 0 {
		return f.fail(path.key("exitRuns"), nil, "empty: want at least one run")
	}
	if d.StartLatency != nil {
		latency, err := f.duration(*d.StartLatency, path.key("startLatency"))
		if err != nil {
			return err
		}
		sc.startLatency = &latency
	}
	sc.ignoreSIGTERM = d.IgnoreSIGTERM != nil && *d.IgnoreSIGTERM
	if h := d.PostStartHook; h != nil {
		p := path.key("postStartHook")
		if h.After == "" {
			return f.fail(p.key("after"), nil, "required")
		}
		after, err := f.duration(h.After, p.key("after"))
		if err != nil {
			return err
		}
		code := 0
		if h.Code != nil {
			code = *h.Code
		}
		if code < 0 || code > 255 {
			return f.fail(p.key("code"), nil, "exit code %d out of range 0 to 255", code)
		}
		sc.postStartHook = &scriptedHook{d: after, code: code}
	}
	if d.PreStopHook != nil {
		d, err := f.duration(*d.PreStopHook, path.key("preStopHook"))
		if err != nil {
			return err
		}
		sc.preStopHook = &d
	}
	return nil
}

// scenarioPodMethods are the methods a script may make fail for one pod;
// scenarioAnyPodMethods those it may make fail only for every pod.
var (
	scenarioPodMethods    = []Method{MethodSyncPod, MethodKillPod, MethodDeletePod, MethodGetPodStatus}
	scenarioAnyPodMethods = []Method{MethodCleanupPods, MethodGetPods}
)

func (f *scnFile) methodFault(d *failDoc, path scnPath, sc *scenarioScript) error {
	m := Method(d.Method)
	switch {
	case d.Method == "":
		return f.fail(path.key("method"), nil, "required")
	case slices.Contains(scenarioPodMethods, m):
	case slices.Contains(scenarioAnyPodMethods, m):
		if sc.pod != "" {
			return f.fail(path.key("method"), nil, "%s is not called for one pod: leave out pod to make it fail", m)
		}
	default:
		return f.fail(path.key("method"), nil, "unknown method %q (want one of SyncPod, KillPod, DeletePod, GetPodStatus, CleanupPods, GetPods)", d.Method)
	}
	times, err := f.count(d.Times, path.key("times"))
	if err != nil {
		return err
	}
	sc.method, sc.times = m, times
	if d.Message != "" {
		sc.methodErr = errors.New(d.Message)
	}
	return nil
}

// count reads a times field: at least 1, or -1 or "always" for Always;
// absent means 1.
func (f *scnFile) count(c *intstr.IntOrString, path scnPath) (int, error) {
	switch {
	case c == nil:
		return 1, nil
	case c.Type == intstr.String && (c.StrVal == "always" || c.StrVal == "Always"):
		return Always, nil
	case c.Type == intstr.String:
		return 0, f.fail(path, nil, "invalid count %q (want a number of at least 1, or -1 or always for every call)", c.StrVal)
	case c.IntVal == -1:
		return Always, nil
	case c.IntVal < 1:
		return 0, f.fail(path, nil, "invalid count %d (want a number of at least 1, or -1 or always for every call)", c.IntVal)
	}
	return int(c.IntVal), nil
}

func (f *scnFile) duration(s string, path scnPath) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, f.fail(path, err, "invalid duration %q (want a Go duration such as 500ms, 5s or 1m30s)", s)
	}
	if d < 0 {
		return 0, f.fail(path, nil, "invalid duration %q: must not be negative", s)
	}
	return d, nil
}
