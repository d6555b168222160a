package kubeletruntime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crifake "k8s.io/cri-client/pkg/fake"
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

// The provider over a CRI runtime reached through its gRPC endpoint, as a
// kubelet reaches containerd or CRI-O. Here the endpoint is served by
// k8s.io/cri-client's fake remote runtime; with containerd it would be
// "unix:///run/containerd/containerd.sock".
func ExampleDialCRI() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "kubeletruntime-dial")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	endpoint := "unix://" + filepath.Join(dir, "cri.sock")
	srv := crifake.NewFakeRemoteRuntime()
	if err := srv.Start(endpoint); err != nil {
		panic(err)
	}
	defer srv.Stop()

	rs, is, err := kubeletruntime.DialCRI(ctx, endpoint, 10*time.Second)
	if err != nil {
		panic(err)
	}
	defer rs.Close(ctx)
	defer is.Close(ctx)
	p, err := kubeletruntime.New(ctx, kubeletruntime.Options{RootDir: dir, RuntimeService: rs, ImageService: is})
	if err != nil {
		panic(err)
	}
	defer p.Stop()
	pods, err := p.GetPods(ctx, true)
	fmt.Printf("runtime %s, %d pods, error %v\n", p.RuntimeName(), len(pods), err)
	// Output:
	// runtime fakeRuntime, 0 pods, error <nil>
}
