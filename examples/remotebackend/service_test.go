package remotebackend_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/examples/remotebackend"
	"github.com/kri-kit/testkit/sim/workload"
)

func TestNewServiceOptions(t *testing.T) {
	for _, tt := range []struct {
		name    string
		backOff remotebackend.BackOff
		wantErr string
	}{
		{"defaults", remotebackend.BackOff{}, ""},
		{"initial only", remotebackend.BackOff{Initial: 5 * time.Second}, ""},
		{"below the minimum", remotebackend.BackOff{Initial: time.Microsecond}, "BackOff.Initial 1µs is below the minimum"},
		{"negative", remotebackend.BackOff{Initial: -time.Second}, "BackOff.Initial -1s is below the minimum"},
		{"max below initial", remotebackend.BackOff{Initial: time.Second, Max: time.Millisecond}, "BackOff.Max 1ms is below BackOff.Initial 1s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc, err := remotebackend.NewService(remotebackend.ServiceOptions{BackOff: tt.backOff})
			switch {
			case tt.wantErr == "" && (err != nil || svc == nil):
				t.Fatalf("NewService(%+v) = %v, %v; want a Service", tt.backOff, svc, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("NewService(%+v) error = %v; want one containing %q", tt.backOff, err, tt.wantErr)
			}
		})
	}
}

// A container that exits at once is restarted after 200ms, 400ms, 800ms,
// 1.6s, then every 2s, each back-off counted from the exit; between two
// restarts it is exited and waiting in CrashLoopBackOff.
func TestBackOffTiming(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, sh("app", "exit 1"))
	apply(t, svc, pod)
	starts := []int{0, 200, 600, 1400, 3000, 5000, 7000, 9000}
	for i, ms := range starts {
		fc.SetTime(at(ms).Add(-time.Nanosecond))
		if i > 0 {
			c := container(t, svc, pod, "app")
			if c.RestartCount != i-1 || c.Waiting == nil || c.Waiting.Reason != remotebackend.ReasonCrashLoopBackOff || !c.Waiting.Until.Equal(at(ms)) {
				t.Fatalf("1ns before %dms: %s; want restart count %d, waiting in CrashLoopBackOff until %dms", ms, describe(c), i-1, ms)
			}
			if c.Current.State != remotebackend.RunExited {
				t.Fatalf("1ns before %dms: %s; want the exited run current while backing off", ms, describe(c))
			}
		}
		fc.SetTime(at(ms))
		c := container(t, svc, pod, "app")
		if c.RestartCount != i || !c.Current.StartedAt.Equal(at(ms)) {
			t.Fatalf("at %dms: %s; want run #%d started at %dms", ms, describe(c), i, ms)
		}
	}
}

// Catching up over a long gap gives every run the times it would have had
// with someone watching all along.
func TestBackOffCatchUp(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, sh("app", "exit 2"))
	apply(t, svc, pod)
	fc.SetTime(at(9100))
	c := container(t, svc, pod, "app")
	if c.RestartCount != 7 || !c.Current.StartedAt.Equal(at(9000)) || c.LastTermination == nil || !c.LastTermination.StartedAt.Equal(at(7000)) || !c.LastTermination.FinishedAt.Equal(at(7000)) {
		t.Fatalf("at 9.1s after one look: %s; want 7 restarts, current run started at 9s, last one at 7s", describe(c))
	}
	if c.Waiting == nil || !c.Waiting.Until.Equal(at(11000)) {
		t.Fatalf("at 9.1s: %s; want the next restart at 11s", describe(c))
	}
}

// A container that has not been backed off for more than twice the maximum
// back-off starts again from the initial one.
func TestBackOffResets(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, sh("app", "sleep 5; exit 1"))
	apply(t, svc, pod)
	// Run 0: 0-5s, back-off 200ms (the first). Run 1: 5.2-10.2s; its exit
	// comes 5.2s after the last back-off, more than 2×2s: 200ms again.
	for _, want := range []struct {
		ms, restarts int
	}{{5200, 1}, {10400, 2}, {15600, 3}} {
		fc.SetTime(at(want.ms).Add(-time.Nanosecond))
		if c := container(t, svc, pod, "app"); c.RestartCount != want.restarts-1 {
			t.Fatalf("1ns before %dms: %s; want %d restarts", want.ms, describe(c), want.restarts-1)
		}
		fc.SetTime(at(want.ms))
		if c := container(t, svc, pod, "app"); c.RestartCount != want.restarts || !c.Current.StartedAt.Equal(at(want.ms)) {
			t.Fatalf("at %dms: %s; want restart %d started then (back-off reset to 200ms)", want.ms, describe(c), want.restarts)
		}
	}
}

func TestLastTermination(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, sh("app", "sleep 1; exit 3"))
	apply(t, svc, pod)
	first := container(t, svc, pod, "app")
	if first.LastTermination != nil || first.RestartCount != 0 {
		t.Fatalf("first run: %s; want no last termination and no restart", describe(first))
	}
	fc.SetTime(at(1000))
	exited := container(t, svc, pod, "app")
	if r := exited.Current; r.ID != first.Current.ID || r.State != remotebackend.RunExited || r.ExitCode != 3 || r.Reason != "Error" || !r.FinishedAt.Equal(at(1000)) {
		t.Fatalf("after 1s: %s; want the first run exited 3 (Error) at 1s", describe(exited))
	}
	if exited.LastTermination != nil {
		t.Fatalf("after 1s, before the restart: %s; want no last termination yet (the exited run is current)", describe(exited))
	}
	fc.SetTime(at(1200))
	c := container(t, svc, pod, "app")
	want := remotebackend.Termination{RunID: first.Current.ID, ExitCode: 3, Reason: "Error", StartedAt: t0, FinishedAt: at(1000)}
	if c.LastTermination == nil || *c.LastTermination != want {
		t.Fatalf("after the restart: %s; want last termination %+v", describe(c), want)
	}
	if c.Current.ID == first.Current.ID || c.Current.State != remotebackend.RunRunning || c.RestartCount != 1 {
		t.Fatalf("after the restart: %s; want a new running run and restart count 1", describe(c))
	}
}

func TestRestartPolicies(t *testing.T) {
	for _, tt := range []struct {
		policy    v1.RestartPolicy
		code      string
		restarted bool
	}{
		{v1.RestartPolicyAlways, "0", true},
		{v1.RestartPolicyAlways, "3", true},
		{v1.RestartPolicyOnFailure, "0", false},
		{v1.RestartPolicyOnFailure, "3", true},
		{v1.RestartPolicyNever, "0", false},
		{v1.RestartPolicyNever, "3", false},
		{"", "0", true}, // no policy: Always, the API default
	} {
		t.Run(string(tt.policy)+"/exit "+tt.code, func(t *testing.T) {
			svc, fc := newFakeService(t)
			pod := newPod(tt.policy, sh("app", "exit "+tt.code))
			apply(t, svc, pod)
			fc.SetTime(at(60_000))
			c := container(t, svc, pod, "app")
			if got := c.RestartCount > 0; got != tt.restarted {
				t.Fatalf("a minute after the container exited %s under RestartPolicy %q: %s; want restarted %v", tt.code, tt.policy, describe(c), tt.restarted)
			}
			if !tt.restarted && c.Waiting != nil {
				t.Fatalf("container that will not restart reports waiting: %s", describe(c))
			}
		})
	}
}

func TestImageNormalisation(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	for image, want := range map[string]string{
		"busybox:1.36":                   "docker.io/library/busybox:1.36",
		"busybox":                        "docker.io/library/busybox:latest",
		"docker.io/library/busybox:1.36": "docker.io/library/busybox:1.36",
		"example/app:2":                  "docker.io/example/app:2",
		"quay.io/org/app:v1":             "quay.io/org/app:v1",
		"localhost:5000/app":             "localhost:5000/app:latest",
		"busybox@" + digest:              "docker.io/library/busybox@" + digest,
	} {
		t.Run(image, func(t *testing.T) {
			svc, _ := newFakeService(t)
			pod := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
			pod.Spec.Containers[0].Image = image
			apply(t, svc, pod)
			c := container(t, svc, pod, "app")
			if c.Image != want || c.Current == nil || c.Current.Image != want {
				t.Fatalf("image %q: %s (image %q, run image %v); want %q", image, describe(c), c.Image, c.Current, want)
			}
		})
	}
	t.Run("invalid reference", func(t *testing.T) {
		svc, _ := newFakeService(t)
		pod := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
		pod.Spec.Containers[0].Image = "Bad Name"
		apply(t, svc, pod)
		c := container(t, svc, pod, "app")
		if c.Image != "Bad Name" || c.Current != nil || c.Waiting == nil || c.Waiting.Reason != remotebackend.ReasonInvalidImageName {
			t.Fatalf("invalid image: %s (image %q); want it reported as given and the start failed with %s", describe(c), c.Image, remotebackend.ReasonInvalidImageName)
		}
	})
}

// stopAsync runs Stop in a goroutine and waits until it has returned or
// there are waiters on the clock (the Stop calls already waiting plus this
// one).
func stopAsync(t *testing.T, ctx context.Context, svc *remotebackend.Service, fc *testingclock.FakeClock, pod *v1.Pod, grace *time.Duration, waiters int) chan error {
	t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- svc.Stop(ctx, pod.UID, grace) }()
	deadline := time.Now().Add(10 * time.Second)
	for fc.Waiters() < waiters && !returned(ch) {
		if time.Now().After(deadline) {
			t.Fatal("Stop neither returned nor waited on the clock within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	return ch
}

func TestStopGrace(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, ctr("polite", "sleep", "infinity"), sh("stubborn", "trap '' TERM; sleep infinity"))
	apply(t, svc, pod)
	fc.SetTime(at(1000))
	grace := 3 * time.Second
	ch := stopAsync(t, context.Background(), svc, fc, pod, &grace, 1)

	polite := container(t, svc, pod, "polite")
	if r := polite.Current; r.State != remotebackend.RunExited || r.ExitCode != workload.ExitCodeSIGTERM || !r.FinishedAt.Equal(at(1000)) {
		t.Fatalf("right after Stop: %s; want it exited 143 on SIGTERM at once", describe(polite))
	}
	fc.SetTime(at(4000).Add(-time.Nanosecond))
	if c := container(t, svc, pod, "stubborn"); c.Current.State != remotebackend.RunRunning {
		t.Fatalf("1ns before the 3s grace period is over: %s; want it still running", describe(c))
	}
	if returned(ch) {
		t.Fatal("Stop returned before the SIGTERM-ignoring container was killed")
	}
	fc.SetTime(at(4000))
	if err := result(t, "Stop", ch); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stubborn := container(t, svc, pod, "stubborn")
	if r := stubborn.Current; r.State != remotebackend.RunExited || r.ExitCode != workload.ExitCodeSIGKILL || !r.FinishedAt.Equal(at(4000)) {
		t.Fatalf("after the grace period: %s; want it killed (137) at 4s", describe(stubborn))
	}
	fc.SetTime(at(60_000))
	for _, name := range []string{"polite", "stubborn"} {
		if c := container(t, svc, pod, name); c.RestartCount != 0 || c.Waiting != nil {
			t.Fatalf("a minute after Stop: %s; want a stopped pod not restarted", describe(c))
		}
	}
}

func TestStopGraceDefaultsToThePods(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, sh("stubborn", "trap '' TERM; sleep infinity"))
	apply(t, svc, pod) // TerminationGracePeriodSeconds 5
	ch := stopAsync(t, context.Background(), svc, fc, pod, nil, 1)
	fc.SetTime(at(5000).Add(-time.Nanosecond))
	if c := container(t, svc, pod, "stubborn"); c.Current.State != remotebackend.RunRunning {
		t.Fatalf("1ns before the pod's 5s: %s; want it running", describe(c))
	}
	fc.SetTime(at(5000))
	if err := result(t, "Stop", ch); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// A SIGTERM-ignoring container that exits on its own within the grace period
// keeps its exit code; a second Stop shortens the grace period but never
// lengthens it.
func TestStopOwnExitAndSecondStop(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, sh("finishes", "trap '' TERM; sleep 2"), sh("stubborn", "trap '' TERM; sleep infinity"))
	apply(t, svc, pod)
	long := 10 * time.Second
	ch := stopAsync(t, context.Background(), svc, fc, pod, &long, 1)
	fc.SetTime(at(2000))
	if c := container(t, svc, pod, "finishes"); c.Current.State != remotebackend.RunExited || c.Current.ExitCode != 0 {
		t.Fatalf("at 2s: %s; want it exited 0 on its own", describe(c))
	}
	short := time.Second
	ch2 := stopAsync(t, context.Background(), svc, fc, pod, &short, 2)
	fc.SetTime(at(3000))
	for _, c := range []chan error{ch, ch2} {
		if err := result(t, "Stop", c); err != nil {
			t.Fatalf("Stop: %v", err)
		}
	}
	if c := container(t, svc, pod, "stubborn"); c.Current.ExitCode != workload.ExitCodeSIGKILL || !c.Current.FinishedAt.Equal(at(3000)) {
		t.Fatalf("after a second Stop with 1s at 2s: %s; want it killed at 3s", describe(c))
	}
}

func TestSecondStopDoesNotLengthen(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, sh("stubborn", "trap '' TERM; sleep infinity"))
	apply(t, svc, pod)
	short, long := time.Second, 10*time.Second
	ch := stopAsync(t, context.Background(), svc, fc, pod, &short, 1)
	fc.SetTime(at(500))
	ch2 := stopAsync(t, context.Background(), svc, fc, pod, &long, 2)
	fc.SetTime(at(1000))
	for _, c := range []chan error{ch, ch2} {
		if err := result(t, "Stop", c); err != nil {
			t.Fatalf("Stop: %v", err)
		}
	}
	if c := container(t, svc, pod, "stubborn"); !c.Current.FinishedAt.Equal(at(1000)) {
		t.Fatalf("after Stop with 1s, then at 0.5s with 10s: %s; want it killed at 1s", describe(c))
	}
}

func TestStopContext(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, sh("stubborn", "trap '' TERM; sleep infinity"))
	apply(t, svc, pod)
	ctx, cancel := context.WithCancel(context.Background())
	ch := stopAsync(t, ctx, svc, fc, pod, nil, 1)
	cancel()
	if err := result(t, "Stop", ch); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stop with a cancelled context returned %v, want context.Canceled", err)
	}
	fc.SetTime(at(5000))
	if c := container(t, svc, pod, "stubborn"); c.Current.State != remotebackend.RunExited || c.Current.ExitCode != workload.ExitCodeSIGKILL {
		t.Fatalf("after the grace period of an abandoned Stop: %s; want it killed all the same", describe(c))
	}
	if err := svc.Stop(context.Background(), "unknown", nil); err != nil {
		t.Fatalf("Stop of an unknown pod: %v, want nil", err)
	}
}

// Submitting a stopped pod again resumes it: its containers restart as its
// restart policy says.
func TestResubmitResumes(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	apply(t, svc, pod)
	if err := svc.Stop(context.Background(), pod.UID, nil); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	// The back-off counts from the exit (at 0), as the kubelet's does.
	fc.SetTime(at(100))
	v := apply(t, svc, pod)
	c := v.Containers[0]
	if v.Stopped || c.Waiting == nil || c.Waiting.Reason != remotebackend.ReasonCrashLoopBackOff || !c.Waiting.Until.Equal(at(200)) {
		t.Fatalf("resubmitted after Stop: stopped=%v %s; want it resumed and backing off until 200ms", v.Stopped, describe(c))
	}
	fc.SetTime(c.Waiting.Until)
	if c := container(t, svc, pod, "app"); c.Current.State != remotebackend.RunRunning || c.RestartCount != 1 {
		t.Fatalf("after the back-off: %s; want it running again", describe(c))
	}
}

// Resumed after its back-off is over, a container restarts at once, not
// in the past.
func TestResubmitAfterTheBackOff(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	apply(t, svc, pod)
	if err := svc.Stop(context.Background(), pod.UID, nil); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	fc.SetTime(at(1000))
	c := apply(t, svc, pod).Containers[0]
	if c.Current.State != remotebackend.RunRunning || !c.Current.StartedAt.Equal(at(1000)) || c.Waiting != nil {
		t.Fatalf("resubmitted 1s after Stop: %s; want it restarted at once, at 1s", describe(c))
	}
}

func TestInitContainersInOrder(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	pod.Spec.InitContainers = []v1.Container{sh("first", "sleep 1"), sh("second", "sleep 0.5")}
	apply(t, svc, pod)
	fc.SetTime(at(1000).Add(-time.Nanosecond))
	if c := container(t, svc, pod, "second"); c.Current != nil {
		t.Fatalf("before first completed: %s; want second not started", describe(c))
	}
	fc.SetTime(at(1000))
	if c := container(t, svc, pod, "second"); c.Current == nil || !c.Current.StartedAt.Equal(at(1000)) {
		t.Fatalf("when first completed: %s; want second started then", describe(c))
	}
	if c := container(t, svc, pod, "app"); c.Current != nil {
		t.Fatalf("while second runs: %s; want app not started", describe(c))
	}
	fc.SetTime(at(2000))
	second, app := container(t, svc, pod, "second"), container(t, svc, pod, "app")
	if app.Current == nil || !app.Current.StartedAt.Equal(second.Current.FinishedAt) || !app.Current.StartedAt.Equal(at(1500)) {
		t.Fatalf("after the init containers: second %s, app %s; want app started when second finished, at 1.5s", describe(second), describe(app))
	}
}

func TestInitContainerFailure(t *testing.T) {
	t.Run("Never blocks", func(t *testing.T) {
		svc, fc := newFakeService(t)
		pod := newPod(v1.RestartPolicyNever, ctr("app", "sleep", "infinity"))
		pod.Spec.InitContainers = []v1.Container{sh("first", "exit 1"), sh("second", "exit 0")}
		apply(t, svc, pod)
		fc.SetTime(at(60_000))
		first, second, app := container(t, svc, pod, "first"), container(t, svc, pod, "second"), container(t, svc, pod, "app")
		if first.RestartCount != 0 || first.Waiting != nil || second.Current != nil || app.Current != nil {
			t.Fatalf("a failed init container under Never: %s / %s / %s; want it not restarted and nothing else started", describe(first), describe(second), describe(app))
		}
	})
	t.Run("OnFailure retries", func(t *testing.T) {
		svc, fc := newFakeService(t)
		pod := newPod(v1.RestartPolicyOnFailure, ctr("app", "sleep", "infinity"))
		pod.Spec.InitContainers = []v1.Container{sh("first", "exit 1")}
		apply(t, svc, pod)
		fc.SetTime(at(600))
		first, app := container(t, svc, pod, "first"), container(t, svc, pod, "app")
		if first.RestartCount != 2 || app.Current != nil {
			t.Fatalf("a failing init container under OnFailure after 600ms: %s / %s; want 2 restarts and app not started", describe(first), describe(app))
		}
	})
}

func TestStartFailures(t *testing.T) {
	svc, fc := newFakeService(t)
	missingExe := ctr("exe", "/nonexistent/app")
	missingImage := ctr("img", "sleep", "infinity")
	missingImage.Image = workload.MissingImageDomain + "/app:1"
	pod := newPod(v1.RestartPolicyAlways, missingExe, missingImage)
	v := apply(t, svc, pod)
	for i, want := range []string{remotebackend.ReasonRunContainerError, remotebackend.ReasonErrImagePull} {
		c := v.Containers[i]
		if c.Current != nil || c.Waiting == nil || c.Waiting.Reason != want || c.Waiting.Message == "" || !c.Waiting.Until.Equal(at(200)) {
			t.Fatalf("after the first start: %s; want no run, waiting with %s and a message, retried at 200ms", describe(c), want)
		}
	}
	fc.SetTime(at(200))
	if c := container(t, svc, pod, "exe"); c.RestartCount != 0 || !c.Waiting.Until.Equal(at(600)) {
		t.Fatalf("after the second attempt: %s; want no restart counted and the next attempt at 600ms", describe(c))
	}
	fixed := pod.DeepCopy()
	fixed.Spec.Containers[1].Image = "busybox:1.36"
	v = apply(t, svc, fixed)
	if c := v.Containers[1]; c.Current == nil || c.Current.State != remotebackend.RunRunning || c.Waiting != nil || !c.Current.StartedAt.Equal(at(200)) {
		t.Fatalf("after the image was fixed: %s; want it started at once", describe(c))
	}
}

func TestImageChangeRestartsRunningContainer(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyNever, ctr("app", "sleep", "infinity"))
	apply(t, svc, pod)
	before := container(t, svc, pod, "app")
	fc.SetTime(at(1000))
	changed := pod.DeepCopy()
	changed.Spec.Containers[0].Image = "busybox:1.37"
	c := apply(t, svc, changed).Containers[0]
	if c.Current.ID == before.Current.ID || c.Current.Image != "docker.io/library/busybox:1.37" || c.RestartCount != 1 ||
		c.LastTermination == nil || c.LastTermination.ExitCode != workload.ExitCodeSIGTERM || c.LastTermination.RunID != before.Current.ID {
		t.Fatalf("after the image changed: %s; want the old run stopped (143) and a new one of busybox:1.37, whatever the restart policy", describe(c))
	}
}

func TestApplyRejects(t *testing.T) {
	svc, _ := newFakeService(t)
	noUID := newPod(v1.RestartPolicyAlways, ctr("app"))
	noUID.UID = ""
	dup := newPod(v1.RestartPolicyAlways, ctr("app"))
	dup.Spec.InitContainers = []v1.Container{ctr("app")}
	noName := newPod(v1.RestartPolicyAlways, ctr(""))
	onFailure := v1.ContainerRestartPolicyOnFailure
	rules := newPod(v1.RestartPolicyAlways, ctr("app"))
	rules.Spec.Containers[0].RestartPolicy = &onFailure
	initRules := newPod(v1.RestartPolicyAlways, ctr("app"))
	initRules.Spec.InitContainers = []v1.Container{ctr("setup")}
	initRules.Spec.InitContainers[0].RestartPolicy = &onFailure
	for what, pod := range map[string]*v1.Pod{"a nil pod": nil, "a pod without UID": noUID, "duplicate names": dup, "a container without name": noName,
		"an app container with a restart policy": rules, "an init container with restart policy OnFailure": initRules} {
		if _, err := svc.Apply(context.Background(), pod); !errors.Is(err, remotebackend.ErrInvalidPod) {
			t.Errorf("Apply of %s returned %v, want ErrInvalidPod", what, err)
		}
	}
	good := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	before := apply(t, svc, good)
	renamed := good.DeepCopy()
	renamed.Spec.Containers[0].Name = "other"
	if _, err := svc.Apply(context.Background(), renamed); !errors.Is(err, remotebackend.ErrInvalidPod) {
		t.Errorf("Apply with a renamed container returned %v, want ErrInvalidPod", err)
	}
	if after := view(t, svc, good); after.Containers[0].Current.ID != before.Containers[0].Current.ID || len(after.Containers) != 1 {
		t.Errorf("a rejected resubmission changed the pod: %+v", after)
	}
	if pods, err := svc.List(context.Background()); err != nil || len(pods) != 1 {
		t.Errorf("List after the rejected submissions = %d pods, %v; want only the good one", len(pods), err)
	}
}

func TestDeleteForgets(t *testing.T) {
	svc, _ := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, sh("stubborn", "trap '' TERM; sleep infinity"))
	apply(t, svc, pod)
	if err := svc.Delete(context.Background(), pod.UID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, ok, err := svc.Pod(context.Background(), pod.UID); ok || err != nil {
		t.Fatalf("Pod after Delete = %v, %v; want unknown", ok, err)
	}
	if err := svc.Delete(context.Background(), pod.UID); err != nil {
		t.Fatalf("Delete of an unknown pod: %v, want nil", err)
	}
}

// A Stop waiting for the grace period returns once the pod is deleted.
func TestDeleteEndsWaitingStop(t *testing.T) {
	svc, fc := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, sh("stubborn", "trap '' TERM; sleep infinity"))
	apply(t, svc, pod)
	ch := stopAsync(t, context.Background(), svc, fc, pod, nil, 1)
	if err := svc.Delete(context.Background(), pod.UID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := result(t, "Stop", ch); err != nil {
		t.Fatalf("Stop of a pod deleted while it waited: %v, want nil", err)
	}
}

func TestCancelledContext(t *testing.T) {
	svc, _ := newFakeService(t)
	pod := newPod(v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err1 := svc.Apply(ctx, pod)
	_, _, err2 := svc.Pod(ctx, pod.UID)
	_, err3 := svc.List(ctx)
	err4 := svc.Stop(ctx, pod.UID, nil)
	err5 := svc.Delete(ctx, pod.UID)
	err6 := svc.Run(ctx)
	for i, err := range []error{err1, err2, err3, err4, err5, err6} {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("call %d with a cancelled context returned %v, want context.Canceled", i+1, err)
		}
	}
	if _, ok, _ := svc.Pod(context.Background(), pod.UID); ok {
		t.Error("Apply with a cancelled context submitted the pod")
	}
}

// Run wakes up when something is due and returns once its context is done.
func TestRun(t *testing.T) {
	svc, fc := newFakeService(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	pod := newPod(v1.RestartPolicyAlways, sh("app", "exit 1"))
	apply(t, svc, pod)
	waitForWaiters(t, fc) // Run's timer for the restart at 200ms
	cancel()
	if err := result(t, "Run", done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v after its context was cancelled, want context.Canceled", err)
	}
}
