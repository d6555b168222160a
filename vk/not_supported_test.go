package vk

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/vk/simprovider"
)

// TestErrNotSupportedSkips runs specs against a provider whose DeletePod
// answers ErrNotSupported, wrapped with %w inside VK's errdefs.AsInvalidInput
// (which has Cause and no Unwrap): a spec during which VK or the spec called
// it is skipped, naming DeletePod, and does not count as not applicable (a
// MUST spec skipped so makes the verdict "not conformant"); a spec that never
// calls it still passes.
func TestErrNotSupportedSkips(t *testing.T) {
	cfg := Config{VirtualTime: true, Capabilities: AllCapabilities(),
		NewPodProvider: func(context.Context) (node.PodLifecycleHandler, error) {
			return &altered{base: simprovider.New(), deletePod: func(context.Context, node.PodLifecycleHandler, *corev1.Pod) error {
				return errdefs.AsInvalidInput(fmt.Errorf("this backend keeps its pods: %w", ErrNotSupported))
			}}, nil
		},
	}
	byID := map[string]spec{}
	for _, s := range sortedSpecs() {
		byID[s.ID] = s
	}
	o := runSpec(t, byID["KVK-POD-006"], cfg) // DeletePod of a pod the provider does not know
	if !o.Skipped || o.NotApplicable || !strings.Contains(o.Message, "DeletePod is not supported by the provider") {
		t.Errorf("KVK-POD-006 against a provider without DeletePod: %+v, want a skip naming DeletePod that counts", o)
	}
	if o := runSpec(t, byID["KVK-POD-001"], cfg); o.Skipped || o.Failed {
		t.Errorf("KVK-POD-001, which deletes no pod: %+v, want a pass", o)
	}
}

// TestSkipsThatDoNotApply checks how the summary counts skips: a spec
// skipped because it does not apply (here an async-only MUST spec against a
// sync provider, known only once the provider is built) does not count; a
// MUST spec skipped otherwise (ErrNotSupported) makes the verdict "not
// conformant".
func TestSkipsThatDoNotApply(t *testing.T) {
	st, err := resolve(references[0].config())
	if err != nil {
		t.Fatal(err)
	}
	var report types.Report
	for _, s := range sortedSpecs() {
		sr := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[" + s.ID + "] " + s.Title, State: types.SpecStatePassed}
		if s.AsyncOnly {
			sr.State, sr.Failure.Message = types.SpecStateSkipped, syncSkipReason
			sr.ReportEntries = types.ReportEntries{{Name: entryNotApplicable, Value: types.WrapEntryValue(syncSkipReason)}}
		}
		report.SpecReports = append(report.SpecReports, sr)
	}
	outs := outcomes(report, st)
	if j := vkSuite.Judge(outs, report); !j.Conformant {
		t.Errorf("async-only specs skipped for a sync provider count: %q\n%s", j.Reasons, renderSummary(outs, st, j, ""))
	}
	for i, sr := range report.SpecReports {
		if vkSuite.IDOf(sr.LeafNodeText) == "KVK-POD-006" {
			report.SpecReports[i].State, report.SpecReports[i].Failure.Message = types.SpecStateSkipped, "DeletePod is not supported by the provider"
		}
	}
	outs = outcomes(report, st)
	if j := vkSuite.Judge(outs, report); j.Conformant || !strings.Contains(strings.Join(j.Reasons, "; "), "1 applicable MUST spec(s) skipped: KVK-POD-006") {
		t.Errorf("a MUST spec skipped by ErrNotSupported: conformant %v (%q), want not conformant naming KVK-POD-006", j.Conformant, j.Reasons)
	}
}
