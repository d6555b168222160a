package simprovider_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kri-kit/testkit/vk/simprovider"
)

// The behaviours that moved toward the kubelet's when simprovider became a
// facade over workload.Pod (issue 51): each test fails on the provider's
// own model of before.

func podOf(cs ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"},
		Spec:       corev1.PodSpec{Containers: cs, RestartPolicy: corev1.RestartPolicyAlways},
	}
}

func sh(script string) corev1.Container {
	return corev1.Container{Name: "app", Image: "busybox", Command: []string{"sh", "-c", script}}
}

// status runs pod on a sync provider in a synctest bubble and answers its
// status after each of the waits.
func status(t *testing.T, pod *corev1.Pod, waits ...time.Duration) []*corev1.PodStatus {
	t.Helper()
	var out []*corev1.PodStatus
	synctest.Test(t, func(t *testing.T) {
		p := simprovider.New()
		defer p.Close()
		ctx := context.Background()
		if err := p.CreatePod(ctx, pod); err != nil {
			t.Fatal(err)
		}
		for _, d := range waits {
			time.Sleep(d)
			synctest.Wait()
			st, err := p.GetPodStatus(ctx, pod.Namespace, pod.Name)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, st)
		}
	})
	return out
}

// false exits 1 (it ran until stopped: the old parser skipped what it did
// not know).
func TestFalseExitsOne(t *testing.T) {
	pod := podOf(corev1.Container{Name: "app", Image: "busybox", Command: []string{"false"}})
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	st := status(t, pod, time.Second)[0]
	term := st.ContainerStatuses[0].State.Terminated
	if term == nil || term.ExitCode != 1 || st.Phase != corev1.PodFailed {
		t.Errorf("false: state %+v, phase %s; want terminated with exit code 1, Failed", st.ContainerStatuses[0].State, st.Phase)
	}
}

// The crash-loop back-off's message names the pod as the kubelet's does
// (pod=NAME_NAMESPACE(UID)), and the back-off starts again from 10s after
// a run that outlasted twice its maximum (it doubled for ever).
func TestCrashLoopBackOffAsTheKubelet(t *testing.T) {
	st := status(t, podOf(sh("sleep 700; exit 1")), 701*time.Second, 710*time.Second)
	const want = "back-off 10s restarting failed container=app pod=web_default(uid-1)"
	for i, s := range st {
		w := s.ContainerStatuses[0].State.Waiting
		if w == nil || w.Reason != "CrashLoopBackOff" || w.Message != want {
			t.Errorf("after exit %d: state %+v; want Waiting CrashLoopBackOff %q", i+1, s.ContainerStatuses[0].State, want)
		}
	}
}

// An image under kri.invalid/ cannot be pulled (every pull succeeded).
func TestImageUnderKriInvalidFailsToPull(t *testing.T) {
	c := sh("sleep infinity")
	c.Image = "kri.invalid/app:1"
	st := status(t, podOf(c), time.Second)[0]
	w := st.ContainerStatuses[0].State.Waiting
	if w == nil || w.Reason != "ErrImagePull" || st.Phase != corev1.PodPending {
		t.Errorf("image %s: state %+v, phase %s; want Waiting ErrImagePull, Pending", c.Image, st.ContainerStatuses[0].State, st.Phase)
	}
}

// An HTTP readiness probe of a port nothing listens on fails (any probe
// but exec test -e passed).
func TestHTTPReadinessProbeOfNoServerFails(t *testing.T) {
	c := corev1.Container{Name: "app", Image: "registry.k8s.io/pause:3.10", Command: []string{"/pause"}}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1, TimeoutSeconds: 1}
	st := status(t, podOf(c), 5*time.Second)[0]
	if cs := st.ContainerStatuses[0]; cs.State.Running == nil || cs.Ready {
		t.Errorf("HTTP readiness probe of port 8080, nothing listening: state %+v, ready %v; want running, not ready", cs.State, cs.Ready)
	}
}

// A container whose postStart hook fails is killed as the kubelet kills
// it: SIGTERM, which a container ignoring it outlives until the grace
// period ends (it was killed at once).
func TestFailedPostStartKillHonoursTheGracePeriod(t *testing.T) {
	c := sh("trap '' TERM; sleep infinity & wait")
	c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "exit 1"}}}}
	pod := podOf(c)
	pod.Spec.TerminationGracePeriodSeconds = new(int64(5))
	st := status(t, pod, time.Second, 5*time.Second)
	if s := st[0].ContainerStatuses[0].State; s.Running == nil {
		t.Errorf("1s after its postStart hook failed: state %+v; want running (SIGTERM ignored, grace period 5s)", s)
	}
	s := st[1].ContainerStatuses[0]
	if w := s.State.Waiting; w == nil || w.Reason != "PostStartHookError" || s.LastTerminationState.Terminated == nil || s.LastTerminationState.Terminated.ExitCode != 137 {
		t.Errorf("6s after its postStart hook failed: state %+v, last %+v; want Waiting PostStartHookError after exit code 137", s.State, s.LastTerminationState)
	}
}

// DeletePod gives a running init container its SIGTERM handler's delay
// (it ended it at once).
func TestDeletedInitContainerTakesItsHandlersDelay(t *testing.T) {
	pod := podOf(corev1.Container{Name: "main", Image: "busybox", Command: []string{"sleep", "infinity"}})
	init := sh("trap 'sleep 5; exit 3' TERM; sleep infinity & wait")
	init.Name = "init"
	pod.Spec.InitContainers = []corev1.Container{init}
	synctest.Test(t, func(t *testing.T) {
		p := simprovider.NewAsync()
		defer p.Close()
		ctx := context.Background()
		var mu sync.Mutex
		var last *corev1.Pod
		p.NotifyPods(ctx, func(p *corev1.Pod) { mu.Lock(); last = p; mu.Unlock() })
		_ = p.CreatePod(ctx, pod)
		time.Sleep(time.Second)
		_ = p.DeletePod(ctx, pod)
		synctest.Wait()
		mu.Lock()
		if s := last.Status.InitContainerStatuses[0].State; s.Running == nil {
			t.Errorf("just after DeletePod: init container %+v; want running (its handler sleeps 5s)", s)
		}
		mu.Unlock()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if s := last.Status.InitContainerStatuses[0].State; s.Terminated == nil || s.Terminated.ExitCode != 3 {
			t.Errorf("5s after DeletePod: init container %+v; want terminated with exit code 3", s)
		}
	})
}
