package crisim_test

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kri-kit/testkit/examples/kubeletruntime/crisim"
)

// A container whose executable is missing fails to start and is left
// exited as containerd leaves it; one that runs until killed stops on
// SIGTERM.
func ExampleRuntimeService() {
	ctx := context.Background()
	r := crisim.NewRuntimeService(crisim.Options{NormalizeImages: true})
	sandbox, _ := r.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "pod", Namespace: "default", Uid: "uid-1"},
	}, "")
	create := func(name string, command ...string) string {
		id, err := r.CreateContainer(ctx, sandbox, &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: name},
			Image:    &runtimeapi.ImageSpec{Image: "busybox:1.36"},
			Command:  command,
		}, nil)
		if err != nil {
			panic(err)
		}
		return id
	}

	broken := create("broken", "/nonexistent/app")
	fmt.Println("start failed:", r.StartContainer(ctx, broken) != nil)
	st, _ := r.ContainerStatus(ctx, broken, false)
	fmt.Println(st.Status.State, st.Status.ExitCode, st.Status.Reason)

	server := create("server", "sleep", "infinity")
	_ = r.StartContainer(ctx, server)
	_ = r.StopContainer(ctx, server, 30)
	st, _ = r.ContainerStatus(ctx, server, false)
	fmt.Println(st.Status.State, st.Status.ExitCode, st.Status.Image.Image)
	// Output:
	// start failed: true
	// CONTAINER_EXITED 128 StartError
	// CONTAINER_EXITED 143 docker.io/library/busybox:1.36
}

// The kubelet runs an exec lifecycle hook with ExecSync: a hook that fails
// reports its exit code as the CRI client does.
func ExampleRuntimeService_ExecSync() {
	ctx := context.Background()
	r := crisim.NewRuntimeService(crisim.Options{})
	sandbox, _ := r.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "pod", Namespace: "default", Uid: "uid-1"},
	}, "")
	id, _ := r.CreateContainer(ctx, sandbox, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		Image:    &runtimeapi.ImageSpec{Image: "busybox:1.36"},
		Command:  []string{"sleep", "infinity"},
	}, nil)
	_ = r.StartContainer(ctx, id)

	out, _, err := r.ExecSync(ctx, id, []string{"echo", "ready"}, 0)
	fmt.Printf("%q %v\n", out, err)
	_, _, err = r.ExecSync(ctx, id, []string{"sh", "-c", "exit 3"}, 0)
	fmt.Println(err)
	// Output:
	// "ready\n" <nil>
	// command 'sh -c exit 3' exited with 3:
}

// The kubelet's in-place resize of a running container: the status reports
// the resources the container was created with, then those of the update.
func ExampleRuntimeService_UpdateContainerResources() {
	ctx := context.Background()
	r := crisim.NewRuntimeService(crisim.Options{})
	sandbox, _ := r.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "pod", Namespace: "default", Uid: "uid-1"},
	}, "")
	id, _ := r.CreateContainer(ctx, sandbox, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		Image:    &runtimeapi.ImageSpec{Image: "busybox:1.36"},
		Command:  []string{"sleep", "infinity"},
		Linux:    &runtimeapi.LinuxContainerConfig{Resources: &runtimeapi.LinuxContainerResources{CpuShares: 256, MemoryLimitInBytes: 128 << 20}},
	}, nil)
	_ = r.StartContainer(ctx, id)
	st, _ := r.ContainerStatus(ctx, id, false)
	fmt.Println(st.Status.Resources.Linux.CpuShares, st.Status.Resources.Linux.MemoryLimitInBytes>>20)

	_ = r.UpdateContainerResources(ctx, id, &runtimeapi.ContainerResources{
		Linux: &runtimeapi.LinuxContainerResources{CpuShares: 512, MemoryLimitInBytes: 256 << 20},
	})
	st, _ = r.ContainerStatus(ctx, id, false)
	fmt.Println(st.Status.State, st.Status.Resources.Linux.CpuShares, st.Status.Resources.Linux.MemoryLimitInBytes>>20)
	// Output:
	// 256 128
	// CONTAINER_RUNNING 512 256
}
