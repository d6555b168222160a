package podsynctest_test

import (
	"fmt"

	"github.com/kri-kit/testkit/kri/podsync"
	"github.com/kri-kit/testkit/kri/podsync/podsynctest"
)

// A provider's test hands the provider a Recorder as the agent's handler
// and counts the calls a change brought.
func ExampleRecorder() {
	var p podsync.Notifier // stands for a provider that embeds one
	r := &podsynctest.Recorder{}
	p.SetPodSyncHandler(r)
	p.Notify("uid-1") // what the provider does when a container exits
	fmt.Println(r.Count("uid-1"), r.Count("uid-2"))
	// Output: 1 0
}
