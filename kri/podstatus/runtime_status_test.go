package podstatus_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
)

// The tests of RuntimeStatus. Helpers are prefixed rs so that they do not
// collide with the other test files of the package.

var rsT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rsAt is rsT0 plus s whole seconds: the API keeps whole seconds.
func rsAt(s int) time.Time { return rsT0.Add(time.Duration(s) * time.Second) }

func rsID(id string) pkgcontainer.ContainerID {
	return pkgcontainer.ContainerID{Type: "containerd", ID: id}
}

func rsRunning(name, id string, restarts, started int) *pkgcontainer.Status {
	return &pkgcontainer.Status{ID: rsID(id), Name: name, Image: "busybox:1.36", ImageRef: "sha256:b5", ImageID: "sha256:b5",
		State: pkgcontainer.ContainerStateRunning, RestartCount: restarts, CreatedAt: rsAt(started), StartedAt: rsAt(started)}
}

func rsExited(name, id string, restarts, started, finished, code int, reason string) *pkgcontainer.Status {
	return &pkgcontainer.Status{ID: rsID(id), Name: name, Image: "busybox:1.36", ImageRef: "sha256:b5", ImageID: "sha256:b5",
		State: pkgcontainer.ContainerStateExited, RestartCount: restarts, CreatedAt: rsAt(started), StartedAt: rsAt(started),
		FinishedAt: rsAt(finished), ExitCode: code, Reason: reason}
}

// rsShift moves the times of s by d: a runtime keeps sub-second times,
// which the API truncates.
func rsShift(s *pkgcontainer.Status, d time.Duration) *pkgcontainer.Status {
	s.CreatedAt, s.StartedAt = s.CreatedAt.Add(d), s.StartedAt.Add(d)
	if !s.FinishedAt.IsZero() {
		s.FinishedAt = s.FinishedAt.Add(d)
	}
	return s
}

func rsPod(policy v1.RestartPolicy, init []string, app ...string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "backend", Name: "web-1a2b", UID: "backend-uid", CreationTimestamp: metav1.NewTime(rsAt(-5))},
		Spec:       v1.PodSpec{RestartPolicy: policy},
	}
	for _, n := range init {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: n, Image: "busybox:1.36"})
	}
	for _, n := range app {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: n, Image: "busybox:1.36"})
	}
	return p
}

func rsReasons(pod *v1.Pod, failures map[string]string) *kri.ReasonCache {
	rc := kri.NewReasonCache()
	for name, reason := range failures {
		r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, name)
		r.Fail(errors.New(reason), "failed: "+reason)
		rc.Update(pod.UID, pkgcontainer.PodSyncResult{SyncResults: []*pkgcontainer.SyncResult{r}})
	}
	return rc
}

// rsWire is s as an API server keeps it: serialised and read back, so that
// timestamps are whole seconds.
func rsWire(t *testing.T, s v1.PodStatus) v1.PodStatus {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("marshal %+v: %v", s, err)
	}
	var out v1.PodStatus
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	return out
}

// rsNewestFirst returns the instances of name sorted as the kubelet sorts
// them, newest first.
func rsNewestFirst(st *pkgcontainer.PodStatus, name string) []*pkgcontainer.Status {
	var out []*pkgcontainer.Status
	for _, c := range st.ContainerStatuses {
		if c.Name == name {
			out = append(out, c)
		}
	}
	sort.Sort(sort.Reverse(pkgcontainer.SortContainerStatusesByCreationTime(out)))
	return out
}

// TestRuntimeStatusInvertsGenerate: for the API status Generate makes of a
// runtime status (what a backend cluster's kubelet reports), RuntimeStatus
// gives back a runtime status of which Generate makes the same API status,
// once serialised (whole seconds), with the same ReasonCache and no previous
// status. The kubelet's sort by CreatedAt puts the instance the API status
// names first.
func TestRuntimeStatusInvertsGenerate(t *testing.T) {
	cases := []struct {
		name      string
		pod       *v1.Pod
		instances []*pkgcontainer.Status
		failures  map[string]string // container -> Waiting reason from the ReasonCache
		ips       []string
		// instances RuntimeStatus should report (fewer than the
		// runtime had when older ones are beyond what the API keeps).
		wantInstances int
	}{
		{
			name:          "one running container with dual-stack IPs",
			pod:           rsPod(v1.RestartPolicyAlways, nil, "app"),
			instances:     []*pkgcontainer.Status{rsRunning("app", "c1", 0, 3)},
			ips:           []string{"10.0.0.7", "fd00::7"},
			wantInstances: 1,
		},
		{
			name:          "exited 0 and not restarted (Never)",
			pod:           rsPod(v1.RestartPolicyNever, nil, "app"),
			instances:     []*pkgcontainer.Status{rsExited("app", "c1", 0, 3, 5, 0, "Completed")},
			wantInstances: 1,
		},
		{
			name: "OOM-killed with a message, next to a running container",
			pod:  rsPod(v1.RestartPolicyNever, nil, "app", "side"),
			instances: []*pkgcontainer.Status{
				func() *pkgcontainer.Status {
					s := rsExited("app", "c1", 0, 3, 9, 137, "OOMKilled")
					s.Message = "memory limit 64Mi"
					return s
				}(),
				rsRunning("side", "s1", 0, 3),
			},
			wantInstances: 2,
		},
		{
			name: "restarted once, running, the last termination with its exit code",
			pod:  rsPod(v1.RestartPolicyAlways, nil, "app"),
			instances: []*pkgcontainer.Status{
				rsExited("app", "c1", 0, 3, 4, 1, "Error"),
				rsRunning("app", "c2", 1, 4),
			},
			wantInstances: 2,
		},
		{
			name: "restarted within the second the previous run started and finished in",
			pod:  rsPod(v1.RestartPolicyAlways, nil, "app"),
			instances: []*pkgcontainer.Status{
				rsShift(rsExited("app", "c1", 0, 3, 3, 0, "Completed"), 100*time.Millisecond),
				rsShift(rsRunning("app", "c2", 1, 3), 300*time.Millisecond),
			},
			wantInstances: 2,
		},
		{
			name: "third run exited in the same second as the second: both terminated",
			pod:  rsPod(v1.RestartPolicyOnFailure, nil, "app"),
			instances: []*pkgcontainer.Status{
				rsExited("app", "c1", 0, 1, 2, 1, "Error"),
				rsShift(rsExited("app", "c2", 1, 2, 2, 2, "Error"), 100*time.Millisecond),
				rsShift(rsExited("app", "c3", 2, 2, 2, 0, "Completed"), 200*time.Millisecond),
			},
			wantInstances: 2, // the API keeps two runs
		},
		{
			name: "crash loop: waiting in back-off, the newest run as last termination",
			pod:  rsPod(v1.RestartPolicyAlways, nil, "app"),
			instances: []*pkgcontainer.Status{
				rsExited("app", "c1", 0, 1, 1, 1, "Error"),
				rsExited("app", "c2", 1, 2, 2, 1, "Error"),
			},
			failures:      map[string]string{"app": "CrashLoopBackOff"},
			wantInstances: 1, // the API shows only the newest run then
		},
		{
			name:          "image pull failing: waiting, no instance",
			pod:           rsPod(v1.RestartPolicyAlways, nil, "app"),
			failures:      map[string]string{"app": "ErrImagePull"},
			wantInstances: 0,
		},
		{
			name:          "image pull backing off next to a running container",
			pod:           rsPod(v1.RestartPolicyAlways, nil, "app", "pull"),
			instances:     []*pkgcontainer.Status{rsRunning("app", "c1", 0, 2)},
			failures:      map[string]string{"pull": "ImagePullBackOff"},
			wantInstances: 1,
		},
		{
			name: "init containers: the first completed, the second running, the app waiting",
			pod:  rsPod(v1.RestartPolicyAlways, []string{"init1", "init2"}, "app"),
			instances: []*pkgcontainer.Status{
				rsExited("init1", "i1", 0, 1, 2, 0, "Completed"),
				rsRunning("init2", "i2", 0, 2),
			},
			wantInstances: 2,
		},
		{
			name: "init container failed and restarted, then all completed and the app running",
			pod:  rsPod(v1.RestartPolicyOnFailure, []string{"init"}, "app"),
			instances: []*pkgcontainer.Status{
				rsExited("init", "i1", 0, 1, 1, 1, "Error"),
				rsExited("init", "i2", 1, 2, 2, 0, "Completed"),
				rsRunning("app", "c1", 0, 2),
			},
			wantInstances: 3,
		},
		{
			name: "a created instance after a restart",
			pod:  rsPod(v1.RestartPolicyAlways, nil, "app"),
			instances: []*pkgcontainer.Status{
				rsExited("app", "c1", 0, 1, 4, 1, "Error"),
				{ID: rsID("c2"), Name: "app", Image: "busybox:1.36", ImageRef: "sha256:b5", ImageID: "sha256:b5",
					State: pkgcontainer.ContainerStateCreated, RestartCount: 1, CreatedAt: rsAt(4)},
			},
			wantInstances: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reasons := rsReasons(tc.pod, tc.failures)
			runtime := &pkgcontainer.PodStatus{ID: tc.pod.UID, Name: tc.pod.Name, Namespace: tc.pod.Namespace, IPs: tc.ips, ContainerStatuses: tc.instances}
			api := rsWire(t, podstatus.Generate(tc.pod, runtime, reasons))

			backend := tc.pod.DeepCopy()
			backend.Status = api
			before := backend.DeepCopy()
			got, err := podstatus.RuntimeStatus(backend)
			if err != nil {
				t.Fatalf("RuntimeStatus of %+v: %v", api, err)
			}
			if diff := cmp.Diff(before, backend); diff != "" {
				t.Errorf("RuntimeStatus modified the pod (-before +after):\n%s", diff)
			}
			if got.ID != tc.pod.UID || got.Name != tc.pod.Name || got.Namespace != tc.pod.Namespace {
				t.Errorf("RuntimeStatus reports pod %s %s/%s, want %s %s/%s", got.ID, got.Namespace, got.Name, tc.pod.UID, tc.pod.Namespace, tc.pod.Name)
			}
			if len(got.ContainerStatuses) != tc.wantInstances {
				t.Errorf("RuntimeStatus reports %d instances, want %d: %s", len(got.ContainerStatuses), tc.wantInstances, rsDescribe(got))
			}
			again := rsWire(t, podstatus.Generate(tc.pod, got, reasons))
			if diff := cmp.Diff(api, again); diff != "" {
				t.Errorf("Generate(RuntimeStatus(status)) differs from status (-status +round trip):\n%s\nruntime status: %s", diff, rsDescribe(got))
			}
			for _, cs := range append(append([]v1.ContainerStatus{}, api.InitContainerStatuses...), api.ContainerStatuses...) {
				if cs.ContainerID == "" {
					continue
				}
				if first := rsNewestFirst(got, cs.Name); len(first) == 0 || first[0].ID.String() != cs.ContainerID {
					t.Errorf("sorted by CreatedAt as the kubelet sorts them, the newest instance of %s is not %s: %s", cs.Name, cs.ContainerID, rsDescribe(got))
				}
			}
		})
	}
}

// TestRuntimeStatusInstancesKeepTheirTimes follows a container that restarts
// three times within one second, as a backend's API server shows it after
// every change: every instance keeps the timestamps and restart count it
// was first reported with, each is created after the one it replaced and not
// before that one finished, and StartedAt and FinishedAt are not before
// CreatedAt (KRI-POD-038 and 053).
func TestRuntimeStatusInstancesKeepTheirTimes(t *testing.T) {
	pod := rsPod(v1.RestartPolicyAlways, nil, "app")
	term := func(id string, code int32) *v1.ContainerStateTerminated {
		return &v1.ContainerStateTerminated{ContainerID: "containerd://" + id, ExitCode: code, Reason: "Error",
			StartedAt: metav1.NewTime(rsAt(7)), FinishedAt: metav1.NewTime(rsAt(7))}
	}
	running := func(id string) v1.ContainerState {
		return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(rsAt(7))}}
	}
	status := func(id string, restarts int32, state v1.ContainerState, last *v1.ContainerStateTerminated) v1.ContainerStatus {
		return v1.ContainerStatus{Name: "app", Image: "busybox:1.36", ContainerID: "containerd://" + id, RestartCount: restarts,
			State: state, LastTerminationState: v1.ContainerState{Terminated: last}}
	}
	steps := []v1.ContainerStatus{
		status("c0", 0, running("c0"), nil),
		status("c0", 0, v1.ContainerState{Terminated: term("c0", 1)}, nil),
		status("c1", 1, running("c1"), term("c0", 1)),
		status("c1", 1, v1.ContainerState{Terminated: term("c1", 2)}, term("c0", 1)),
		status("c1", 1, v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}, term("c1", 2)),
		status("c2", 2, running("c2"), term("c1", 2)),
		status("c2", 2, v1.ContainerState{Terminated: term("c2", 3)}, term("c1", 2)),
		status("c3", 3, running("c3"), term("c2", 3)),
	}
	type frozen struct {
		created, started, finished time.Time
		restarts                   int
	}
	exited := map[string]frozen{}
	var order []string
	latest := map[string]*pkgcontainer.Status{}
	for i, cs := range steps {
		p := pod.DeepCopy()
		p.Status.ContainerStatuses = []v1.ContainerStatus{cs}
		got, err := podstatus.RuntimeStatus(p)
		if err != nil {
			t.Fatalf("step %d: RuntimeStatus: %v", i, err)
		}
		if first := rsNewestFirst(got, "app"); first[0].ID.String() != cs.ContainerID {
			t.Errorf("step %d: the kubelet's sort puts %s first, want %s: %s", i, first[0].ID, cs.ContainerID, rsDescribe(got))
		}
		for _, c := range got.ContainerStatuses {
			id := c.ID.ID
			f := frozen{c.CreatedAt, c.StartedAt, c.FinishedAt, c.RestartCount}
			if was, ok := exited[id]; ok && was != f {
				t.Errorf("step %d: exited instance %s changed from %+v to %+v", i, id, was, f)
			}
			if c.State == pkgcontainer.ContainerStateExited {
				exited[id] = f
			}
			if _, ok := latest[id]; !ok {
				order = append(order, id)
			}
			latest[id] = c
			if c.StartedAt.Before(c.CreatedAt) || (!c.FinishedAt.IsZero() && c.FinishedAt.Before(c.CreatedAt)) {
				t.Errorf("step %d: instance %s started or finished before it was created: %s", i, id, rsDescribe(got))
			}
		}
	}
	if want := []string{"c0", "c1", "c2", "c3"}; !cmp.Equal(order, want) {
		t.Fatalf("instances seen in order %v, want %v", order, want)
	}
	for i := 1; i < len(order); i++ {
		prev, cur := latest[order[i-1]], latest[order[i]]
		if !cur.CreatedAt.After(prev.CreatedAt) || cur.CreatedAt.Before(prev.FinishedAt) {
			t.Errorf("instance %s (created %s) does not follow %s (created %s, finished %s)", cur.ID.ID,
				cur.CreatedAt.Format(time.RFC3339Nano), prev.ID.ID, prev.CreatedAt.Format(time.RFC3339Nano), prev.FinishedAt.Format(time.RFC3339Nano))
		}
		if cur.RestartCount != prev.RestartCount+1 {
			t.Errorf("instance %s has RestartCount %d after %d of %s", cur.ID.ID, cur.RestartCount, prev.RestartCount, prev.ID.ID)
		}
	}
}

// TestRuntimeStatusFields pins the fields of the instances one status gives.
func TestRuntimeStatusFields(t *testing.T) {
	pod := rsPod(v1.RestartPolicyAlways, nil, "app")
	pod.Status = v1.PodStatus{
		PodIP: "10.0.0.9",
		ContainerStatuses: []v1.ContainerStatus{{
			Name: "app", Image: "docker.io/library/busybox:1.36", ImageID: "docker.io/library/busybox@sha256:b5",
			ContainerID: "containerd://c2", RestartCount: 4,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(rsAt(20))}},
			LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				ContainerID: "containerd://c1", ExitCode: 2, Reason: "Error", Message: "bye",
				StartedAt: metav1.NewTime(rsAt(10)), FinishedAt: metav1.NewTime(rsAt(19)),
			}},
		}},
	}
	got, err := podstatus.RuntimeStatus(pod)
	if err != nil {
		t.Fatal(err)
	}
	image, ref := "docker.io/library/busybox:1.36", "docker.io/library/busybox@sha256:b5"
	want := &pkgcontainer.PodStatus{
		ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace, IPs: []string{"10.0.0.9"},
		ContainerStatuses: []*pkgcontainer.Status{
			{ID: rsID("c1"), Name: "app", State: pkgcontainer.ContainerStateExited, RestartCount: 3, ExitCode: 2, Reason: "Error", Message: "bye",
				CreatedAt: rsAt(10).Add(3), StartedAt: rsAt(10).Add(3), FinishedAt: rsAt(19).Add(3), Image: image, ImageID: ref, ImageRef: ref},
			{ID: rsID("c2"), Name: "app", State: pkgcontainer.ContainerStateRunning, RestartCount: 4,
				CreatedAt: rsAt(20).Add(4), StartedAt: rsAt(20).Add(4), Image: image, ImageID: ref, ImageRef: ref},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RuntimeStatus (-want +got):\n%s", diff)
	}
}

// TestRuntimeStatusBadInput: bad input gives an error naming what is wrong,
// never a panic.
func TestRuntimeStatusBadInput(t *testing.T) {
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(rsAt(1))}}
	cases := []struct {
		name     string
		statuses []v1.ContainerStatus
		noTimes  bool
		want     string
	}{
		{"no name", []v1.ContainerStatus{{ContainerID: "containerd://c1", State: running}}, false, "containerStatuses[0] has no name"},
		{"two statuses of one name", []v1.ContainerStatus{{Name: "a", ContainerID: "containerd://c1", State: running}, {Name: "a"}}, false, `containerStatuses[1] (container "a"): the name is taken`},
		{"two states", []v1.ContainerStatus{{Name: "a", ContainerID: "containerd://c1", State: v1.ContainerState{Running: running.Running, Waiting: &v1.ContainerStateWaiting{}}}}, false, "state has 2 of running, terminated and waiting set"},
		{"negative restart count", []v1.ContainerStatus{{Name: "a", RestartCount: -1}}, false, "negative restartCount -1"},
		{"container ID without type", []v1.ContainerStatus{{Name: "a", ContainerID: "c1", State: running}}, false, `containerID "c1" is not of the form type://id`},
		{"container ID without ID", []v1.ContainerStatus{{Name: "a", ContainerID: "containerd://", State: running}}, false, `containerID "containerd://" is not of the form`},
		{"bad ID of the last termination", []v1.ContainerStatus{{Name: "a", ContainerID: "containerd://c2", State: running, RestartCount: 1,
			LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ContainerID: "c1"}}}}, false, `lastState: containerID "c1"`},
		{"running without container ID", []v1.ContainerStatus{{Name: "a", State: running}}, false, "running without containerID"},
		{"nothing to date a run by", []v1.ContainerStatus{{Name: "a", ContainerID: "containerd://c1", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}, true, "has neither startedAt nor finishedAt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := rsPod(v1.RestartPolicyAlways, nil, "a")
			if tc.noTimes {
				pod.CreationTimestamp = metav1.Time{}
			}
			pod.Status.ContainerStatuses = tc.statuses
			got, err := podstatus.RuntimeStatus(pod)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("RuntimeStatus of %+v = %s, %v; want an error containing %q", tc.statuses, rsDescribe(got), err, tc.want)
			}
		})
	}
	if st, err := podstatus.RuntimeStatus(nil); err == nil || st != nil {
		t.Errorf("RuntimeStatus(nil) = %v, %v; want nil and an error", st, err)
	}
}

func rsDescribe(st *pkgcontainer.PodStatus) string {
	if st == nil {
		return "<nil>"
	}
	var parts []string
	for _, c := range st.ContainerStatuses {
		parts = append(parts, fmt.Sprintf("%s %s %s restarts=%d created=%s started=%s finished=%s exit=%d", c.Name, c.ID, c.State, c.RestartCount,
			c.CreatedAt.Format(time.RFC3339Nano), c.StartedAt.Format(time.RFC3339Nano), c.FinishedAt.Format(time.RFC3339Nano), c.ExitCode))
	}
	return fmt.Sprintf("ips=%v [%s]", st.IPs, strings.Join(parts, "; "))
}
