package fake_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
)

// t0 is where every fake clock of these tests starts.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fixture is a fake provider on a fake clock with the ReasonCache its
// caller hands to SyncPod.
type fixture struct {
	t     *testing.T
	clock *clocktesting.FakeClock
	p     *fake.PodProvider
	rc    *kri.ReasonCache
}

func newFixture(t *testing.T, opts ...fake.Option) *fixture {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	return &fixture{
		t:     t,
		clock: clk,
		p:     fake.NewPodProvider(append([]fake.Option{fake.WithClock(clk)}, opts...)...),
		rc:    kri.NewReasonCache(),
	}
}

// container returns a container spec running the given command.
func container(name string, command ...string) v1.Container {
	return v1.Container{Name: name, Image: "busybox:1.36", Command: command}
}

// newPod returns a pod in namespace default with the given containers.
func newPod(name string, policy v1.RestartPolicy, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{RestartPolicy: policy, Containers: containers},
	}
}

// status returns GetPodStatus of pod, failing the test on error.
func (f *fixture) status(pod *v1.Pod) *pkgcontainer.PodStatus {
	f.t.Helper()
	st, err := f.p.GetPodStatus(context.Background(), pod)
	if err != nil {
		f.t.Fatalf("GetPodStatus(%s): %v", pod.Name, err)
	}
	return st
}

// sync does what a pod worker does: GetPodStatus, then SyncPod with it.
func (f *fixture) sync(pod *v1.Pod) error {
	f.t.Helper()
	return f.p.SyncPod(context.Background(), pod, f.status(pod), f.rc)
}

// mustSync is sync that fails the test on error.
func (f *fixture) mustSync(pod *v1.Pod) {
	f.t.Helper()
	if err := f.sync(pod); err != nil {
		f.t.Fatalf("SyncPod(%s): %v", pod.Name, err)
	}
}

// current returns the status of the newest instance of container name.
func (f *fixture) current(pod *v1.Pod, name string) *pkgcontainer.Status {
	f.t.Helper()
	return f.status(pod).FindContainerStatusByName(name)
}

// kill runs KillPod with the running pod built from the pod's status.
func (f *fixture) kill(pod *v1.Pod, grace *int64) error {
	f.t.Helper()
	running := pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, f.status(pod))
	return f.p.KillPod(context.Background(), pod, running, grace)
}

// killAsync runs kill in a goroutine; the returned channel yields its error.
func (f *fixture) killAsync(pod *v1.Pod, grace *int64) <-chan error {
	f.t.Helper()
	running := pkgcontainer.ConvertPodStatusToRunningPod(fake.RuntimeName, f.status(pod))
	done := make(chan error, 1)
	go func() { done <- f.p.KillPod(context.Background(), pod, running, grace) }()
	return done
}

// waitTerminating blocks until container name of pod ignores a SIGTERM that
// KillPod sent: KillPod then waits on the clock for the grace period.
func (f *fixture) waitTerminating(pod *v1.Pod, name string) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := f.p.WaitFor(ctx, pod.Namespace+"/"+pod.Name, func(s fake.PodSnapshot, ok bool) bool {
		c, _ := s.Container(name)
		return c.Terminating
	})
	if err != nil {
		f.t.Fatalf("container %s never started terminating: %v", name, err)
	}
}

func running(st *pkgcontainer.Status) bool {
	return st != nil && st.State == pkgcontainer.ContainerStateRunning
}

func ptr[T any](v T) *T { return &v }

func describe(st *pkgcontainer.PodStatus) string {
	var b strings.Builder
	for _, sb := range st.SandboxStatuses {
		fmt.Fprintf(&b, "sandbox(%s %s attempt=%d)", sb.Id, sb.State, sb.Metadata.GetAttempt())
	}
	for _, c := range st.ContainerStatuses {
		fmt.Fprintf(&b, " %s(%s %s exit=%d restarts=%d started=%s finished=%s)", c.Name, c.ID.ID, c.State, c.ExitCode, c.RestartCount,
			c.StartedAt.Format(time.RFC3339Nano), c.FinishedAt.Format(time.RFC3339Nano))
	}
	return b.String()
}

func describePods(pods []*pkgcontainer.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&b, "%s[", p.Name)
		for _, c := range p.Containers {
			fmt.Fprintf(&b, " %s:%s", c.Name, c.State)
		}
		b.WriteString(" ] ")
	}
	return b.String()
}

func podNames(pods []*pkgcontainer.Pod) []string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	return names
}

func equalStrings(a, b []string) bool { return slices.Equal(a, b) }

// recv waits up to 10s for the result of a blocking call, so that a broken
// fake fails the test instead of hanging it.
func recv(t *testing.T, what string, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return within 10s", what)
		return nil
	}
}
