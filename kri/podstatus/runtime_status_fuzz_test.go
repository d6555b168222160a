package podstatus_test

import (
	"encoding/json"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/kri/podstatus"
)

// FuzzRuntimeStatus: whatever the pod, RuntimeStatus does not panic, and
// what it returns without error keeps the kri contract's rules on
// instances: a type://id ID, CreatedAt set, StartedAt and FinishedAt (when
// set) not before it, and the kubelet's sort putting the current run of
// each container first.
func FuzzRuntimeStatus(f *testing.F) {
	for _, seed := range []string{
		`{"status":{"containerStatuses":[{"name":"a","containerID":"containerd://c2","restartCount":1,"state":{"running":{"startedAt":"2026-01-01T00:00:07Z"}},"lastState":{"terminated":{"containerID":"containerd://c1","exitCode":1,"startedAt":"2026-01-01T00:00:07Z","finishedAt":"2026-01-01T00:00:07Z"}}}]}}`,
		`{"metadata":{"creationTimestamp":"2026-01-01T00:00:00Z"},"status":{"initContainerStatuses":[{"name":"i","containerID":"x://1","state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":2,"finishedAt":"2026-01-01T00:00:03Z"}}}]}}`,
		`{"status":{"podIPs":[{"ip":"10.0.0.1"},{"ip":""}],"containerStatuses":[{"name":"a","containerID":"c://2","state":{"waiting":{}},"lastState":{"terminated":{"containerID":"c://1"}}}]}}`,
		`{"status":{"containerStatuses":[{"name":"a","restartCount":-3}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var pod v1.Pod
		if json.Unmarshal(data, &pod) != nil {
			return
		}
		st, err := podstatus.RuntimeStatus(&pod)
		if err != nil {
			return
		}
		for _, c := range st.ContainerStatuses {
			switch {
			case c.ID.Type == "" || c.ID.ID == "":
				t.Errorf("instance of %s without a type://id ID: %+v", c.Name, c.ID)
			case c.CreatedAt.IsZero():
				t.Errorf("instance %s of %s without CreatedAt", c.ID, c.Name)
			case !c.StartedAt.IsZero() && c.StartedAt.Before(c.CreatedAt), !c.FinishedAt.IsZero() && c.FinishedAt.Before(c.CreatedAt):
				t.Errorf("instance %s of %s started or finished before it was created: %s", c.ID, c.Name, rsDescribe(st))
			}
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.State.Running == nil || cs.ContainerID == "" {
				continue
			}
			if first := rsNewestFirst(st, cs.Name); len(first) > 0 && first[0].ID.String() != cs.ContainerID {
				t.Errorf("the kubelet's sort puts %s first, not the running %s: %s", first[0].ID, cs.ContainerID, rsDescribe(st))
			}
		}
	})
}
