package conformance_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/conformance"
	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// The failures only virtual time has: a provider that leaves a goroutine
// blocked after the spec, and a call blocked on something synctest cannot
// see. Each is the fake with one interceptor, run on one spec.
const (
	helperLeak    = "virtual-time-leak"
	helperMutex   = "virtual-time-mutex"
	helperSettles = "virtual-time-settles"
)

func init() {
	// Stop leaves a goroutine waiting for good on a channel of its own.
	extraHelpers[helperLeak] = func() conformance.Config {
		return podOnly(fakeConfig(func(p *fake.PodProvider) {
			p.SetInterceptors(interceptor.PodFuncs{Stop: func(next kri.PodProvider) {
				next.Stop()
				never := make(chan struct{})
				go func() { <-never }()
			}})
		}, nil))
	}
	// GetPodStatus, once the pod has been synced, waits for a mutex no one
	// unlocks: the bubble's clock stands still.
	extraHelpers[helperMutex] = func() conformance.Config {
		return podOnly(fakeConfig(func(p *fake.PodProvider) {
			var held sync.Mutex
			held.Lock()
			synced := false
			p.SetInterceptors(interceptor.PodFuncs{
				SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
					synced = true
					return next.SyncPod(ctx, pod, st, rc)
				},
				GetPodStatus: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod) (*pkgcontainer.PodStatus, error) {
					if synced {
						held.Lock()
					}
					return next.GetPodStatus(ctx, pod)
				},
			})
		}, nil))
	}
	// Stop leaves a goroutine that ends 2s (of virtual time) later, as a
	// backend that finishes a deletion after the call returned: benign.
	extraHelpers[helperSettles] = func() conformance.Config {
		return podOnly(fakeConfig(func(p *fake.PodProvider) {
			p.SetInterceptors(interceptor.PodFuncs{Stop: func(next kri.PodProvider) {
				next.Stop()
				go time.Sleep(2 * time.Second)
			}})
		}, nil))
	}
}

func podOnly(cfg conformance.Config) conformance.Config {
	cfg.NewNodeProvider = nil
	return cfg
}

// TestVirtualTimeFailures checks that under Config.VirtualTime a provider
// that leaves a goroutine blocked, or blocks a call where synctest cannot
// see it, fails the spec with a message that names the cause (and the
// call), and that the run goes on to its summary; and that a goroutine
// that ends a little after Stop fails nothing.
func TestVirtualTimeFailures(t *testing.T) {
	skipInHelper(t)
	if testing.Short() {
		t.Skip("runs the suite in helper processes (-short)")
	}
	t.Parallel()
	cases := []struct {
		mode  string
		fails bool
		parts []string
	}{
		{helperLeak, true, []string{"goroutines of the provider outlived the spec", "1 goroutine(s) it started", "virtual_time_test.go"}},
		{helperMutex, true, []string{"GetPodStatus made no progress for ", "s of real time while the spec's virtual clock stood still", "a mutex held for good", "sync.(*Mutex).Lock"}},
		{helperSettles, false, nil},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			r := runHelper(t, c.mode, 2*time.Minute, `-ginkgo.focus=\[KRI-POD-001\]`)
			sr, ok := r.specReport("KRI-POD-001")
			if !ok {
				t.Fatalf("no report of KRI-POD-001; output:\n%s", tail(r.output))
			}
			if !c.fails {
				if sr.State != passedState {
					t.Fatalf("KRI-POD-001 %s, want passed: %s", sr.State, sr.Failure.Message)
				}
				return
			}
			if sr.State == passedState {
				t.Fatalf("KRI-POD-001 passed, want it to fail; output:\n%s", tail(r.output))
			}
			for _, p := range c.parts {
				if !strings.Contains(sr.Failure.Message, p) {
					t.Errorf("the failure of KRI-POD-001 does not say %q:\n%s", p, sr.Failure.Message)
				}
			}
			if !strings.Contains(r.summary, "verdict: not conformant") {
				t.Errorf("the run did not reach its summary, or its verdict is wrong:\n%s", r.summary)
			}
		})
	}
}
