package fake

import (
	"maps"
	"slices"
)

// probes validates a container script's probes field: kinds startup,
// liveness and readiness, each pass or fail.
func (f *scnFile) probes(d map[string]string, path scnPath, sc *scenarioScript) error {
	if d == nil {
		return nil
	}
	if len(d) == 0 {
		return f.fail(path, nil, "empty: want startup, liveness or readiness, each pass or fail")
	}
	sc.probes = map[ProbeKind]bool{}
	for _, name := range slices.Sorted(maps.Keys(d)) {
		kind, err := parseProbeKind(name)
		if err != nil {
			return f.fail(path.key(name), nil, "%v", err)
		}
		switch d[name] {
		case "pass":
			sc.probes[kind] = true
		case "fail":
			sc.probes[kind] = false
		default:
			return f.fail(path.key(name), nil, "invalid result %q (want pass or fail)", d[name])
		}
	}
	return nil
}

// applyProbes installs scripted probe results on cs, in kind order.
func applyProbes(cs *ContainerScript, probes map[ProbeKind]bool) {
	for _, kind := range probeKinds {
		if ok, set := probes[kind]; set {
			if ok {
				cs.PassProbe(kind)
			} else {
				cs.FailProbe(kind)
			}
		}
	}
}
