package kri_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kri-kit/testkit/kri"
)

func gracePod(termination, deletion *int64) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{DeletionGracePeriodSeconds: deletion},
		Spec:       v1.PodSpec{TerminationGracePeriodSeconds: termination},
	}
}

func fmtPtr(p *int64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// TestEffectiveGracePeriod: the cases of the kubelet's
// Test_calculateEffectiveGracePeriod (pod_workers_test.go, a first kill
// request), then kill requests after a first one, and odd inputs.
func TestEffectiveGracePeriod(t *testing.T) {
	zero, one, two, five, ten, thirty := ptr.To[int64](0), ptr.To[int64](1), ptr.To[int64](2), ptr.To[int64](5), ptr.To[int64](10), ptr.To[int64](30)
	tests := []struct {
		desc                  string
		previous              int64
		termination, deletion *int64
		override              *int64
		nilPod                bool
		want                  int64
		shortened             bool
	}{
		// Test_calculateEffectiveGracePeriod.
		{desc: "use termination grace period from the spec when no overrides", termination: thirty, want: 30},
		{desc: "use pod DeletionGracePeriodSeconds when set", termination: thirty, deletion: five, want: 5},
		{desc: "use grace period override when set", termination: thirty, deletion: five, override: two, want: 2},
		{desc: "use 1 when pod DeletionGracePeriodSeconds is zero", termination: thirty, deletion: zero, want: 1},
		{desc: "use 1 when grace period override is zero", termination: thirty, deletion: five, override: zero, want: 1},
		// Later kill requests: the grace period only shortens.
		{desc: "deleted while terminating with a shorter grace period", previous: 30, termination: thirty, deletion: ten, want: 10, shortened: true},
		{desc: "deleted while terminating with a longer grace period", previous: 10, termination: thirty, deletion: thirty, want: 10},
		{desc: "override shorter than the previous", previous: 10, termination: thirty, override: five, want: 5, shortened: true},
		{desc: "override longer than the previous", previous: 5, termination: thirty, override: thirty, want: 5},
		{desc: "the spec does not lengthen a previous value", previous: 10, termination: thirty, want: 10},
		{desc: "override 0 after 1", previous: 1, override: zero, want: 1},
		{desc: "override 0 after 10", previous: 10, override: zero, want: 1, shortened: true},
		{desc: "deletion and override: the shorter", termination: thirty, deletion: two, override: ten, want: 2},
		// Odd inputs.
		{desc: "no grace period anywhere", want: 1},
		{desc: "negative termination grace period", termination: ptr.To[int64](-5), want: 1},
		{desc: "negative override", termination: thirty, override: ptr.To[int64](-1), want: 1},
		{desc: "nil pod", nilPod: true, want: 1},
		{desc: "nil pod, override", nilPod: true, override: five, want: 5},
		{desc: "nil pod, previous", nilPod: true, previous: 7, want: 7},
		{desc: "override 1", termination: thirty, override: one, want: 1},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			pod := gracePod(tc.termination, tc.deletion)
			if tc.nilPod {
				pod = nil
			}
			got, shortened := kri.EffectiveGracePeriod(tc.previous, pod, tc.override)
			if got != tc.want || shortened != tc.shortened {
				t.Errorf("EffectiveGracePeriod(previous %d, pod with termination %s and deletion %s (nil pod: %v), override %s) = %d, %v; want %d, %v",
					tc.previous, fmtPtr(tc.termination), fmtPtr(tc.deletion), tc.nilPod, fmtPtr(tc.override), got, shortened, tc.want, tc.shortened)
			}
		})
	}
}

// TestRuntimeGracePeriod: the cases of the kubelet's
// TestKillContainerGracePeriod (kuberuntime_container_test.go) without a
// probe as the reason, then the override and the 2 s floor of
// killContainer.
func TestRuntimeGracePeriod(t *testing.T) {
	zero, one, ten, sixty := ptr.To[int64](0), ptr.To[int64](1), ptr.To[int64](10), ptr.To[int64](60)
	tests := []struct {
		desc                  string
		termination, deletion *int64
		override              *int64
		nilPod                bool
		want                  int64
	}{
		// TestKillContainerGracePeriod.
		{desc: "default termination grace period", want: 2},
		{desc: "use pod termination grace period", termination: sixty, want: 60},
		// killContainer.
		{desc: "deletion grace period before the spec's", termination: sixty, deletion: ten, want: 10},
		{desc: "override before the deletion grace period", termination: sixty, deletion: ten, override: ptr.To[int64](5), want: 5},
		{desc: "override 1: the floor", termination: sixty, override: one, want: 2},
		{desc: "override 0: the floor", termination: sixty, override: zero, want: 2},
		{desc: "deletion 0: the floor", termination: sixty, deletion: zero, want: 2},
		{desc: "negative override: the floor", override: ptr.To[int64](-3), want: 2},
		{desc: "nil pod", nilPod: true, want: 2},
		{desc: "nil pod, override", nilPod: true, override: ten, want: 10},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			pod := gracePod(tc.termination, tc.deletion)
			if tc.nilPod {
				pod = nil
			}
			if got := kri.RuntimeGracePeriod(pod, tc.override); got != tc.want {
				t.Errorf("RuntimeGracePeriod(pod with termination %s and deletion %s (nil pod: %v), override %s) = %d; want %d",
					fmtPtr(tc.termination), fmtPtr(tc.deletion), tc.nilPod, fmtPtr(tc.override), got, tc.want)
			}
		})
	}
}
