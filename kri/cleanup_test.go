package kri_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
)

func TestPodsToKeep(t *testing.T) {
	pods := []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "desired"}}, nil}
	running := []*pkgcontainer.Pod{{ID: "running"}, nil}
	possibly := map[types.UID]sets.Empty{"possibly": {}}
	got := kri.PodsToKeep(pods, running, possibly)
	if want := sets.New[types.UID]("desired", "running", "possibly"); !got.Equal(want) {
		t.Errorf("PodsToKeep = %v, want %v", sets.List(got), sets.List(want))
	}
	if got := kri.PodsToKeep(nil, nil, nil); got.Len() != 0 {
		t.Errorf("PodsToKeep(nil, nil, nil) = %v, want none", sets.List(got))
	}
	if len(possibly) != 1 || len(pods) != 2 || len(running) != 2 {
		t.Error("PodsToKeep modified its arguments")
	}
}
