package fake

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kri-kit/testkit/kri"
)

// sameContainer and sameSpec are what podFor decides with no field known
// to share its bytes (steady 0) and with those of the stored copy: each
// must be reflect.DeepEqual.
func sameContainer(x, y *v1.Container) bool { return sameStoredContainer(x, y, 0) }

func sameSpec(stored, pod *v1.Pod) bool {
	return sameStoredSpec(stored, steadyFieldsOf(stored), pod)
}

// filler sets every exported field reachable from a value to a non-zero
// value of its own: pointers to filled values, slices of two filled
// elements, maps of two entries.
type filler struct {
	t *testing.T
	n int
}

func (f *filler) fill(v reflect.Value, path string) {
	f.n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprint("s", f.n))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem(), path)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			f.fill(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.fill(k, path+"[key]")
			f.fill(e, path+"[value]")
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		if v.Type() == quantityType {
			v.Set(reflect.ValueOf(resource.MustParse(fmt.Sprint(f.n))))
			return
		}
		for i := range v.NumField() {
			fd := v.Type().Field(i)
			if !fd.IsExported() {
				f.t.Fatalf("%s: %s has unexported field %s: teach the filler its type", path, v.Type(), fd.Name)
			}
			f.fill(v.Field(i), path+"."+fd.Name)
		}
	default:
		f.t.Fatalf("%s: cannot fill a %s", path, v.Type())
	}
}

// step is one step down a path in a container: a field, a slice element
// or what a pointer points to.
type step struct {
	field, index int // -1 when not that kind of step
}

func at(v reflect.Value, path []step) reflect.Value {
	for _, s := range path {
		switch {
		case v.Kind() == reflect.Pointer:
			v = v.Elem()
		case s.index >= 0:
			v = v.Index(s.index)
		default:
			v = v.Field(s.field)
		}
	}
	return v
}

// mutation is one change of one node of a container.
type mutation struct {
	name   string
	path   []step
	change func(v reflect.Value)
}

// mutations lists, for the node at path (of value v), every change the
// comparison must see: each leaf changed, each pointer set to nil, each
// slice and map set to nil, emptied, shortened and lengthened, each
// quantity changed in value, in form only, and in its cached string
// only (resource.MustParse caches it, NewQuantity does not).
func mutations(v reflect.Value, name string, path []step) []mutation {
	path = path[:len(path):len(path)]
	m := func(what string, change func(v reflect.Value)) mutation {
		return mutation{name: name + ": " + what, path: path, change: change}
	}
	switch v.Kind() {
	case reflect.String:
		return []mutation{m("changed", func(v reflect.Value) { v.SetString(v.String() + "x") })}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return []mutation{m("changed", func(v reflect.Value) { v.SetInt(v.Int() + 1) })}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return []mutation{m("changed", func(v reflect.Value) { v.SetUint(v.Uint() + 1) })}
	case reflect.Bool:
		return []mutation{m("flipped", func(v reflect.Value) { v.SetBool(!v.Bool()) })}
	case reflect.Pointer:
		out := []mutation{m("set to nil", func(v reflect.Value) { v.Set(reflect.Zero(v.Type())) })}
		return append(out, mutations(v.Elem(), name, append(path, step{-1, -1}))...)
	case reflect.Slice:
		out := []mutation{
			m("set to nil", func(v reflect.Value) { v.Set(reflect.Zero(v.Type())) }),
			m("emptied", func(v reflect.Value) { v.Set(reflect.MakeSlice(v.Type(), 0, 0)) }),
			m("shortened", func(v reflect.Value) { v.Set(v.Slice(0, v.Len()-1)) }),
			m("lengthened", func(v reflect.Value) { v.Set(reflect.Append(v, v.Index(0))) }),
			m("swapped", func(v reflect.Value) { reflect.Swapper(v.Interface())(0, 1) }),
		}
		for i := range v.Len() {
			out = append(out, mutations(v.Index(i), fmt.Sprintf("%s[%d]", name, i), append(path, step{-1, i}))...)
		}
		return out
	case reflect.Map:
		if v.Type().Elem() != quantityType {
			panic(fmt.Sprintf("%s: teach mutations maps of %s", name, v.Type().Elem()))
		}
		key := v.MapKeys()[0]
		set := func(q resource.Quantity) func(v reflect.Value) {
			return func(v reflect.Value) { v.SetMapIndex(key, reflect.ValueOf(q)) }
		}
		q := v.MapIndex(key).Interface().(resource.Quantity)
		return []mutation{
			m("set to nil", func(v reflect.Value) { v.Set(reflect.Zero(v.Type())) }),
			m("emptied", func(v reflect.Value) { v.Set(reflect.MakeMap(v.Type())) }),
			m("key deleted", func(v reflect.Value) { v.SetMapIndex(key, reflect.Value{}) }),
			m("key added", func(v reflect.Value) {
				v.SetMapIndex(reflect.ValueOf(v1.ResourceName("added")).Convert(v.Type().Key()), reflect.ValueOf(q))
			}),
			m("value changed", set(resource.MustParse("12345"))),
			m("value in another form", set(*resource.NewMilliQuantity(q.MilliValue(), q.Format))),
			m("value's string not cached", set(*resource.NewQuantity(q.Value(), q.Format))),
		}
	case reflect.Struct:
		if v.Type() == quantityType {
			q := v.Interface().(resource.Quantity)
			return []mutation{
				m("value changed", func(v reflect.Value) { v.Set(reflect.ValueOf(resource.MustParse("12345"))) }),
				m("value in another form", func(v reflect.Value) {
					v.Set(reflect.ValueOf(*resource.NewMilliQuantity(q.MilliValue(), q.Format)))
				}),
				m("string not cached", func(v reflect.Value) { v.Set(reflect.ValueOf(*resource.NewQuantity(q.Value(), q.Format))) }),
			}
		}
		var out []mutation
		for i := range v.NumField() {
			out = append(out, mutations(v.Field(i), name+"."+v.Type().Field(i).Name, append(path, step{i, -1}))...)
		}
		return out
	}
	panic(fmt.Sprintf("%s: cannot mutate a %s", name, v.Type()))
}

// TestSameContainerIsDeepEqual checks sameContainer's contract: it answers
// as reflect.DeepEqual for a fully populated container against a copy of it
// with any one node changed (every field of v1.Container, found by
// reflection, so a field added to it fails here until sameContainer
// compares it).
func TestSameContainerIsDeepEqual(t *testing.T) {
	var base v1.Container
	(&filler{t: t}).fill(reflect.ValueOf(&base).Elem(), "Container")

	if !sameContainer(&base, base.DeepCopy()) {
		t.Fatal("a populated container differs from its DeepCopy")
	}
	if !sameContainer(&v1.Container{}, &v1.Container{}) {
		t.Fatal("two zero containers differ")
	}
	cp := base.DeepCopy()
	if n := testing.AllocsPerRun(100, func() { sameContainer(&base, cp) }); n != 0 {
		t.Errorf("comparing a populated container with its DeepCopy allocates %v times", n)
	}
	ms := mutations(reflect.ValueOf(&base).Elem(), "Container", nil)
	for _, m := range ms {
		x := base.DeepCopy()
		m.change(at(reflect.ValueOf(x).Elem(), m.path))
		want := reflect.DeepEqual(&base, x)
		if want {
			t.Errorf("%s: the mutation changed nothing", m.name)
		}
		if got := sameContainer(&base, x); got != want {
			t.Errorf("%s: sameContainer = %v, reflect.DeepEqual = %v", m.name, got, want)
		}
		if got := sameContainer(x, &base); got != want {
			t.Errorf("%s (compared the other way): sameContainer = %v, reflect.DeepEqual = %v", m.name, got, want)
		}
	}
	// A nil slice or map differs from an empty one (for reflect.DeepEqual,
	// and for workload.Expand, which keeps a nil Command nil).
	for _, m := range ms {
		if !strings.HasSuffix(m.name, ": set to nil") {
			continue
		}
		v := at(reflect.ValueOf(&base).Elem(), m.path)
		if v.Kind() != reflect.Slice && v.Kind() != reflect.Map {
			continue
		}
		x, y := base.DeepCopy(), base.DeepCopy()
		m.change(at(reflect.ValueOf(x).Elem(), m.path))
		w := at(reflect.ValueOf(y).Elem(), m.path)
		if v.Kind() == reflect.Slice {
			w.Set(reflect.MakeSlice(w.Type(), 0, 0))
		} else {
			w.Set(reflect.MakeMap(w.Type()))
		}
		if sameContainer(x, y) || sameContainer(y, x) {
			t.Errorf("%s: nil and empty compare equal", strings.TrimSuffix(m.name, ": set to nil"))
		}
		if !sameContainer(x, x.DeepCopy()) || !sameContainer(y, y.DeepCopy()) {
			t.Errorf("%s: nil or empty differs from its DeepCopy", strings.TrimSuffix(m.name, ": set to nil"))
		}
	}
	if len(ms) < 300 {
		t.Fatalf("only %d mutations: the walk missed fields", len(ms))
	}
	t.Logf("%d mutations", len(ms))
}

// TestSameQuantityDeepEqual checks the slow path of sameQuantity: a
// quantity too large for int64 is held in an *inf.Dec, which DeepCopy
// copies, so == fails and reflect.DeepEqual decides.
func TestSameQuantityDeepEqual(t *testing.T) {
	big := resource.MustParse("123456789012345678901234567890")
	cp := big.DeepCopy()
	if big == cp {
		t.Fatal("the quantity is not held in an *inf.Dec: the test tests nothing")
	}
	if !sameQuantity(big, cp) {
		t.Error("an *inf.Dec quantity differs from its DeepCopy")
	}
	other := resource.MustParse("123456789012345678901234567891")
	if sameQuantity(big, other) {
		t.Error("two *inf.Dec quantities of different values are the same")
	}
	c := v1.Container{Name: "c", Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: big}}}
	if !sameContainer(&c, c.DeepCopy()) {
		t.Error("a container with an *inf.Dec limit differs from its DeepCopy")
	}
}

// TestSameSpecPodFields checks sameSpec on the pod's own fields that
// specCopy keeps, and that an empty container list equals a nil one (as
// specCopy stores it).
func TestSameSpecPodFields(t *testing.T) {
	base := func() *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"},
			Spec: v1.PodSpec{
				RestartPolicy:                 v1.RestartPolicyAlways,
				TerminationGracePeriodSeconds: new(int64(30)),
				ShareProcessNamespace:         new(false),
				InitContainers:                []v1.Container{{Name: "i", Image: "busybox"}},
				Containers:                    []v1.Container{{Name: "c", Image: "busybox"}},
			},
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*v1.Pod)
		same bool
	}{
		{"unchanged", func(*v1.Pod) {}, true},
		{"fields specCopy drops", func(p *v1.Pod) { p.ResourceVersion, p.Labels, p.Spec.NodeName = "7", map[string]string{"a": "b"}, "n" }, true},
		{"namespace", func(p *v1.Pod) { p.Namespace = "other" }, false},
		{"name", func(p *v1.Pod) { p.Name = "other" }, false},
		{"uid", func(p *v1.Pod) { p.UID = "other" }, false},
		{"restartPolicy", func(p *v1.Pod) { p.Spec.RestartPolicy = v1.RestartPolicyNever }, false},
		{"hostNetwork", func(p *v1.Pod) { p.Spec.HostNetwork = true }, false},
		{"terminationGracePeriodSeconds", func(p *v1.Pod) { *p.Spec.TerminationGracePeriodSeconds = 5 }, false},
		{"terminationGracePeriodSeconds nil", func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = nil }, false},
		{"shareProcessNamespace", func(p *v1.Pod) { *p.Spec.ShareProcessNamespace = true }, false},
		{"shareProcessNamespace nil", func(p *v1.Pod) { p.Spec.ShareProcessNamespace = nil }, false},
		{"init container", func(p *v1.Pod) { p.Spec.InitContainers[0].Image = "other" }, false},
		{"init containers none", func(p *v1.Pod) { p.Spec.InitContainers = nil }, false},
		{"container", func(p *v1.Pod) { p.Spec.Containers[0].Image = "other" }, false},
		{"container added", func(p *v1.Pod) { p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "d"}) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := base()
			stored := specCopy(pod)
			tc.edit(pod)
			if got := sameSpec(stored, pod); got != tc.same {
				t.Errorf("sameSpec = %v, want %v", got, tc.same)
			}
		})
	}
	pod := base()
	pod.Spec.InitContainers = []v1.Container{}
	if stored := specCopy(pod); !sameSpec(stored, pod) {
		t.Error("an empty init container list differs from the nil one specCopy stores")
	}
}

// TestSyncPodSeesInPlaceEdits syncs a pod, edits the same *v1.Pod in place
// (no new ResourceVersion or Generation), syncs it again and checks that
// the fake's stored copy follows the edit: one row per field of the pod
// and of a container that the fake reads.
func TestSyncPodSeesInPlaceEdits(t *testing.T) {
	ctr := func(name string) v1.Container {
		return v1.Container{
			Name:            name,
			Image:           "busybox:1.36",
			Command:         []string{"sh", "-c"},
			Args:            []string{"sleep infinity"},
			Env:             []v1.EnvVar{{Name: "A", Value: "1"}},
			ImagePullPolicy: v1.PullIfNotPresent,
			Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")},
				Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")},
			},
			ResizePolicy:             []v1.ContainerResizePolicy{{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired}},
			LivenessProbe:            &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 10},
			ReadinessProbe:           &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(80)}}, PeriodSeconds: 10},
			StartupProbe:             &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, FailureThreshold: 3},
			Lifecycle:                &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 1}}},
			TerminationMessagePath:   "/dev/termination-log",
			TerminationMessagePolicy: v1.TerminationMessageReadFile,
		}
	}
	always := v1.ContainerRestartPolicyAlways
	newPod := func() *v1.Pod {
		sidecar := ctr("sidecar")
		sidecar.RestartPolicy = &always
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u", ResourceVersion: "1", Generation: 1},
			Spec: v1.PodSpec{
				RestartPolicy:                 v1.RestartPolicyAlways,
				TerminationGracePeriodSeconds: new(int64(30)),
				InitContainers:                []v1.Container{sidecar},
				Containers:                    []v1.Container{ctr("app")},
			},
		}
	}
	app := func(p *v1.Pod) *v1.Container { return &p.Spec.Containers[0] }
	for _, tc := range []struct {
		name string
		edit func(*v1.Pod)
	}{
		{"pod restartPolicy", func(p *v1.Pod) { p.Spec.RestartPolicy = v1.RestartPolicyOnFailure }},
		{"pod terminationGracePeriodSeconds", func(p *v1.Pod) { *p.Spec.TerminationGracePeriodSeconds = 5 }},
		{"pod shareProcessNamespace", func(p *v1.Pod) { p.Spec.ShareProcessNamespace = new(true) }},
		{"pod hostNetwork", func(p *v1.Pod) { p.Spec.HostNetwork = true }},
		{"name", func(p *v1.Pod) { app(p).Name = "app2" }},
		{"image", func(p *v1.Pod) { app(p).Image = "busybox:1.37" }},
		{"imagePullPolicy", func(p *v1.Pod) { app(p).ImagePullPolicy = v1.PullAlways }},
		{"command", func(p *v1.Pod) { app(p).Command[1] = "-ec" }},
		{"args", func(p *v1.Pod) { app(p).Args[0] = "sleep 3600" }},
		{"env value", func(p *v1.Pod) { app(p).Env[0].Value = "2" }},
		{"env added", func(p *v1.Pod) { app(p).Env = append(app(p).Env, v1.EnvVar{Name: "B", Value: "$(A)"}) }},
		{"resources request", func(p *v1.Pod) { app(p).Resources.Requests[v1.ResourceCPU] = resource.MustParse("200m") }},
		{"resources limit", func(p *v1.Pod) { app(p).Resources.Limits[v1.ResourceMemory] = resource.MustParse("128Mi") }},
		{"resizePolicy", func(p *v1.Pod) { app(p).ResizePolicy[0].RestartPolicy = v1.RestartContainer }},
		{"init container restartPolicy", func(p *v1.Pod) { p.Spec.InitContainers[0].RestartPolicy = nil }},
		{"init container image", func(p *v1.Pod) { p.Spec.InitContainers[0].Image = "busybox:1.37" }},
		{"livenessProbe period", func(p *v1.Pod) { app(p).LivenessProbe.PeriodSeconds = 1 }},
		{"livenessProbe command", func(p *v1.Pod) { app(p).LivenessProbe.Exec.Command[0] = "false" }},
		{"readinessProbe port", func(p *v1.Pod) { app(p).ReadinessProbe.TCPSocket.Port = intstr.FromInt32(81) }},
		{"startupProbe threshold", func(p *v1.Pod) { app(p).StartupProbe.FailureThreshold = 1 }},
		{"startupProbe removed", func(p *v1.Pod) { app(p).StartupProbe = nil }},
		{"postStart command", func(p *v1.Pod) { app(p).Lifecycle.PostStart.Exec.Command[0] = "false" }},
		{"preStop sleep", func(p *v1.Pod) { app(p).Lifecycle.PreStop.Sleep.Seconds = 2 }},
		{"terminationMessagePath", func(p *v1.Pod) { app(p).TerminationMessagePath = "/tmp/msg" }},
		{"terminationMessagePolicy", func(p *v1.Pod) { app(p).TerminationMessagePolicy = v1.TerminationMessageFallbackToLogsOnError }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPodProvider(WithClock(clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))))
			rc := kri.NewReasonCache()
			ctx := context.Background()
			pod := newPod()
			if err := p.SyncPod(ctx, pod, nil, rc); err != nil {
				t.Fatal(err)
			}
			stored := func() *v1.Pod {
				p.mu.Lock()
				defer p.mu.Unlock()
				return p.pods[pod.UID].pod
			}
			before := stored()
			if err := p.SyncPod(ctx, pod, nil, rc); err != nil {
				t.Fatal(err)
			}
			if stored() != before {
				t.Fatal("an unchanged pod was copied again")
			}
			tc.edit(pod)
			_ = p.SyncPod(ctx, pod, nil, rc) // the edit may make the sync fail: the copy is what is checked
			after := stored()
			if after == before || !reflect.DeepEqual(after, specCopy(pod)) {
				t.Errorf("the stored spec did not follow the in-place edit (copied again: %v)", after != before)
			}
		})
	}
}
