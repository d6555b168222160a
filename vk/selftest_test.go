package vk

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/vk/simprovider"
)

// variant is a provider the self-tests run every spec against: the
// reference, a mutant (want: the specs it must fail, exactly) or a benign
// variant (want empty: it must pass everything).
type variant struct {
	name  string
	pods  func() node.PodLifecycleHandler
	nodes func() node.NodeProvider
	want  []string
	// caps the variant declares; nil declares every capability.
	caps []Capability
	// nodeStatusPeriod is the variant's Config.NodeStatusPeriod.
	nodeStatusPeriod time.Duration
}

func (v variant) config() Config {
	cfg := Config{VirtualTime: true, Capabilities: v.caps, NodeStatusPeriod: v.nodeStatusPeriod}
	if v.caps == nil {
		cfg.Capabilities = AllCapabilities()
	}
	if v.pods != nil {
		cfg.NewPodProvider = func(ctx context.Context) (node.PodLifecycleHandler, error) {
			p := v.pods()
			if c, ok := p.(interface{ Close() }); ok {
				context.AfterFunc(ctx, c.Close)
			}
			return p, nil
		}
	}
	cfg.MakeBackendUnhealthy = func(_ context.Context, p node.NodeProvider) error {
		u, ok := p.(interface{ MakeUnhealthy() })
		if !ok {
			return errors.New("the node provider has no MakeUnhealthy")
		}
		u.MakeUnhealthy()
		return nil
	}
	cfg.TriggerNodeStatusUpdate = reportMemoryPressure
	if v.nodes != nil {
		cfg.NewNodeProvider = func(context.Context) (node.NodeProvider, error) { return v.nodes(), nil }
	}
	return cfg
}

// reportMemoryPressure is the self-tests' TriggerNodeStatusUpdate: the
// simulated backend of a simprovider.Node (or a variant of one) reports
// memory pressure, then none, then pressure again, ...
func reportMemoryPressure(_ context.Context, p node.NodeProvider) error {
	r, ok := p.(interface {
		ReportCondition(corev1.NodeCondition)
		Condition(corev1.NodeConditionType) *corev1.NodeCondition
	})
	if !ok {
		return errors.New("the node provider has no ReportCondition or Condition")
	}
	c := corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue,
		Reason: "BackendMemoryLow", Message: "the simulated backend has little memory left"}
	if cur := r.Condition(corev1.NodeMemoryPressure); cur != nil && cur.Status == corev1.ConditionTrue {
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, "BackendMemoryAvailable", "the simulated backend has memory available"
	}
	r.ReportCondition(c)
	return nil
}

// check runs every spec of v's kind against v and fails t unless exactly
// the specs of v.want fail.
func check(t *testing.T, v variant) {
	t.Helper()
	cfg := v.config()
	async := false
	if v.pods != nil {
		_, async = v.pods().(node.PodNotifier)
	}
	var failed []string
	for _, s := range sortedSpecs() {
		if (s.node && v.nodes == nil) || (!s.node && v.pods == nil) {
			continue
		}
		skip := s.AsyncOnly && !async
		for _, c := range s.Capabilities {
			skip = skip || !slices.Contains(cfg.Capabilities, c)
		}
		o := runSpec(t, s, cfg)
		switch {
		case o.Skipped && skip:
			t.Logf("%s skipped as it must: %s", s.ID, o.Message)
		case skip:
			t.Errorf("%s not skipped (failed=%t), though %s is sync or leaves out a capability it needs", s.ID, o.Failed, v.name)
		case o.Skipped:
			t.Errorf("%s skipped: %s", s.ID, o.Message)
		case o.Failed:
			failed = append(failed, s.ID)
			if slices.Contains(v.want, s.ID) {
				t.Logf("%s failed as it must (%v): %s", s.ID, o.Took, o.Message)
			} else {
				t.Errorf("%s failed, not in want %v: %s", s.ID, v.want, o.Message)
			}
		default:
			t.Logf("%s passed (%v)", s.ID, o.Took)
		}
	}
	for _, id := range v.want {
		if !slices.Contains(failed, id) {
			t.Errorf("%s passed, but %s must fail it", id, v.name)
		}
	}
}

var references = []variant{
	{name: "sync", pods: func() node.PodLifecycleHandler { return simprovider.New() }, nodes: func() node.NodeProvider { return simprovider.NewNode() }},
	{name: "async", pods: func() node.PodLifecycleHandler { return simprovider.NewAsync() }},
}

func TestReferenceProviderPassesEverySpec(t *testing.T) {
	for _, v := range references {
		t.Run(v.name, func(t *testing.T) { check(t, v) })
	}
}

func TestCatalogueIDs(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Catalogue() {
		if seen[s.ID] || !(strings.HasPrefix(s.ID, "KVK-POD-") || strings.HasPrefix(s.ID, "KVK-NODE-")) || s.VK == "" || s.Title == "" {
			t.Errorf("catalogue entry %+v: duplicate ID, wrong prefix, or no VK code cited", s)
		}
		seen[s.ID] = true
	}
}

// The variants run in parallel (go test -parallel, GOMAXPROCS by
// default): each spec of each builds its own providers and VK in a
// synctest bubble of its own, and shares nothing with the others.
func TestMutantsFailExactlyTheirSpecs(t *testing.T) {
	for _, v := range mutants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			check(t, v)
		})
	}
}

// TestEverySpecHasAMutant: every spec of the catalogue is one that some
// mutant must fail (TestMutantsFailExactlyTheirSpecs then proves it does),
// so no spec can pass whatever the provider does.
func TestEverySpecHasAMutant(t *testing.T) {
	caught := map[string]bool{}
	for _, m := range mutants {
		for _, id := range m.want {
			caught[id] = true
		}
	}
	for _, s := range Catalogue() {
		if !caught[s.ID] {
			t.Errorf("no mutant is expected to fail %s (%s): add one to mutants", s.ID, s.Title)
		}
	}
	t.Logf("%d specs, %d mutants: every spec is failed by at least one", len(Catalogue()), len(mutants))
}

func TestBenignVariantsPass(t *testing.T) {
	for _, v := range benign {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			check(t, v)
		})
	}
}

// TestConfigNodeNameBindsThePods runs two specs with Config.NodeName set:
// they pass, and every pod VK hands the provider is bound to that node.
func TestConfigNodeNameBindsThePods(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	recordNode := altered{createPod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
		mu.Lock()
		seen[pod.Spec.NodeName] = true
		mu.Unlock()
		return b.CreatePod(ctx, pod)
	}}
	newProvider := syncAltered(recordNode)
	cfg := Config{VirtualTime: true, NodeName: "vk-other",
		NewPodProvider:  func(context.Context) (node.PodLifecycleHandler, error) { return newProvider(), nil },
		NewNodeProvider: func(context.Context) (node.NodeProvider, error) { return simprovider.NewNode(), nil }}
	for _, s := range sortedSpecs() {
		if s.ID != "KVK-POD-001" && s.ID != "KVK-NODE-001" {
			continue
		}
		if o := runSpec(t, s, cfg); o.Failed || o.Skipped {
			t.Errorf("%s with Config.NodeName %q: failed %t, skipped %t: %s", s.ID, cfg.NodeName, o.Failed, o.Skipped, o.Message)
		}
	}
	if len(seen) != 1 || !seen["vk-other"] {
		t.Errorf("the pods CreatePod got were bound to %v, want only vk-other (Config.NodeName)", seen)
	}
}
