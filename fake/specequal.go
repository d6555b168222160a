package fake

import (
	"reflect"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// This file compares containers for sameSpec without reflection and
// without allocating.
//
// Contract: sameContainer(x, y) == reflect.DeepEqual(x, y) for any two
// containers. Every field of v1.Container is compared, recursively, with
// reflect.DeepEqual's rules: a nil slice or map differs from an empty one,
// pointers are compared by what they point to. No field is skipped, for
// the fake hands its stored containers whole to code that reads what it
// likes (workload.OfEnv, OfHandler and OfProbe, HashContainer, the probe
// state's copy, the resize and status code), so a list of the fields it
// reads would silently go stale; comparing them all costs a few
// nanoseconds a field. TestSameContainerIsDeepEqual changes every leaf of a
// fully populated container in turn (found by reflection, so a field added
// to v1.Container by an upgrade of k8s.io/api fails it until it is compared
// here) and checks the answer against reflect.DeepEqual.
//
// The comparisons with == (sameValues, samePtr) are only used for types
// without pointers, slices or maps inside, where == and DeepEqual agree.
// resource.Quantity has unexported fields: it is compared with == (its
// int64 form, cached string and format), and only when that fails, which
// is when it changed or holds an *inf.Dec (copied by DeepCopy), with
// reflect.DeepEqual.

// sameContainers reports whether x and y hold equal containers in the same
// order. An empty list equals a nil one: specCopy stores both as nil.
func sameContainers(x, y []v1.Container) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !sameContainer(&x[i], &y[i]) {
			return false
		}
	}
	return true
}

func sameContainer(x, y *v1.Container) bool {
	return x.Name == y.Name &&
		x.Image == y.Image &&
		sameValues(x.Command, y.Command) &&
		sameValues(x.Args, y.Args) &&
		x.WorkingDir == y.WorkingDir &&
		sameValues(x.Ports, y.Ports) &&
		sameSlice(x.EnvFrom, y.EnvFrom, sameEnvFromSource) &&
		sameSlice(x.Env, y.Env, sameEnvVar) &&
		sameResources(&x.Resources, &y.Resources) &&
		sameValues(x.ResizePolicy, y.ResizePolicy) &&
		samePtr(x.RestartPolicy, y.RestartPolicy) &&
		sameSlice(x.RestartPolicyRules, y.RestartPolicyRules, sameRestartRule) &&
		sameSlice(x.VolumeMounts, y.VolumeMounts, sameVolumeMount) &&
		sameValues(x.VolumeDevices, y.VolumeDevices) &&
		samePtrBy(x.LivenessProbe, y.LivenessProbe, sameProbe) &&
		samePtrBy(x.ReadinessProbe, y.ReadinessProbe, sameProbe) &&
		samePtrBy(x.StartupProbe, y.StartupProbe, sameProbe) &&
		samePtrBy(x.Lifecycle, y.Lifecycle, sameLifecycle) &&
		x.TerminationMessagePath == y.TerminationMessagePath &&
		x.TerminationMessagePolicy == y.TerminationMessagePolicy &&
		x.ImagePullPolicy == y.ImagePullPolicy &&
		samePtrBy(x.SecurityContext, y.SecurityContext, sameSecurityContext) &&
		x.Stdin == y.Stdin &&
		x.StdinOnce == y.StdinOnce &&
		x.TTY == y.TTY
}

func sameEnvFromSource(x, y *v1.EnvFromSource) bool {
	return x.Prefix == y.Prefix &&
		samePtrBy(x.ConfigMapRef, y.ConfigMapRef, func(a, b *v1.ConfigMapEnvSource) bool {
			return a.Name == b.Name && samePtr(a.Optional, b.Optional)
		}) &&
		samePtrBy(x.SecretRef, y.SecretRef, func(a, b *v1.SecretEnvSource) bool {
			return a.Name == b.Name && samePtr(a.Optional, b.Optional)
		})
}

func sameEnvVar(x, y *v1.EnvVar) bool {
	return x.Name == y.Name && x.Value == y.Value && samePtrBy(x.ValueFrom, y.ValueFrom, sameEnvVarSource)
}

func sameEnvVarSource(x, y *v1.EnvVarSource) bool {
	return samePtr(x.FieldRef, y.FieldRef) &&
		samePtrBy(x.ResourceFieldRef, y.ResourceFieldRef, func(a, b *v1.ResourceFieldSelector) bool {
			return a.ContainerName == b.ContainerName && a.Resource == b.Resource && sameQuantity(a.Divisor, b.Divisor)
		}) &&
		samePtrBy(x.ConfigMapKeyRef, y.ConfigMapKeyRef, func(a, b *v1.ConfigMapKeySelector) bool {
			return a.Name == b.Name && a.Key == b.Key && samePtr(a.Optional, b.Optional)
		}) &&
		samePtrBy(x.SecretKeyRef, y.SecretKeyRef, func(a, b *v1.SecretKeySelector) bool {
			return a.Name == b.Name && a.Key == b.Key && samePtr(a.Optional, b.Optional)
		}) &&
		samePtrBy(x.FileKeyRef, y.FileKeyRef, func(a, b *v1.FileKeySelector) bool {
			return a.VolumeName == b.VolumeName && a.Path == b.Path && a.Key == b.Key && samePtr(a.Optional, b.Optional)
		})
}

func sameResources(x, y *v1.ResourceRequirements) bool {
	return sameResourceList(x.Limits, y.Limits) && sameResourceList(x.Requests, y.Requests) && sameValues(x.Claims, y.Claims)
}

func sameResourceList(x, y v1.ResourceList) bool {
	if len(x) != len(y) || (x == nil) != (y == nil) {
		return false
	}
	for name, q := range x {
		r, ok := y[name]
		if !ok || !sameQuantity(q, r) {
			return false
		}
	}
	return true
}

// sameQuantity reports whether reflect.DeepEqual(x, y). Only the slow path
// (a changed quantity, or one held in an *inf.Dec) allocates.
func sameQuantity(x, y resource.Quantity) bool {
	return x == y || reflect.DeepEqual(x, y)
}

func sameRestartRule(x, y *v1.ContainerRestartRule) bool {
	return x.Action == y.Action &&
		samePtrBy(x.ExitCodes, y.ExitCodes, func(a, b *v1.ContainerRestartRuleOnExitCodes) bool {
			return a.Operator == b.Operator && sameValues(a.Values, b.Values)
		})
}

func sameVolumeMount(x, y *v1.VolumeMount) bool {
	return x.Name == y.Name &&
		x.ReadOnly == y.ReadOnly &&
		samePtr(x.RecursiveReadOnly, y.RecursiveReadOnly) &&
		x.MountPath == y.MountPath &&
		x.SubPath == y.SubPath &&
		samePtr(x.MountPropagation, y.MountPropagation) &&
		x.SubPathExpr == y.SubPathExpr &&
		sameValues(x.BindMountOptions, y.BindMountOptions)
}

func sameProbe(x, y *v1.Probe) bool {
	return samePtrBy(x.Exec, y.Exec, sameExecAction) &&
		samePtrBy(x.HTTPGet, y.HTTPGet, sameHTTPGetAction) &&
		samePtr(x.TCPSocket, y.TCPSocket) &&
		samePtrBy(x.GRPC, y.GRPC, func(a, b *v1.GRPCAction) bool {
			return a.Port == b.Port && samePtr(a.Service, b.Service) && samePtr(a.Mode, b.Mode)
		}) &&
		x.InitialDelaySeconds == y.InitialDelaySeconds &&
		x.TimeoutSeconds == y.TimeoutSeconds &&
		x.PeriodSeconds == y.PeriodSeconds &&
		x.SuccessThreshold == y.SuccessThreshold &&
		x.FailureThreshold == y.FailureThreshold &&
		samePtr(x.TerminationGracePeriodSeconds, y.TerminationGracePeriodSeconds)
}

func sameExecAction(x, y *v1.ExecAction) bool {
	return sameValues(x.Command, y.Command)
}

func sameHTTPGetAction(x, y *v1.HTTPGetAction) bool {
	return x.Path == y.Path &&
		x.Port == y.Port &&
		x.Host == y.Host &&
		x.Scheme == y.Scheme &&
		sameValues(x.HTTPHeaders, y.HTTPHeaders) &&
		samePtr(x.Protocol, y.Protocol)
}

func sameLifecycle(x, y *v1.Lifecycle) bool {
	return samePtrBy(x.PostStart, y.PostStart, sameLifecycleHandler) &&
		samePtrBy(x.PreStop, y.PreStop, sameLifecycleHandler) &&
		samePtr(x.StopSignal, y.StopSignal)
}

func sameLifecycleHandler(x, y *v1.LifecycleHandler) bool {
	return samePtrBy(x.Exec, y.Exec, sameExecAction) &&
		samePtrBy(x.HTTPGet, y.HTTPGet, sameHTTPGetAction) &&
		samePtr(x.TCPSocket, y.TCPSocket) &&
		samePtr(x.Sleep, y.Sleep)
}

func sameSecurityContext(x, y *v1.SecurityContext) bool {
	return samePtrBy(x.Capabilities, y.Capabilities, func(a, b *v1.Capabilities) bool {
		return sameValues(a.Add, b.Add) && sameValues(a.Drop, b.Drop)
	}) &&
		samePtr(x.Privileged, y.Privileged) &&
		samePtr(x.SELinuxOptions, y.SELinuxOptions) &&
		samePtrBy(x.WindowsOptions, y.WindowsOptions, func(a, b *v1.WindowsSecurityContextOptions) bool {
			return samePtr(a.GMSACredentialSpecName, b.GMSACredentialSpecName) &&
				samePtr(a.GMSACredentialSpec, b.GMSACredentialSpec) &&
				samePtr(a.RunAsUserName, b.RunAsUserName) &&
				samePtr(a.HostProcess, b.HostProcess)
		}) &&
		samePtr(x.RunAsUser, y.RunAsUser) &&
		samePtr(x.RunAsGroup, y.RunAsGroup) &&
		samePtr(x.RunAsNonRoot, y.RunAsNonRoot) &&
		samePtr(x.ReadOnlyRootFilesystem, y.ReadOnlyRootFilesystem) &&
		samePtr(x.AllowPrivilegeEscalation, y.AllowPrivilegeEscalation) &&
		samePtr(x.ProcMount, y.ProcMount) &&
		samePtrBy(x.SeccompProfile, y.SeccompProfile, func(a, b *v1.SeccompProfile) bool {
			return a.Type == b.Type && samePtr(a.LocalhostProfile, b.LocalhostProfile)
		}) &&
		samePtrBy(x.AppArmorProfile, y.AppArmorProfile, func(a, b *v1.AppArmorProfile) bool {
			return a.Type == b.Type && samePtr(a.LocalhostProfile, b.LocalhostProfile)
		})
}

// sameSlice reports whether x and y are both nil, or both non-nil of the
// same length with elements equal by eq, as reflect.DeepEqual does.
func sameSlice[T any](x, y []T, eq func(a, b *T) bool) bool {
	if len(x) != len(y) || (x == nil) != (y == nil) {
		return false
	}
	for i := range x {
		if !eq(&x[i], &y[i]) {
			return false
		}
	}
	return true
}

// sameValues is sameSlice with ==, for element types without pointers,
// slices or maps inside.
func sameValues[T comparable](x, y []T) bool {
	if len(x) != len(y) || (x == nil) != (y == nil) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// samePtrBy reports whether x and y are both nil, or both non-nil and
// point to values equal by eq.
func samePtrBy[T any](x, y *T, eq func(a, b *T) bool) bool {
	if x == nil || y == nil {
		return x == y
	}
	return x == y || eq(x, y)
}
