package podstatus_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kri-kit/testkit/kri/podstatus"
)

func condAt(t v1.PodConditionType, s v1.ConditionStatus, at metav1.Time) v1.PodCondition {
	return v1.PodCondition{Type: t, Status: s, LastTransitionTime: at}
}

// TestStampTimes: the status manager's updateLastTransitionTime for every
// condition type it stamps, the conditions it leaves alone, and StartTime.
func TestStampTimes(t *testing.T) {
	now := at(100).Add(700 * time.Millisecond) // stamped as second 100
	stamped := mt(100)
	old := v1.PodStatus{Conditions: []v1.PodCondition{
		condAt(v1.PodReadyToStartContainers, v1.ConditionTrue, mt(1)),
		condAt(v1.PodInitialized, v1.ConditionFalse, mt(2)),
		condAt(v1.PodReady, v1.ConditionTrue, mt(3)),
		condAt(v1.ContainersReady, v1.ConditionTrue, mt(3)),
		condAt(v1.PodScheduled, v1.ConditionTrue, metav1.Time{}), // kept, zero as it is
		condAt(v1.DisruptionTarget, v1.ConditionTrue, mt(4)),
		condAt("example.com/gate", v1.ConditionFalse, mt(5)),
	}}
	s := v1.PodStatus{Conditions: []v1.PodCondition{
		condAt("example.com/gate", v1.ConditionTrue, mt(50)),         // not stamped: the gate's owner does
		condAt(v1.PodResizePending, v1.ConditionTrue, metav1.Time{}), // not stamped either
		condAt(v1.DisruptionTarget, v1.ConditionTrue, mt(60)),        // unchanged: old's time
		condAt(v1.PodReadyToStartContainers, v1.ConditionTrue, metav1.Time{}),
		condAt(v1.PodInitialized, v1.ConditionTrue, mt(70)), // changed: now, whatever it had
		condAt(v1.PodReady, v1.ConditionFalse, metav1.Time{}),
		condAt(v1.ContainersReady, v1.ConditionFalse, metav1.Time{}),
		condAt(v1.PodScheduled, v1.ConditionTrue, metav1.Time{}),
		condAt(v1.AllContainersRestarting, v1.ConditionTrue, metav1.Time{}), // new: now
		condAt(v1.PodReady, v1.ConditionTrue, metav1.Time{}),                // a second Ready: only the first counts
	}}
	want := []v1.PodCondition{
		condAt("example.com/gate", v1.ConditionTrue, mt(50)),
		condAt(v1.PodResizePending, v1.ConditionTrue, metav1.Time{}),
		condAt(v1.DisruptionTarget, v1.ConditionTrue, mt(4)),
		condAt(v1.PodReadyToStartContainers, v1.ConditionTrue, mt(1)),
		condAt(v1.PodInitialized, v1.ConditionTrue, stamped),
		condAt(v1.PodReady, v1.ConditionFalse, stamped),
		condAt(v1.ContainersReady, v1.ConditionFalse, stamped),
		condAt(v1.PodScheduled, v1.ConditionTrue, metav1.Time{}),
		condAt(v1.AllContainersRestarting, v1.ConditionTrue, stamped),
		condAt(v1.PodReady, v1.ConditionTrue, metav1.Time{}),
	}
	podstatus.StampTimes(&old, &s, now)
	if d := cmp.Diff(want, s.Conditions); d != "" {
		t.Errorf("StampTimes(old, s, %v): conditions (-want +got):\n%s", now, d)
	}
	if s.StartTime == nil || !s.StartTime.Equal(&stamped) {
		t.Errorf("StampTimes(old without StartTime, s without StartTime, %v): StartTime %v, want %v", now, s.StartTime, stamped)
	}

	t.Run("StartTime", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			old, s *metav1.Time
			want   metav1.Time
		}{
			{name: "old's", old: ptrTo(mt(1)), s: ptrTo(mt(2)), want: mt(1)},
			{name: "s's when old has none", s: ptrTo(mt(2)), want: mt(2)},
			{name: "s's when old's is zero", old: &metav1.Time{}, s: ptrTo(mt(2)), want: mt(2)},
			{name: "now when neither has one", want: stamped},
			{name: "now when s's is zero", s: &metav1.Time{}, want: stamped},
		} {
			old, s := v1.PodStatus{StartTime: tc.old}, v1.PodStatus{StartTime: tc.s}
			podstatus.StampTimes(&old, &s, now)
			if s.StartTime == nil || !s.StartTime.Equal(&tc.want) {
				t.Errorf("%s: StampTimes with old StartTime %v and s StartTime %v: StartTime %v, want %v", tc.name, tc.old, tc.s, s.StartTime, tc.want)
			}
			if s.StartTime != nil && s.StartTime == old.StartTime {
				t.Errorf("%s: StampTimes: s.StartTime is old.StartTime; want a copy", tc.name)
			}
		}
	})
}

// TestStampTimesOddInputs: nil statuses do not panic; a nil old counts as
// empty.
func TestStampTimesOddInputs(t *testing.T) {
	podstatus.StampTimes(nil, nil, at(1))
	podstatus.StampTimes(&v1.PodStatus{}, nil, at(1))
	s := v1.PodStatus{Conditions: []v1.PodCondition{condTrue(v1.PodReady)}}
	podstatus.StampTimes(nil, &s, at(1))
	if got := s.Conditions[0].LastTransitionTime; !got.Equal(ptrTo(mt(1))) {
		t.Errorf("StampTimes(nil, s, second 1): Ready's LastTransitionTime %v, want %v", got, mt(1))
	}
}

// TestGenerateThenStamp: stamping what Generate returns, with the status
// reported before as old, gives each generated condition a time: the
// previous one while it holds, now once it changes.
func TestGenerateThenStamp(t *testing.T) {
	spec := v1.PodSpec{Containers: containers("app")}
	pod := mkPod(spec, v1.PodStatus{})
	pod.Status = podstatus.Generate(pod, runtimeStatus(createdI("app", "a1", 1)), nil)
	podstatus.StampTimes(&v1.PodStatus{}, &pod.Status, at(10))
	for _, c := range pod.Status.Conditions {
		if !c.LastTransitionTime.Equal(ptrTo(mt(10))) {
			t.Errorf("first status: condition %s has LastTransitionTime %v, want %v", c.Type, c.LastTransitionTime, mt(10))
		}
	}
	next := podstatus.Generate(pod, runtimeStatus(runningI("app", "a1", 1)), nil)
	podstatus.StampTimes(&pod.Status, &next, at(20))
	wantAt := map[v1.PodConditionType]metav1.Time{
		v1.PodReadyToStartContainers: mt(10), v1.PodInitialized: mt(10), v1.PodScheduled: mt(10),
		v1.PodReady: mt(20), v1.ContainersReady: mt(20), // turned true
	}
	for _, c := range next.Conditions {
		if w := wantAt[c.Type]; !c.LastTransitionTime.Equal(&w) {
			t.Errorf("once the container runs: condition %s (%s) has LastTransitionTime %v, want %v", c.Type, c.Status, c.LastTransitionTime, w)
		}
	}
	if next.StartTime == nil || !next.StartTime.Equal(ptrTo(mt(10))) {
		t.Errorf("once the container runs: StartTime %v, want the first stamp %v", next.StartTime, mt(10))
	}
}
