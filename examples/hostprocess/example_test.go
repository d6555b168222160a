package hostprocess_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/examples/hostprocess"
	"github.com/kri-kit/testkit/kri"
)

// An agent drives the provider: it hands it its PodSyncHandler, syncs the
// pod when it is added and again at each call of HandlePodSyncByUID until
// the pod is where its spec wants it (GetPodStatus, then SyncPod), and
// stops it with KillPod.
func ExampleNew() {
	root, err := os.MkdirTemp("", "hostprocess-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)

	p, err := hostprocess.New(hostprocess.Options{RootDir: root})
	if err != nil {
		panic(err)
	}
	defer p.Stop()
	calls := make(chan types.UID, 1)
	p.SetPodSyncHandler(kri.PodSyncHandlerFunc(func(uid types.UID) {
		select {
		case calls <- uid:
		default: // a sync is pending already
		}
	}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Start(ctx)

	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "0b5cbbb5-4c5e-4b1c-9d0b-6a0f3c0c1a01"},
		Spec: v1.PodSpec{
			RestartPolicy:  v1.RestartPolicyOnFailure,
			InitContainers: []v1.Container{{Name: "migrate", Command: []string{"sh", "-c", "exit 0"}}},
			Containers: []v1.Container{
				{Name: "server", Command: []string{"sleep", "infinity"}},
				{Name: "flaky", Command: []string{"sh", "-c", "exit 3"}},
				{Name: "typo", Command: []string{"/nonexistent/server"}},
			},
		},
	}
	reasons := kri.NewReasonCache()
	status := func() *pkgcontainer.PodStatus {
		st, err := p.GetPodStatus(ctx, pod)
		if err != nil {
			panic(err)
		}
		return st
	}

	// The agent's loop, shortened: sync until the init container is
	// done and flaky has been restarted twice, each time the provider
	// asks for it.
	for {
		err := p.SyncPod(ctx, pod, status(), reasons)
		if err != nil && !errors.Is(err, pkgcontainer.ErrRunContainer) {
			panic(err)
		}
		if s := status().FindContainerStatusByName("flaky"); s != nil && s.RestartCount == 2 {
			break
		}
		select {
		case <-calls:
		case <-time.After(time.Minute):
			panic("the provider asked for no sync in a minute")
		}
	}

	st := status()
	for _, name := range []string{"migrate", "server"} {
		fmt.Printf("%s: %s\n", name, st.FindContainerStatusByName(name).State)
	}
	fmt.Printf("flaky: restarts %d, last exit code %d\n", st.FindContainerStatusByName("flaky").RestartCount, previousExitCode(st, "flaky"))
	if item, ok := reasons.Get(pod.UID, "typo"); ok {
		fmt.Printf("typo: %v: %s\n", item.Err, item.Message)
	}

	// Stop the pod: SIGTERM, then SIGKILL after the grace period.
	grace := int64(1)
	if err := p.KillPod(ctx, pod, pkgcontainer.ConvertPodStatusToRunningPod(hostprocess.RuntimeName, status()), &grace); err != nil {
		panic(err)
	}
	s := status().FindContainerStatusByName("server")
	fmt.Printf("server: %s, exit code %d\n", s.State, s.ExitCode)

	// Output:
	// migrate: exited
	// server: running
	// flaky: restarts 2, last exit code 3
	// typo: RunContainerError: fork/exec /nonexistent/server: no such file or directory
	// server: exited, exit code 143
}

// previousExitCode returns the exit code of the previous instance of
// container name (statuses are newest first).
func previousExitCode(st *pkgcontainer.PodStatus, name string) int {
	seen := 0
	for _, s := range st.ContainerStatuses {
		if s.Name == name {
			if seen++; seen == 2 {
				return s.ExitCode
			}
		}
	}
	return -1
}

func ExampleNewNodeProvider() {
	n, err := hostprocess.NewNodeProvider(hostprocess.NodeOptions{MaxPods: 50})
	if err != nil {
		panic(err)
	}
	node := n.ConfigureNode(context.Background(), "my-node")

	capacity := node.Status.Capacity
	fmt.Println("name:", node.Name)
	fmt.Println("cpu is runtime.NumCPU():", capacity.Cpu().Value() == int64(runtime.NumCPU()))
	fmt.Println("memory reported:", capacity.Memory().Value() > 0)
	fmt.Println("pods:", capacity.Pods().String())
	for _, c := range node.Status.Conditions {
		fmt.Printf("condition %s: %s\n", c.Type, c.Status)
	}
	// Nothing changed since ConfigureNode, so nothing to update.
	fmt.Println("changed:", n.RefreshNodeStatus(context.Background(), &node.Status))

	// Output:
	// name: my-node
	// cpu is runtime.NumCPU(): true
	// memory reported: true
	// pods: 50
	// condition Ready: True
	// changed: false
}
