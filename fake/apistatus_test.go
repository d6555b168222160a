package fake_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
)

func apiStatusPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyAlways,
			Containers: []v1.Container{{
				Name: "app", Image: "busybox:1.36",
				Command: []string{"sh", "-c", "sleep 5; exit 3"},
			}},
		},
	}
}

// A controller's test reads the status a kubelet would report after each
// round of its pod worker: the failed first start, the container running,
// its crash, its restart.
func ExamplePodProvider_APIPodStatus() {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	provider := fake.NewPodProvider(fake.WithClock(clk))
	provider.Container("default/web", "app").FailStarts(1, errors.New("ErrImagePull"), "pull access denied")
	reasons := kri.NewReasonCache()
	pod := apiStatusPod()

	report := func() {
		s, err := provider.APIPodStatus(ctx, pod, reasons)
		if err != nil {
			fmt.Println(err)
			return
		}
		app := s.ContainerStatuses[0]
		switch st := app.State; {
		case st.Waiting != nil:
			fmt.Println(s.Phase, "waiting:", st.Waiting.Reason, st.Waiting.Message)
		case st.Running != nil:
			fmt.Println(s.Phase, "running, restarts:", app.RestartCount, "ready:", app.Ready)
		case st.Terminated != nil:
			fmt.Println(s.Phase, "exited:", st.Terminated.ExitCode)
		}
		pod.Status = s // the previous status of the next round
	}
	sync := func() {
		status, _ := provider.GetPodStatus(ctx, pod)
		_ = provider.SyncPod(ctx, pod, status, reasons)
	}

	sync()
	report()
	sync()
	report()
	clk.Step(5 * time.Second) // the command exits 3 after 5s
	report()
	sync()
	report()
	fmt.Println("last exit:", pod.Status.ContainerStatuses[0].LastTerminationState.Terminated.ExitCode)
	// Output:
	// Pending waiting: ErrImagePull pull access denied
	// Running running, restarts: 0 ready: true
	// Running exited: 3
	// Running running, restarts: 1 ready: true
	// last exit: 3
}

func TestAPIPodStatusIsGenerateOfGetPodStatus(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(t0)
	provider := fake.NewPodProvider(fake.WithClock(clk))
	reasons := kri.NewReasonCache()
	pod := apiStatusPod()
	status, err := provider.GetPodStatus(ctx, pod)
	if err != nil {
		t.Fatalf("GetPodStatus of a new pod: %v", err)
	}
	if err := provider.SyncPod(ctx, pod, status, reasons); err != nil {
		t.Fatalf("SyncPod: %v", err)
	}
	clk.Step(5 * time.Second)
	provider.ResetCalls()

	got, err := provider.APIPodStatus(ctx, pod, reasons)
	if err != nil {
		t.Fatalf("APIPodStatus: %v", err)
	}
	status, err = provider.GetPodStatus(ctx, pod)
	if err != nil {
		t.Fatalf("GetPodStatus: %v", err)
	}
	if want := podstatus.Generate(pod, status, reasons); !cmp.Equal(want, got) {
		t.Errorf("APIPodStatus differs from podstatus.Generate of GetPodStatus (-want +got):\n%s", cmp.Diff(want, got))
	}
	if app := got.ContainerStatuses[0]; app.State.Terminated == nil || app.State.Terminated.ExitCode != 3 {
		t.Errorf("app after its command exited 3: state %+v, want Terminated with exit code 3", app.State)
	}
	calls := provider.Calls(fake.ForMethod(fake.MethodGetPodStatus))
	if len(calls) != 2 {
		t.Errorf("GetPodStatus calls logged after APIPodStatus and one GetPodStatus: %d, want 2", len(calls))
	}
}

func TestAPIPodStatusErrors(t *testing.T) {
	errRuntime := errors.New("runtime unavailable")
	provider := fake.NewPodProvider(fake.WithClock(clocktesting.NewFakeClock(t0)))
	if err := provider.Pod("default/web").Fail(fake.MethodGetPodStatus, 1, errRuntime); err != nil {
		t.Fatalf("scripting a GetPodStatus fault: %v", err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		pod     *v1.Pod
		wantIs  error
		wantMsg string
	}{
		{name: "nil pod", ctx: context.Background(), wantMsg: "fake: APIPodStatus: pod is nil"},
		{name: "GetPodStatus fails", ctx: context.Background(), pod: apiStatusPod(), wantIs: errRuntime, wantMsg: `fake: APIPodStatus of pod "default/web"`},
		{name: "context canceled", ctx: canceled, pod: apiStatusPod(), wantIs: context.Canceled, wantMsg: `fake: APIPodStatus of pod "default/web"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := provider.APIPodStatus(tc.ctx, tc.pod, nil)
			if err == nil {
				t.Fatalf("APIPodStatus returned %+v and no error, want an error", got)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("APIPodStatus error %q does not wrap %q", err, tc.wantIs)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("APIPodStatus error %q, want it to contain %q", err, tc.wantMsg)
			}
			if !cmp.Equal(got, v1.PodStatus{}) {
				t.Errorf("APIPodStatus returned %+v with its error, want a zero status", got)
			}
		})
	}
}
