package memprovider_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podsync/podsynctest"

	"example.com/consumer/memprovider"
)

// recorder stands in for the node agent: it counts HandlePodSyncByUID calls
// per pod.
type recorder struct{ podsynctest.Recorder }

func (r *recorder) expect(t *testing.T, uid types.UID, want int, when string) {
	t.Helper()
	synctest.Wait() // every timer due by now has fired
	if got := r.Count(uid); got != want {
		t.Fatalf("%s: %d calls for pod %s, want %d", when, got, uid, want)
	}
}

func newPod(uid string, policy v1.RestartPolicy, c v1.Container) *v1.Pod {
	c.Name = "app"
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: uid, UID: types.UID(uid)},
		Spec:       v1.PodSpec{RestartPolicy: policy, Containers: []v1.Container{c}},
	}
}

func shell(script string) v1.Container {
	return v1.Container{Image: "busybox", Command: []string{"sh", "-c", script}}
}

// instances returns how many times app has started.
func instances(t *testing.T, p *memprovider.Provider, pod *v1.Pod) int {
	t.Helper()
	st, err := p.GetPodStatus(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	return len(st.ContainerStatuses)
}

// Each kind of change the provider makes is told to the agent, for the
// right pod, when it happens; on virtual time (synctest), so the seconds
// cost nothing.
func TestNotifications(t *testing.T) {
	ctx := context.Background()
	synctest.Test(t, func(t *testing.T) {
		p := memprovider.New()
		defer p.Stop()
		r := &recorder{}
		p.SetPodSyncHandler(r)
		rc := kri.NewReasonCache()

		// A start at once, the exit when its time is up.
		pod := newPod("exits", v1.RestartPolicyNever, shell("sleep 2; exit 3"))
		other := newPod("runs", v1.RestartPolicyNever, shell("sleep infinity"))
		for _, pd := range []*v1.Pod{pod, other} {
			if err := p.SyncPod(ctx, pd, nil, rc); err != nil {
				t.Fatal(err)
			}
		}
		r.expect(t, pod.UID, 1, "after the start")
		time.Sleep(2 * time.Second)
		r.expect(t, pod.UID, 2, "at the exit")
		r.expect(t, other.UID, 1, "the other pod, at the first one's exit")

		// A restart after the back-off: SyncPod leaves the exited
		// container waiting and asks to be called when the wait is over.
		crash := newPod("crash", v1.RestartPolicyAlways, shell("exit 1"))
		if err := p.SyncPod(ctx, crash, nil, rc); err != nil {
			t.Fatal(err)
		}
		r.expect(t, crash.UID, 1, "after the start (and exit) of crash")
		if err := p.SyncPod(ctx, crash, nil, rc); err != nil {
			t.Fatal(err)
		}
		if n := instances(t, p, crash); n != 1 {
			t.Fatalf("restarted at once: %d instances", n)
		}
		time.Sleep(time.Second)
		r.expect(t, crash.UID, 2, "when the back-off is over")
		if err := p.SyncPod(ctx, crash, nil, rc); err != nil {
			t.Fatal(err)
		}
		if n := instances(t, p, crash); n != 2 {
			t.Fatalf("not restarted after the back-off: %d instances", n)
		}

		// A failed start, tried again a second later.
		pull := newPod("pull", v1.RestartPolicyAlways, v1.Container{Image: "kri.invalid/app", Command: []string{"sleep", "infinity"}})
		if err := p.SyncPod(ctx, pull, nil, rc); err == nil {
			t.Fatal("SyncPod of a missing image succeeded")
		}
		r.expect(t, pull.UID, 0, "after the failed start")
		time.Sleep(time.Second)
		r.expect(t, pull.UID, 1, "when the start may be tried again")

		// KillPod.
		if err := p.KillPod(ctx, other, pkgcontainer.Pod{}, nil); err != nil {
			t.Fatal(err)
		}
		r.expect(t, other.UID, 2, "after KillPod")

		// Nothing after DeletePod, nor after Stop.
		gone := newPod("gone", v1.RestartPolicyNever, shell("sleep 2; exit 0"))
		if err := p.SyncPod(ctx, gone, nil, rc); err != nil {
			t.Fatal(err)
		}
		if err := p.DeletePod(ctx, gone); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		r.expect(t, gone.UID, 1, "a minute after DeletePod")
		late := newPod("late", v1.RestartPolicyNever, shell("sleep 2; exit 0"))
		if err := p.SyncPod(ctx, late, nil, rc); err != nil {
			t.Fatal(err)
		}
		p.Stop()
		time.Sleep(time.Minute)
		r.expect(t, late.UID, 1, "a minute after Stop")
	})
}
