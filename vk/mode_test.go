package vk

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// TestModeIsSaid: the summary's header says in which of VK's modes the pod
// provider was judged, async (node.PodNotifier) or sync, as the pod specs'
// report entries say.
func TestModeIsSaid(t *testing.T) {
	st, err := resolve(references[0].config())
	if err != nil {
		t.Fatal(err)
	}
	for _, async := range []bool{true, false} {
		mode := modeText("*p.Provider", async)
		report := types.Report{SpecReports: []types.SpecReport{
			{}, // a node spec: no mode
			{ReportEntries: []types.ReportEntry{{Name: entryMode, Value: types.WrapEntryValue(mode)}}},
		}}
		text := renderSummary(nil, st, vkSuite.Judge(nil, types.Report{}), modeOf(report))
		want := "\nmode: the pod provider (*p.Provider) implements node.PodNotifier: it is judged async"
		if !async {
			want = "\nmode: the pod provider (*p.Provider) does not implement node.PodNotifier: it is judged sync: VK wraps it (syncProviderWrapper) and polls GetPodStatus every 5s"
		}
		if !strings.Contains(text, want) {
			t.Errorf("async %v: the summary does not say %q:\n%s", async, want, text)
		}
	}
	if text := renderSummary(nil, st, vkSuite.Judge(nil, types.Report{}), modeOf(types.Report{})); strings.Contains(text, "mode:") {
		t.Errorf("a run without a pod spec names a mode:\n%s", text)
	}
}
