package kri

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// PodsToKeep returns the UIDs of the pods that a CleanupPods call with these
// arguments must leave untouched: those of pods, of runningPods and the keys
// of possiblyRunningPods. Every other pod the provider knows is an orphan.
// nil entries are skipped; the arguments are not modified.
func PodsToKeep(pods []*v1.Pod, runningPods []*pkgcontainer.Pod, possiblyRunningPods map[types.UID]sets.Empty) sets.Set[types.UID] {
	keep := make(sets.Set[types.UID], len(pods)+len(runningPods)+len(possiblyRunningPods))
	for _, pod := range pods {
		if pod != nil {
			keep.Insert(pod.UID)
		}
	}
	for _, rp := range runningPods {
		if rp != nil {
			keep.Insert(rp.ID)
		}
	}
	for uid := range possiblyRunningPods {
		keep.Insert(uid)
	}
	return keep
}
