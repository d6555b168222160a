package crisim

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// statusResources is what ContainerStatus reports of a container created
// or updated with linux resources r: the same resources, as containerd
// reports those of the container's spec (nil when r is nil).
func statusResources(r *runtimeapi.LinuxContainerResources) *runtimeapi.ContainerResources {
	if r == nil {
		return nil
	}
	return &runtimeapi.ContainerResources{Linux: proto.Clone(r).(*runtimeapi.LinuxContainerResources)}
}

// UpdateContainerResources gives a created or running container the linux
// resources of resources, which its ContainerStatus reports from then on,
// as containerd's UpdateContainerResources updates the container's spec and
// its task's cgroup. The simulated processes use no CPU or memory, so the
// new limits change nothing else. An unknown container is a NotFound
// error, an exited one a FailedPrecondition error, and resources without
// linux resources an InvalidArgument error; none of them changes anything.
func (r *RuntimeService) UpdateContainerResources(ctx context.Context, containerID string, resources *runtimeapi.ContainerResources) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	r.Lock()
	defer r.Unlock()
	if err := r.record("UpdateContainerResources"); err != nil {
		return err
	}
	c, ok := r.Containers[containerID]
	if !ok {
		return notFound("container", containerID)
	}
	if resources.GetLinux() == nil {
		return status.Errorf(codes.InvalidArgument, "container %q: the update has no linux resources", containerID)
	}
	r.settle(containerID, c, time.Now().UnixNano())
	if c.State != runtimeapi.ContainerState_CONTAINER_CREATED && c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return status.Errorf(codes.FailedPrecondition, "container %q is in %s state: its resources cannot be updated", containerID, c.State)
	}
	c.LinuxResources = proto.Clone(resources.GetLinux()).(*runtimeapi.LinuxContainerResources)
	c.Resources = statusResources(c.LinuxResources)
	return nil
}
