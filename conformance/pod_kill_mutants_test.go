package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podKillMutants are the mutants of the group "kill" (pod_kill.go): the fake
// with one contract violation each, and the specs it must fail.
func podKillMutants() []*mutant {
	return []*mutant{
		{
			name:      "kill-returns-inside-grace",
			violation: "KillPod returns as soon as it has asked for the kill, while the containers still run out their grace period (a backend pod deleted with a grace period)",
			want:      []string{"KRI-POD-014", "KRI-POD-095"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					go func() {
						// The backend's kubelet sees the deletion a moment
						// later: long after KillPod has returned.
						time.Sleep(backendDelay)
						_ = next.KillPod(context.WithoutCancel(ctx), pod, rp, grace)
					}()
					return nil
				}}
			},
		},
		{
			name:      "kill-leaves-container-running",
			violation: "after KillPod returns nil, the pod's first container runs again",
			want: []string{
				"KRI-POD-005", "KRI-POD-014", "KRI-POD-016", "KRI-POD-017", "KRI-POD-018", "KRI-POD-020", "KRI-POD-028", "KRI-POD-041", "KRI-POD-047", "KRI-POD-048", "KRI-POD-055", "KRI-POD-056", "KRI-POD-069", "KRI-POD-070", "KRI-POD-086", "KRI-POD-095", "KRI-POD-096",
				// The lifecycle hook specs: 064 and 065 check that nothing runs after KillPod.
				"KRI-POD-064", "KRI-POD-065",
				// KRI-POD-077 checks that a killed pod's probes start nothing again.
				"KRI-POD-077",
				// KRI-POD-090 waits for the killed container's exit to read its server's log.
				"KRI-POD-090",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if err := next.KillPod(ctx, pod, rp, grace); err != nil || pod == nil || len(pod.Spec.Containers) == 0 {
						return err
					}
					again := withRestartPolicy(pod, v1.RestartPolicyAlways)
					again.Spec.InitContainers, again.Spec.Containers = nil, again.Spec.Containers[:1]
					_ = next.SyncPod(ctx, again, nil, kri.NewReasonCache())
					return nil
				}}
			},
		},
		{
			name:      "kill-returns-at-first-exit",
			violation: "KillPod returns nil as soon as the first of the pod's containers has exited, while a sibling that ignores SIGTERM, or waits for its preStop hook, still runs out the grace period",
			want:      []string{"KRI-POD-095"},
			pod: func(p *fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					sub := p.Subscribe(256)
					defer sub.Close()
					done := make(chan error, 1)
					go func() { done <- next.KillPod(context.WithoutCancel(ctx), pod, rp, grace) }()
					for {
						select {
						case err := <-done:
							return err
						case ev := <-sub.C:
							if ev.Type == fake.EventContainerExited && ev.Pod.UID == rp.ID {
								return nil
							}
						case <-ctx.Done():
							return ctx.Err()
						}
					}
				}}
			},
		},
		{
			name:      "kill-returns-after-dispatching-prestop",
			violation: "KillPod of a pod with preStop hooks returns nil as soon as it has started the hooks, leaving the rest of the termination (SIGTERM once a hook is over, SIGKILL at the end of the grace period) to run in the background; a pod without hooks is killed in full",
			want:      []string{"KRI-POD-095"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if pod == nil || !slices.ContainsFunc(pod.Spec.Containers, func(c v1.Container) bool { return c.Lifecycle != nil && c.Lifecycle.PreStop != nil }) {
						return next.KillPod(ctx, pod, rp, grace)
					}
					// The hooks, and what follows each, run in the
					// background; KillPod does not wait for them.
					go func() { _ = next.KillPod(context.WithoutCancel(ctx), pod, rp, grace) }()
					return nil
				}}
			},
		},
		{
			name:      "grace-period-ignored",
			violation: "KillPod always kills at once (grace period 0)",
			want: []string{
				"KRI-POD-017", "KRI-POD-018", "KRI-POD-048",
				// The lifecycle hook specs: a kill with no grace period runs no preStop
				// hook (the kubelet runs it only for a grace period above 0).
				"KRI-POD-064",
				// KRI-POD-090: a kill with no grace period runs no HTTP preStop hook either.
				"KRI-POD-090",
				// The sidecar kill-order specs: SIGKILL at once ends the slow
				// container without its handler's exit code, in every try.
				"KRI-POD-069", "KRI-POD-070",
			},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, _ *int64) error {
					zero := int64(0)
					return next.KillPod(ctx, pod, rp, &zero)
				}}
			},
		},
		{
			name:      "grace-override-ignored",
			violation: "KillPod ignores gracePeriodOverride and uses the pod's grace period",
			want:      []string{"KRI-POD-016", "KRI-POD-017", "KRI-POD-056"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, _ *int64) error {
					return next.KillPod(ctx, pod, rp, nil)
				}}
			},
		},
		{
			name:      "kill-unknown-pod-errors",
			violation: "KillPod of a pod it does not know returns an error",
			want:      []string{"KRI-POD-015"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if unknownPod(ctx, next, pod) {
						return fmt.Errorf("pod %s not found", rp.ID)
					}
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
		},
		{
			name:      "kill-without-sigterm",
			violation: "KillPod waits out the grace period before it signals, as if every container ignored SIGTERM",
			want: []string{
				"KRI-POD-047",
				// Timing, in virtual time: 064's and 090's containers exit on SIGTERM,
				// and waiting out their grace period of 6s outlasts the mutants' call
				// timeout (6s).
				"KRI-POD-064", "KRI-POD-090",
				// The sidecar kill-order specs: every container SIGKILLed at the
				// end of the grace period, the slow one without its handler's
				// exit code, in every try.
				"KRI-POD-069", "KRI-POD-070",
			},
			pod: func(p *fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					for _, c := range rp.Containers {
						p.Container(rp.Namespace+"/"+rp.Name, c.Name).IgnoreSIGTERM()
					}
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
		},
		{
			name:      "deletion-grace-ignored",
			violation: "KillPod without override uses TerminationGracePeriodSeconds even when the pod has a DeletionGracePeriodSeconds",
			want:      []string{"KRI-POD-048"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if grace == nil && pod != nil && pod.DeletionGracePeriodSeconds != nil {
						pod = pod.DeepCopy()
						pod.DeletionGracePeriodSeconds = nil
					}
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
		},
		{
			name:      "kill-needs-the-pod",
			violation: "KillPod with a nil pod does nothing and returns nil",
			want:      []string{"KRI-POD-049"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if pod == nil {
						return nil
					}
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
		},
		{
			name:      "killed-finished-before-started",
			violation: "an instance killed after it ran reports a FinishedAt before its StartedAt",
			want:      []string{"KRI-POD-068", "KRI-POD-069", "KRI-POD-070", "KRI-POD-096"},
			pod:       killedFinishedAt(func(c *pkgcontainer.Status) time.Time { return c.StartedAt.Add(-time.Millisecond) }),
		},
		{
			name:      "killed-finished-zero",
			violation: "an instance that KillPod stopped is reported exited with a zero FinishedAt",
			want:      []string{"KRI-POD-068", "KRI-POD-069", "KRI-POD-070", "KRI-POD-096"},
			pod:       killedFinishedAt(func(*pkgcontainer.Status) time.Time { return time.Time{} }),
		},
		{
			name:      "sandbox-ready-after-kill",
			violation: "GetPodStatus reports the sandboxes of a pod without running containers as ready",
			want:      []string{"KRI-POD-041"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
					if len(st.GetRunningContainerStatuses()) > 0 {
						return
					}
					for _, sb := range st.SandboxStatuses {
						sb.State = runtimeapi.PodSandboxState_SANDBOX_READY
					}
				})}
			},
		},
		{
			name:      "kill-spares-init-containers",
			violation: "KillPod returns nil and stops nothing while an init container runs",
			want:      []string{"KRI-POD-055", "KRI-POD-069", "KRI-POD-070"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if pod != nil && slices.ContainsFunc(rp.Containers, func(c *pkgcontainer.Container) bool {
						return c.State == pkgcontainer.ContainerStateRunning && slices.ContainsFunc(pod.Spec.InitContainers, func(ic v1.Container) bool { return ic.Name == c.Name })
					}) {
						return nil
					}
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
		},
		{
			name:      "kill-validates-the-pod",
			violation: "KillPod rejects, as SyncPod does, a pod without restart policy or commands, such as the runningPod.ToAPIPod() of an orphan",
			want:      []string{"KRI-POD-056"},
			pod: func(*fake.PodProvider) interceptor.PodFuncs {
				return interceptor.PodFuncs{KillPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, rp pkgcontainer.Pod, grace *int64) error {
					if pod != nil && pod.Spec.RestartPolicy == "" {
						return errors.New("mutant: invalid pod: spec.restartPolicy is empty")
					}
					return next.KillPod(ctx, pod, rp, grace)
				}}
			},
		},
	}
}

// backendDelay is how long a mutant's backend takes to act on a request:
// far longer than the suite's next call, and within the fake's grace period.
const backendDelay = 300 * time.Millisecond

// killedFinishedAt reports the FinishedAt of every instance a signal stopped
// (exit code 137 or 143) as finished returns it.
func killedFinishedAt(finished func(*pkgcontainer.Status) time.Time) func(*fake.PodProvider) interceptor.PodFuncs {
	return func(*fake.PodProvider) interceptor.PodFuncs {
		return interceptor.PodFuncs{GetPodStatus: statusEdit(func(st *pkgcontainer.PodStatus) {
			for _, c := range slices.Concat(st.ContainerStatuses, st.ActiveContainerStatuses) {
				if c.State == pkgcontainer.ContainerStateExited && (c.ExitCode == 137 || c.ExitCode == 143) {
					c.FinishedAt = finished(c)
				}
			}
		})}
	}
}
