package fake_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/sim/workload"
)

const termPath = "/dev/termination-log"

// withMessage returns a container running script under sh -c with the
// termination message path set and the given policy.
func withMessage(name, script string, policy v1.TerminationMessagePolicy) v1.Container {
	c := container(name, "sh", "-c", script)
	c.TerminationMessagePath, c.TerminationMessagePolicy = termPath, policy
	return c
}

func TestTerminationMessage(t *testing.T) {
	long := strings.Repeat("x", pkgcontainer.MaxContainerTerminationMessageLength) + "END"
	var manyLines []string
	for i := range 100 {
		manyLines = append(manyLines, fmt.Sprintf("echo line%d", i))
	}
	cases := []struct {
		name string
		c    v1.Container
		kill bool
		want string
	}{
		{"file, exit 0", withMessage("c", "echo -n done > "+termPath+"; exit 0", v1.TerminationMessageReadFile), false, "done"},
		{"file, exit 1", withMessage("c", "echo -n failed > "+termPath+"; exit 1", v1.TerminationMessageReadFile), false, "failed"},
		{"appended", withMessage("c", "echo a > "+termPath+"; echo b >> "+termPath+"; exit 0", v1.TerminationMessageReadFile), false, "a\nb\n"},
		{"written after the exit is not seen", withMessage("c", "exit 2; echo -n late > "+termPath, v1.TerminationMessageReadFile), false, ""},
		{"removed", withMessage("c", "echo -n x > "+termPath+"; rm -f "+termPath+"; exit 1", v1.TerminationMessageReadFile), false, ""},
		{"only stdout, policy File", withMessage("c", "echo -n out; exit 1", v1.TerminationMessageReadFile), false, ""},
		{"log fallback on failure", withMessage("c", "echo -n out; exit 1", v1.TerminationMessageFallbackToLogsOnError), false, "out"},
		{"no log fallback on success", withMessage("c", "echo -n out; exit 0", v1.TerminationMessageFallbackToLogsOnError), false, ""},
		{"file wins over the log", withMessage("c", "echo -n out; echo -n file > "+termPath+"; exit 1", v1.TerminationMessageFallbackToLogsOnError), false, "file"},
		{"no path: the log on failure", func() v1.Container {
			c := withMessage("c", "echo -n out; exit 1", v1.TerminationMessageFallbackToLogsOnError)
			c.TerminationMessagePath = ""
			return c
		}(), false, "out"},
		{"the file's last 4096 bytes", withMessage("c", "echo -n "+long+" > "+termPath+"; exit 0", v1.TerminationMessageReadFile), false, long[len(long)-pkgcontainer.MaxContainerTerminationMessageLength:]},
		{"the log's last 80 lines", withMessage("c", strings.Join(manyLines, "; ")+"; exit 1", v1.TerminationMessageFallbackToLogsOnError), false, func() string {
			var b strings.Builder
			for i := 20; i < 100; i++ {
				fmt.Fprintf(&b, "line%d\n", i)
			}
			return b.String()
		}()},
		{"killed: the file as it was", withMessage("c", "echo -n before > "+termPath+"; sleep 10; echo -n after > "+termPath+"; sleep infinity", v1.TerminationMessageReadFile), true, "before"},
		{"killed: the log fallback (exit 143)", withMessage("c", "echo -n out; sleep infinity & wait", v1.TerminationMessageFallbackToLogsOnError), true, "out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			pod := newPod("term", v1.RestartPolicyNever, tc.c)
			f.mustSync(pod)
			if tc.kill {
				f.clock.Step(5 * time.Second)
				if err := f.kill(pod, ptr(int64(0))); err != nil {
					t.Fatalf("KillPod: %v", err)
				}
			}
			c := f.current(pod, "c")
			if c == nil || c.State != pkgcontainer.ContainerStateExited {
				t.Fatalf("after SyncPod (and KillPod: %t) container c (%q) is %+v, want exited", tc.kill, tc.c.Command[2], c)
			}
			if c.Message != tc.want {
				t.Errorf("container c (%q, policy %s) exited %d with message %q, want %q", tc.c.Command[2], tc.c.TerminationMessagePolicy, c.ExitCode, c.Message, tc.want)
			}
			var ps v1.PodStatus
			f.p.RefreshPodStatus(pod, &ps)
			if term := ps.ContainerStatuses[0].State.Terminated; term == nil || term.Message != tc.want {
				t.Errorf("RefreshPodStatus reports c %+v, want Terminated with message %q", ps.ContainerStatuses[0].State, tc.want)
			}
		})
	}
}

func TestEnvironmentExpansion(t *testing.T) {
	env := func(c v1.Container, kv ...string) v1.Container {
		for i := 0; i+1 < len(kv); i += 2 {
			c.Env = append(c.Env, v1.EnvVar{Name: kv[i], Value: kv[i+1]})
		}
		return c
	}
	cases := []struct {
		c    v1.Container
		want int
	}{
		{env(container("plain", "sh", "-c", "exit $CODE"), "CODE", "3"), 3},
		{env(container("command", "sh", "-c", "exit $(CODE)"), "CODE", "4"), 4},
		{env(container("composed", "sh", "-c", "exit $SUM"), "BASE", "5", "SUM", "$(BASE)"), 5},
		{env(container("escaped", "sh", "-c", "exit $$CODE"), "CODE", "6"), 6},
		{env(v1.Container{Name: "args", Image: "busybox", Command: []string{"sh", "-c"}, Args: []string{"exit $(CODE)"}}, "CODE", "7"), 7},
		{container("unset", "sh", "-c", "exit $CODE"), 0},
	}
	f := newFixture(t)
	var cs []v1.Container
	for _, tc := range cases {
		cs = append(cs, tc.c)
	}
	pod := newPod("env", v1.RestartPolicyNever, cs...)
	f.mustSync(pod)
	for _, tc := range cases {
		c := f.current(pod, tc.c.Name)
		if c == nil || c.State != pkgcontainer.ContainerStateExited || c.ExitCode != tc.want {
			t.Errorf("container %s (%q %q, env %v) is %+v, want exited %d", tc.c.Name, tc.c.Command, tc.c.Args, tc.c.Env, c, tc.want)
		}
	}
}

func TestImagePullPolicyNever(t *testing.T) {
	for _, opts := range [][]fake.Option{nil, {fake.WithKubeletSemantics()}} {
		t.Run(fmt.Sprintf("options=%d", len(opts)), func(t *testing.T) {
			f := newFixture(t, opts...)
			missing := container("app", "sleep", "infinity")
			missing.Image, missing.ImagePullPolicy = workload.MissingImageDomain+"/app:1", v1.PullNever
			present := container("other", "sleep", "infinity")
			present.ImagePullPolicy = v1.PullNever
			pod := newPod("never", v1.RestartPolicyAlways, missing, present)
			for attempt := range 3 {
				err := f.sync(pod)
				if !errors.Is(err, fake.ErrImageNeverPull) || !errors.Is(err, workload.ErrImageNeverPull) {
					t.Fatalf("SyncPod %d = %v, want ErrImageNeverPull", attempt+1, err)
				}
				item, ok := f.rc.Get(pod.UID, "app")
				want := fmt.Sprintf("Container image %q is not present with pull policy of Never", missing.Image)
				if !ok || !errors.Is(item.Err, fake.ErrImageNeverPull) || item.Message != want {
					t.Fatalf("SyncPod %d: ReasonCache entry of app %+v (found %t), want ErrImageNeverPull with message %q", attempt+1, item, ok, want)
				}
				if c := f.current(pod, "app"); c != nil {
					t.Fatalf("SyncPod %d created app %+v; with pull policy Never and a missing image nothing is created", attempt+1, c)
				}
				if c := f.current(pod, "other"); !running(c) {
					t.Fatalf("SyncPod %d: container other (image present, Never) is %+v, want running", attempt+1, c)
				}
				f.clock.Step(time.Minute) // past any back-off: Never is never retried as a pull
			}
			var ps v1.PodStatus
			f.p.RefreshPodStatus(pod, &ps)
			for _, cs := range ps.ContainerStatuses {
				if cs.Name == "app" && (cs.State.Waiting == nil || cs.State.Waiting.Reason != "ErrImageNeverPull") {
					t.Errorf("RefreshPodStatus reports app %+v, want Waiting ErrImageNeverPull", cs.State)
				}
			}
		})
	}
}
