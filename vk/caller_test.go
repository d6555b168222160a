package vk

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
)

// specByID returns the spec of the catalogue with that ID.
func specByID(t *testing.T, id string) spec {
	t.Helper()
	for _, s := range specs {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no spec %s", id)
	return spec{}
}

// TestBubbleStacksNameTheBubblesGoroutines: what a synctest deadlock of a
// spec prints (runSpec) holds the stacks of the goroutines of the spec's
// bubble, and only those. (A real deadlock would leak the goroutine for
// the rest of the test binary: synctest never ends a deadlocked bubble's
// goroutines.)
func TestBubbleStacksNameTheBubblesGoroutines(t *testing.T) {
	outside := make(chan struct{})
	go blockedOutside(outside)
	defer close(outside)
	synctest.Test(t, func(t *testing.T) {
		b := bubbleOf()
		if b == "" {
			t.Fatal("bubbleOf answered no bubble inside one")
		}
		never := make(chan struct{})
		done := make(chan struct{})
		go func() { defer close(done); blockedInTheBubble(never) }()
		synctest.Wait()
		got := bubbleStacks(b)
		if !strings.Contains(got, "blockedInTheBubble") || !strings.Contains(got, "chan receive") {
			t.Errorf("bubbleStacks(%s) lacks the goroutine blocked in the bubble:\n%s", b, got)
		}
		if strings.Contains(got, "blockedOutside") {
			t.Errorf("bubbleStacks(%s) holds a goroutine outside the bubble:\n%s", b, got)
		}
		close(never)
		<-done
	})
	if got := bubbleOf(); got != "" {
		t.Errorf("bubbleOf outside a bubble answered %q", got)
	}
}

//go:noinline
func blockedInTheBubble(never chan struct{}) { <-never }

//go:noinline
func blockedOutside(c chan struct{}) { <-c }

// TestSetupPanicNamesTheStep: a provider that panics in a call the suite
// makes in a spec's setup fails the spec with a message naming the setup
// step and the call, not a bare panic.
func TestSetupPanicNamesTheStep(t *testing.T) {
	panicky := asyncAltered(altered{createPod: func(ctx context.Context, b node.PodLifecycleHandler, pod *corev1.Pod) error {
		if strings.HasPrefix(pod.Name, "leftover-") {
			panic("backend client not initialised")
		}
		return b.CreatePod(ctx, pod)
	}}, nil)
	cfg := Config{VirtualTime: true, NewPodProvider: func(context.Context) (node.PodLifecycleHandler, error) { return panicky(), nil }}
	o := runSpec(t, specByID(t, "KVK-POD-011"), cfg)
	for _, want := range []string{"panicked in the suite's setup step", "KVK-POD-011", "in CreatePod(default/leftover-", "backend client not initialised"} {
		if !o.Failed || !strings.Contains(o.Message, want) {
			t.Errorf("KVK-POD-011 with a CreatePod that panics for the leftover pod: failed %t, message lacks %q:\n%s", o.Failed, want, o.Message)
		}
	}
}
