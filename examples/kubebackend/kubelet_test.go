package kubebackend_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"

	"github.com/kri-kit/testkit/examples/kubebackend"
	"github.com/kri-kit/testkit/sim/workload"
)

// The simulated kubelet on a fake clock: each test steps the clock and
// reads what the Kubelet wrote through the (fake) API.

func TestKubeletRunsInitContainersInOrderWithWholeSecondTimes(t *testing.T) {
	e := newSim(t)
	p := pod("init", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	p.Spec.InitContainers = []v1.Container{ctr("first", "sh", "-c", "sleep 2; exit 0"), ctr("second", "sh", "-c", "sleep 1; exit 0")}
	e.create(p)
	got := e.waitFor("init", "first running, app waiting", func(p *v1.Pod) bool {
		return running(p, "first") && waiting(p, "second", "PodInitializing") && waiting(p, "app", "PodInitializing")
	})
	if got.Status.Phase != v1.PodPending {
		t.Errorf("phase while an init container runs is %s, want Pending: %s", got.Status.Phase, describe(got))
	}
	e.step(2 * time.Second)
	e.waitFor("init", "first completed, second running", func(p *v1.Pod) bool {
		return terminated(p, "first", 0) && running(p, "second") && !running(p, "app")
	})
	e.step(time.Second)
	got = e.waitFor("init", "app running", func(p *v1.Pod) bool { return terminated(p, "second", 0) && running(p, "app") })
	if got.Status.Phase != v1.PodRunning || got.Status.PodIP == "" || got.Status.StartTime == nil {
		t.Errorf("want phase Running with a pod IP and a start time: %s", describe(got))
	}
	first := status(got, "first").State.Terminated
	for what, ts := range map[string]metav1.Time{
		"first's startedAt": first.StartedAt, "first's finishedAt": first.FinishedAt,
		"app's startedAt": status(got, "app").State.Running.StartedAt, "startTime": *got.Status.StartTime,
	} {
		if ts.Nanosecond() != 0 {
			t.Errorf("%s is %s, want whole seconds as the API keeps them", what, ts.Format(time.RFC3339Nano))
		}
	}
	if want := metav1.NewTime(t0.Add(2 * time.Second).Truncate(time.Second)); !first.FinishedAt.Equal(&want) {
		t.Errorf("first finished at %s, want %s (started at %s, ran 2s)", first.FinishedAt, want, t0)
	}
}

func TestKubeletRestartsWithBackOff(t *testing.T) {
	e := newSim(t)
	e.create(pod("crash", v1.RestartPolicyAlways, ctr("app", "sh", "-c", "exit 1")))
	got := e.waitFor("crash", "app in back-off after its first exit", func(p *v1.Pod) bool { return waiting(p, "app", "CrashLoopBackOff") })
	if cs := status(got, "app"); cs.RestartCount != 0 || cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 1 {
		t.Fatalf("after the first exit want RestartCount 0 and the exit 1 as last termination: %s", describe(got))
	}
	// 200ms back-off, then 400ms: the second restart is not due 200ms
	// after the first.
	e.step(kubebackend.DefaultBackOffInitial)
	first := e.waitFor("crash", "the first restart", func(p *v1.Pod) bool {
		cs := status(p, "app")
		return cs.RestartCount == 1 && waiting(p, "app", "CrashLoopBackOff")
	})
	e.step(kubebackend.DefaultBackOffInitial)
	time.Sleep(50 * time.Millisecond)
	if cs := status(e.get("crash"), "app"); cs.RestartCount != 1 {
		t.Fatalf("restarted again 200ms after the first restart; want a back-off of 400ms: %s", describe(e.get("crash")))
	}
	e.step(kubebackend.DefaultBackOffInitial)
	got = e.waitFor("crash", "the second restart", func(p *v1.Pod) bool { return status(p, "app").RestartCount == 2 })
	// In back-off the kubelet shows the newest run as last termination,
	// with its ID as the container's.
	if cs, was := status(got, "app"), status(first, "app"); cs.ContainerID == "" || cs.ContainerID == was.ContainerID ||
		cs.LastTerminationState.Terminated.ContainerID != cs.ContainerID {
		t.Errorf("want a new run, shown as last termination with its ID, after %s: %s", describe(first), describe(got))
	}
}

func TestKubeletRestartPolicies(t *testing.T) {
	e := newSim(t)
	e.create(pod("never", v1.RestartPolicyNever, ctr("bad", "sh", "-c", "exit 3")))
	e.create(pod("onfailure", v1.RestartPolicyOnFailure, ctr("good", "sh", "-c", "exit 0")))
	got := e.waitFor("never", "bad terminated", func(p *v1.Pod) bool { return terminated(p, "bad", 3) })
	if got.Status.Phase != v1.PodFailed {
		t.Errorf("a pod whose only container exited 3 under Never is %s, want Failed", got.Status.Phase)
	}
	e.waitFor("onfailure", "good terminated", func(p *v1.Pod) bool { return terminated(p, "good", 0) })
	time.Sleep(50 * time.Millisecond)
	if e.clock.HasWaiters() {
		t.Errorf("the Kubelet waits for a change although no container will start again")
	}
	if got = e.get("onfailure"); status(got, "good").RestartCount != 0 || got.Status.Phase != v1.PodSucceeded {
		t.Errorf("a container that exited 0 under OnFailure was restarted, or the pod is not Succeeded: %s", describe(got))
	}
}

func TestKubeletImagePullFailures(t *testing.T) {
	e := newSim(t)
	p := pod("pull", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	p.Spec.Containers[0].Image = workload.MissingImageDomain + "/x/missing:1"
	e.create(p)
	e.waitFor("pull", "ErrImagePull", func(p *v1.Pod) bool { return waiting(p, "app", "ErrImagePull") })
	e.step(kubebackend.DefaultBackOffInitial / 2)
	got := e.waitFor("pull", "ImagePullBackOff half-way to the next attempt", func(p *v1.Pod) bool { return waiting(p, "app", "ImagePullBackOff") })
	if cs := status(got, "app"); cs.ContainerID != "" || cs.RestartCount != 0 {
		t.Errorf("a container whose image never pulled has an ID or restarts: %s", describe(got))
	}
	// The simulated kubelet writes the pod's status too: an Update that
	// meets a newer resourceVersion is retried on the pod as it is then.
	pods := e.client.CoreV1().Pods(testNS)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(e.ctx, "pull", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.Containers[0].Image = "busybox:1.36"
		_, err = pods.Update(e.ctx, cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("pull", "app running once its image is fixed, without waiting for the back-off", func(p *v1.Pod) bool { return running(p, "app") })
}

func TestKubeletGracefulDeletion(t *testing.T) {
	e := newSim(t)
	e.create(pod("stop", v1.RestartPolicyAlways, ctr("honours", "sleep", "infinity"), ctr("ignores", "sh", "-c", "trap '' TERM; sleep infinity")))
	e.waitFor("stop", "both running", func(p *v1.Pod) bool { return running(p, "honours") && running(p, "ignores") })
	if err := e.client.CoreV1().Pods(testNS).Delete(e.ctx, "stop", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(5))}); err != nil {
		t.Fatal(err)
	}
	got := e.waitFor("stop", "honours exited 143 on SIGTERM", func(p *v1.Pod) bool { return terminated(p, "honours", workload.ExitCodeSIGTERM) })
	if got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 5 || !running(got, "ignores") {
		t.Fatalf("want the pod being deleted with grace 5 and ignores still running: %s", describe(got))
	}
	e.step(4 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if got = e.get("stop"); got == nil || !running(got, "ignores") {
		t.Fatalf("ignores was stopped 4s into a 5s grace period: %s", describe(got))
	}
	e.step(time.Second)
	e.waitFor("stop", "the pod gone once ignores was killed", func(p *v1.Pod) bool { return p == nil })
	var final *v1.Pod
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" {
			if u, ok := a.(interface{ GetObject() runtime.Object }); ok {
				if p, ok := u.GetObject().(*v1.Pod); ok && p.Name == "stop" {
					final = p
				}
			}
		}
	}
	if !terminated(final, "ignores", workload.ExitCodeSIGKILL) {
		t.Errorf("the last status written shows ignores not killed (137): %s", describe(final))
	}
}

func TestKubeletDropsPodsDeletedAtOnce(t *testing.T) {
	e := newSim(t)
	e.create(pod("gone", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity")))
	e.waitFor("gone", "app running", func(p *v1.Pod) bool { return running(p, "app") })
	if err := e.client.CoreV1().Pods(testNS).Delete(e.ctx, "gone", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("gone", "the pod gone at once", func(p *v1.Pod) bool { return p == nil })
	// A pod of another node is not played.
	other := pod("other", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	other.Spec.NodeName = "node-2"
	e.create(other)
	time.Sleep(50 * time.Millisecond)
	if got := e.get("other"); len(got.Status.ContainerStatuses) != 0 {
		t.Errorf("the Kubelet of %s played a pod of node-2: %s", testNode, describe(got))
	}
}

func TestNewKubeletRejectsBadOptions(t *testing.T) {
	client := kubebackend.NewFakeClientset()
	for name, opts := range map[string]kubebackend.KubeletOptions{
		"no namespace": {NodeName: "n"},
		"no node":      {Namespace: "ns"},
		"bad node IP":  {Namespace: "ns", NodeName: "n", NodeIP: "not-an-ip"},
		"tiny backoff": {Namespace: "ns", NodeName: "n", BackOff: kubebackend.BackOff{Initial: time.Microsecond}},
		"max < init":   {Namespace: "ns", NodeName: "n", BackOff: kubebackend.BackOff{Initial: time.Second, Max: time.Millisecond}},
	} {
		if k, err := kubebackend.NewKubelet(client, opts); err == nil {
			t.Errorf("%s: NewKubelet(%+v) = %v, nil; want an error", name, opts, k)
		}
	}
	if k, err := kubebackend.NewKubelet(nil, kubebackend.KubeletOptions{Namespace: "ns", NodeName: "n"}); err == nil {
		t.Errorf("NewKubelet(nil client) = %v, nil; want an error", k)
	}
}
