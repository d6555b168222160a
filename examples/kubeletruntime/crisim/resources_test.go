package crisim_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kri-kit/testkit/examples/kubeletruntime/crisim"
)

func TestUpdateContainerResources(t *testing.T) {
	r := crisim.NewRuntimeService(crisim.Options{})
	sb := newSandbox(t, r)
	id, err := r.CreateContainer(t.Context(), sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		Image:    &runtimeapi.ImageSpec{Image: "busybox:1.36"},
		Command:  []string{"sleep", "infinity"},
		Linux:    &runtimeapi.LinuxContainerConfig{Resources: &runtimeapi.LinuxContainerResources{CpuShares: 256, MemoryLimitInBytes: 128 << 20}},
	}, nil)
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if err := r.StartContainer(t.Context(), id); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	if got := statusOf(t, r, id).GetResources().GetLinux(); got.GetCpuShares() != 256 || got.GetMemoryLimitInBytes() != 128<<20 {
		t.Fatalf("status resources %v, want the created ones (256 shares, 128Mi)", got)
	}

	update := &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{CpuShares: 512, CpuQuota: 100000, CpuPeriod: 100000, MemoryLimitInBytes: 256 << 20}}
	if err := r.UpdateContainerResources(t.Context(), id, update); err != nil {
		t.Fatalf("UpdateContainerResources: %v", err)
	}
	st := statusOf(t, r, id)
	if got := st.GetResources().GetLinux(); got.GetCpuShares() != 512 || got.GetCpuQuota() != 100000 || got.GetMemoryLimitInBytes() != 256<<20 {
		t.Errorf("status resources after the update %v, want %v", got, update.Linux)
	}
	if st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("the update left the container %s, want it running", st.State)
	}
	update.Linux.CpuShares = 1 // the runtime keeps its own copy
	if got := statusOf(t, r, id).GetResources().GetLinux().GetCpuShares(); got != 512 {
		t.Errorf("changing the request after the call changed the container: %d shares", got)
	}

	for _, tc := range []struct {
		name string
		id   string
		res  *runtimeapi.ContainerResources
		code codes.Code
	}{
		{"unknown container", "nope", update, codes.NotFound},
		{"no linux resources", id, &runtimeapi.ContainerResources{}, codes.InvalidArgument},
	} {
		if err := r.UpdateContainerResources(t.Context(), tc.id, tc.res); status.Code(err) != tc.code {
			t.Errorf("%s: UpdateContainerResources = %v, want code %s", tc.name, err, tc.code)
		}
	}
	if err := r.StopContainer(t.Context(), id, 0); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	if err := r.UpdateContainerResources(t.Context(), id, update); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("UpdateContainerResources of an exited container = %v, want FailedPrecondition", err)
	}
	if got := statusOf(t, r, id).GetResources().GetLinux().GetCpuShares(); got != 512 {
		t.Errorf("a refused update changed the container: %d shares, want 512", got)
	}
}
