package fake_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
)

// drain returns the events waiting in sub, as "Type container exit" lines.
func drain(sub *fake.Subscription) []string {
	var out []string
	for {
		select {
		case e := <-sub.C:
			out = append(out, strings.TrimSpace(fmt.Sprint(e.Type, " ", e.Container, " ", e.ExitCode)))
		default:
			return out
		}
	}
}

func TestCleanupPodsTerminatesAnOrphanLikeKillPod(t *testing.T) {
	f := newFixture(t)
	orphan := newPod("orphan", v1.RestartPolicyAlways, container("app", "sleep", "infinity"), container("side", "sleep", "infinity"))
	f.mustSync(orphan)
	sub := f.p.Subscribe(32)
	defer sub.Close()
	if err := f.p.CleanupPods(context.Background(), nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ContainerKilling app 0", "ContainerExited app 143",
		"ContainerKilling side 0", "ContainerExited side 143",
		"SandboxStopped  0", "PodDeleted  0",
	}
	if got := drain(sub); !equalStrings(got, want) {
		t.Fatalf("events of CleanupPods of an orphan whose containers honour SIGTERM:\n got %q\nwant %q", got, want)
	}
	if _, ok := f.p.Snapshot("default/orphan"); ok {
		t.Fatal("the orphan is still known after its containers exited")
	}
}

func TestCleanupPodsGivesASIGTERMIgnoringOrphanItsGracePeriod(t *testing.T) {
	for _, withStart := range []bool{false, true} {
		t.Run(fmt.Sprint("Start running: ", withStart), func(t *testing.T) {
			f := newFixture(t)
			if withStart {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- f.p.Start(ctx) }()
				defer func() { cancel(); <-done }()
			}
			orphan := newPod("orphan", v1.RestartPolicyAlways, container("app", "sh", "-c", "trap '' TERM; sleep infinity"))
			orphan.Spec.TerminationGracePeriodSeconds = ptr[int64](20)
			f.mustSync(orphan)
			sub := f.p.Subscribe(32)
			defer sub.Close()
			if err := f.p.CleanupPods(context.Background(), nil, nil, nil); err != nil {
				t.Fatal(err)
			}
			if got, want := drain(sub), []string{"ContainerKilling app 0", "SandboxStopped  0"}; !equalStrings(got, want) {
				t.Fatalf("events of CleanupPods: got %q, want %q", got, want)
			}
			f.clock.Step(19 * time.Second)
			pods, _ := f.p.GetPods(context.Background(), false)
			if len(pods) != 1 || len(pods[0].Containers) != 1 {
				t.Fatalf("1s before its grace period ends, GetPods = %s; want the orphan with app still running", describePods(pods))
			}
			if snap, _ := f.p.Snapshot("default/orphan"); !snap.Containers[0].Terminating {
				t.Fatalf("orphan's app %+v, want Terminating", snap.Containers[0])
			}
			f.clock.Step(time.Second)
			if withStart {
				// Start applies the SIGKILL as the clock reaches it and
				// publishes the end, without any call.
				var got []string
				for len(got) < 2 {
					select {
					case e := <-sub.C:
						got = append(got, fmt.Sprint(e.Type, " ", e.ExitCode, " ", e.At.Sub(t0)))
					case <-time.After(10 * time.Second):
						t.Fatalf("Start published %q within 10s of the grace period's end, want the exit and PodDeleted", got)
					}
				}
				if want := []string{"ContainerExited 137 20s", "PodDeleted 0 20s"}; !equalStrings(got, want) {
					t.Fatalf("events when the grace period ended: got %q, want %q", got, want)
				}
			}
			if pods, _ := f.p.GetPods(context.Background(), true); len(pods) != 0 {
				t.Fatalf("after the grace period GetPods(true) = %s, want the orphan forgotten", describePods(pods))
			}
			if st := f.status(orphan); len(st.ContainerStatuses) != 0 {
				t.Fatalf("after the grace period GetPodStatus = %s, want the orphan unknown", describe(st))
			}
		})
	}
}

func TestAnOrphanSyncedAgainIsDesiredAgain(t *testing.T) {
	f := newFixture(t)
	pod := newPod("web", v1.RestartPolicyAlways, container("app", "sh", "-c", "trap '' TERM; sleep infinity"))
	f.mustSync(pod)
	if err := f.p.CleanupPods(context.Background(), nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	f.mustSync(pod) // the pod is wanted after all: a new sandbox; app still terminating
	f.clock.Step(30 * time.Second)
	snap, ok := f.p.Snapshot("default/web")
	if !ok {
		t.Fatal("a pod synced while it terminated as an orphan was forgotten when its grace period ended")
	}
	if app := snap.Containers[0]; app.State != pkgcontainer.ContainerStateExited || app.ExitCode != 137 {
		t.Fatalf("app %+v, want exited 137 (SIGKILL at the end of the grace period)", app)
	}
	f.mustSync(pod)
	if !running(f.current(pod, "app")) {
		t.Fatal("the next sync did not start app again")
	}
}
