package conformance_test

// podNotifyMutants are the mutants of the group "notify" (pod_notify.go):
// providers that break the duty to call HandlePodSyncByUID
// (kri.PodSyncNotifier). Since every spec waits for what kuscia's agent
// publishes at its cadence, each fails well beyond the notify specs.
func podNotifyMutants() []*mutant {
	return []*mutant{
		{
			name:      "never-notifies",
			violation: "the provider never calls HandlePodSyncByUID: kuscia's agent syncs each pod once, when it is added",
			want:      nil, // filled in below
			notify:    notifyNever,
		},
		{
			name:      "notifies-starts-only",
			violation: "the provider calls HandlePodSyncByUID only when a container has started, not when one exits, a probe result changes or a back-off ends",
			notify:    notifyOnStartsOnly,
		},
		{
			name:      "forgets-back-off-ends",
			violation: "the provider calls HandlePodSyncByUID only when what it reports of the pod's containers changed: the end of a back-off, which changes nothing reported, goes untold, so a failed start is never tried again",
			notify:    notifyOnChangesOnly,
		},
	}
}
