package conformance_test

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/fake"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/interceptor"
)

// podRestartBenign are the benign variants of the group "restart"
// (pod_restart.go): the fake taking one freedom each, which the suite must
// pass.
func podRestartBenign() []*benign {
	return []*benign{
		{
			name:     "crash-loop-backoff",
			freedom:  "restarts delayed by a back-off, reported to the ReasonCache as CrashLoopBackOff (the kubelet's runtime: 10s doubling)",
			podLater: func(_ *fake.PodProvider, later *laterCalls) interceptor.PodFuncs { return crashLoopBackOff(later) },
		},
	}
}

// Back-off of the crash-loop-backoff variant: short enough for the suite's
// state timeouts, long enough that several syncs hit it.
const (
	backOffFirst = 100 * time.Millisecond
	backOffMax   = 800 * time.Millisecond
)

// crashLoopBackOff delays the restart of an exited container: once the fake
// would restart it, SyncPod refuses for a back-off (doubling per restart),
// reports CrashLoopBackOff for it to the ReasonCache and returns nil, as
// kuscia's CRIProvider turns back-off-only failures into nil. It asks for
// a sync when a back-off ends (later), as the duty to notify wants.
func crashLoopBackOff(later *laterCalls) interceptor.PodFuncs {
	type key struct {
		uid  types.UID
		name string
	}
	type backOff struct {
		exitedID pkgcontainer.ContainerID // the exited run the back-off is for
		until    time.Time
		delay    time.Duration
	}
	var mu sync.Mutex
	state := map[key]*backOff{}
	return interceptor.PodFuncs{SyncPod: func(ctx context.Context, next kri.PodProvider, pod *v1.Pod, st *pkgcontainer.PodStatus, rc *kri.ReasonCache) error {
		if pod == nil || rc == nil || pod.Spec.RestartPolicy == v1.RestartPolicyNever {
			return next.SyncPod(ctx, pod, st, rc)
		}
		cur, err := next.GetPodStatus(ctx, pod)
		if err != nil || cur == nil {
			return next.SyncPod(ctx, pod, st, rc)
		}
		now := time.Now()
		var waiting []string
		mu.Lock()
		for _, c := range pod.Spec.Containers {
			n := newestInstance(cur.ContainerStatuses, c.Name)
			if n == nil || n.State != pkgcontainer.ContainerStateExited {
				continue
			}
			if pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure && n.ExitCode == 0 {
				continue
			}
			k := key{pod.UID, c.Name}
			b := state[k]
			switch {
			case b == nil:
				b = &backOff{exitedID: n.ID, until: now.Add(backOffFirst), delay: backOffFirst}
				state[k] = b
				later.after(pod.UID, backOffFirst)
			case b.exitedID != n.ID:
				b.delay = min(2*b.delay, backOffMax)
				b.exitedID, b.until = n.ID, now.Add(b.delay)
				later.after(pod.UID, b.delay)
			}
			if now.Before(b.until) {
				waiting = append(waiting, c.Name)
			}
		}
		mu.Unlock()
		if len(waiting) == 0 {
			return next.SyncPod(ctx, pod, st, rc)
		}
		held := pod.DeepCopy()
		held.Spec.RestartPolicy = v1.RestartPolicyNever
		if err := next.SyncPod(ctx, held, st, rc); err != nil {
			return err
		}
		var result pkgcontainer.PodSyncResult
		for _, name := range waiting {
			r := pkgcontainer.NewSyncResult(pkgcontainer.StartContainer, name)
			r.Fail(pkgcontainer.ErrCrashLoopBackOff, "back-off restarting failed container "+name)
			result.AddSyncResult(r)
		}
		rc.Update(pod.UID, result)
		return nil
	}}
}
