package conformance

import (
	"cmp"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// The specs of what the pod spec asks of whoever runs the containers
// (KRI-POD-057 on): in KRI that is the provider, as the kubelet's runtime
// manager is for the kubelet. Each is gated by a capability (image pull
// policy, env expansion, termination messages, ...), so that a provider
// that leaves them to nobody stays conformant and the summary says which
// were skipped. Each mirrors a node e2e test of kubernetes/kubernetes
// test/e2e/common/node, cited in testdata/contract.yaml with the kubelet
// code that implements the behaviour.

// registerPodSpecs adds specs to the pod specs, kept in ID order (the
// files of the suite register in name order, these after reach_specs.go).
func registerPodSpecs(specs ...*specDef) {
	podSpecs = append(podSpecs, specs...)
	slices.SortStableFunc(podSpecs, func(a, b *specDef) int { return cmp.Compare(a.id, b.id) })
}

// shell is the Shell workload running script, named name.
func (e *podEnv) shell(name, script string) v1.Container {
	return named(name, e.w().Shell(script))
}

// withEnv returns c with the given variables, in order (name, value, ...).
func withEnv(c v1.Container, kv ...string) v1.Container {
	for i := 0; i+1 < len(kv); i += 2 {
		c.Env = append(c.Env, v1.EnvVar{Name: kv[i], Value: kv[i+1]})
	}
	return c
}
