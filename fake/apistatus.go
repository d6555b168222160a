package fake

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
)

// APIPodStatus returns the v1.PodStatus a node agent would report for pod
// now: it calls GetPodStatus, as the agent's pod worker does, and hands
// the runtime status, pod (whose Status is taken as the previous status) and
// reasons to podstatus.Generate. reasons is the ReasonCache the code under
// test passed to SyncPod; nil means no recorded start failures.
//
// A test compares the result with the status its controller reported, or
// feeds it back as pod.Status for the next round, as an agent does (a
// provider that keeps one instance per container needs that for
// LastTerminationState). For a pod the agent has stopped for good, call
// GetPodStatus and podstatus.GenerateTerminal instead.
//
// The GetPodStatus call goes through the interceptors, scripted faults and
// call log like any other. Its error, and a nil pod, are returned as an
// error naming the pod, with a zero status.
func (p *PodProvider) APIPodStatus(ctx context.Context, pod *v1.Pod, reasons *kri.ReasonCache) (v1.PodStatus, error) {
	if pod == nil {
		return v1.PodStatus{}, errors.New("fake: APIPodStatus: pod is nil")
	}
	status, err := p.GetPodStatus(ctx, pod)
	if err != nil {
		return v1.PodStatus{}, fmt.Errorf("fake: APIPodStatus of pod %q: %w", podKey(pod.Namespace, pod.Name), err)
	}
	return podstatus.Generate(pod, status, reasons), nil
}
