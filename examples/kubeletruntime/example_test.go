package kubeletruntime_test

import (
	"context"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/examples/kubeletruntime"
	"github.com/kri-kit/testkit/kri"
)

// The kubelet's runtime manager runs a pod over the simulated CRI runtime:
// one container exits 3 at once, the other runs until the pod is killed,
// which SIGTERM does at once.
func ExampleNew() {
	ctx := context.Background()
	root, err := os.MkdirTemp("", "kubeletruntime-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	p, err := kubeletruntime.New(ctx, kubeletruntime.Options{RootDir: root})
	if err != nil {
		panic(err)
	}
	defer p.Stop()

	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyNever,
			Containers: []v1.Container{
				{Name: "job", Image: "busybox:1.36", Command: []string{"sh", "-c", "exit 3"}},
				{Name: "server", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}},
			},
		},
	}
	if err := p.SyncPod(ctx, pod, nil, kri.NewReasonCache()); err != nil {
		panic(err)
	}
	st, err := p.GetPodStatus(ctx, pod)
	if err != nil {
		panic(err)
	}
	for _, name := range []string{"job", "server"} {
		c := st.FindContainerStatusByName(name)
		fmt.Printf("%s: %s, exit code %d, reason %q\n", name, c.State, c.ExitCode, c.Reason)
	}

	if err := p.KillPod(ctx, pod, pkgcontainer.ConvertPodStatusToRunningPod(p.RuntimeName(), st), nil); err != nil {
		panic(err)
	}
	st, _ = p.GetPodStatus(ctx, pod)
	c := st.FindContainerStatusByName("server")
	fmt.Printf("after KillPod, server: %s, exit code %d\n", c.State, c.ExitCode)
	// Output:
	// job: exited, exit code 3, reason "Error"
	// server: running, exit code 0, reason ""
	// after KillPod, server: exited, exit code 143
}
