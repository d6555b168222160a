package remotebackend_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/examples/remotebackend"
	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
)

func examplePod(policy v1.RestartPolicy, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "6f1e0a52-6c59-4d0e-9d1e-2d6f0c5b9a10"},
		Spec:       v1.PodSpec{RestartPolicy: policy, Containers: containers},
	}
}

// The Service restarts a crashing container itself, with a back-off that
// doubles from one restart to the next. On a fake clock every restart
// happens exactly when the back-off says, whenever one looks.
func ExampleNewService() {
	fc := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc, err := remotebackend.NewService(remotebackend.ServiceOptions{
		Clock:   fc,
		BackOff: remotebackend.BackOff{Initial: time.Second, Max: 4 * time.Second},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	pod := examplePod(v1.RestartPolicyAlways, v1.Container{Name: "app", Image: "busybox:1.36", Command: []string{"sh", "-c", "sleep 1; exit 3"}})
	start := fc.Now()
	if _, err := svc.Apply(ctx, pod); err != nil {
		panic(err)
	}
	for _, after := range []time.Duration{1500 * time.Millisecond, 2 * time.Second, 5 * time.Second, 9 * time.Second} {
		fc.SetTime(start.Add(after))
		v, _, _ := svc.Pod(ctx, pod.UID)
		c := v.Containers[0]
		fmt.Printf("at %s: run started at %s, %s, restarts %d", after, c.Current.StartedAt.Sub(start), c.Current.State, c.RestartCount)
		if c.Waiting != nil {
			fmt.Printf(", %s until %s", c.Waiting.Reason, c.Waiting.Until.Sub(start))
		}
		if l := c.LastTermination; l != nil {
			fmt.Printf(", last exit %d at %s", l.ExitCode, l.FinishedAt.Sub(start))
		}
		fmt.Println()
	}
	// Output:
	// at 1.5s: run started at 0s, Exited, restarts 0, CrashLoopBackOff until 2s
	// at 2s: run started at 2s, Running, restarts 1, last exit 3 at 1s
	// at 5s: run started at 5s, Running, restarts 2, last exit 3 at 3s
	// at 9s: run started at 5s, Exited, restarts 2, CrashLoopBackOff until 10s, last exit 3 at 3s
}

// Apply submits a pod and, called again, updates it: only images may change,
// and a running container whose image changed starts again with the new one.
// Images are reported normalised.
func ExampleService_Apply() {
	svc, err := remotebackend.NewService(remotebackend.ServiceOptions{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	pod := examplePod(v1.RestartPolicyAlways, v1.Container{Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}})
	v, err := svc.Apply(ctx, pod)
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Containers[0].Current.Image, v.Containers[0].Current.State)

	pod.Spec.Containers[0].Image = "quay.io/example/app:2"
	v, err = svc.Apply(ctx, pod)
	if err != nil {
		panic(err)
	}
	c := v.Containers[0]
	fmt.Println(c.Current.Image, c.Current.State, "restarts", c.RestartCount, "last exit", c.LastTermination.ExitCode)

	pod.Spec.Containers[0].Name = "renamed"
	_, err = svc.Apply(ctx, pod)
	fmt.Println(err)
	// Output:
	// docker.io/library/busybox:1.36 Running
	// quay.io/example/app:2 Running restarts 1 last exit 143
	// remotebackend: invalid pod: pod default/web was submitted with other containers than before; only their images may change
}

// Stop sends SIGTERM and returns once nothing of the pod runs: a container
// that exits on SIGTERM stops at once, one that ignores it when the grace
// period is over.
func ExampleService_Stop() {
	svc, err := remotebackend.NewService(remotebackend.ServiceOptions{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	pod := examplePod(v1.RestartPolicyAlways,
		v1.Container{Name: "polite", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}},
		v1.Container{Name: "stubborn", Image: "busybox:1.36", Command: []string{"sh", "-c", "trap '' TERM; sleep infinity"}},
	)
	if _, err := svc.Apply(ctx, pod); err != nil {
		panic(err)
	}
	grace := 100 * time.Millisecond
	stopped := time.Now()
	if err := svc.Stop(ctx, pod.UID, &grace); err != nil {
		panic(err)
	}
	v, _, _ := svc.Pod(ctx, pod.UID)
	for _, c := range v.Containers {
		fmt.Printf("%s: %s %d\n", c.Name, c.Current.State, c.Current.ExitCode)
	}
	stubborn := v.Containers[1].Current
	fmt.Println("stubborn killed once the grace period was over:", stubborn.FinishedAt.Sub(stopped) >= grace)
	fmt.Println("stopped:", v.Stopped)
	// Output:
	// polite: Exited 143
	// stubborn: Exited 137
	// stubborn killed once the grace period was over: true
	// stopped: true
}

// List reports every pod the Service knows; Delete forgets one, killing
// what of it still runs.
func ExampleService_List() {
	svc, err := remotebackend.NewService(remotebackend.ServiceOptions{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	pod := examplePod(v1.RestartPolicyNever, v1.Container{Name: "app", Image: "busybox", Command: []string{"sleep", "infinity"}})
	if _, err := svc.Apply(ctx, pod); err != nil {
		panic(err)
	}
	pods, _ := svc.List(ctx)
	for _, v := range pods {
		fmt.Println(v.Namespace+"/"+v.Name, v.Containers[0].Image, v.Containers[0].Current.State)
	}
	if err := svc.Delete(ctx, pod.UID); err != nil {
		panic(err)
	}
	_, known, _ := svc.Pod(ctx, pod.UID)
	fmt.Println("known after Delete:", known)
	// Output:
	// default/web docker.io/library/busybox:latest Running
	// known after Delete: false
}

// Run keeps a Service up to date with its clock until its context is done;
// the provider's Start runs it.
func ExampleService_Run() {
	svc, err := remotebackend.NewService(remotebackend.ServiceOptions{})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	fmt.Println(svc.Run(ctx))
	// Output: context deadline exceeded
}

// A node agent drives the provider: SyncPod, GetPodStatus, the API status
// built from it and refreshed by RefreshPodStatus, then KillPod and
// DeletePod. Here a container crashes, and the Service backs off before it
// restarts it.
func ExampleNew() {
	fc := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc, err := remotebackend.NewService(remotebackend.ServiceOptions{Clock: fc})
	if err != nil {
		panic(err)
	}
	p, err := remotebackend.New(svc)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Start(ctx)
	defer p.Stop()

	pod := examplePod(v1.RestartPolicyAlways,
		v1.Container{Name: "server", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}},
		v1.Container{Name: "flaky", Image: "busybox:1.36", Command: []string{"sh", "-c", "sleep 1; exit 3"}},
	)
	reasons := kri.NewReasonCache()
	if err := p.SyncPod(ctx, pod, nil, reasons); err != nil {
		panic(err)
	}
	fc.Step(1100 * time.Millisecond) // flaky exited at 1s and backs off
	if err := p.SyncPod(ctx, pod, nil, reasons); err != nil {
		panic(err)
	}
	st, err := p.GetPodStatus(ctx, pod)
	if err != nil {
		panic(err)
	}
	ps := podstatus.Generate(pod, st, reasons)
	p.RefreshPodStatus(pod, &ps)
	for _, cs := range ps.ContainerStatuses {
		switch {
		case cs.State.Running != nil:
			fmt.Printf("%s: Running, image %s\n", cs.Name, cs.Image)
		case cs.State.Waiting != nil:
			fmt.Printf("%s: Waiting %s, last exit %d\n", cs.Name, cs.State.Waiting.Reason, cs.LastTerminationState.Terminated.ExitCode)
		}
	}

	running := pkgcontainer.ConvertPodStatusToRunningPod(remotebackend.RuntimeName, st)
	one := int64(1)
	if err := p.KillPod(ctx, pod, running, &one); err != nil {
		panic(err)
	}
	if err := p.DeletePod(ctx, pod); err != nil {
		panic(err)
	}
	st, _ = p.GetPodStatus(ctx, pod)
	fmt.Println("containers after DeletePod:", len(st.ContainerStatuses))
	// Output:
	// server: Running, image docker.io/library/busybox:1.36
	// flaky: Waiting CrashLoopBackOff, last exit 3
	// containers after DeletePod: 0
}
