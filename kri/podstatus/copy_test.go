package podstatus_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/kri-kit/testkit/kri"
	"github.com/kri-kit/testkit/kri/podstatus"
)

// memory records, for every address reachable from a value through
// pointers, slices and maps, the path it was reached by. Strings are left
// out (they are immutable) and so are time.Time values (whose *Location is
// shared by design) and unexported fields (none of the API types Generate
// returns has any).
func memory(v any) map[uintptr]string {
	seen := map[uintptr]string{}
	var walk func(rv reflect.Value, path string)
	walk = func(rv reflect.Value, path string) {
		switch rv.Kind() {
		case reflect.Pointer:
			if rv.IsNil() {
				return
			}
			p := rv.Pointer()
			if _, ok := seen[p]; ok {
				return
			}
			seen[p] = path
			walk(rv.Elem(), path)
		case reflect.Interface:
			if !rv.IsNil() {
				walk(rv.Elem(), path)
			}
		case reflect.Slice:
			for i := range rv.Len() {
				e := rv.Index(i)
				seen[e.Addr().Pointer()] = fmt.Sprintf("%s[%d]", path, i)
				walk(e, fmt.Sprintf("%s[%d]", path, i))
			}
		case reflect.Map:
			if rv.IsNil() {
				return
			}
			seen[rv.Pointer()] = path
			it := rv.MapRange()
			for it.Next() {
				walk(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()))
			}
		case reflect.Struct:
			if rv.Type() == reflect.TypeFor[time.Time]() {
				return
			}
			for i := range rv.NumField() {
				if f := rv.Type().Field(i); f.IsExported() {
					walk(rv.Field(i), path+"."+f.Name)
				}
			}
		}
	}
	walk(reflect.ValueOf(v), "")
	return seen
}

// richInputs is a pod whose previous status has something behind every
// pointer Generate may copy, and a runtime status to go with it.
func richInputs() (*v1.Pod, *pkgcontainer.PodStatus) {
	rro := v1.RecursiveReadOnlyEnabled
	start := metav1.NewTime(at(1))
	terminated := &v1.ContainerStateTerminated{ExitCode: 3, Reason: "Error", ContainerID: cid("gone1")}
	prev := v1.PodStatus{
		Phase:     v1.PodRunning,
		Reason:    "Reason",
		StartTime: &start,
		HostIP:    "10.1.0.1",
		HostIPs:   []v1.HostIP{{IP: "10.1.0.1"}, {IP: "fd00::1"}},
		Conditions: []v1.PodCondition{
			{Type: v1.DisruptionTarget, Status: v1.ConditionTrue},
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at(2))},
		},
		ContainerStatuses: []v1.ContainerStatus{
			// gone: terminated and no longer in the runtime; kept as is.
			{Name: "gone", State: v1.ContainerState{Terminated: terminated}, Started: ptrTo(false),
				VolumeMounts:         []v1.VolumeMountStatus{{Name: "v", RecursiveReadOnly: &rro}},
				LastTerminationState: v1.ContainerState{Terminated: terminated.DeepCopy()}},
			// app: running before; its Started and last termination are copied.
			{Name: "app", ContainerID: cid("a1"), State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}, Started: ptrTo(true),
				LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1}}},
			// was: running before, now missing: its previous last state is the default.
			{Name: "was", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
				LastTerminationState: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "X"}}},
		},
		ResourceClaimStatuses:       []v1.PodResourceClaimStatus{{Name: "c", ResourceClaimName: ptrTo("claim")}},
		ExtendedResourceClaimStatus: &v1.PodExtendedResourceClaimStatus{ResourceClaimName: "ext", RequestMappings: []v1.ContainerExtendedResourceRequest{{ContainerName: "app"}}},
	}
	setNodeAllocatableClaim(&prev, "n")
	pod := mkPod(v1.PodSpec{
		Containers: []v1.Container{
			{Name: "gone", VolumeMounts: []v1.VolumeMount{{Name: "v", ReadOnly: true, RecursiveReadOnly: &rro}}},
			{Name: "app"}, {Name: "was"},
		},
		RestartPolicy: v1.RestartPolicyAlways,
	}, prev)
	app := runningI("app", "a1", 3)
	app.User = &pkgcontainer.ContainerUser{Linux: &pkgcontainer.LinuxContainerUser{SupplementalGroups: []int64{1, 2}}}
	status := runtimeStatus(app, exitedI("app", "a0", 1, 1))
	status.IPs = []string{"10.0.0.9", "fd00::9"}
	return pod, status
}

// TestOutputSharesNoMemoryWithInputs: nothing reachable from the returned
// status is reachable from the pod or the runtime status.
func TestOutputSharesNoMemoryWithInputs(t *testing.T) {
	pod, status := richInputs()
	onNode := podstatus.NewGenerator(podstatus.WithNodeAddresses([]v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.1.0.2"}}))
	for _, gen := range []func(*v1.Pod, *pkgcontainer.PodStatus, *kri.ReasonCache) v1.PodStatus{
		podstatus.Generate, podstatus.GenerateTerminal, onNode.Generate, onNode.GenerateTerminal,
	} {
		got := gen(pod, status, reasonCache(podUID, map[string][2]string{"was": crash}))
		out := memory(&got)
		if len(out) < 20 {
			t.Fatalf("the returned status has %d addresses; the walk or the inputs are too poor to prove anything", len(out))
		}
		in := memory(pod)
		for p, path := range memory(status) {
			in[p] = "runtime" + path
		}
		for p, path := range out {
			if inPath, ok := in[p]; ok {
				t.Errorf("the returned status%s shares memory with input %s", path, inPath)
			}
		}
	}
}

// TestInputsUnchanged: Generate does not modify its inputs, and changing
// everything in the result leaves them unchanged too.
func TestInputsUnchanged(t *testing.T) {
	pod, status := richInputs()
	podBefore := pod.DeepCopy()
	statusBefore := copyRuntime(status)
	got := podstatus.Generate(pod, status, reasonCache(podUID, map[string][2]string{"was": crash}))
	if d := cmp.Diff(podBefore, pod); d != "" {
		t.Fatalf("Generate modified the pod (-before +after):\n%s", d)
	}
	if d := cmp.Diff(statusBefore, copyRuntime(status)); d != "" {
		t.Fatalf("Generate modified the runtime status (-before +after):\n%s", d)
	}
	scribble(reflect.ValueOf(&got))
	if d := cmp.Diff(podBefore, pod); d != "" {
		t.Errorf("changing the returned status changed the pod (-before +after):\n%s", d)
	}
	if d := cmp.Diff(statusBefore, copyRuntime(status)); d != "" {
		t.Errorf("changing the returned status changed the runtime status (-before +after):\n%s", d)
	}
}

// copyRuntime copies the parts of a runtime status Generate reads, as
// values that cmp can compare (the sandboxes are protobuf messages).
func copyRuntime(s *pkgcontainer.PodStatus) any {
	type sandbox struct {
		ID, IP string
		State  int32
	}
	var out struct {
		IPs       []string
		Instances []pkgcontainer.Status
		Groups    [][]int64
		Sandboxes []sandbox
	}
	out.IPs = append(out.IPs, s.IPs...)
	for _, c := range s.ContainerStatuses {
		out.Instances = append(out.Instances, *c)
		if c.User != nil && c.User.Linux != nil {
			out.Groups = append(out.Groups, append([]int64{}, c.User.Linux.SupplementalGroups...))
		}
	}
	for _, sb := range s.SandboxStatuses {
		out.Sandboxes = append(out.Sandboxes, sandbox{ID: sb.Id, IP: sb.GetNetwork().GetIp(), State: int32(sb.State)})
	}
	return out
}

// scribble changes every string, number and bool reachable from rv through
// pointers, slices and maps.
func scribble(rv reflect.Value) {
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !rv.IsNil() {
			scribble(rv.Elem())
		}
	case reflect.Slice:
		for i := range rv.Len() {
			scribble(rv.Index(i))
		}
	case reflect.Struct:
		if rv.Type() == reflect.TypeFor[time.Time]() {
			if rv.CanSet() {
				rv.Set(reflect.ValueOf(time.Unix(1, 0)))
			}
			return
		}
		for i := range rv.NumField() {
			if rv.Type().Field(i).IsExported() {
				scribble(rv.Field(i))
			}
		}
	case reflect.String:
		if rv.CanSet() {
			rv.SetString("scribbled")
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		if rv.CanSet() {
			rv.SetInt(-42)
		}
	case reflect.Bool:
		if rv.CanSet() {
			rv.SetBool(!rv.Bool())
		}
	}
}

// setNodeAllocatableClaim gives s one NodeAllocatableResourceClaimStatus
// (a field of Kubernetes 1.36 and later) naming claim, where the release
// compiled in has the field.
func setNodeAllocatableClaim(s *v1.PodStatus, claim string) {
	f := reflect.ValueOf(s).Elem().FieldByName("NodeAllocatableResourceClaimStatuses")
	if !f.IsValid() {
		return
	}
	list := reflect.MakeSlice(f.Type(), 1, 1)
	list.Index(0).FieldByName("ResourceClaimName").SetString(claim)
	f.Set(list)
}
