package conformance_test

import "time"

// The freedoms of the duty to call HandlePodSyncByUID (kri.PodSyncNotifier):
// calls that change nothing, folded calls, calls from another goroutine a
// little later.
func podNotifyBenign() []*benign {
	return []*benign{
		{
			name:    "notify-on-timer",
			freedom: "calls that change nothing: the provider also calls for every pod it knows every poll interval of the suite, as one that resyncs on a timer",
			notify:  notifyEvery(10 * time.Millisecond),
		},
		{
			name:    "notify-late",
			freedom: "calls from another goroutine a little later: each call is made 50ms after the change, from a goroutine of its own",
			notify:  notifyLate(50 * time.Millisecond),
		},
		{
			name:    "notify-debounced",
			freedom: "several changes folded into one call: the calls for a pod within 100ms of the first are made as one, at the end",
			notify:  notifyDebounced(100 * time.Millisecond),
		},
	}
}
