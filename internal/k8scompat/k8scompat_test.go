package k8scompat

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// hasField reports whether T has the named field in the release compiled in.
func hasField[T any](name string) bool {
	_, ok := reflect.TypeFor[T]().FieldByName(name)
	return ok
}

func TestContainerOrigin(t *testing.T) {
	var c kubecontainer.Container
	SetContainerOrigin(&c, "sb-1", 42)
	id, at, ok := ContainerOrigin(&c)
	if want := hasField[kubecontainer.Container]("PodSandboxID"); ok != want {
		t.Fatalf("ContainerOrigin ok = %v, want %v (the release's Container has PodSandboxID: %v)", ok, want, want)
	}
	if ok && (id != "sb-1" || at != 42) {
		t.Errorf("ContainerOrigin after SetContainerOrigin(sb-1, 42) = %q, %d", id, at)
	}
	if !ok && !reflect.ValueOf(c).IsZero() {
		t.Errorf("SetContainerOrigin changed a container without those fields: %+v", c)
	}
}

func TestSetPodTimestamp(t *testing.T) {
	var p kubecontainer.Pod
	now := time.Unix(100, 5)
	SetPodTimestamp(&p, now)
	f := reflect.ValueOf(p).FieldByName("Timestamp")
	switch {
	case f.IsValid() && !f.Interface().(time.Time).Equal(now):
		t.Errorf("Timestamp = %v after SetPodTimestamp(%v)", f.Interface(), now)
	case !f.IsValid() && !reflect.ValueOf(p).IsZero():
		t.Errorf("SetPodTimestamp changed a pod without Timestamp: %+v", p)
	}
}

func TestRunningInUserNamespace(t *testing.T) {
	yes := true
	var src, dst v1.NodeSystemInfo
	ok := SetRunningInUserNamespace(&src, &yes)
	if want := hasField[v1.NodeSystemInfo]("RunningInUserNamespace"); ok != want {
		t.Fatalf("SetRunningInUserNamespace ok = %v, want %v", ok, want)
	}
	CopyRunningInUserNamespace(&dst, &src)
	got, ok := RunningInUserNamespace(&dst)
	if !ok {
		if !reflect.ValueOf(dst).IsZero() {
			t.Errorf("CopyRunningInUserNamespace changed info without the field: %+v", dst)
		}
		return
	}
	if got == nil || !*got || got == &yes {
		t.Errorf("CopyRunningInUserNamespace gave %v, want a copy of true", got)
	}
	var unset v1.NodeSystemInfo
	CopyRunningInUserNamespace(&dst, &unset)
	if got, _ := RunningInUserNamespace(&dst); got == nil {
		t.Error("copying an unset RunningInUserNamespace cleared dst's")
	}
}

func TestCopyClaimStatuses(t *testing.T) {
	claim := "claim"
	src := v1.PodStatus{
		ResourceClaimStatuses:       []v1.PodResourceClaimStatus{{Name: "c", ResourceClaimName: &claim}},
		ExtendedResourceClaimStatus: &v1.PodExtendedResourceClaimStatus{ResourceClaimName: "ext"},
	}
	if f := reflect.ValueOf(&src).Elem().FieldByName("NodeAllocatableResourceClaimStatuses"); f.IsValid() {
		list := reflect.MakeSlice(f.Type(), 1, 1)
		list.Index(0).FieldByName("ResourceClaimName").SetString("n")
		f.Set(list)
	}
	var dst v1.PodStatus
	CopyClaimStatuses(&dst, &src)
	if !reflect.DeepEqual(dst, src) {
		t.Fatalf("CopyClaimStatuses gave %+v, want %+v", dst, src)
	}
	*dst.ResourceClaimStatuses[0].ResourceClaimName = "changed"
	dst.ExtendedResourceClaimStatus.ResourceClaimName = "changed"
	if claim != "claim" || src.ExtendedResourceClaimStatus.ResourceClaimName != "ext" {
		t.Error("the copy shares memory with its source")
	}
	// An empty list is copied as nil; an unset source clears the fields.
	CopyClaimStatuses(&dst, &v1.PodStatus{ResourceClaimStatuses: []v1.PodResourceClaimStatus{}})
	if !reflect.DeepEqual(dst, v1.PodStatus{}) {
		t.Errorf("CopyClaimStatuses from an empty status left %+v", dst)
	}
}
