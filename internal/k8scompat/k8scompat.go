// Package k8scompat reaches the fields that only some of the Kubernetes
// releases the kit supports have, so that the kit compiles against every
// one of them (the oldest is the one its go.mod requires; see the README's
// "Kubernetes releases").
//
// Go has no build constraint on a dependency's version, so a field a newer
// k8s.io/api or k8s.io/kubernetes release added cannot be named in code
// that must also build against an older one. Each function here finds the
// field by name, once, through reflection, and reads or sets it where the
// release compiled in has it; where it does not, setting is a no-op and
// reading reports ok == false. Constants that only newer releases define
// are not here: their values are API strings, declared where they are used.
package k8scompat

import (
	"reflect"
	"time"

	v1 "k8s.io/api/core/v1"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// field is one field of T, found by name; index is nil when the release
// compiled in lacks it.
type field[T any] struct {
	index []int
}

func fieldOf[T any](name string, kind reflect.Kind) field[T] {
	f, ok := reflect.TypeFor[T]().FieldByName(name)
	if !ok || f.Type.Kind() != kind {
		return field[T]{}
	}
	return field[T]{index: f.Index}
}

func (f field[T]) exists() bool { return f.index != nil }

func (f field[T]) value(p *T) reflect.Value {
	return reflect.ValueOf(p).Elem().FieldByIndex(f.index)
}

var (
	containerSandboxID = fieldOf[kubecontainer.Container]("PodSandboxID", reflect.String)
	containerCreatedAt = fieldOf[kubecontainer.Container]("CreatedAt", reflect.Int64)
)

// SetContainerOrigin sets what kubecontainer.Container has carried since
// Kubernetes 1.36: the ID of the sandbox the container runs in and its
// creation time in Unix nanoseconds. On older releases it does nothing.
func SetContainerOrigin(c *kubecontainer.Container, podSandboxID string, createdAt int64) {
	if containerSandboxID.exists() {
		containerSandboxID.value(c).SetString(podSandboxID)
	}
	if containerCreatedAt.exists() {
		containerCreatedAt.value(c).SetInt(createdAt)
	}
}

// ContainerOrigin returns what SetContainerOrigin sets; ok is false on a
// release whose kubecontainer.Container lacks those fields.
func ContainerOrigin(c *kubecontainer.Container) (podSandboxID string, createdAt int64, ok bool) {
	if !containerSandboxID.exists() || !containerCreatedAt.exists() {
		return "", 0, false
	}
	return containerSandboxID.value(c).String(), containerCreatedAt.value(c).Int(), true
}

// claimStatusFields are the fields of v1.PodStatus that others than the
// node agent own (the resource claim controller and the scheduler) and that
// a status the agent generates carries over from the previous one:
// ResourceClaimStatuses and ExtendedResourceClaimStatus (every supported
// release) and NodeAllocatableResourceClaimStatuses (1.36 and later).
var claimStatusFields = func() []field[v1.PodStatus] {
	var fs []field[v1.PodStatus]
	for _, f := range []struct {
		name string
		kind reflect.Kind
	}{
		{"ResourceClaimStatuses", reflect.Slice},
		{"ExtendedResourceClaimStatus", reflect.Pointer},
		{"NodeAllocatableResourceClaimStatuses", reflect.Slice},
	} {
		if ff := fieldOf[v1.PodStatus](f.name, f.kind); ff.exists() {
			fs = append(fs, ff)
		}
	}
	return fs
}()

// CopyClaimStatuses sets dst's resource claim statuses, those of the fields
// listed above that the release compiled in has, to deep copies of src's;
// an empty list is copied as nil.
func CopyClaimStatuses(dst, src *v1.PodStatus) {
	// claims holds src's claim statuses alone, so that DeepCopy copies
	// nothing else of the status.
	var claims v1.PodStatus
	found := false
	for _, f := range claimStatusFields {
		if v := f.value(src); !v.IsZero() && (v.Kind() != reflect.Slice || v.Len() > 0) {
			f.value(&claims).Set(v)
			found = true
		}
	}
	copied := &claims
	if found {
		copied = claims.DeepCopy()
	}
	for _, f := range claimStatusFields {
		f.value(dst).Set(f.value(copied))
	}
}

var podTimestamp = fieldOf[kubecontainer.Pod]("Timestamp", reflect.Struct)

// SetPodTimestamp sets kubecontainer.Pod's Timestamp (Kubernetes 1.36 and
// later), the time the pod was read from the runtime. On older releases it
// does nothing.
func SetPodTimestamp(p *kubecontainer.Pod, t time.Time) {
	if podTimestamp.exists() {
		podTimestamp.value(p).Set(reflect.ValueOf(t))
	}
}

var runningInUserNamespace = fieldOf[v1.NodeSystemInfo]("RunningInUserNamespace", reflect.Pointer)

// CopyRunningInUserNamespace sets dst's RunningInUserNamespace (Kubernetes
// 1.37 and later) to a copy of src's when src has one. On older releases it
// does nothing.
func CopyRunningInUserNamespace(dst, src *v1.NodeSystemInfo) {
	if !runningInUserNamespace.exists() {
		return
	}
	s := runningInUserNamespace.value(src)
	if s.IsNil() {
		return
	}
	v := reflect.New(s.Type().Elem())
	v.Elem().Set(s.Elem())
	runningInUserNamespace.value(dst).Set(v)
}

// SetRunningInUserNamespace sets info's RunningInUserNamespace to v and
// reports whether the release compiled in has the field (1.37 and later).
func SetRunningInUserNamespace(info *v1.NodeSystemInfo, v *bool) bool {
	if !runningInUserNamespace.exists() {
		return false
	}
	runningInUserNamespace.value(info).Set(reflect.ValueOf(v))
	return true
}

// RunningInUserNamespace returns info's RunningInUserNamespace; ok is false
// on a release without the field.
func RunningInUserNamespace(info *v1.NodeSystemInfo) (v *bool, ok bool) {
	if !runningInUserNamespace.exists() {
		return nil, false
	}
	return runningInUserNamespace.value(info).Interface().(*bool), true
}
